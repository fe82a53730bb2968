// struct xdp_buff layout and struct xdp_md ctx rewriting (net/core/filter.c).
#include "xdp/buff.h"

#include <cstddef>

#include "device/batch.h"

namespace knod::xdp {

uint64_t Buff::data_hard_end() const {
  return data_hard_start + frame_sz - device::kTailroom;
}

bool Buff::attach(vm::Run& run) {
  run.ctx_lo = reinterpret_cast<uint64_t>(ctx);
  run.ctx_hi = run.ctx_lo + sizeof(ctx);
  run.ctx_load = &ctx_load;
  run.ctx_store = &ctx_store;
  run.prog_state = this;
  run.ctx_fields = this;
  packet_region = run.add_region(data_meta, data_end, true);
  return packet_region >= 0;
}

// offsetof(struct xdp_md, ...) from linux/bpf.h.
bool ctx_load(vm::Run& run, uint32_t off, uint32_t size, uint64_t* value) {
  const auto* b = static_cast<const Buff*>(run.prog_state);
  if (!b || size != 4 || off % 4 != 0) return false;  // __is_valid_xdp_access
  switch (off) {
    case 0:
      *value = b->data;
      return true;
    case 4:
      *value = b->data_end;
      return true;
    case 8:
      *value = b->data_meta;
      return true;
    case 12:
      *value = b->ingress_ifindex;
      return true;
    case 16:
      *value = b->rx_queue_index;
      return true;
    case 20:
      *value = b->egress_ifindex;
      return true;
    default:
      return false;
  }
}

bool ctx_store(vm::Run&, uint32_t, uint32_t, uint64_t) {
  return false;
}

}  // namespace knod::xdp
