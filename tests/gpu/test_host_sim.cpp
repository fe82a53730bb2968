// The host-simulated GPU (device/gpu/host_sim.h) against the CPU JIT device: every bundled
// example program (src/cli/bundled_examples.h) on every bundled capture (examples/pcap) gives
// the same verdict, redirect, fault and bytes per packet and the same map contents. The sim
// runs lanes in index order, so batches of any size keep the packet order; batches of 7 make
// the maps go through image upload and write-back between batches. Programs the GPU runtime
// cannot run must fail to load with their one "not supported on gpusim yet" error.
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>

#include "../xdp/insns.h"
#include "base/error.h"
#include "cli/bundled_examples.h"
#include "device/gpu/host_sim.h"
#include "sim_job.h"
#include "vm/interp.h"

namespace knod::gpu_test {
namespace {

// Examples the GPU runtime cannot load yet, with the exact error. (ddos runs: LPM_TRIE
// blocklist, LRU_HASH buckets.)
const std::map<std::string, std::string> kExpectedErrors = {
    {"router", "helper bpf_fib_lookup (69) not supported on gpusim yet"},
};

struct Case {
  cli::BundledExample ex;
  std::string pcap;  // file name in examples/pcap
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.ex.name << " on " << c.pcap;
}

class HostSimExample : public ::testing::TestWithParam<Case> {};

TEST_P(HostSimExample, SameAsCpuJit) {
  const Case& c = GetParam();
  std::string obj = std::string(KNOD_EXAMPLES_OBJ_DIR) + "/" + c.ex.name + ".o";
  std::string maps = std::string(KNOD_EXAMPLES_SRC_DIR) + "/" + c.ex.name + ".maps.json";
  std::string pcap = std::string(KNOD_PCAP_DIR) + "/" + c.pcap;
  ASSERT_TRUE(std::filesystem::exists(obj)) << obj;
  auto frames = read_frames(pcap);
  ASSERT_FALSE(frames.empty()) << pcap;

  LoadedExample cpu_ex(obj, c.ex.prog, maps), sim_ex(obj, c.ex.prog, maps);
  device::gpu::HostSim sim;
  auto expected = kExpectedErrors.find(c.ex.name);
  if (expected != kExpectedErrors.end()) {
    try {
      run_on_device(sim_ex, sim, frames, 7);
      FAIL() << c.ex.name << " ran on gpusim; expected: " << expected->second;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), expected->second);
    }
    return;
  }
  SimOutcome want = run_on_cpu(cpu_ex, frames);
  SimOutcome got = run_on_device(sim_ex, sim, frames, 7);
  ASSERT_EQ(got.verdict.size(), frames.size());
  expect_same(got, want, sim_ex.obj);
}

// Per-CPU maps on a GPU: lane i is virtual CPU i % ncpus (its per-CPU slot and
// bpf_get_smp_processor_id), so the slots hold what the CPU device gives when packet i runs on
// CPU i % ncpus.
TEST(HostSimPerCpu, LaneIsVirtualCpu) {
  for (const char* name : {"proto_count", "l4lb"}) {
    const cli::BundledExample* ex = nullptr;
    for (const auto& e : cli::kBundledExamples)
      if (std::string(e.name) == name) ex = &e;
    ASSERT_NE(ex, nullptr);
    std::string obj = std::string(KNOD_EXAMPLES_OBJ_DIR) + "/" + name + ".o";
    std::string maps = std::string(KNOD_EXAMPLES_SRC_DIR) + "/" + name + ".maps.json";
    auto frames = read_frames(std::string(KNOD_PCAP_DIR) + "/" + ex->pcap);
    LoadedExample cpu_ex(obj, ex->prog, maps, 4), sim_ex(obj, ex->prog, maps, 4);
    device::gpu::HostSim sim;
    SimOutcome want = run_on_cpu(cpu_ex, frames, 4);
    SimOutcome got = run_on_device(sim_ex, sim, frames, 64);
    EXPECT_EQ(got.verdict, want.verdict) << name;
    EXPECT_EQ(got.bytes, want.bytes) << name;
    ASSERT_EQ(got.maps.size(), want.maps.size());
    for (size_t m = 0; m < want.maps.size(); ++m)
      EXPECT_EQ(got.maps[m], want.maps[m]) << name << " map " << sim_ex.obj.map_specs[m].name;
  }
}

// bpf_xdp_adjust_meta on the GPU runtime as on the CPU (xdp::Buff) and the kernel: metadata
// up to 252 bytes, 4-aligned (xdp_metalen_invalid: skb_shared_info.meta_len is a u8; -EACCES
// else), and not into the xdp_frame's 40 bytes of headroom (-EINVAL): of 256 bytes of
// headroom, 216 are the most. The GPU runtime allowed 32 (the limit before Linux 6.x's u8).
// r0 = XDP_TX where the helper returned 0, else XDP_DROP; a 64-byte packet at 256.
TEST(HostSimXdp, AdjustMetaLimitsAsTheKernel) {
  using namespace knod::xdp::test;
  const struct {
    int32_t delta;
    uint32_t verdict, meta;
  } cases[] = {{-4, XDP_TX, 4},     {-32, XDP_TX, 32}, {-36, XDP_TX, 36}, {-216, XDP_TX, 216},
               {-220, XDP_DROP, 0}, {-6, XDP_DROP, 0}, {4, XDP_DROP, 0}};
  for (const auto& c : cases) {
    loader::Object obj;
    obj.path = "mem";
    obj.programs.push_back({"p", "xdp", BPF_PROG_TYPE_XDP,
                            prog({
                                mov64_imm(2, c.delta),
                                call(BPF_FUNC_xdp_adjust_meta),
                                mov64_reg(1, 0),
                                mov64_imm(0, XDP_TX),
                                jmp_imm(BPF_JEQ, 1, 0, 1),
                                mov64_imm(0, XDP_DROP),
                                exit_insn(),
                            })});
    xdp::Runtime sim_rt(obj, "p", {}), cpu_rt(obj, "p", {});
    const auto run = [&](bool gpu) {
      std::vector<uint8_t> frame(device::kFrameSize, 0x11);
      uint32_t off = device::kXdpHeadroom, len = 64, meta = 0, ifindex = 1, rxq = 0, verdict = 9;
      uint64_t redirect = 0;
      uint8_t fault = 0;
      device::Batch b{1,    device::kFrameSize, frame.data(), &off,   &len,   &meta, &ifindex,
                      &rxq, &verdict,           &redirect,    &fault, nullptr};
      if (gpu) {
        device::gpu::HostSim sim;
        sim.load(sim_rt.env(), 0, device::gpu::Mode::kXdp);
        sim.run(b);
      } else {
        vm::Interpreter interp;
        cpu_rt.run_packets(interp, b, 0, 1, 0);
      }
      return std::array<uint32_t, 3>{verdict, meta, uint32_t(fault)};
    };
    const auto want = std::array<uint32_t, 3>{c.verdict, c.meta, 0};
    EXPECT_EQ(run(false), want) << "cpu, delta " << c.delta;
    EXPECT_EQ(run(true), want) << "gpusim, delta " << c.delta;
  }
}

std::vector<Case> cases() {
  std::vector<std::string> pcaps;
  for (const auto& e : std::filesystem::directory_iterator(KNOD_PCAP_DIR))
    if (e.path().extension() == ".pcap") pcaps.push_back(e.path().filename().string());
  std::sort(pcaps.begin(), pcaps.end());
  std::vector<Case> v;
  for (const auto& ex : cli::kBundledExamples)
    for (const auto& p : pcaps) v.push_back({ex, p});
  return v;
}

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  std::string s =
      std::string(i.param.ex.name) + "_" + i.param.pcap.substr(0, i.param.pcap.size() - 5);
  for (char& ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Examples, HostSimExample, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace knod::gpu_test
