// Packet buffer helpers: bpf_xdp_adjust_head (44), bpf_xdp_adjust_meta (54),
// bpf_xdp_adjust_tail (65), bpf_xdp_get_buff_len (188), bpf_xdp_load_bytes (189),
// bpf_xdp_store_bytes (190). Source: net/core/filter.c (single-buffer frames; knod has no
// XDP multi-buffer frags).
#include <cstring>

#include "xdp/buff.h"
#include "xdp/helpers.h"

namespace knod::xdp {
namespace {

// The work is Buff::adjust_head / adjust_meta (xdp/buff.h), which the JIT also calls directly.
uint64_t xdp_adjust_head(vm::Run& run, uint64_t ctx, uint64_t offset, uint64_t, uint64_t,
                         uint64_t) {
  Buff* b = buff_of(run, ctx);
  return b ? uint64_t(b->adjust_head(run, int32_t(offset))) : 0;
}

uint64_t xdp_adjust_meta(vm::Run& run, uint64_t ctx, uint64_t offset, uint64_t, uint64_t,
                         uint64_t) {
  Buff* b = buff_of(run, ctx);
  return b ? uint64_t(b->adjust_meta(run, int32_t(offset))) : 0;
}

// data_end may move within [data + ETH_HLEN, xdp_data_hard_end]; grown bytes are zeroed.
uint64_t xdp_adjust_tail(vm::Run& run, uint64_t ctx, uint64_t offset, uint64_t, uint64_t,
                         uint64_t) {
  Buff* b = buff_of(run, ctx);
  if (!b) return 0;
  const int64_t off = int32_t(offset);
  const uint64_t data_end = b->data_end + off;
  if (int64_t(data_end - b->data_hard_end()) > 0) return neg(EINVAL);
  if (int64_t(data_end - (b->data + kEthHlen)) < 0) return neg(EINVAL);
  if (off > 0) std::memset(ptr<void>(b->data_end), 0, size_t(off));
  b->data_end = data_end;
  b->sync(run);
  return 0;
}

uint64_t xdp_get_buff_len(vm::Run& run, uint64_t ctx, uint64_t, uint64_t, uint64_t, uint64_t) {
  Buff* b = buff_of(run, ctx);
  return b ? b->len() : 0;
}

/// bpf_xdp_pointer: -EFAULT for offset or len > 0xffff, -EINVAL past the packet end.
long xdp_pointer(const Buff& b, uint32_t offset, uint32_t len, uint64_t* p) {
  if (offset > 0xffff || len > 0xffff) return -EFAULT;
  if (uint64_t(offset) + len > b.len()) return -EINVAL;
  *p = b.data + offset;
  return 0;
}

uint64_t xdp_load_bytes(vm::Run& run, uint64_t ctx, uint64_t offset, uint64_t buf, uint64_t len,
                        uint64_t) {
  Buff* b = buff_of(run, ctx);
  if (!b || !arg_mem(run, buf, uint32_t(len), true)) return 0;
  uint64_t p;
  if (long err = xdp_pointer(*b, uint32_t(offset), uint32_t(len), &p)) return uint64_t(err);
  std::memmove(ptr<void>(buf), ptr<const void>(p), uint32_t(len));
  return 0;
}

uint64_t xdp_store_bytes(vm::Run& run, uint64_t ctx, uint64_t offset, uint64_t buf, uint64_t len,
                         uint64_t) {
  Buff* b = buff_of(run, ctx);
  if (!b || !arg_mem(run, buf, uint32_t(len), false)) return 0;
  uint64_t p;
  if (long err = xdp_pointer(*b, uint32_t(offset), uint32_t(len), &p)) return uint64_t(err);
  std::memmove(ptr<void>(p), ptr<const void>(buf), uint32_t(len));
  return 0;
}

}  // namespace

void add_buff_helpers(vm::HelperTable& t) {
  set_helper(t, BPF_FUNC_xdp_adjust_head, "bpf_xdp_adjust_head", xdp_adjust_head);
  set_helper(t, BPF_FUNC_xdp_adjust_meta, "bpf_xdp_adjust_meta", xdp_adjust_meta);
  set_helper(t, BPF_FUNC_xdp_adjust_tail, "bpf_xdp_adjust_tail", xdp_adjust_tail);
  set_helper(t, BPF_FUNC_xdp_get_buff_len, "bpf_xdp_get_buff_len", xdp_get_buff_len);
  set_helper(t, BPF_FUNC_xdp_load_bytes, "bpf_xdp_load_bytes", xdp_load_bytes);
  set_helper(t, BPF_FUNC_xdp_store_bytes, "bpf_xdp_store_bytes", xdp_store_bytes);
}

}  // namespace knod::xdp
