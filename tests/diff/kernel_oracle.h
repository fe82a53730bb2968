// The kernel as the oracle: loads a BPF object into the running kernel with libbpf, preloads
// its maps, runs BPF_PROG_TEST_RUN and dumps every map afterwards. Needs root and bpf();
// `available()` says whether this machine allows it (and why not).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

struct bpf_object;

namespace knod::diff {

using Bytes = std::vector<uint8_t>;
/// A map's contents as user space sees them (BPF_MAP_LOOKUP_ELEM over BPF_MAP_GET_NEXT_KEY):
/// key bytes → value bytes (per-CPU maps: all possible CPUs, 8-byte aligned each).
using MapContents = std::map<Bytes, Bytes>;

struct TestRunResult {
  uint32_t retval = 0;  ///< r0 of the program (the XDP action)
  Bytes data_out;       ///< after the program, from data_meta: metadata, then the packet
  int err = 0;          ///< bpf_prog_test_run_opts error (negative errno), 0 when it ran
};

class KernelObject {
 public:
  /// Opens and loads `path`; throws std::runtime_error with libbpf's reason on failure.
  /// max_entries_zero: value given to maps declared with max_entries 0.
  explicit KernelObject(const std::string& path, uint32_t max_entries_zero = 0);
  ~KernelObject();
  KernelObject(const KernelObject&) = delete;
  KernelObject& operator=(const KernelObject&) = delete;

  /// Applies an examples/xdp <name>.maps.json preload (examples/xdp/preload.h: PROG_ARRAY
  /// "prog" entries become program fds, DEVMAP values become `devmap_ifindex` when non-zero).
  /// Returns the entries written; throws std::runtime_error naming the map on a kernel error.
  int preload(const std::string& json_path, uint32_t devmap_ifindex);
  /// Names of the object's programs (ELF order) and their enum bpf_prog_type.
  std::vector<std::pair<std::string, int>> programs() const;
  /// BPF_MAP_UPDATE_ELEM; returns 0 or -errno.
  int update(const std::string& map, const Bytes& key, const Bytes& value);
  /// Stores program `prog`'s fd at `index` of PROG_ARRAY `map`. 0 or -errno.
  int set_prog_array(const std::string& map, uint32_t index, const std::string& prog);
  /// Runs program `prog` once on `packet` (BPF_PROG_TEST_RUN, repeat 1) on CPU 0.
  TestRunResult test_run(const std::string& prog, const Bytes& packet);
  /// Every map's contents except PROG_ARRAY and map-in-map (whose values are kernel ids).
  std::map<std::string, MapContents> dump_maps();
  /// Map type (enum bpf_map_type) of `map`, or -1.
  int map_type(const std::string& map);

  static uint32_t possible_cpus();
  /// True when bpf() works here; otherwise `why` says what refused it.
  static bool available(std::string* why);

 private:
  bpf_object* obj_ = nullptr;
};

}  // namespace knod::diff
