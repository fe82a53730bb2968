// LPM_TRIE, LRU_HASH and DEVMAP_HASH in the GPU runtime (runtime.c), through the host-
// simulated GPU: a fixed sequence of map operations (bpf/gpu_maps.c) gives the kernel's
// return values (kernel/bpf/lpm_trie.c, hashtab.c, devmap.c) and the same packets and map
// contents as the CPU JIT; an LRU_HASH filled past max_entries evicts instead of failing.
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <cstring>

#include "device/gpu/host_sim.h"
#include "sim_job.h"

namespace knod::gpu_test {
namespace {

const std::string kObj = std::string(KNOD_GPU_FIXTURES) + "/gpu_maps.o";

struct Op {
  uint8_t op, plen, key[4], value, flags;
  int32_t want;  // result the kernel gives ([8..11]); for op 6 the verdict
};

std::vector<uint8_t> frame(const Op& o) {
  std::vector<uint8_t> f(14 + 12, 0);
  f[12] = 0x08;  // IPv4 ethertype, not looked at
  uint8_t* p = f.data() + 14;
  p[0] = o.op, p[1] = o.plen, std::memcpy(p + 2, o.key, 4), p[6] = o.value, p[7] = o.flags;
  return f;
}

int32_t result(const std::vector<uint8_t>& bytes) {
  int32_t r;
  std::memcpy(&r, bytes.data() + 14 + 8, 4);
  return r;
}

void preload_devs(LoadedExample& ex) {
  int i = ex.obj.find_map("devs");
  ASSERT_GE(i, 0);
  for (auto [k, v] : {std::pair<uint32_t, uint32_t>{7, 42}, {9, 43}})
    ASSERT_EQ(ex.obj.maps[i]->user_update(&k, &v, BPF_ANY), 0);
}

TEST(HostSimMaps, KernelResultsAndSameAsCpu) {
  constexpr uint8_t N = 1, E = 2;  // BPF_NOEXIST, BPF_EXIST
  const std::vector<Op> ops = {
      {1, 24, {10, 0, 0, 0}, 1, 0, 0},
      {1, 16, {10, 0, 0, 0}, 2, 0, 0},
      {3, 0, {10, 0, 0, 5}, 0, 0, 1},  // longest prefix: the /24
      {3, 0, {10, 0, 9, 9}, 0, 0, 2},
      {3, 0, {11, 0, 0, 1}, 0, 0, -1},
      {1, 24, {10, 0, 0, 77}, 3, N, -17},  // same /24 (bits past the prefix ignored): -EEXIST
      {1, 24, {10, 0, 0, 0}, 4, E, 0},
      {3, 0, {10, 0, 0, 5}, 0, 0, 4},
      {1, 33, {10, 0, 0, 0}, 9, 0, -22},  // prefixlen > 32: -EINVAL
      {1, 8, {10, 0, 0, 0}, 5, 0, 0},
      {1, 32, {10, 0, 0, 5}, 6, 0, 0},
      {1, 12, {10, 0, 0, 0}, 7, 0, -28},  // 4 entries = max_entries: -ENOSPC
      {3, 0, {10, 0, 0, 5}, 0, 0, 6},
      {2, 32, {10, 0, 0, 5}, 0, 0, 0},
      {2, 32, {10, 0, 0, 5}, 0, 0, -2},
      {3, 0, {10, 0, 0, 5}, 0, 0, 4},
      {2, 20, {10, 0, 0, 0}, 0, 0, -2},
      {3, 0, {10, 9, 9, 9}, 0, 0, 5},
      {4, 0, {1, 0, 0, 0}, 10, 0, 0},
      {4, 0, {1, 0, 0, 0}, 11, N, -17},
      {4, 0, {2, 0, 0, 0}, 20, E, -2},
      {5, 0, {1, 0, 0, 0}, 0, 0, 0},
      {5, 0, {1, 0, 0, 0}, 0, 0, -2},
      {4, 0, {3, 0, 0, 0}, 30, 0, 0},
      {6, 0, {7, 0, 0, 0}, 0, 0, XDP_REDIRECT},
      {6, 0, {8, 0, 0, 0}, 0, XDP_PASS, XDP_PASS},  // no entry: the flags' action
      {6, 0, {9, 0, 0, 0}, 0, 0, XDP_REDIRECT},
      {6, 0, {8, 0, 0, 0}, 0, 0, XDP_ABORTED},
  };
  std::vector<std::vector<uint8_t>> frames;
  for (const Op& o : ops) frames.push_back(frame(o));
  LoadedExample cpu_ex(kObj, "xdp_gpu_maps", ""), sim_ex(kObj, "xdp_gpu_maps", "");
  preload_devs(cpu_ex);
  preload_devs(sim_ex);
  SimOutcome want = run_on_cpu(cpu_ex, frames);
  device::gpu::HostSim sim;
  SimOutcome got = run_on_device(sim_ex, sim, frames, 3);
  for (size_t i = 0; i < ops.size(); ++i) {
    int32_t r = ops[i].op == 6 ? int32_t(got.verdict[i]) : result(got.bytes[i]);
    EXPECT_EQ(r, ops[i].want) << "op " << i;
    EXPECT_EQ(got.verdict[i], want.verdict[i]) << "op " << i;
    EXPECT_EQ(got.redirect[i], want.redirect[i]) << "op " << i;
    EXPECT_EQ(got.bytes[i], want.bytes[i]) << "op " << i;
    EXPECT_EQ(int(got.fault[i]), 0) << "op " << i;
  }
  EXPECT_EQ(got.redirect[24] & 0xffffffff, 42u);
  EXPECT_EQ(got.redirect[26] & 0xffffffff, 43u);
  EXPECT_EQ(got.bytes[19][14 + 6], 10);    // the NOEXIST update left the value
  EXPECT_EQ(got.bytes[20][14 + 6], 0xff);  // the EXIST update added nothing
  for (size_t m = 0; m < want.maps.size(); ++m)
    EXPECT_EQ(got.maps[m], want.maps[m]) << sim_ex.obj.map_specs[m].name;
  EXPECT_EQ(got.maps[size_t(sim_ex.obj.find_map("lpm"))].size(), 3u);
}

TEST(HostSimMaps, LruHashEvictsWhenFull) {
  std::vector<std::vector<uint8_t>> frames;
  for (uint8_t k = 1; k <= 100; ++k) frames.push_back(frame({4, 0, {k, 0, 0, 0}, k, 0, 0}));
  LoadedExample ex(kObj, "xdp_gpu_maps", "");
  device::gpu::HostSim sim;
  SimOutcome got = run_on_device(ex, sim, frames, 16);
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(result(got.bytes[i]), 0) << "update " << i;      // never -E2BIG
    EXPECT_EQ(got.bytes[i][14 + 6], i + 1) << "update " << i;  // present right after
  }
  const auto& lru = got.maps[size_t(ex.obj.find_map("lru"))];
  EXPECT_EQ(lru.size(), 64u);  // max_entries
  EXPECT_EQ(lru.count({100, 0, 0, 0}), 1u);
}

// Per-CPU lanes (runtime.c run_lanes): with per-CPU maps each virtual CPU is one lane that
// runs its packets in order, so no two lanes ever write one CPU's slot at once. gpusim runs
// lanes one after another, so the order the packets ran in (bpf/gpu_percpu.c numbers them
// with a shared counter) shows the schedule: 6 packets on 2 CPUs run as lane 0 (packets 0, 2,
// 4) then lane 1 (1, 3, 5); on 8 CPUs every packet has its own lane and they run in order.
TEST(HostSimMaps, PerCpuMapsRunOneLanePerCpu) {
  const std::string obj = std::string(KNOD_GPU_FIXTURES) + "/gpu_percpu.o";
  std::vector<std::vector<uint8_t>> frames(6, std::vector<uint8_t>(14 + 8, 0));
  struct Want {
    uint32_t ncpus;
    std::vector<uint32_t> ran_as, cpu;
  };
  for (const Want& w : {Want{2, {0, 3, 1, 4, 2, 5}, {0, 1, 0, 1, 0, 1}},
                        Want{8, {0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}}}) {
    LoadedExample ex(obj, "xdp_gpu_percpu", "", w.ncpus);
    device::gpu::HostSim sim;
    SimOutcome got = run_on_device(ex, sim, frames, 6);
    ASSERT_EQ(got.bytes.size(), 6u);
    for (size_t i = 0; i < 6; ++i) {
      uint32_t ran_as, cpu;
      std::memcpy(&ran_as, got.bytes[i].data() + 14, 4);
      std::memcpy(&cpu, got.bytes[i].data() + 18, 4);
      EXPECT_EQ(ran_as, w.ran_as[i]) << "ncpus " << w.ncpus << " packet " << i;
      EXPECT_EQ(cpu, w.cpu[i]) << "ncpus " << w.ncpus << " packet " << i;
      EXPECT_EQ(got.verdict[i], uint32_t(XDP_PASS));
    }
  }
}

}  // namespace
}  // namespace knod::gpu_test
