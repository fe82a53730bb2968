// `knod bench` on the bundled examples, end to end (issue 4's report format): one row per
// example with every column measured, the compile line, and as the last line
// `geomean knod-jit/kernel: R` with R a plain decimal when the kernel can run the objects.
// Not a timed test: figures only have to exist and be positive; their size is the
// benchmark's business (docs/PERFORMANCE.md).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "cli_test.h"

namespace knod::cli_test {
namespace {

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(Bench, ExamplesTableHasEveryColumnAndTheGeomeanLastLine) {
  Result r = knod(std::string("bench --examples ") + KNOD_EXAMPLE_OBJ_DIR +
                  " --vs-kernel --repeat 2 --rounds 1 --workers 2 --max-packets 4 --min-batch 64");
  ASSERT_EQ(r.rc, 0) << r.err;
  const bool kernel = r.err.find("kernel column skipped") == std::string::npos;
  if (!kernel)
    std::fprintf(stderr, "bpf() refused: kernel column not checked (%s)\n", r.err.c_str());
  auto ls = lines(r.out);
  ASSERT_GE(ls.size(), 4u) << r.out;
  // program, pkts, interp, jit-1, jit-N, kernel, 4 x Mpps, jit/kern, jit/int, N/1
  const std::string num = R"((\d+\.\d+))";
  std::regex row("^(l4lb|ddos|vlan|icmp_echo|proto_count|tailcall|nat44|router) +(\\d+) +" + num +
                 " +" + num + " +" + num + " +(\\S+) +.*");
  int rows = 0;
  for (const std::string& l : ls) {
    std::smatch m;
    if (!std::regex_match(l, m, row)) continue;
    ++rows;
    EXPECT_GT(std::stoi(m[2]), 0) << l;
    for (int c = 3; c <= 5; ++c) EXPECT_GT(std::stod(m[c]), 0.0) << l;
    if (kernel) {
      EXPECT_GT(std::stod(m[6]), 0.0) << l;  // "-" when skipped
    }
  }
  EXPECT_EQ(rows, 8) << r.out;
  EXPECT_NE(r.out.find("max JIT compile: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("geomean interp/jit-1 speedup: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("geomean jit-N/jit-1 scaling: "), std::string::npos) << r.out;
  if (kernel) {
    EXPECT_TRUE(std::regex_match(ls.back(), std::regex(R"(geomean knod-jit/kernel: \d+\.\d+)")))
        << ls.back();
  }
}

TEST(Bench, NothingToRunIsOneLine) {
  Result r = knod("bench");
  EXPECT_NE(r.rc, 0);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("nothing to run"), std::string::npos) << r.err;
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
}

}  // namespace
}  // namespace knod::cli_test
