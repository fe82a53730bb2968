// The CPU device: every packet of a batch runs exactly once, on a worker index below
// workers(), per-CPU state is never shared by two threads at once; and a JIT program over a
// real batch layout gives each packet its own verdict.
#include "device/cpu/cpu_device.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "isa/asm.h"
#include "jit/executor.h"

namespace knod::device {
namespace {

TEST(CpuDevice, EveryPacketOnceOnAValidCpu) {
  CpuDevice dev(CpuOptions{4, 16});
  ASSERT_EQ(dev.workers(), 4u);
  constexpr uint32_t n = 10'007;
  std::vector<std::atomic<uint32_t>> hits(n);
  std::vector<uint64_t> per_cpu(4, 0);  // written only by its own worker
  std::atomic<uint32_t> bad_cpu{0};
  for (int round = 0; round < 3; ++round) {
    dev.run(n, [&](uint32_t i, uint32_t cpu) {
      if (cpu >= 4) {
        ++bad_cpu;
        return;
      }
      hits[i].fetch_add(1);
      per_cpu[cpu] += i;
    });
  }
  EXPECT_EQ(bad_cpu.load(), 0u);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 3u) << i;
  uint64_t sum = 0;
  for (uint64_t s : per_cpu) sum += s;
  EXPECT_EQ(sum, 3ull * n * (n - 1) / 2);
}

// for_chunks (the ESP crypto stage's use): any count, including 0 and fewer items than
// workers * chunk, any chunk; each item once per run, chunks within [0, count), worker ids
// below workers().
TEST(CpuDevice, ForChunksCoversEveryCountOnce) {
  CpuDevice dev(CpuOptions{4, 64});
  std::vector<std::atomic<uint32_t>> hits(257);
  std::atomic<uint32_t> bad{0};
  uint32_t want[257] = {};
  for (uint32_t round = 0; round < 300; ++round) {
    const uint32_t count = round % 257, chunk = 1 + round % 11;
    for (uint32_t i = 0; i < count; ++i) ++want[i];
    dev.for_chunks(count, chunk, [&](uint32_t lo, uint32_t hi, uint32_t cpu) {
      if (cpu >= 4 || lo >= hi || hi > count || hi - lo > chunk) ++bad;
      for (uint32_t i = lo; i < hi && i < 257; ++i) hits[i].fetch_add(1);
    });
  }
  EXPECT_EQ(bad.load(), 0u);
  for (uint32_t i = 0; i < 257; ++i) EXPECT_EQ(hits[i].load(), want[i]) << i;
  CpuDevice one(CpuOptions{1, 8});  // one worker: everything inline on the caller, in order
  std::vector<uint32_t> order;
  one.for_chunks(20, 3, [&](uint32_t lo, uint32_t hi, uint32_t cpu) {
    for (uint32_t i = lo; i < hi; ++i) order.push_back(i + 100 * cpu);
  });
  ASSERT_EQ(order.size(), 20u);
  for (uint32_t i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
}

// Claims shrink as a slice drains (guided self-scheduling), so the workers finish close
// together: 1024 items, chunk 64, 2 workers would be 16 claims of 64 with fixed claims; the
// guided claims are a quarter of what is left, at least 8, so there are more of them and the
// last ones are at most 8 items. One worker keeps whole chunks (nobody to wait for).
TEST(CpuDevice, ClaimsShrinkTowardTheEndOfASlice) {
  CpuDevice dev(CpuOptions{2, 64});
  std::atomic<uint32_t> claims{0}, smallest{64}, items{0};
  for (int round = 0; round < 20; ++round)
    dev.for_chunks(1024, 0, [&](uint32_t lo, uint32_t hi, uint32_t) {
      ++claims;
      items += hi - lo;
      for (uint32_t s = smallest.load();
           hi - lo < s && !smallest.compare_exchange_weak(s, hi - lo);)
        ;
    });
  EXPECT_EQ(items.load(), 20u * 1024);
  EXPECT_GT(claims.load(), 20u * 16);
  EXPECT_LE(smallest.load(), 8u);
  CpuDevice one(CpuOptions{1, 64});
  uint32_t n = 0;
  one.for_chunks(1024, 0, [&](uint32_t lo, uint32_t hi, uint32_t) { n += hi - lo == 64; });
  EXPECT_EQ(n, 16u);
}

// A worker that helps with another's slice takes from its back end: the packets of slice 0
// that worker 1 runs while the caller (worker 0, half as fast here) works through the front are the
// slice's last ones, one contiguous run up to its end (so batch after batch they are the
// same slots). Claiming from the front cursor instead interleaves the two workers' chunks.
TEST(CpuDevice, HelpersTakeFromTheBackOfASlice) {
  CpuDevice dev(CpuOptions{2, 64});
  int helped = 0;  // rounds in which worker 1 took part of slice 0
  for (int round = 0; round < 3; ++round) {
    std::vector<uint8_t> by(256, 9);
    dev.for_chunks(256, 0, [&](uint32_t lo, uint32_t hi, uint32_t cpu) {
      for (uint32_t i = lo; i < hi; ++i) by[i] = uint8_t(cpu);
      std::this_thread::sleep_for(std::chrono::microseconds((cpu == 0 ? 10 : 5) * (hi - lo)));
    });
    uint32_t first1 = 128;  // slice 0 is [0, 128): where worker 1's run in it starts
    while (first1 > 0 && by[first1 - 1] == 1) --first1;
    for (uint32_t i = 0; i < 256; ++i) {
      ASSERT_LE(by[i], 1) << i;
      if (i < first1) {
        EXPECT_EQ(by[i], 0) << "round " << round << " item " << i;
      }
    }
    helped += first1 < 128;
  }
  EXPECT_GE(helped, 1);  // worker 1 needs 0.64 ms for its slice, the caller 1.28 ms for its own
}

// Worker k > 0 runs on the k-th CPU of the affinity mask counted from the CPU the caller ran
// on when it built the device (CpuOptions::pin), so the scheduler cannot queue a helper
// behind the caller on one CPU: with 2 CPUs, worker 1 is on the one the caller is not.
TEST(CpuDevice, HelpersRunOnTheirOwnCpu) {
  std::vector<int> ids = allowed_cpus();
  if (ids.size() < 2) GTEST_SKIP() << "one CPU in the affinity mask: nothing to pin apart";
  const int before = sched_getcpu();
  CpuDevice dev(CpuOptions{3, 1});
  if (sched_getcpu() != before) GTEST_SKIP() << "the caller moved to another CPU while pinning";
  const auto here = std::find(ids.begin(), ids.end(), before);
  ASSERT_NE(here, ids.end());
  std::rotate(ids.begin(), here, ids.end());  // ids[0]: the caller's CPU
  std::vector<std::vector<int>> seen(3);      // written only by its own worker
  for (int round = 0; round < 20; ++round)
    dev.for_chunks(64, 1, [&](uint32_t, uint32_t, uint32_t cpu) {
      seen[cpu].push_back(sched_getcpu());
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    });
  for (uint32_t w = 1; w < 3; ++w) {
    ASSERT_FALSE(seen[w].empty()) << "worker " << w << " never ran";
    for (int c : seen[w]) EXPECT_EQ(c, ids[w % ids.size()]) << "worker " << w;
  }
  for (int c : seen[1]) EXPECT_NE(c, before) << "worker 1 shares the caller's CPU";
}

// CpuOptions::caller_cpu: the helpers avoid the CPU the caller says it will run on, not the
// one it runs on while building the device (knod bench pins itself only while it measures).
TEST(CpuDevice, HelpersAvoidTheCallersNamedCpu) {
  std::vector<int> ids = allowed_cpus();
  if (ids.size() < 2) GTEST_SKIP() << "one CPU in the affinity mask: nothing to pin apart";
  for (int caller : {ids.front(), ids.back()}) {
    CpuDevice dev(CpuOptions{2, 1, true, caller});
    std::vector<int> seen;  // worker 1's CPUs
    for (int round = 0; round < 20; ++round)
      dev.for_chunks(64, 1, [&](uint32_t, uint32_t, uint32_t cpu) {
        if (cpu == 1) seen.push_back(sched_getcpu());
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      });
    ASSERT_FALSE(seen.empty()) << "worker 1 never ran";
    const size_t at = size_t(std::find(ids.begin(), ids.end(), caller) - ids.begin());
    for (int c : seen) EXPECT_EQ(c, ids[(at + 1) % ids.size()]) << "caller on " << caller;
  }
}

TEST(CpuDevice, ExceptionsReachTheCaller) {
  CpuDevice dev(CpuOptions{2, 1});
  EXPECT_THROW(dev.run(100,
                       [](uint32_t i, uint32_t) {
                         if (i == 42) throw std::runtime_error("boom");
                       }),
               std::runtime_error);
  std::atomic<uint32_t> ran{0};
  dev.run(10, [&](uint32_t, uint32_t) { ++ran; });  // still usable
  EXPECT_EQ(ran.load(), 10u);
}

TEST(CpuDevice, JitProgramOverABatch) {
  // r1 = packet data, r2 = length: returns data[0] + len, faults when len < 2 reads data[1].
  vm::Program prog{"p", isa::assemble(R"(
    ldxb %r0, [%r1+0]
    ldxb %r3, [%r1+1]
    add %r0, %r2
    exit)")};
  constexpr uint32_t n = 1000;
  std::vector<uint8_t> frames(size_t(n) * kFrameSize);
  std::vector<uint32_t> off(n, kXdpHeadroom), len(n), verdict(n);
  std::vector<uint8_t> fault(n);
  Batch b;
  b.count = n;
  b.stride = kFrameSize;
  b.frames = frames.data();
  b.data_off = off.data();
  b.data_len = len.data();
  b.verdict = verdict.data();
  b.fault = fault.data();
  for (uint32_t i = 0; i < n; ++i) {
    len[i] = 1 + i % 64;
    frames[size_t(i) * kFrameSize + kXdpHeadroom] = uint8_t(i);
  }
  jit::JitExecutor jit;
  jit.compile(prog);
  vm::Env env;
  CpuDevice dev(CpuOptions{3, 8});
  dev.run(b, [&](uint32_t i, uint32_t cpu) {
    vm::Run run;
    run.env = &env;
    run.cpu = cpu;
    uint64_t data = reinterpret_cast<uint64_t>(b.frames + size_t(i) * b.stride + b.data_off[i]);
    run.add_region(data, data + b.data_len[i], true);
    b.verdict[i] = uint32_t(jit.run(run, prog, data, b.data_len[i]));
    b.fault[i] = uint8_t(run.fault);
  });
  for (uint32_t i = 0; i < n; ++i) {
    if (len[i] < 2) {
      EXPECT_EQ(fault[i], uint8_t(vm::Fault::kOutOfBounds)) << i;
    } else {
      EXPECT_EQ(fault[i], 0) << i;
      EXPECT_EQ(verdict[i], uint8_t(i) + len[i]) << i;
    }
  }
}

}  // namespace
}  // namespace knod::device
