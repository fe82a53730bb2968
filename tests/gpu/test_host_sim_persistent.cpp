// Persistent mode on the host-simulated GPU: the persistent kernel (runtime.c
// knod_gpu_persistent) on host threads, fed through the mailbox ring (gpu_abi.h) by
// BatchDevice::start_persistent/submit/complete/stop. A session must give exactly the CPU
// JIT's packet-by-packet results (verdict, redirect, fault, bytes; maps after stop()) on the
// bundled examples and their captures, with more batches than ring slots, batches of 1 and 0
// packets, any number of blocks, and stop() with batches in flight.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "cli/bundled_examples.h"
#include "device/gpu/gpu_abi.h"
#include "device/gpu/host_sim.h"
#include "io/map_json.h"
#include "sim_job.h"

namespace knod::gpu_test {
namespace {

const cli::BundledExample& bundled(const std::string& name) {
  for (const auto& e : cli::kBundledExamples)
    if (name == e.name) return e;
  throw std::invalid_argument("no bundled example " + name);
}

/// An example with its bundled capture, loaded twice: for the CPU JIT and for gpusim.
struct Pair {
  explicit Pair(const std::string& name, uint32_t ncpus = 1)
      : ex(bundled(name)),
        obj(std::string(KNOD_EXAMPLES_OBJ_DIR) + "/" + name + ".o"),
        maps(std::string(KNOD_EXAMPLES_SRC_DIR) + "/" + name + ".maps.json"),
        frames(read_frames(std::string(KNOD_PCAP_DIR) + "/" + ex.pcap)),
        cpu(obj, ex.prog, maps, ncpus),
        sim(obj, ex.prog, maps, ncpus),
        want(run_on_cpu(cpu, frames, ncpus)) {}
  const cli::BundledExample& ex;
  std::string obj, maps;
  std::vector<std::vector<uint8_t>> frames;
  LoadedExample cpu, sim;
  SimOutcome want;
};

class PersistentExample : public ::testing::TestWithParam<std::string> {};

// Batches small enough that the capture needs at least two laps of the ring.
TEST_P(PersistentExample, SameAsCpuJit) {
  Pair p(GetParam());
  const uint32_t size =
      std::clamp<uint32_t>(uint32_t(p.frames.size() / (2 * KNOD_GPU_MAILBOX_DEPTH + 1)), 1, 7);
  const size_t batches = (p.frames.size() + size - 1) / size;
  ASSERT_GT(batches, 2u * KNOD_GPU_MAILBOX_DEPTH) << p.ex.pcap;
  device::gpu::HostSim dev;
  std::vector<uint64_t> done;
  SessionPlan plan;
  plan.sizes = {size};
  plan.completed = &done;
  SimOutcome got = run_on_session(p.sim, dev, p.frames, plan);
  expect_same(got, p.want, p.sim.obj);
  ASSERT_EQ(done.size(), batches);
  for (size_t s = 0; s < batches; ++s) EXPECT_EQ(done[s], s);
  EXPECT_FALSE(dev.persistent());
}

INSTANTIATE_TEST_SUITE_P(Examples, PersistentExample,
                         ::testing::Values("l4lb", "ddos", "vlan", "icmp_echo", "proto_count",
                                           "tailcall", "nat44"));

// Sizes 1, 0 (empty), 5, 64, 2 cycled, on 1, 2 and 5 simulated blocks (more blocks than
// packets in a batch: blocks with no lane still count the slot done).
TEST(Persistent, MixedBatchSizesAndBlocks) {
  for (uint32_t blocks : {1u, 2u, 5u}) {
    Pair p("l4lb");
    device::gpu::HostSim dev;
    std::vector<uint64_t> done;
    SessionPlan plan;
    plan.sizes = {1, 0, 5, 64, 2};
    plan.opts.blocks = blocks;
    plan.completed = &done;
    SimOutcome got = run_on_session(p.sim, dev, p.frames, plan);
    SCOPED_TRACE("blocks " + std::to_string(blocks));
    expect_same(got, p.want, p.sim.obj);
    ASSERT_FALSE(done.empty());
    EXPECT_EQ(done.back(), done.size() - 1);
  }
}

// stop() with up to KNOD_GPU_MAILBOX_DEPTH batches in flight completes them (results in
// their Batches, maps written back) and ends the session.
TEST(Persistent, StopWithBatchesInFlight) {
  Pair p("ddos");
  device::gpu::HostSim dev;
  SessionPlan plan;
  plan.sizes = {16};
  plan.complete_before_stop = false;
  SimOutcome got = run_on_session(p.sim, dev, p.frames, plan);
  expect_same(got, p.want, p.sim.obj);
  EXPECT_FALSE(dev.persistent());
  EXPECT_THROW(dev.complete(), Error);
}

// Per-CPU maps: lane i of a batch is virtual CPU i % 4, as in one-launch batches.
TEST(Persistent, LaneIsVirtualCpu) {
  Pair p("proto_count", 4);
  device::gpu::HostSim dev;
  SessionPlan plan;
  plan.sizes = {64};
  expect_same(run_on_session(p.sim, dev, p.frames, plan), p.want, p.sim.obj);
}

// The maps stay on the device for the session: a host read during it sees the state at
// session start; after stop() the device's state.
TEST(Persistent, HostMapsUpdatedAtStop) {
  Pair p("proto_count");
  auto initial = io::map_contents(*p.sim.obj.maps[0]);
  device::gpu::HostSim dev;
  SessionPlan plan;
  plan.sizes = {4};
  std::map<std::vector<uint8_t>, std::vector<uint8_t>> mid;
  plan.during = [&] {
    while (dev.complete()) {
    }  // the first batch has run on the device
    mid = io::map_contents(*p.sim.obj.maps[0]);
  };
  SimOutcome got = run_on_session(p.sim, dev, p.frames, plan);
  EXPECT_EQ(mid, initial);
  EXPECT_NE(got.maps[0], initial);
  EXPECT_EQ(got.maps[0], p.want.maps[0]);
}

TEST(Persistent, MisuseIsAnError) {
  Pair p("vlan");
  device::gpu::HostSim dev;
  device::Batch none;
  EXPECT_THROW(dev.start_persistent({}), Error);  // nothing loaded
  EXPECT_THROW(dev.submit(none), Error);          // no session
  dev.load(p.sim.rt->env(), p.sim.entry, device::gpu::Mode::kXdp);
  device::gpu::PersistentOptions o;
  o.max_batch = 4;
  dev.start_persistent(o);
  EXPECT_TRUE(dev.persistent());
  EXPECT_THROW(dev.start_persistent(o), Error);
  EXPECT_THROW(dev.run(none), Error);
  std::vector<uint8_t> frames(5 * device::kFrameSize);
  std::vector<uint32_t> off(5, device::kXdpHeadroom), len(5, 60), verdict(5);
  std::vector<uint64_t> redirect(5);
  std::vector<uint8_t> fault(5);
  device::Batch big{5, device::kFrameSize, frames.data(), off.data(), len.data()};
  big.verdict = verdict.data(), big.redirect = redirect.data(), big.fault = fault.data();
  try {
    dev.submit(big);
    FAIL() << "a batch over max_batch was taken";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "gpusim: batch larger than max_batch or with another stride");
  }
  big.count = 4;
  EXPECT_EQ(dev.submit(big), 0u);
  EXPECT_EQ(dev.complete(), std::optional<uint64_t>(0));
  EXPECT_EQ(dev.complete(), std::nullopt);
  dev.stop();
  EXPECT_FALSE(dev.persistent());
}

}  // namespace
}  // namespace knod::gpu_test
