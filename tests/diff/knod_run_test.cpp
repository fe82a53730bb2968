// The main job against the kernel: `knod run OBJ -p PROG -r CAPTURE --stats F` (the built
// binary, default device: the JIT on the CPU) on every bundled capture must count the same
// packets per verdict as BPF_PROG_TEST_RUN gives for the same program, preload and capture
// (a fresh kernel object per run, as knod run starts from the preload).
// Time: knod runs with --clock-ns 1 (no token-bucket refill between packets); the kernel's
// clock runs. Both sides get the bundled preload with ddos's rate lowered to 1 pps (burst and
// SYN limit as bundled): one token then takes 1 s to refill, as long as ddos's SYN window, so
// a kernel pass shorter than 1 s gives the verdicts of a stopped clock (credit stays below one
// token, every SYN falls in one window). The bundled 50 pps left 20 ms, which a loaded host's
// pass over 246 frames exceeded (24 ms measured with three busy loops on 2 CPUs). A pass the
// host stretched past 1 s is run again on a fresh object.
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <stdlib.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "diff_common.h"
#include "fib_netns.h"
#include "io/pcap.h"
#include "kernel_oracle.h"
#include "xdp/runtime.h"

namespace knod::diff {
namespace {

namespace fs = std::filesystem;

/// The rate the test gives ddos (ddos_config.rate_pps): one token refills in 1e9 / 1 ns.
constexpr uint64_t kTestRatePps = 1;  // test_preload writes it as 0100000000000000
constexpr std::chrono::nanoseconds kTokenRefill{1'000'000'000 / kTestRatePps};
constexpr int kKernelTries = 10;

/// The bundled preload of `name`, written to `dir`, with ddos_config.rate_pps (the first 8
/// bytes of the value, little-endian hex) set to kTestRatePps. Returns the file's path.
std::string test_preload(const std::string& name, const std::string& dir) {
  nlohmann::json j = nlohmann::json::parse(std::ifstream(preload_path(name)));
  if (j.contains("maps") && j["maps"].contains("ddos_config")) {
    std::string v = j["maps"]["ddos_config"].at(0).at("value").get<std::string>();
    EXPECT_EQ(v.substr(0, 16), "3200000000000000") << "ddos.maps.json's rate is not 50 pps";
    v.replace(0, 16, "0100000000000000");
    j["maps"]["ddos_config"][0]["value"] = v;
  }
  const std::string out = dir + "/" + name + ".maps.json";
  std::ofstream(out) << j.dump(1);
  return out;
}

struct KernelCounts {
  std::array<uint64_t, 5> verdicts{};
  std::chrono::nanoseconds took{};
};

/// One BPF_PROG_TEST_RUN pass of `prog` over `frames` on a fresh kernel object; `took` is
/// CLOCK_MONOTONIC time (bpf_ktime_get_ns's clock) across the pass.
KernelCounts kernel_pass(const std::string& path, const std::string& json, const std::string& prog,
                         const std::vector<std::vector<uint8_t>>& frames) {
  KernelCounts out;
  KernelObject k(path);
  k.preload(json, /*devmap_ifindex=lo*/ 1);
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& f : frames) {
    const TestRunResult t = k.test_run(prog, f);
    EXPECT_EQ(t.err, 0);
    out.verdicts[t.retval <= XDP_REDIRECT ? t.retval : uint32_t(XDP_ABORTED)]++;
  }
  out.took = std::chrono::steady_clock::now() - t0;
  return out;
}

class KnodRun : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    if (!KernelObject::available(&why)) GTEST_SKIP() << why;
    netns_ok_ = enter_fib_netns(&netns_why_);
    char tmpl[] = "/tmp/knod-diff-run-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  bool netns_ok_ = false;
  std::string netns_why_, dir_;
};

TEST_P(KnodRun, VerdictCountsEqualKernel) {
  const std::string name = GetParam();
  const std::string path = object_path(name), json = test_preload(name, dir_);
  std::string fib_arg;
  if (netns_ok_) {
    const std::string fib = dir_ + "/fib.json";
    std::ofstream(fib) << fib_json();
    fib_arg = " --fib " + fib;
  } else if (uses_fib_lookup(path)) {
    GTEST_SKIP() << name << " calls bpf_fib_lookup; no test namespace: " << netns_why_;
  }
  std::vector<std::string> progs;
  for (const auto& p : KernelObject(path).programs()) progs.push_back(p.first);

  for (const std::string& prog : progs) {
    for (const std::string& cap : capture_paths()) {
      SCOPED_TRACE(prog + " on " + cap);
      std::vector<std::vector<uint8_t>> frames;
      {
        io::PcapReader r(cap);
        io::Packet p;
        while (r.next(p)) frames.push_back(p.data);
      }
      KernelCounts kc = kernel_pass(path, json, prog, frames);
      for (int i = 1; i < kKernelTries && kc.took >= kTokenRefill; ++i)
        kc = kernel_pass(path, json, prog, frames);
      ASSERT_LT(kc.took, kTokenRefill)
          << "the kernel's pass took " << kc.took.count() / 1000 << " us in each of "
          << kKernelTries << " tries; the host is too loaded";
      const std::array<uint64_t, 5>& kernel = kc.verdicts;
      const uint64_t packets = frames.size();
      const std::string stats = dir_ + "/stats.json";
      fs::remove(stats);
      const std::string cmd = std::string(KNOD_BIN) + " run " + path + " -p " + prog + " -r " +
                              cap + " --map-load " + json + " --stats " + stats +
                              " --clock-ns 1 --workers 1 -q" + fib_arg + " > " + dir_ +
                              "/out.txt 2>&1";
      const int rc = std::system(cmd.c_str());
      std::ifstream out_txt(dir_ + "/out.txt");
      const std::string out((std::istreambuf_iterator<char>(out_txt)), {});
      ASSERT_EQ(rc, 0) << cmd << "\n" << out;
      std::ifstream sf(stats);
      ASSERT_TRUE(sf) << "no --stats file: " << cmd << "\n" << out;
      const nlohmann::json s = nlohmann::json::parse(sf);
      EXPECT_EQ(s.at("packets").get<uint64_t>(), packets);
      for (uint32_t v = 0; v < 5; ++v)
        EXPECT_EQ(s.at("verdicts").at(xdp::action_name(v)).get<uint64_t>(), kernel[v])
            << xdp::action_name(v);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, KnodRun, ::testing::ValuesIn(example_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace knod::diff
