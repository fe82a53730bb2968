// kernel::Object: an eBPF ELF object loaded into the running kernel with libbpf (so the
// kernel's verifier and JIT run it), its maps preloaded from a knod preload file, and
// BPF_PROG_TEST_RUN on it (net/bpf/test_run.c). The kernel is knod's oracle and its
// performance baseline. Needs root (CAP_BPF + CAP_NET_ADMIN); `available()` says why not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/map_json.h"

struct bpf_object;

namespace knod::kernel {

/// Result of one BPF_PROG_TEST_RUN (bpf_attr.test).
struct TestRun {
  uint32_t retval = 0;            ///< r0 of the last repeat (the XDP action)
  uint32_t duration_ns = 0;       ///< kernel's mean ns per repeat (bpf_test_timer)
  std::vector<uint8_t> data_out;  ///< packet after the last repeat (from data, no metadata)
};

class Object {
 public:
  /// bpf_object__open_file + bpf_object__load. Maps declared with max_entries 0 get
  /// `max_entries_zero` when it is non-zero. Throws knod::Error with libbpf's reason.
  explicit Object(const std::string& path, uint32_t max_entries_zero = 0);
  ~Object();
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  /// Writes a parsed preload (io::read_map_preload; format examples/xdp/README.md) with
  /// bpf_map_update_elem(BPF_ANY), in order. Per-CPU maps get the value on every possible
  /// CPU; PROG_ARRAY "prog" entries store that program's fd; DEVMAP/DEVMAP_HASH values are
  /// replaced by `devmap_ifindex` (default 1, lo: the example ports do not exist here).
  /// Throws knod::Error naming `what`, the map and the entry.
  void preload(const io::MapPreload& preload, const std::string& what, uint32_t devmap_ifindex = 1);

  /// BPF_PROG_TEST_RUN of program `prog` (function name or section) on `packet`, `repeat`
  /// times (>= 1) on the calling thread's CPU. For XDP the kernel does NOT reset the buffer
  /// between repeats: data pointers and bytes a repeat changed are the next repeat's input.
  /// Throws knod::Error (unknown program, bpf() error).
  TestRun test_run(const std::string& prog, const std::vector<uint8_t>& packet,
                   uint32_t repeat = 1);

  /// Program names (function names) of the object.
  std::vector<std::string> programs() const;

  /// libbpf_num_possible_cpus().
  static uint32_t possible_cpus();
  /// True when bpf() works here; otherwise `why` says what refused it.
  static bool available(std::string* why);

 private:
  bpf_object* obj_ = nullptr;
};

}  // namespace knod::kernel
