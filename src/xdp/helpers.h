// The XDP helper table (linux/bpf.h __BPF_FUNC_MAPPER ids, net/core/filter.c
// xdp_func_proto / bpf_base_func_proto) and what the helper families share.
// Errors are the kernel's negative errno values. A pointer argument the kernel's verifier
// would have rejected (outside the run's memory) sets Fault::kBadHelper instead.
#pragma once

#include <cerrno>
#include <cstdint>

#include "vm/abi.h"

namespace knod::xdp {

constexpr int kEnotsupp = 524;  ///< kernel-internal ENOTSUPP (include/linux/errno.h)

/// Every helper an XDP program may call, by id, with linux/bpf.h names.
const vm::HelperTable& helpers();

// ---- one family per file (helpers_*.cpp) ----
void add_map_helpers(vm::HelperTable& t);        ///< 1-3, 87-89, 93-94, 164
void add_time_helpers(vm::HelperTable& t);       ///< 5, 7, 8, 118, 125, 160, 208
void add_printk_helpers(vm::HelperTable& t);     ///< 6
void add_redirect_helpers(vm::HelperTable& t);   ///< 12, 23, 51
void add_output_helpers(vm::HelperTable& t);     ///< 25, 130-134
void add_csum_helpers(vm::HelperTable& t);       ///< 28
void add_buff_helpers(vm::HelperTable& t);       ///< 44, 54, 65, 188-190
void add_fib_helpers(vm::HelperTable& t);        ///< 69, 163
void add_loop_helpers(vm::HelperTable& t);       ///< 181
void add_syncookie_helpers(vm::HelperTable& t);  ///< 204-207

/// set_helper's last argument for a helper whose kernel bpf_func_proto has gpl_only = true.
constexpr bool kGplOnly = true;

/// Registers helper `id` under its linux/bpf.h name ("bpf_" + name).
inline void set_helper(vm::HelperTable& t, int id, const char* name, vm::HelperFn fn,
                       bool gpl_only = false) {
  t.fn[id] = fn;
  t.name[id] = name;
  t.gpl_only[id] = gpl_only;
}

/// Checks a pointer argument the verifier would have typed: [addr, addr+len) inside the run's
/// memory (writable when `write`). On failure sets run.fault = kBadHelper and returns false.
inline bool arg_mem(vm::Run& run, uint64_t addr, uint64_t len, bool write) {
  if (run.can_access(addr, len, write)) return true;
  run.fault = vm::Fault::kBadHelper;
  return false;
}

template <typename T>
inline T* ptr(uint64_t addr) {
  return reinterpret_cast<T*>(addr);
}

inline uint64_t neg(int err) {
  return uint64_t(int64_t(-err));
}

/// The nanosecond clock of the run: env.clock_ns when pinned, else clock_gettime(clk).
uint64_t clock_ns(const vm::Run& run, int clk);

}  // namespace knod::xdp
