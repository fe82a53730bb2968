// Internals shared by the map families: errno values, the bucket spinlock, definition checks.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <string>
#include <thread>

#include "maps/map.h"

namespace knod::maps {

/// The kernel's internal ENOTSUPP (include/linux/errno.h), returned by some fd-array paths.
constexpr long kENOTSUPP = 524;

/// Flags every map type accepts (kernel BPF_F_ACCESS_MASK | BPF_F_NUMA_NODE).
constexpr uint32_t kAccessFlags =
    BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG;

/// Largest storage one map may preallocate (bytes); create_map refuses bigger definitions.
constexpr uint64_t kMaxMapBytes = uint64_t(2) << 30;

inline uint32_t round_up8(uint32_t v) {
  return (v + 7u) & ~7u;
}

/// Test-and-set spinlock guarding one hash bucket (the kernel's per-bucket raw spinlock).
/// Critical sections are a few list operations and a memcpy; they never allocate or throw.
class SpinLock {
 public:
  void lock() {
    while (flag_.test_and_set(std::memory_order_acquire)) {
      // A holder cannot disable preemption here as the kernel's raw spinlocks do: after a
      // short spin, give the CPU away so that a descheduled holder can finish.
      for (int spins = 0; flag_.test(std::memory_order_relaxed); ++spins) {
        if (spins >= kSpinsBeforeYield) {
          std::this_thread::yield();
          spins = 0;
        }
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
  void unlock() {
    flag_.clear(std::memory_order_release);
  }

 private:
  static constexpr int kSpinsBeforeYield = 256;
  std::atomic_flag flag_;
};

/// Name of a map type as linux/bpf.h spells it ("BPF_MAP_TYPE_HASH").
std::string map_type_name(uint32_t type);

/// Throws knod::Error "map 'NAME' (TYPE): WHY (the kernel rejects it with -ERR)".
[[noreturn]] void bad_def(const std::string& name, const MapDef& def, const std::string& why,
                          const char* err = "EINVAL");

/// Checks map_flags against the type's accepted mask (kernel *_CREATE_FLAG_MASK).
void check_flags(const std::string& name, const MapDef& def, uint32_t allowed);

/// Update-flag check shared by most types: (flags & ~BPF_F_LOCK) > BPF_EXIST, or BPF_F_LOCK on
/// a map without bpf_spin_lock, is -EINVAL.
inline bool bad_update_flags(uint64_t flags) {
  return flags > BPF_EXIST;
}

}  // namespace knod::maps
