// bpf_csum_diff (28): net/core/filter.c, kernel >= 6.13 (one result on every arch):
//   from && to: csum_sub(csum_partial(to, to_size, seed), csum_partial(from, from_size, 0))
//   to only:    csum_partial(to, to_size, seed)
//   from only:  ~csum_partial(from, from_size, ~seed)
// folded with csum_from32to16. Sizes need not be multiples of 4 since that kernel.
#include "xdp/csum.h"
#include "xdp/helpers.h"

namespace knod::xdp {
namespace {

uint64_t csum_diff(vm::Run& run, uint64_t from, uint64_t from_size, uint64_t to, uint64_t to_size,
                   uint64_t seed) {
  const uint32_t fs = uint32_t(from_size), ts = uint32_t(to_size);
  if (fs && !arg_mem(run, from, fs, false)) return 0;
  if (ts && !arg_mem(run, to, ts, false)) return 0;
  uint32_t ret = uint32_t(seed);
  if (fs && ts)
    ret = csum_sub(csum_partial(ptr<const void>(to), ts, ret),
                   csum_partial(ptr<const void>(from), fs, 0));
  else if (ts)
    ret = csum_partial(ptr<const void>(to), ts, ret);
  else if (fs)
    ret = ~csum_partial(ptr<const void>(from), fs, ~ret);
  return csum_from32to16(ret);
}

}  // namespace

void add_csum_helpers(vm::HelperTable& t) {
  set_helper(t, BPF_FUNC_csum_diff, "bpf_csum_diff", csum_diff);
}

}  // namespace knod::xdp
