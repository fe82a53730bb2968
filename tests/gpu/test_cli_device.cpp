// `knod run --device cuda|amdgpu|gpusim` end to end (the real `knod` binary):
//  - without an NVIDIA driver (KNOD_LIBCUDA points at a library that does not exist, so this
//    holds on GPU machines too) --device cuda exits 1 with one stderr line naming the cause;
//  - --device amdgpu exits 1 with one line: no AMD runtime;
//  - --device gpusim (the GPU runtime and batch kernel on the host) writes the same pcaps,
//    map dump and stats (but the "device" field and cpu's "cpu_device") as --device cpu --workers 1
//    for every bundled example on its capture, and so does --device gpusim --persistent (a
//    persistent kernel session with a batch timeout).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/bundled_examples.h"

namespace knod::gpu_test {
namespace {

struct Out {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_dir() {
  static int n = 0;
  auto d = std::filesystem::temp_directory_path() /
           ("knod-gpu-cli-" + std::to_string(getpid()) + "-" + std::to_string(n++));
  std::filesystem::create_directories(d);
  return d.string();
}

/// Runs `knod <args>` with `env` prepended; stdout and stderr apart.
Out knod(const std::string& args, const std::string& env = "") {
  std::string dir = temp_dir();
  std::string cmd = env + " " KNOD_BIN " " + args + " >" + dir + "/out 2>" + dir + "/err";
  int st = std::system(cmd.c_str());
  Out o{WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(dir + "/out"), slurp(dir + "/err")};
  std::filesystem::remove_all(dir);
  return o;
}

const cli::BundledExample& l4lb() {
  return cli::kBundledExamples[0];
}

std::string run_args(const cli::BundledExample& ex) {
  std::string maps = std::string(KNOD_EXAMPLES_SRC_DIR) + "/" + ex.name + ".maps.json";
  std::string a = std::string(KNOD_EXAMPLES_OBJ_DIR) + "/" + ex.name + ".o -p " + ex.prog +
                  " -r " KNOD_PCAP_DIR "/" + ex.pcap;
  if (std::filesystem::exists(maps)) a += " --map-load " + maps;
  return a;
}

constexpr const char* kNoDriver = "KNOD_LIBCUDA=libcuda-knod-missing.so.1";

TEST(CliDevice, CudaWithoutDriverIsOneLine) {
  for (const char* dev : {"cuda", "cuda:1"}) {
    Out o = knod("run " + run_args(l4lb()) + " --device " + dev, kNoDriver);
    EXPECT_EQ(o.rc, 1) << dev;
    EXPECT_EQ(o.out, "") << dev;
    EXPECT_EQ(o.err, std::string("knod: --device ") + dev +
                         ": no NVIDIA driver (libcuda-knod-missing.so.1 not found)\n");
  }
}

TEST(CliDevice, AmdgpuHasNoRuntime) {
  Out o = knod("run " + run_args(l4lb()) + " --device amdgpu");
  EXPECT_EQ(o.rc, 1);
  EXPECT_EQ(o.err,
            "knod: --device amdgpu: no AMD GPU runtime (knod compiles AMDGPU code objects but "
            "cannot run them yet)\n");
}

TEST(CliDevice, UnknownDevice) {
  Out o = knod("run " + run_args(l4lb()) + " --device tpu");
  EXPECT_EQ(o.rc, 1);
  EXPECT_EQ(o.err,
            "knod: unknown device 'tpu' for packet runs (use cpu, interp, cuda[:N], gpusim or "
            "amdgpu)\n");
}

// Bundled examples the GPU runtime cannot load: the one error line.
const std::map<std::string, std::string> kUnsupported = {
    {"router", "helper bpf_fib_lookup (69) not supported on gpusim yet"},
};

class CliGpusim : public ::testing::TestWithParam<cli::BundledExample> {};

TEST_P(CliGpusim, SameOutputsAsCpu) {
  const cli::BundledExample& ex = GetParam();
  const char* outs[] = {"all.pcap", "aborted.pcap",  "drop.pcap", "pass.pcap",
                        "tx.pcap",  "redirect.pcap", "maps.json", "stats.json"};
  // label, --device, more options: one launch per batch; a persistent session (mailbox ring)
  // whose batches are also cut by a 200 us timeout.
  const std::vector<std::array<std::string, 3>> runs = {
      {"cpu", "cpu", ""},
      {"gpusim", "gpusim", ""},
      {"persistent", "gpusim", " --persistent --batch-timeout-us 200"}};
  std::map<std::string, std::map<std::string, std::string>> files;
  for (const auto& [label, dev, more] : runs) {
    std::string d = temp_dir();
    Out o = knod("run " + run_args(ex) + " --device " + dev + more +
                 " --workers 1 --batch 5 --clock-ns 1000000000 --seed 7 -q -w " + d +
                 "/all.pcap --aborted " + d + "/aborted.pcap --drop " + d + "/drop.pcap --pass " +
                 d + "/pass.pcap --tx " + d + "/tx.pcap --redirect " + d +
                 "/redirect.pcap --map-dump " + d + "/maps.json --stats " + d + "/stats.json");
    auto bad = kUnsupported.find(ex.name);
    if (dev == "gpusim" && bad != kUnsupported.end()) {
      EXPECT_EQ(o.rc, 1) << label;
      EXPECT_NE(o.err.find(bad->second), std::string::npos) << o.err;
      EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
      std::filesystem::remove_all(d);
      continue;
    }
    ASSERT_EQ(o.rc, 0) << label << ": " << o.err;
    for (const char* f : outs) files[label][f] = slurp(d + "/" + f);
    std::string& stats = files[label]["stats.json"];
    auto at = stats.find("\"device\": \"" + dev + "\"");
    ASSERT_NE(at, std::string::npos) << stats;
    stats.replace(at, 12 + dev.size(), "\"device\": \"X\"");
    // The session's batch count and latencies: present, run dependent (not compared).
    auto p = stats.find(",\n  \"persistent\": {");
    EXPECT_EQ(p != std::string::npos, !more.empty()) << label << ": " << stats;
    if (p != std::string::npos) stats.erase(p, stats.find('}', p) + 1 - p);
    // The CPU device's worker counters: only --device cpu has them (not compared).
    auto c = stats.find("\n  \"cpu_device\": {");
    EXPECT_EQ(c != std::string::npos, dev == "cpu") << label << ": " << stats;
    if (c != std::string::npos) stats.erase(c, stats.find("},", c) + 2 - c);
    std::filesystem::remove_all(d);
  }
  if (kUnsupported.count(ex.name)) return;
  EXPECT_GT(files["cpu"]["all.pcap"].size(), 24u);  // a pcap header and packets
  for (const char* f : outs) {
    EXPECT_EQ(files["gpusim"][f], files["cpu"][f]) << f;
    EXPECT_EQ(files["persistent"][f], files["cpu"][f]) << "--persistent: " << f;
  }
}

// --persistent is for GPU devices; --batch-timeout-us only with --persistent.
TEST(CliDevice, PersistentOptionErrors) {
  Out o = knod("run " + run_args(l4lb()) + " --device cpu --persistent");
  EXPECT_EQ(o.rc, 1);
  EXPECT_EQ(o.err, "knod: --persistent: needs a GPU device (cuda[:N] or gpusim), not cpu\n");
  o = knod("run " + run_args(l4lb()) + " --device gpusim --batch-timeout-us 10");
  EXPECT_EQ(o.rc, 1);
  EXPECT_EQ(o.err, "knod: --batch-timeout-us: only with --persistent\n");
}

INSTANTIATE_TEST_SUITE_P(Bundled, CliGpusim, ::testing::ValuesIn(cli::kBundledExamples),
                         [](const auto& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace knod::gpu_test
