// Persistent mode on a CUDA GPU (device/cuda/device.h start_persistent): the persistent
// kernel fed through the mailbox ring in mapped host memory gives the CPU JIT's verdict,
// redirect, fault and bytes per packet, with more batches than ring slots, batches of 1 and
// 0 packets, and stop() with batches in flight. Lanes run concurrently on a GPU, so only
// examples whose packet results do not depend on packet order are compared (maps: only
// where no lanes race on them). Skips without an NVIDIA driver or GPU.
#include <gtest/gtest.h>

#include "base/error.h"
#include "cli/bundled_examples.h"
#include "cuda_skip.h"
#include "device/cuda/device.h"
#include "sim_job.h"

namespace knod::gpu_test {
namespace {

struct Example {
  std::string name, prog, pcap;
};

Example bundled(const std::string& name) {
  for (const auto& e : cli::kBundledExamples)
    if (name == e.name) return {e.name, e.prog, e.pcap};
  throw std::invalid_argument("no bundled example " + name);
}

void expect_same_packets(const SimOutcome& got, const SimOutcome& want) {
  EXPECT_EQ(got.verdict, want.verdict);
  EXPECT_EQ(got.redirect, want.redirect);
  EXPECT_EQ(got.fault, want.fault);
  EXPECT_EQ(got.bytes, want.bytes);
}

std::unique_ptr<device::cuda::Device>& gpu() {
  static std::unique_ptr<device::cuda::Device> dev = device::cuda::Device::open("cuda:0");
  return dev;
}

class CudaPersistent : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaPersistent, SameAsCpuJit) {
  if (std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << "no CUDA driver: " << why;
  Example e = bundled(GetParam());
  std::string obj = std::string(KNOD_EXAMPLES_OBJ_DIR) + "/" + e.name + ".o";
  std::string maps = std::string(KNOD_EXAMPLES_SRC_DIR) + "/" + e.name + ".maps.json";
  auto frames = read_frames(std::string(KNOD_PCAP_DIR) + "/" + e.pcap);
  LoadedExample cpu(obj, e.prog, maps);
  SimOutcome want = run_on_cpu(cpu, frames);
  for (const std::vector<uint32_t>& sizes : {std::vector<uint32_t>{3}, {1, 0, 5, 64, 2}, {256}}) {
    for (bool wait : {true, false}) {
      LoadedExample fresh(obj, e.prog, maps);
      SessionPlan plan;
      plan.sizes = sizes;
      plan.complete_before_stop = wait;
      std::vector<uint64_t> done;
      plan.completed = &done;
      SimOutcome got = run_on_session(fresh, *gpu(), frames, plan);
      SCOPED_TRACE(::testing::Message() << "first size " << sizes[0] << " wait " << wait);
      expect_same_packets(got, want);
      for (size_t s = 0; s < done.size(); ++s) EXPECT_EQ(done[s], s);
      EXPECT_FALSE(gpu()->persistent());
    }
  }
}

// Stateless for packet results (vlan, icmp_echo), counters only (proto_count, l4lb), tail
// calls (tailcall).
INSTANTIATE_TEST_SUITE_P(Examples, CudaPersistent,
                         ::testing::Values("vlan", "icmp_echo", "proto_count", "l4lb", "tailcall"));

// More blocks than the GPU can hold at once would wait forever: refused.
TEST(CudaPersistentSession, TooManyBlocksIsAnError) {
  if (std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << "no CUDA driver: " << why;
  Example e = bundled("vlan");
  LoadedExample ex(std::string(KNOD_EXAMPLES_OBJ_DIR) + "/vlan.o", e.prog, "");
  gpu()->load(ex.rt->env(), ex.entry, device::gpu::Mode::kXdp);
  device::gpu::PersistentOptions o;
  o.blocks = 1u << 24;
  EXPECT_THROW(gpu()->start_persistent(o), Error);
  EXPECT_FALSE(gpu()->persistent());
}

}  // namespace
}  // namespace knod::gpu_test
