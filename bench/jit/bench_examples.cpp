// The example XDP programs (examples/xdp) on their captures (examples/pcap), with their map
// preloads: reference interpreter vs JIT on one thread, through xdp::Runtime::run_packet as
// `knod run` does. One iteration = one pass over the capture (one batch); counter per_pkt
// (time per packet).
// Packets are not reset between iterations (BPF_PROG_TEST_RUN repeat semantics, see
// docs/PERFORMANCE.md). Objects missing from the build are skipped.
#include <benchmark/benchmark.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/bundled_examples.h"
#include "io/map_json.h"
#include "io/pcap.h"
#include "jit/executor.h"
#include "loader/object.h"
#include "vm/interp.h"
#include "xdp/runtime.h"

namespace {

namespace fs = std::filesystem;

using Example = knod::cli::BundledExample;
constexpr const auto& kExamples = knod::cli::kBundledExamples;

void BM_Example(benchmark::State& state, Example e, bool jit) {
  using namespace knod;
  const std::string obj_path = std::string(KNOD_XDP_OBJ_DIR) + "/" + e.name + ".o";
  const std::string maps = std::string(KNOD_XDP_SRC_DIR) + "/" + e.name + ".maps.json";
  loader::LoadOptions lo;
  lo.ncpus = 1;
  loader::Object obj = loader::load_object(obj_path, lo);
  io::apply_map_preload(io::read_map_preload(maps), obj, maps);
  xdp::Runtime rt(obj, e.prog, xdp::Options{});
  std::unique_ptr<vm::Executor> ex;
  if (jit) {
    jit::JitOptions o;
    o.ctx = jit::CtxKind::kXdp;
    auto j = std::make_unique<jit::JitExecutor>(o);
    state.counters["compile_ms"] = j->compile(rt.program(), &rt.env()).compile_ms;
    for (const vm::Program* p : rt.env().programs)
      if (p) j->compile(*p, &rt.env());
    ex = std::move(j);
  } else {
    ex = std::make_unique<vm::Interpreter>();
  }
  // The capture as one batch of fixed 4 KiB frames, data at XDP_PACKET_HEADROOM.
  io::PcapReader in(std::string(KNOD_PCAP_DIR) + "/" + e.pcap);
  std::vector<std::vector<uint8_t>> pkts;
  for (io::Packet p; in.next(p);) pkts.push_back(p.data);
  const uint32_t n = uint32_t(pkts.size());
  std::vector<uint8_t> frames(size_t(n) * device::kFrameSize), fault(n);
  std::vector<uint32_t> off(n, device::kXdpHeadroom), len(n), meta(n), verdict(n);
  for (uint32_t i = 0; i < n; ++i) {
    std::memcpy(&frames[size_t(i) * device::kFrameSize + device::kXdpHeadroom], pkts[i].data(),
                pkts[i].size());
    len[i] = uint32_t(pkts[i].size());
  }
  device::Batch b;
  b.count = n;
  b.stride = device::kFrameSize;
  b.frames = frames.data();
  b.data_off = off.data();
  b.data_len = len.data();
  b.meta_len = meta.data();
  b.verdict = verdict.data();
  b.fault = fault.data();
  for (auto _ : state)
    for (uint32_t i = 0; i < n; ++i) rt.run_packet(*ex, b, i, 0);
  state.SetItemsProcessed(int64_t(state.iterations()) * n);
  // Seconds per packet (printed with an SI prefix: "52.3n" = 52.3 ns).
  state.counters["per_pkt"] = benchmark::Counter(
      double(state.iterations()) * n, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

[[maybe_unused]] const bool registered = [] {
  for (const Example& e : kExamples) {
    if (!fs::exists(std::string(KNOD_XDP_OBJ_DIR) + "/" + e.name + ".o")) continue;
    benchmark::RegisterBenchmark((std::string("Example/") + e.name + "/interp").c_str(), BM_Example,
                                 e, false);
    benchmark::RegisterBenchmark((std::string("Example/") + e.name + "/jit1").c_str(), BM_Example,
                                 e, true);
  }
  return true;
}();

}  // namespace
