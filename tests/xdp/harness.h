// Runs one XDP program both in knod (xdp::Runtime + the reference interpreter) and in the
// running kernel (libbpf bpf_prog_load + bpf_prog_test_run_opts), for differential tests.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "isa/insn.h"
#include "maps/map.h"
#include "vm/abi.h"

namespace knod::xdp::test {

using Bytes = std::vector<uint8_t>;

struct MapInit {
  maps::MapDef def;
  std::vector<std::pair<Bytes, Bytes>> entries;  ///< user-side updates before the run
};

struct Case {
  std::vector<InsnVec> progs;  ///< progs[0] runs; all are loaded (tail call targets)
  std::vector<MapInit> maps;
  /// PROG_ARRAY fills: (map index, slot, program index)
  std::vector<std::tuple<int, uint32_t, int>> prog_slots;
  Bytes packet;           ///< data_in (metadata first when ctx_meta > 0)
  uint32_t ctx_meta = 0;  ///< xdp_md.data of ctx_in (bytes of metadata), 0: no ctx_in
  bool with_ctx = false;
  std::vector<uint32_t> subprogs;  ///< insn offsets of progs[0]'s subprograms/callbacks (BTF
                                   ///< func_info for the kernel)
};

struct Outcome {
  bool loaded = false;  ///< kernel: verifier accepted; knod: prepare accepted
  std::string error;    ///< why not
  int run_err = 0;      ///< kernel: bpf_prog_test_run_opts error
  uint32_t retval = 0;
  vm::Fault fault = vm::Fault::kNone;  ///< knod only
  Bytes data_out;                      ///< [data_meta, data_end) as BPF_PROG_TEST_RUN returns it
  uint32_t ctx_data = 0, ctx_data_end = 0;         ///< ctx_out data / data_end (offsets)
  std::map<int, std::map<Bytes, Bytes>> map_dump;  ///< HASH/ARRAY maps, by index
};

/// Which knod path runs the packet.
enum class Engine {
  kInterp,  ///< the reference interpreter, Runtime::run_packet
  kJit,     ///< the CPU JIT (jit::JitExecutor, xdp_md ctx), Runtime::run_packet
  kCpu,     ///< the CPU JIT as the CPU device runs it: Runtime::run_packets, the compiled
            ///< slot loop; Outcome::retval is then the verdict (r0 > XDP_REDIRECT: XDP_ABORTED)
};
Outcome run_knod(const Case& c, Engine engine = Engine::kInterp);
Outcome run_kernel(const Case& c);
/// True when bpf() works; else `why` says why not.
bool kernel_available(std::string* why);

}  // namespace knod::xdp::test
