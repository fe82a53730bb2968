// Map values holding a struct bpf_spin_lock, end to end (`knod test-run --map-dump`), against
// the kernel's answers recorded in bpf/spin_lock.c (BPF_PROG_TEST_RUN, Linux 6.18).
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "cli_test.h"

namespace knod::cli_test {
namespace {

/// Bytes of a --map-dump "value" (["0x00", ...]).
std::vector<uint8_t> bytes_of(const nlohmann::json& v) {
  std::vector<uint8_t> out;
  for (const auto& b : v) out.push_back(uint8_t(std::stoul(b.get<std::string>(), nullptr, 16)));
  return out;
}

TEST(SpinLock, ValuesAndReturnCodesAsTheKernel) {
  const std::string obj = std::string(KNOD_CLI_FIXTURES) + "/spin_lock.o";
  const std::string dir = temp_dir(), pkt = dir + "/pkt.bin", dump = dir + "/maps.json";
  write_file(pkt, std::string(64, '\0'));
  for (const char* dev : {"interp", "cpu"}) {
    SCOPED_TRACE(dev);
    // Before the fix the lock word 1 was copied into hl[0]: bpf_spin_lock waited forever.
    Result r = knod(std::string("test-run ") + obj + " -p xdp_spin_lock --device " + dev +
                    " --data-in " + pkt + " --map-dump " + dump);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("retval: 2 (XDP_PASS)"), std::string::npos) << r.out;
    std::map<std::string, nlohmann::json> maps;
    for (const auto& m : nlohmann::json::parse(read_file(dump))) maps[m["name"]] = m["entries"];
    ASSERT_EQ(maps["res"].size(), 8u);
    const int64_t want[8] = {0, 0, 6, 0, -17, -2, 0, -17};
    for (size_t i = 0; i < 8; ++i) {
      std::vector<uint8_t> v = bytes_of(maps["res"][i]["value"]);
      int64_t got;
      ASSERT_EQ(v.size(), 8u);
      std::memcpy(&got, v.data(), 8);
      EXPECT_EQ(got, want[i]) << "res[" << i << "]";
    }
    // {lock 0, cnt 9, x 2}: the lock word never taken from the caller's value.
    const std::vector<uint8_t> val = {0, 0, 0, 0, 9, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};
    ASSERT_EQ(maps["hl"].size(), 1u);
    EXPECT_EQ(bytes_of(maps["hl"][0]["value"]), val);
    ASSERT_EQ(maps["al"].size(), 2u);
    EXPECT_EQ(bytes_of(maps["al"][0]["value"]), val);
  }
}

}  // namespace
}  // namespace knod::cli_test
