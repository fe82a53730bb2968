// Bad input to `knod`: every case prints exactly one line on stderr, starting "knod: " and
// naming the problem, and exits non-zero (1: bad input, 2: bad command line, 3: capture cut
// short) — never a crash, abort or sanitizer report. The table is in tests/cli/README.md.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <initializer_list>

#include "cli_test.h"

namespace knod::cli_test {
namespace {

const std::string kFix = KNOD_CLI_FIXTURES;
const std::string kL4lb = std::string(KNOD_EXAMPLE_OBJ_DIR) + "/l4lb.o";
const std::string kL4lbMaps = std::string(KNOD_EXAMPLE_SRC_DIR) + "/l4lb.maps.json";
const std::string kPing4 = std::string(KNOD_PCAP_DIR) + "/ping4.pcap";  // 10 frames, 1052 B

/// The run ended with status `rc` and one stderr line "knod: ..." holding every word.
void expect_one_line(const Result& r, int rc, std::initializer_list<std::string> words) {
  EXPECT_EQ(r.rc, rc) << r.err;
  ASSERT_EQ(r.err_lines().size(), 1u) << "stderr:\n" << r.err;
  EXPECT_EQ(r.err.rfind("knod: ", 0), 0u) << r.err;
  for (const std::string& w : words)
    EXPECT_NE(r.err.find(w), std::string::npos) << w << ": " << r.err;
}

/// `knod run OBJ -r ping4.pcap` with l4lb's preload when OBJ is l4lb.
Result run_obj(const std::string& obj, const std::string& more = "") {
  return knod("run " + obj + " -r " + kPing4 + " " + more);
}
Result run_l4lb(const std::string& more) {
  return knod("run " + kL4lb + " --map-load " + kL4lbMaps + " " + more);
}

// ---- objects -------------------------------------------------------------------------------

// `knod jit` on assembly or raw slots makes knod run's load-time checks (verifier::
// check_structure) before compiling: the kernel's own words for what it refuses.
TEST(BadProgram, JitRefusesWhatTheLoaderRefuses) {
  const std::string d = temp_dir();
  struct Case {
    const char* text;
    const char* insn;  // where
    const char* why;   // the kernel verifier's words
  };
  const Case cases[] = {
      {"mov %r0, 0\n", "insn 0", "last insn is not an exit or jmp"},
      {"mov %r0, 0\nja -1\nexit\n", "insn 2", "unreachable insn"},
      {"ldxdw %r0, [%r10+8]\nexit\n", "insn 0", "invalid read from stack R10 off=8 size=8"},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string p = d + "/p" + std::to_string(n++) + ".s";
    write_file(p, c.text);
    for (const char* flags : {"", "-S ", "--slot-loop "}) {
      SCOPED_TRACE(std::string(flags) + c.text);
      expect_one_line(knod("jit " + std::string(flags) + p), 1, {c.insn, c.why});
    }
  }
}

// test-run's --ctx-in (struct xdp_md: data, data_end, data_meta, ingress_ifindex,
// rx_queue_index, egress_ifindex) where bpf_prog_test_run_xdp refuses it (helper-54: knod ran
// a 12-byte packet into a bogus fault and exit 0, and took any ifindex and queue).
TEST(BadInput, TestRunCtxTheKernelRefuses) {
  const std::string d = temp_dir(), pkt = d + "/pkt.bin", ctx = d + "/ctx.bin";
  write_file(pkt, std::string(64, '\0'));
  const auto run = [&](std::array<uint32_t, 6> md) {
    std::string b;
    for (uint32_t v : md)
      for (int k = 0; k < 4; ++k) b += char(v >> (8 * k) & 0xff);
    write_file(ctx, b);
    return knod("test-run " + kL4lb + " -p xdp_l4lb --data-in " + pkt + " --ctx-in " + ctx);
  };
  // 52 bytes of metadata leave 12 of packet, 64 none: less than ETH_HLEN.
  for (uint32_t meta : {52u, 64u})
    expect_one_line(run({meta, 64, 0, 0, 0, 0}), 1, {"do not describe data-in (-EINVAL)"});
  expect_one_line(run({0, 60, 0, 0, 0, 0}), 1,
                  {"data_end 60 below data-in's 64 bytes puts the rest in frags"});
  // ETH_HLEN counts data-in past the metadata, frags included (helper-55): 10 linear bytes of
  // 64 are the kernel's frags case, not -EINVAL.
  expect_one_line(run({0, 10, 0, 0, 0, 0}), 1,
                  {"data_end 10 below data-in's 64 bytes puts the rest in frags"});
  expect_one_line(run({0, 64, 0, 99999, 0, 0}), 1,
                  {"ingress_ifindex 99999: no such device (-ENODEV)"});
  if (std::filesystem::exists("/sys/class/net/lo/queues/rx-0") &&
      !std::filesystem::exists("/sys/class/net/lo/queues/rx-1"))
    expect_one_line(run({0, 64, 0, 1, 1, 0}), 1, {"rx_queue_index 1: lo has 1 RX queue (-EINVAL)"});
  const Result ok = run({0, 64, 0, 1, 0, 0});
  EXPECT_EQ(ok.rc, 0) << ok.err;
}

TEST(BadObject, Nonexistent) {
  expect_one_line(run_obj("/nonexistent/x.o"), 1,
                  {"/nonexistent/x.o", "cannot open", "No such file"});
}

TEST(BadObject, Empty) {
  std::string p = temp_dir() + "/empty.o";
  write_file(p, "");
  expect_one_line(run_obj(p), 1, {p, "empty file"});
}

TEST(BadObject, Garbage) {
  std::string p = temp_dir() + "/garbage.o", g;
  for (int i = 0; i < 4096; ++i) g += char((i * 2654435761u) >> 13);  // fixed pseudo-random
  write_file(p, g);
  expect_one_line(run_obj(p), 1, {p, "not an ELF file"});
}

TEST(BadObject, TruncatedAtManyLengths) {
  std::string whole = read_file(kL4lb);
  ASSERT_GT(whole.size(), 1000u);
  std::string dir = temp_dir();
  for (size_t n : {size_t(3), size_t(10), size_t(63), size_t(64), size_t(200), whole.size() / 2,
                   whole.size() - 64, whole.size() - 1}) {
    SCOPED_TRACE(n);
    std::string p = dir + "/cut" + std::to_string(n) + ".o";
    write_file(p, whole.substr(0, n));
    Result r = run_obj(p);
    expect_one_line(r, 1, {p});
    EXPECT_TRUE(r.err.find("truncated") != std::string::npos ||
                r.err.find("not an ELF file") != std::string::npos)
        << r.err;
  }
}

TEST(BadObject, WrongMachine) {
  expect_one_line(run_obj("/bin/true"), 1, {"/bin/true", "not an eBPF object", "e_machine 62"});
  expect_one_line(run_obj(kFix + "/x86.o"), 1, {"x86.o", "not an eBPF object", "e_machine 62"});
}

TEST(BadObject, NoProgram) {
  expect_one_line(run_obj(kFix + "/no_prog.o"), 1, {"no_prog.o", "no programs"});
  expect_one_line(knod("prog list " + kFix + "/no_prog.o"), 1, {"no programs"});
}

TEST(BadObject, UnknownProgramName) {
  expect_one_line(run_l4lb("-r " + kPing4 + " -p nosuch"), 1,
                  {"no program 'nosuch'", "programs: xdp_l4lb"});
  expect_one_line(knod("prog dump " + kL4lb + " -p nosuch"), 1,
                  {"no program 'nosuch'", "programs: xdp_l4lb"});
}

TEST(BadObject, UnknownHelper) {
  expect_one_line(run_obj(kFix + "/bad_helper.o"), 1,
                  {"bad_helper.o", "xdp_bad_helper", "unknown helper 999"});
  // test-run names the file too (helper-57: it said "program 'xdp_bad_helper': ..." alone).
  expect_one_line(knod("test-run " + kFix + "/bad_helper.o -p xdp_bad_helper --data-in " + kPing4),
                  1, {"bad_helper.o: program 'xdp_bad_helper'", "unknown helper 999"});
}

// The kernel refuses a GPL-only helper (bpf_trace_printk) in an object licensed "MIT"
// (verifier: "cannot call GPL-restricted function from non-GPL compatible program").
TEST(BadObject, GplOnlyHelperWithoutGplLicense) {
  expect_one_line(run_obj(kFix + "/mit_printk.o"), 1,
                  {"mit_printk.o", "xdp_mit_printk", "bpf_trace_printk", "GPL-only"});
  Result r = knod("prog list -j " + kFix + "/mit_printk.o");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("\"gpl_compatible\": false"), std::string::npos) << r.out;
}

// A program libbpf types as another kind (SEC("tc"): sched_cls) is not run as XDP.
TEST(BadObject, NotAnXdpProgram) {
  const std::string obj = std::string(KNOD_CLI_FIXTURES) + "/tc.o";
  expect_one_line(run_obj(obj), 1,
                  {"tc.o: program 'tc_len'", "section 'tc'", "not an XDP program"});
  expect_one_line(knod("test-run " + obj + " -p tc_len --data-in " + kPing4), 1,
                  {"not an XDP program"});
}

// bpf_prog_test_run_xdp() refuses a program for a DEVMAP or CPUMAP entry (-EINVAL); `bpftool
// prog run` on one fails with "Invalid argument".
TEST(BadObject, TestRunOfADevmapOrCpumapProgram) {
  const std::string obj = kFix + "/entry_progs.o";
  expect_one_line(knod("test-run " + obj + " -p xdp_devmap_entry --data-in " + kPing4), 1,
                  {"xdp_devmap_entry", "DEVMAP entry", "xdp/devmap", "-EINVAL"});
  expect_one_line(knod("test-run " + obj + " -p xdp_cpumap_entry --data-in " + kPing4), 1,
                  {"xdp_cpumap_entry", "CPUMAP entry", "xdp/cpumap", "-EINVAL"});
}

TEST(BadObject, Kfunc) {
  expect_one_line(run_obj(kFix + "/kfunc.o"), 1,
                  {"kfunc", "bpf_xdp_metadata_rx_hash", "not supported"});
}

// ---- captures ------------------------------------------------------------------------------

TEST(BadCapture, Nonexistent) {
  expect_one_line(run_l4lb("-r /nonexistent/in.pcap"), 1, {"/nonexistent/in.pcap", "No such file"});
}

// An error before the run's end leaves no empty --stats / --map-dump behind; a file that was
// there before is the user's and stays.
TEST(BadCapture, NonexistentLeavesNoEmptyOutputFiles) {
  const std::string dir = temp_dir();
  write_file(dir + "/old.json", "{\"old\": 1}");
  expect_one_line(run_l4lb("-r /nonexistent/in.pcap --stats " + dir + "/s.json --map-dump " + dir +
                           "/old.json"),
                  1, {"/nonexistent/in.pcap", "No such file"});
  EXPECT_FALSE(std::filesystem::exists(dir + "/s.json"));
  EXPECT_EQ(read_file(dir + "/old.json"), "{\"old\": 1}");
}

TEST(BadCapture, TruncatedHeader) {
  std::string p = temp_dir() + "/hdr.pcap";
  write_file(p, read_file(kPing4).substr(0, 20));
  expect_one_line(run_l4lb("-r " + p), 1, {p, "truncated"});
}

TEST(BadCapture, TruncatedRecordRunsThePacketsBefore) {
  // ping4.pcap cut 12 bytes into its last frame: 9 whole frames, then a damaged record.
  std::string dir = temp_dir(), p = dir + "/cut.pcap";
  std::string whole = read_file(kPing4);
  write_file(p, whole.substr(0, whole.size() - 12));
  Result r = run_l4lb("-r " + p + " --stats " + dir + "/stats.json");
  expect_one_line(r, 3, {"knod: warning: ", p, "record 9", "truncated", "9 records before it"});
  EXPECT_NE(r.out.find(": 9 packets"), std::string::npos) << r.out;
  std::string stats = read_file(dir + "/stats.json");
  EXPECT_NE(stats.find("\"truncated_capture\": true"), std::string::npos) << stats;
  EXPECT_NE(stats.find("\"packets\": 9"), std::string::npos) << stats;
}

// knod ipsec on the same cut capture: the 9 whole frames are processed, exit 3 with one warning
// line, as knod run (fresh-eyes: it exited 0).
TEST(BadCapture, TruncatedRecordIpsecExitsThree) {
  std::string dir = temp_dir(), p = dir + "/cut.pcap";
  std::string whole = read_file(kPing4);
  write_file(p, whole.substr(0, whole.size() - 12));
  Result r = knod("ipsec --xfrm /dev/null -r " + p + " -w " + dir + "/out.pcap");
  expect_one_line(r, 3, {"knod: warning: ", p, "cut short"});
  EXPECT_NE(r.out.find("packets in                    9"), std::string::npos) << r.out;
}

TEST(BadCapture, NotEthernet) {
  std::string dir = temp_dir();
  std::string ip = udp_frame(60).substr(14);  // the IPv4 packet without its Ethernet header
  write_file(dir + "/raw.pcap", pcap_bytes(101, {ip}));  // LINKTYPE_RAW (DLT_RAW is 12)
  expect_one_line(run_l4lb("-r " + dir + "/raw.pcap"), 1,
                  {"raw.pcap", "link-type RAW (Raw IP) not supported", "Ethernet"});
  write_file(dir + "/sll.pcap", pcap_bytes(113, {std::string(16, '\0') + ip}));  // LINUX_SLL
  expect_one_line(run_l4lb("-r " + dir + "/sll.pcap"), 1,
                  {"sll.pcap", "link-type LINUX_SLL (", "not supported"});
  // knod ipsec takes raw IP too, not SLL: refused before its output file exists (it named
  // the output instead, "link-layer type 999 isn't supported in savefiles", or left a
  // header-only file).
  const std::string out = dir + "/esp.pcap";
  expect_one_line(knod("ipsec --xfrm /dev/null -r " + dir + "/sll.pcap -w " + out), 1,
                  {"sll.pcap: link-type LINUX_SLL (", "not supported: Ethernet or raw IP"});
  EXPECT_FALSE(std::filesystem::exists(out));
  write_file(dir + "/odd.pcap", pcap_bytes(999, {ip}));
  expect_one_line(knod("ipsec --xfrm /dev/null -r " + dir + "/odd.pcap -w " + out), 1,
                  {"odd.pcap: link-type 999 (unknown) not supported"});
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(BadCapture, FrameLargerThanXdpIsCountedAndSkipped) {
  std::string dir = temp_dir(), p = dir + "/big.pcap";
  write_file(p, pcap_bytes(1, {udp_frame(100), udp_frame(4000), udp_frame(3521), udp_frame(3520)}));
  Result r = run_l4lb("-r " + p + " --stats " + dir + "/stats.json");
  expect_one_line(
      r, 0, {"knod: warning: ", "2 packets skipped", "larger than the XDP frame", "3520 bytes"});
  EXPECT_NE(r.out.find(": 2 packets"), std::string::npos) << r.out;
  std::string stats = read_file(dir + "/stats.json");
  EXPECT_NE(stats.find("\"skipped_too_large\": 2"), std::string::npos) << stats;
}

TEST(BadCapture, RuntFramesAreCountedAndSkippedAsTestRunDoes) {
  // BPF_PROG_TEST_RUN refuses frames shorter than ETH_HLEN with -EINVAL: knod skips them.
  std::string dir = temp_dir(), p = dir + "/runt.pcap";
  write_file(p, pcap_bytes(1, {std::string(1, '\x01'), std::string(13, '\xff'), udp_frame(60)}));
  Result r = run_l4lb("-r " + p + " --stats " + dir + "/stats.json");
  expect_one_line(r, 0, {"knod: warning: ", "2 packets skipped", "shorter than ETH_HLEN"});
  EXPECT_NE(r.out.find(": 1 packets"), std::string::npos) << r.out;
  std::string stats = read_file(dir + "/stats.json");
  EXPECT_NE(stats.find("\"skipped_runt\": 2"), std::string::npos) << stats;
  EXPECT_NE(stats.find("\"out_of_bounds\": 0"), std::string::npos) << stats;
}

TEST(BadOutput, TwoOutputsOnOneFile) {
  std::string p = temp_dir() + "/x.pcap";
  expect_one_line(run_l4lb("-r " + kPing4 + " --pass " + p + " --tx " + p), 1,
                  {"--pass", "--tx", "both write", p});
  EXPECT_FALSE(std::filesystem::exists(p));
}

// One file spelt two ways (relative "x.pcap" and "./x.pcap", not written yet) is one file.
TEST(BadOutput, TwoSpellingsOfOneFile) {
  const std::string dir = temp_dir();
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);  // knod runs here: the paths are relative to it
  Result r = run_l4lb("-r " + kPing4 + " --pass x.pcap --drop ./x.pcap");
  std::filesystem::current_path(cwd);
  expect_one_line(r, 1, {"--pass", "--drop", "both write"});
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.pcap"));
}

TEST(BadObject, Directory) {
  std::string d = temp_dir();
  expect_one_line(run_obj(d), 1, {d, "is a directory"});
}

// ---- map files -----------------------------------------------------------------------------

TEST(BadOptions, PcapClockConflictsAndGpuDevices) {
  expect_one_line(run_l4lb("-r " + kPing4 + " --pcap-clock --clock-ns 5"), 1,
                  {"--pcap-clock and --clock-ns"});
  expect_one_line(run_l4lb("-r " + kPing4 + " --pcap-clock --device gpusim"), 1,
                  {"--pcap-clock: not supported on gpusim"});
}

TEST(BadMapFile, MapLoadSpecWithoutNameOrFile) {
  expect_one_line(run_l4lb("-r " + kPing4 + " --map-load vip_map="), 1,
                  {"--map-load 'vip_map=': want FILE.json or NAME=FILE.json"});
  expect_one_line(run_l4lb("-r " + kPing4 + " --map-load =x.json"), 1, {"--map-load '=x.json'"});
}

TEST(BadMapFile, Missing) {
  expect_one_line(knod("run " + kL4lb + " -r " + kPing4 + " --map-load /nonexistent/m.json"), 1,
                  {"/nonexistent/m.json", "cannot open"});
}

TEST(BadMapFile, MalformedJson) {
  std::string p = temp_dir() + "/m.json";
  write_file(p, "{\"maps\": {\"vip_map\": [\n");
  expect_one_line(knod("run " + kL4lb + " -r " + kPing4 + " --map-load " + p), 1,
                  {p, "malformed JSON"});
  expect_one_line(knod("map dump " + kL4lb + " --map-load " + p), 1, {p, "malformed JSON"});
}

TEST(BadMapFile, UnknownMap) {
  std::string p = temp_dir() + "/m.json";
  write_file(p, R"({"maps": {"nosuch": [{"key": "00", "value": "00"}]}})");
  expect_one_line(knod("run " + kL4lb + " -r " + kPing4 + " --map-load " + p), 1, {p, "'nosuch'"});
}

TEST(BadMapFile, WrongKeySize) {
  std::string p = temp_dir() + "/m.json";
  write_file(p, R"({"maps": {"vip_map": [{"key": "0a000002", "value": "0000000000000000"}]}})");
  expect_one_line(knod("run " + kL4lb + " -r " + kPing4 + " --map-load " + p), 1,
                  {p, "vip_map[0]", "key/value are 4/8 bytes", "map wants 8/8"});
}

TEST(BadMapFile, NumberOutOfRangeNamesTheFile) {
  std::string p = temp_dir() + "/m.json";
  write_file(p, R"({"maps": {"vip_map": [{"key": 1e999999, "value": "00"}]}})");
  expect_one_line(knod("run " + kL4lb + " -r " + kPing4 + " --map-load " + p), 1,
                  {p, "malformed JSON", "number overflow"});
}

// JSON allows a name twice in one object and nlohmann keeps the last: a map named twice lost
// its first entries silently. A PROG_ARRAY entry with both "prog" and "value" took "prog".
TEST(BadMapFile, RepeatedNamesAndProgWithValue) {
  std::string p = temp_dir() + "/m.json";
  write_file(p, R"({"maps": {"vip_map": [{"key": "00", "value": "00"}], "vip_map": []}})");
  expect_one_line(knod("run " + kL4lb + " -r " + kPing4 + " --map-load " + p), 1,
                  {p, "\"vip_map\" appears twice in one object"});
  write_file(p, R"({"maps": {"vip_map": [{"key": "00", "key": "01", "value": "00"}]}})");
  expect_one_line(knod("run " + kL4lb + " -r " + kPing4 + " --map-load " + p), 1,
                  {p, "\"key\" appears twice"});
  write_file(p, R"({"maps": {"vip_map": [{"key": "00", "prog": "xdp_l4lb", "value": "00"}]}})");
  expect_one_line(knod("run " + kL4lb + " -r " + kPing4 + " --map-load " + p), 1,
                  {p, "vip_map[0]", "has both \"prog\" and \"value\""});
}

// Hex strings in a map file: whitespace of every kind between digits is ignored, as
// examples/xdp/README.md says (a newline used to be "bad hex digit ' '"), and a byte that is no
// digit is shown escaped (a NUL used to end the message).
TEST(BadMapFile, HexWhitespaceAndUnprintableDigits) {
  std::string p = temp_dir() + "/m.json";
  write_file(p,
             "{\"maps\": {\"vip_map\": [{\"key\": \"0a000002\\n00500600\", "
             "\"value\": \"0x01000000\\r\\n\\f00000000\"}]}}");
  Result r = knod("map dump " + kL4lb + " -m vip_map --map-load " + p);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("0a 00 00 02 00 50 06 00"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("01 00 00 00 00 00 00 00"), std::string::npos) << r.out;
  write_file(p,
             "{\"maps\": {\"vip_map\": [{\"key\": \"0a00000200500600\\u0000\", "
             "\"value\": \"0100000000000000\"}]}}");
  expect_one_line(knod("map dump " + kL4lb + " --map-load " + p), 1,
                  {p, "vip_map[0]", "bad hex digit '\\x00' in \"0a00000200500600\\x00\""});
}

// An entry key knod does not know is refused, naming it: it was dropped silently, so a
// "flags" meant for the update (BPF_NOEXIST) or a misspelt "value" did nothing.
TEST(BadMapFile, UnknownEntryKeyIsNamed) {
  std::string p = temp_dir() + "/m.json";
  write_file(p,
             "{\"maps\": {\"vip_map\": [{\"key\": \"0a00000200500600\", "
             "\"value\": \"0100000000000000\", \"flags\": \"BPF_NOEXIST\"}]}}");
  expect_one_line(knod("map dump " + kL4lb + " --map-load " + p), 1,
                  {p, "vip_map[0]", "unknown key \"flags\""});
  write_file(p, "{\"maps\": {\"vip_map\": [{\"key\": \"0a00000200500600\", \"vlaue\": \"01\"}]}}");
  expect_one_line(knod("run " + kL4lb + " -r " + kPing4 + " --map-load " + p), 1,
                  {p, "vip_map[0]", "unknown key \"vlaue\""});
  write_file(p, "{\"maps\": {}, \"flags\": \"BPF_NOEXIST\"}");  // beside "maps" too
  expect_one_line(knod("map dump " + kL4lb + " --map-load " + p), 1,
                  {p, "unknown key \"flags\" (a map file is {\"maps\": {...}})"});
  write_file(p, "{\"maps\": {\"vip_map\": [[\"0a00000200500600\"]]}}");
  expect_one_line(knod("map dump " + kL4lb + " --map-load " + p), 1,
                  {p, "vip_map[0]: an entry is an object"});
}

// A directory given where a file is read: std::ifstream opens it and reads nothing, which
// made `--xfrm DIR` run with no SA at all (every packet passed in clear) and the others
// print a C++ library message without the path.
TEST(BadInputFile, DirectoryIsNamedAsSuch) {
  const std::string d = temp_dir();
  const std::string pkt = d + "/pkt.bin";
  write_file(pkt, std::string(64, '\0'));
  const std::string cases[] = {
      "run " + kL4lb + " -r " + kPing4 + " --map-load " + d,
      "run " + kL4lb + " --map-load " + kL4lbMaps + " -r " + kPing4 + " --xfrm " + d,
      "ipsec --xfrm " + d + " -r " + kPing4 + " --dir in",
      "xfrm -f " + d,
      "disasm " + d,
      "jit " + d,
      "asm " + d + " -o " + d + "/x.bin",
      "test-run " + kL4lb + " -p xdp_l4lb --data-in " + d,
      "test-run " + kL4lb + " -p xdp_l4lb --data-in " + pkt + " --ctx-in " + d,
      "run " + kL4lb + " --map-load " + kL4lbMaps + " -r " + kPing4 + " --fib " + d,
  };
  for (const std::string& c : cases) {
    SCOPED_TRACE(c);
    expect_one_line(knod(c), 1, {d + ": is a directory, not a "});
  }
}

// ---- command line --------------------------------------------------------------------------

TEST(BadCommandLine, UnknownOption) {
  expect_one_line(run_l4lb("-r " + kPing4 + " --bogus"), 2,
                  {"run: ", "--bogus", "knod run --help"});
  expect_one_line(knod("--bogus"), 2, {"unknown option '--bogus'", "knod --help"});
}

TEST(BadCommandLine, MissingRequired) {
  expect_one_line(knod("run " + kL4lb), 2, {"--read is required", "knod run --help"});
  expect_one_line(knod("run -r " + kPing4), 2, {"object is required"});
  expect_one_line(knod("prog"), 2, {"prog: missing command: one of", "dump", "list"});
  expect_one_line(knod("bench " + kL4lb), 2, {"bench", "-r PCAP is required", "--examples"});
}

TEST(BadCommandLine, BadValue) {
  expect_one_line(run_l4lb("-r " + kPing4 + " --workers many"), 2, {"--workers", "many"});
  expect_one_line(run_l4lb("-r " + kPing4 + " --batch 0"), 2, {"--batch"});
  // One thread per worker: 100000 would exhaust the pid space (pid_max 32768 here).
  expect_one_line(run_l4lb("-r " + kPing4 + " --workers 100000"), 2, {"--workers", "100000"});
  expect_one_line(knod("bench " + kL4lb + " -r " + kPing4 + " --workers 5000"), 2, {"--workers"});
  // NaN passes a range check's comparisons (helper-53: exit 0, with -r where --duration is
  // refused); inf is out of range.
  for (const char* v : {"nan", "NaN", "-nan", "inf"})
    expect_one_line(run_l4lb("-r " + kPing4 + " --duration " + v), 2, {"--duration"});
  // Options that only mean something with another (helper-53: ignored, exit 0).
  expect_one_line(run_l4lb("-r " + kPing4 + " --xfrm-dir in"), 2,
                  {"--xfrm-dir: only with --xfrm FILE"});
  expect_one_line(run_l4lb("-r " + kPing4 + " --xfrm-engine portable"), 2,
                  {"--xfrm-engine: only with --xfrm FILE"});
  for (const char* d : {"interp,", "cpu,cpu", "cpux", ""})
    expect_one_line(knod("bench " + kL4lb + " -r " + kPing4 + " --device '" + d + "'"), 2,
                    {"--device", "use interp, cpu or both"});
  expect_one_line(knod("bench --xfrm /dev/null " + kL4lb), 2, {"--xfrm benches ESP SAs alone"});
}

// An output naming an input would truncate it before it is read (fresh-eyes: `--drop in.pcap`
// left a 24-byte capture); the same file under another path or a hard link counts too.
TEST(BadCommandLine, OutputThatIsAnInput) {
  const std::string dir = ::testing::TempDir() + "knod_roles";
  std::filesystem::create_directories(dir);
  const std::string cap = dir + "/in.pcap", link = dir + "/link.pcap";
  std::filesystem::copy_file(kPing4, cap, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove(link);
  std::filesystem::create_hard_link(cap, link);
  const auto size = std::filesystem::file_size(cap);
  expect_one_line(run_l4lb("-r " + cap + " --drop " + cap), 1, {"--drop", "in.pcap", "-r"});
  expect_one_line(run_l4lb("-r " + cap + " --stats " + link), 1, {"--stats", "-r"});
  expect_one_line(
      run_l4lb("-r " + cap + " --pass " + dir + "/./out.pcap --tx " + dir + "/out.pcap"), 1,
      {"--pass", "--tx", "both write"});
  expect_one_line(knod("ipsec --xfrm /dev/null -r " + cap + " -w " + cap), 1, {"-w", "-r"});
  EXPECT_EQ(std::filesystem::file_size(cap), size);  // untouched
}

TEST(BadCommandLine, UnknownCommand) {
  Result r = knod("bogus");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "knod: unknown command 'bogus' (see knod --help)\n");
  r = knod("prog bogus " + kL4lb);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "knod: unknown command 'prog bogus' (see knod prog --help)\n");
}

TEST(BadDevice, CudaWithoutGpu) {
  // KNOD_LIBCUDA points the CUDA driver loader at a missing file: no GPU, whatever the host.
  Result r = knod("run " + kL4lb + " --map-load " + kL4lbMaps + " -r " + kPing4 + " --device cuda",
                  "KNOD_LIBCUDA=/nonexistent/libcuda.so.1");
  expect_one_line(r, 1, {"cuda"});
  expect_one_line(run_l4lb("-r " + kPing4 + " --device tpu"), 1, {"unknown device 'tpu'"});
}

// ---- outputs -------------------------------------------------------------------------------

TEST(BadOutput, UnwritablePaths) {
  const std::string bad = "/nonexistent/dir/out";
  for (const char* opt : {"-w", "--pass", "--drop", "--stats", "--map-dump", "--trace"}) {
    SCOPED_TRACE(opt);
    Result r = run_l4lb("-r " + kPing4 + " " + opt + " " + bad);
    expect_one_line(r, 1, {bad});
    EXPECT_EQ(r.out, "") << "failed after the run instead of before";
  }
  // knod ipsec -w: the path once, libpcap's cause once.
  const std::string xfrm = std::string(KNOD_EXAMPLE_SRC_DIR) + "/../xfrm/run_after_xdp.conf";
  Result r = knod("ipsec --xfrm " + xfrm + " -r " + kPing4 + " --dir out -w " + bad);
  expect_one_line(r, 1, {"ipsec: " + bad + ": No such file or directory"});
  EXPECT_EQ(r.err.find(bad), r.err.rfind(bad)) << r.err;
}

TEST(BadOutput, DiskFull) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  expect_one_line(run_l4lb("-q -r " + kPing4 + " --stats /dev/full"), 1, {"/dev/full", "write"});
}

// Every output that buffers (test-run's files, asm and jit output, ipsec's capture and stats)
// checks the last write too: a full disk is an error, not exit 0 with the data lost.
TEST(BadOutput, DiskFullOnEveryOutput) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const std::string d = temp_dir(), pkt = d + "/pkt.bin", s = d + "/p.s";
  write_file(pkt, std::string(64, '\0'));
  write_file(s, "mov %r0, 2\nexit\n");
  const std::string xfrm = std::string(KNOD_EXAMPLE_SRC_DIR) + "/../xfrm/run_after_xdp.conf";
  const std::string cases[] = {
      "test-run " + kL4lb + " -p xdp_l4lb --data-in " + pkt + " --data-out /dev/full",
      "test-run " + kL4lb + " -p xdp_l4lb --data-in " + pkt + " --ctx-out /dev/full",
      "test-run " + kL4lb + " -p xdp_l4lb --data-in " + pkt + " --map-dump /dev/full",
      "asm " + s + " -o /dev/full",
      "jit " + s + " -o /dev/full",
      "ipsec --xfrm " + xfrm + " -r " + kPing4 + " --dir out -w /dev/full",
      "ipsec --xfrm " + xfrm + " -r " + kPing4 + " --dir out --stats /dev/full",
      "run " + kL4lb + " -q -r " + kPing4 + " -w /dev/full",
  };
  // The cause too (helper-53: the pcap outputs said "write error" alone).
  for (const std::string& c : cases) {
    SCOPED_TRACE(c);
    expect_one_line(knod(c), 1, {"/dev/full", "write", "(No space left on device)"});
  }
}

}  // namespace
}  // namespace knod::cli_test
