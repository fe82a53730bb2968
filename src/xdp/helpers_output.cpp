// Output to user space: bpf_perf_event_output (25, XDP flavour bpf_xdp_event_output),
// bpf_ringbuf_output (130), bpf_ringbuf_reserve (131), bpf_ringbuf_submit (132),
// bpf_ringbuf_discard (133), bpf_ringbuf_query (134). Sources: net/core/filter.c
// bpf_xdp_event_output, kernel/trace/bpf_trace.c __bpf_perf_event_output, kernel/bpf/ringbuf.c. The
// rings are the maps' own (maps::PerfEventArray, maps::RingBuf); the runtime drains them into its
// sinks after each packet when sinks are set (otherwise they fill up as under BPF_PROG_TEST_RUN
// with no reader).
#include "maps/perf_event_array.h"
#include "maps/ringbuf.h"
#include "xdp/buff.h"
#include "xdp/helpers.h"

namespace knod::xdp {
namespace {

template <typename M>
M* typed_map(vm::Run& run, uint64_t m) {
  maps::Map* map = run.map_arg(m);
  if (!map) return nullptr;
  auto* t = dynamic_cast<M*>(map);
  if (!t) run.fault = vm::Fault::kBadHelper;  // verifier: wrong map type for the helper
  return t;
}

uint64_t perf_event_output(vm::Run& run, uint64_t ctx, uint64_t m, uint64_t flags, uint64_t data,
                           uint64_t size) {
  Buff* b = buff_of(run, ctx);
  if (!b) return 0;
  auto* map = typed_map<maps::PerfEventArray>(run, m);
  if (!map) return 0;
  if (size && !arg_mem(run, data, size, false)) return 0;
  const uint64_t xdp_size = (flags & BPF_F_CTXLEN_MASK) >> 32;
  if (flags & ~(BPF_F_CTXLEN_MASK | BPF_F_INDEX_MASK)) return neg(EINVAL);
  if (xdp_size > b->len()) return neg(EFAULT);
  return uint64_t(map->output(flags & BPF_F_INDEX_MASK, run.cpu, ptr<const void>(data), size,
                              ptr<const void>(b->data), xdp_size));
}

uint64_t ringbuf_output(vm::Run& run, uint64_t m, uint64_t data, uint64_t size, uint64_t flags,
                        uint64_t) {
  auto* rb = typed_map<maps::RingBuf>(run, m);
  if (!rb || (size && !arg_mem(run, data, size, false))) return 0;
  return uint64_t(rb->output(ptr<const void>(data), size, flags));
}

uint64_t ringbuf_query(vm::Run& run, uint64_t m, uint64_t flags, uint64_t, uint64_t, uint64_t) {
  auto* rb = typed_map<maps::RingBuf>(run, m);
  return rb ? rb->query(flags) : 0;
}

uint64_t ringbuf_reserve(vm::Run& run, uint64_t m, uint64_t size, uint64_t flags, uint64_t,
                         uint64_t) {
  auto* rb = typed_map<maps::RingBuf>(run, m);
  return rb ? reinterpret_cast<uint64_t>(rb->reserve(size, flags)) : 0;
}

/// The ring buffer whose storage holds `sample`, or nullptr and a fault (the verifier only
/// accepts a pointer bpf_ringbuf_reserve returned).
maps::RingBuf* owner(vm::Run& run, uint64_t sample) {
  if (run.env)
    for (const auto& m : run.env->maps)
      if (auto* rb = dynamic_cast<maps::RingBuf*>(m.get()))
        for (const auto& p : rb->value_pools()) {
          const uint64_t lo = reinterpret_cast<uint64_t>(p.base);
          if (sample >= lo + 8 && sample < lo + p.bytes) return rb;
        }
  run.fault = vm::Fault::kBadHelper;
  return nullptr;
}

uint64_t ringbuf_submit(vm::Run& run, uint64_t sample, uint64_t flags, uint64_t, uint64_t,
                        uint64_t) {
  if (maps::RingBuf* rb = owner(run, sample)) rb->submit(ptr<void>(sample), flags);
  return 0;
}

uint64_t ringbuf_discard(vm::Run& run, uint64_t sample, uint64_t flags, uint64_t, uint64_t,
                         uint64_t) {
  if (maps::RingBuf* rb = owner(run, sample)) rb->discard(ptr<void>(sample), flags);
  return 0;
}

}  // namespace

void add_output_helpers(vm::HelperTable& t) {
  set_helper(t, BPF_FUNC_perf_event_output, "bpf_perf_event_output", perf_event_output, kGplOnly);
  set_helper(t, BPF_FUNC_ringbuf_output, "bpf_ringbuf_output", ringbuf_output);
  set_helper(t, BPF_FUNC_ringbuf_reserve, "bpf_ringbuf_reserve", ringbuf_reserve);
  set_helper(t, BPF_FUNC_ringbuf_submit, "bpf_ringbuf_submit", ringbuf_submit);
  set_helper(t, BPF_FUNC_ringbuf_discard, "bpf_ringbuf_discard", ringbuf_discard);
  set_helper(t, BPF_FUNC_ringbuf_query, "bpf_ringbuf_query", ringbuf_query);
}

}  // namespace knod::xdp
