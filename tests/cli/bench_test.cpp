// `knod bench` on the bundled examples, end to end (issue 4's report format): one row per
// example with every column measured, the compile line, and as the last line
// `geomean knod-jit/kernel: R` with R a plain decimal when the kernel can run the objects.
// Not a timed test: figures only have to exist and be positive; their size is the
// benchmark's business (docs/PERFORMANCE.md).
#include <gtest/gtest.h>
#include <sched.h>

#include <cctype>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test.h"

namespace knod::cli_test {
namespace {

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// A plain decimal: digits, '.', digits ("-" for a skipped cell is not one).
bool is_decimal(const std::string& s) {
  size_t dot = s.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == s.size()) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (i != dot && !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

TEST(Bench, ExamplesTableHasEveryColumnAndTheGeomeanLastLine) {
  Result r = knod(std::string("bench --examples ") + KNOD_EXAMPLE_OBJ_DIR +
                  " --vs-kernel --repeat 2 --rounds 1 --workers 2 --max-packets 4 --min-batch 64");
  ASSERT_EQ(r.rc, 0) << r.err;
  const bool kernel = r.err.find("kernel column skipped") == std::string::npos;
  if (!kernel)
    std::fprintf(stderr, "bpf() refused: kernel column not checked (%s)\n", r.err.c_str());
  // kern-N needs 2 CPUs in the bench's mask (one thread per CPU).
  cpu_set_t mask;
  CPU_ZERO(&mask);
  const bool two_cpus = sched_getaffinity(0, sizeof(mask), &mask) == 0 && CPU_COUNT(&mask) >= 2;
  const bool kernel_n = kernel && two_cpus;
  auto ls = lines(r.out);
  ASSERT_GE(ls.size(), 4u) << r.out;
  // program, pkts, interp, jit-1, jit-N, kernel, 4 x Mpps, jit/kern, jit/int, N/1, ceil,
  // kern-N, kN/1
  const std::set<std::string> names = {"l4lb",        "ddos",     "vlan",  "icmp_echo",
                                       "proto_count", "tailcall", "nat44", "router"};
  std::set<std::string> seen;
  for (const std::string& l : ls) {
    std::istringstream in(l);
    std::vector<std::string> cols;
    for (std::string c; in >> c;) cols.push_back(c);
    if (cols.empty() || !names.count(cols[0])) continue;
    seen.insert(cols[0]);
    ASSERT_EQ(cols.size(), 16u) << l;
    EXPECT_GT(std::stoi(cols[1]), 0) << l;
    for (int c = 2; c <= 4; ++c) {
      EXPECT_TRUE(is_decimal(cols[c])) << l;
      EXPECT_GT(std::stod(cols[c]), 0.0) << l;
    }
    if (kernel) {  // "-" when skipped
      EXPECT_TRUE(is_decimal(cols[5])) << l;
    }
    // The ceiling, with a CPU per worker: 1 + jit-1 / (jit-1 on the other CPU), above 1.
    if (two_cpus) {
      ASSERT_EQ(cols[13].back(), 'x') << l;
      EXPECT_TRUE(is_decimal(cols[13].substr(0, cols[13].size() - 1))) << l;
      EXPECT_GT(std::stod(cols[13]), 1.0) << l;
    } else {
      EXPECT_EQ(cols[13], "-") << l;
    }
    if (kernel_n) {  // the kernel on 2 CPUs at once
      EXPECT_TRUE(is_decimal(cols[14])) << l;
      EXPECT_GT(std::stod(cols[14]), 0.0) << l;
      ASSERT_EQ(cols[15].back(), 'x') << l;  // its scaling: kernel / kern-N
      // The cells are rounded to 0.1 ns, the ratio is of the unrounded values.
      const double k = std::stod(cols[5]), kn = std::stod(cols[14]), ks = std::stod(cols[15]);
      EXPECT_NEAR(ks, k / kn, ks * (0.05 / k + 0.05 / kn) + 0.006) << l;
    } else {
      EXPECT_EQ(cols[14], "-") << l;
      EXPECT_EQ(cols[15], "-") << l;
    }
  }
  EXPECT_EQ(seen.size(), 8u) << r.out;
  // The slowest compile, named: "max JIT compile: W ms/program (PROGRAM, C ms CPU; ...".
  const size_t mc = r.out.find("max JIT compile: ");
  ASSERT_NE(mc, std::string::npos) << r.out;
  std::istringstream max_line(r.out.substr(mc + 17));
  std::string ms, per, label;
  max_line >> ms >> per >> label;
  EXPECT_TRUE(is_decimal(ms)) << ms;
  EXPECT_EQ(per, "ms/program");
  EXPECT_TRUE(label.size() > 2 && names.count(label.substr(1, label.size() - 2))) << label;
  EXPECT_NE(r.out.find("geomean interp/jit-1 speedup: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("geomean jit-N/jit-1 scaling: "), std::string::npos) << r.out;
  const std::string ceiling = "geomean ceiling N/1: ";
  const size_t gc = r.out.find(ceiling);
  if (two_cpus) {
    ASSERT_NE(gc, std::string::npos) << r.out;
    const std::string g = r.out.substr(gc + ceiling.size(),
                                       r.out.find(' ', gc + ceiling.size()) - gc - ceiling.size());
    EXPECT_TRUE(is_decimal(g)) << r.out;
    EXPECT_GT(std::stod(g), 1.0) << r.out;
    EXPECT_NE(r.out.find(" (jit-1 on each of the 2 workers' CPUs alone,", gc), std::string::npos)
        << r.out;
  } else {
    EXPECT_EQ(gc, std::string::npos) << r.out;
  }
  // The host's ceilings for that column, measured in the same rounds: a dependent chain and
  // independent chains, each "scales R".
  for (const std::string host : {"2 workers: a dependent chain scales ", "8 independent chains "}) {
    const size_t at = r.out.find(host);
    ASSERT_NE(at, std::string::npos) << host << "\n" << r.out;
    const size_t end = r.out.find_first_of(",;)", at + host.size());
    ASSERT_NE(end, std::string::npos) << r.out;
    EXPECT_TRUE(is_decimal(r.out.substr(at + host.size(), end - at - host.size()))) << r.out;
  }
  // And the fixed cost of a run on 2 workers: "an empty batch takes N ns".
  const std::string empty = "; an empty batch takes ";
  const size_t at = r.out.find(empty);
  ASSERT_NE(at, std::string::npos) << r.out;
  const size_t ns = r.out.find(" ns)", at);
  ASSERT_NE(ns, std::string::npos) << r.out;
  const std::string v = r.out.substr(at + empty.size(), ns - at - empty.size());
  ASSERT_TRUE(!v.empty() && v.find_first_not_of("0123456789") == std::string::npos) << r.out;
  EXPECT_GT(std::stoul(v), 0u) << r.out;
  // How jit-N's timed batches went (device::CpuStats): 8 rows x 1 round x 2 repeats = 16
  // batches, one per worker in one job a row (8 jobs), a late or stalled worker's slice at most
  // once in each (2 workers: 1 helper).
  const std::string hand = "jit-N hand-off: in ";
  const size_t h = r.out.find(hand);
  ASSERT_NE(h, std::string::npos) << r.out;
  const std::string line = r.out.substr(h, r.out.find('\n', h) - h);
  unsigned long jobs = 0, batches = 0, late = 0, stalled = 0;
  double share = -1;
  int used = 0;
  ASSERT_EQ(std::sscanf(line.c_str(),
                        "jit-N hand-off: in %lu jobs of %lu batches the caller ran %lu slices of "
                        "late workers and %lu of stalled ones; worker 0 ran %lf%% of the batches%n",
                        &jobs, &batches, &late, &stalled, &share, &used),
            5)
      << line;
  EXPECT_EQ(static_cast<size_t>(used), line.size()) << line;
  EXPECT_EQ(jobs, 8u) << line;
  EXPECT_EQ(batches, 16u) << line;
  EXPECT_LE(late + stalled, 8u) << line;
  EXPECT_GE(share, 0.0) << line;
  EXPECT_LE(share, 100.0) << line;
  const std::string kprefix = "geomean kernel-N/kernel-1 scaling: ";
  if (kernel_n) {
    ASSERT_GE(ls.size(), 2u);
    ASSERT_EQ(ls[ls.size() - 2].rfind(kprefix, 0), 0u) << ls[ls.size() - 2];
    const std::string kv = ls[ls.size() - 2].substr(kprefix.size());
    EXPECT_TRUE(is_decimal(kv.substr(0, kv.find(' ')))) << kv;
    EXPECT_NE(kv.find(" (the kernel's JIT, 2 CPUs at once)"), std::string::npos) << kv;
  } else {
    EXPECT_EQ(r.out.find(kprefix), std::string::npos) << r.out;
  }
  if (kernel) {
    const std::string prefix = "geomean knod-jit/kernel: ";
    ASSERT_EQ(ls.back().rfind(prefix, 0), 0u) << ls.back();
    EXPECT_TRUE(is_decimal(ls.back().substr(prefix.size()))) << ls.back();
  }
}

TEST(Bench, NothingToRunIsOneLine) {
  Result r = knod("bench");
  EXPECT_EQ(r.rc, 2);  // a command line error
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("nothing to run"), std::string::npos) << r.err;
}

// Frames under ETH_HLEN are left out, as knod run and BPF_PROG_TEST_RUN refuse them: a
// capture of nothing else is one line; with usable frames too, a warning line says what was
// left out (as knod run's), the larger-than-a-frame ones too.
TEST(Bench, RuntFramesAreLeftOut) {
  const std::string dir = temp_dir();
  write_file(dir + "/runt.pcap", pcap_bytes(1, {std::string(10, 'x'), std::string(13, 'y')}));
  Result r = knod("bench " + std::string(KNOD_EXAMPLE_OBJ_DIR) + "/icmp_echo.o -r " + dir +
                  "/runt.pcap --repeat 1 --rounds 1 --device cpu");
  EXPECT_EQ(r.rc, 1) << r.out;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("no usable packets"), std::string::npos) << r.err;
  write_file(dir + "/mixed.pcap", pcap_bytes(1, {std::string(10, 'x'), udp_frame(64),
                                                 udp_frame(4000), std::string(13, 'y')}));
  r = knod("bench " + std::string(KNOD_EXAMPLE_OBJ_DIR) + "/icmp_echo.o -r " + dir +
           "/mixed.pcap --repeat 1 --rounds 1 --device cpu");
  EXPECT_EQ(r.rc, 0) << r.err;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("knod: warning: " + dir +
                       "/mixed.pcap: packets skipped: 1 larger than the XDP frame, 2 shorter "
                       "than ETH_HLEN (14 bytes)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("icmp_echo:xdp_icmp_echo      1 "), std::string::npos) << r.out;  // 1 used
}

// A capture cut short inside a record (helper-53: benched without a word, and a cut in the
// first record read "no usable packets"): a warning as knod run gives, and with nothing read,
// one line that says the capture is cut short; nothing on stdout before it.
TEST(Bench, CutCaptureIsSaid) {
  const std::string dir = temp_dir();
  const std::string whole = pcap_bytes(1, {udp_frame(64), udp_frame(80)});
  write_file(dir + "/cut1.pcap", whole.substr(0, whole.size() - 20));
  const std::string obj = std::string(KNOD_EXAMPLE_OBJ_DIR) + "/icmp_echo.o";
  Result r = knod("bench " + obj + " -r " + dir + "/cut1.pcap --repeat 1 --rounds 1 --device cpu");
  EXPECT_EQ(r.rc, 0) << r.err;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("knod: warning: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("(the capture is cut short; the 1 record before it was read)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("icmp_echo:xdp_icmp_echo      1 "), std::string::npos) << r.out;
  write_file(dir + "/cut0.pcap", whole.substr(0, 24 + 16 + 10));
  r = knod("bench " + obj + " -r " + dir + "/cut0.pcap --repeat 1 --rounds 1 --device cpu");
  EXPECT_EQ(r.rc, 1);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("(the capture is cut short before any usable packet)"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
}

// The kernel refusing an object: one line naming the verifier's reason.
TEST(Bench, KernelRefusalNamesTheVerifiersReason) {
  Result r = knod(std::string("bench ") + KNOD_CLI_FIXTURES + "/no_null.o -r " + KNOD_PCAP_DIR +
                  "/ping4.pcap --vs-kernel --repeat 1 --rounds 1 --min-batch 1");
  if (r.err.find("kernel column skipped") != std::string::npos) GTEST_SKIP() << r.err;
  EXPECT_NE(r.rc, 0);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("cannot load"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(verifier: R0 invalid mem access 'map_value_or_null')"), std::string::npos)
      << r.err;
  // A log of over a KiB (libbpf's one message): its last line still found.
  r = knod(std::string("bench ") + KNOD_CLI_FIXTURES + "/egress.o -r " + KNOD_PCAP_DIR +
           "/ping4.pcap --vs-kernel --repeat 1 --rounds 1 --min-batch 1");
  EXPECT_NE(r.rc, 0);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("(verifier: invalid bpf_context access off=20 size=4)"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace knod::cli_test
