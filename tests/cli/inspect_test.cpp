// `knod prog list/dump`, `knod map list/dump`, `--max-entries`, checked against libbpf's
// view of the same object (bpf_object__open: what bpftool would load) and against the
// packet counts of the bundled captures (examples/pcap/README.md).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_test.h"

namespace knod::cli_test {
namespace {

const std::string kCounter = std::string(KNOD_CLI_FIXTURES) + "/counter.o";
const std::string kPing4 = std::string(KNOD_PCAP_DIR) + "/ping4.pcap";  // 10 frames
const std::string kHttp = std::string(KNOD_PCAP_DIR) + "/http.pcap";    // 14 frames

TEST(ProgList, MatchesLibbpf) {
  Result r = knod("prog list -j --max-entries routes=8 " + kCounter);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  nlohmann::json j = nlohmann::json::parse(r.out);

  bpf_object* obj = bpf_object__open(kCounter.c_str());
  ASSERT_NE(obj, nullptr);
  std::vector<bpf_program*> progs;
  bpf_program* p;
  bpf_object__for_each_program(p, obj) progs.push_back(p);
  ASSERT_EQ(j["programs"].size(), progs.size());
  for (size_t i = 0; i < progs.size(); ++i) {
    const nlohmann::json& jp = j["programs"][i];
    EXPECT_EQ(jp["name"], bpf_program__name(progs[i]));
    EXPECT_EQ(jp["section"], bpf_program__section_name(progs[i]));
    EXPECT_EQ(jp["type"], std::string(libbpf_bpf_prog_type_str(bpf_program__type(progs[i]))));
    EXPECT_EQ(jp["type"], "xdp");
    EXPECT_EQ(jp["insns"], bpf_program__insn_cnt(progs[i]));
    EXPECT_EQ(jp["gpl_compatible"], true);
  }
  std::vector<bpf_map*> maps;
  bpf_map* m;
  bpf_object__for_each_map(m, obj) maps.push_back(m);
  ASSERT_EQ(j["maps"].size(), maps.size());
  for (size_t i = 0; i < maps.size(); ++i) {
    const nlohmann::json& jm = j["maps"][i];
    std::string name = bpf_map__name(maps[i]);
    EXPECT_EQ(jm["name"], name);
    EXPECT_EQ(jm["type"], std::string(libbpf_bpf_map_type_str(bpf_map__type(maps[i]))));
    EXPECT_EQ(jm["bytes_key"], bpf_map__key_size(maps[i]));
    EXPECT_EQ(jm["bytes_value"], bpf_map__value_size(maps[i]));
    EXPECT_EQ(jm["flags"], bpf_map__map_flags(maps[i]));
    EXPECT_EQ(jm["max_entries"], name == "routes" ? 8u : bpf_map__max_entries(maps[i])) << name;
  }
  bpf_object__close(obj);

  // The source's own facts (bpf/counter.c).
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& jm : j["maps"]) by_name[jm["name"]] = jm;
  EXPECT_EQ(by_name["counts"]["type"], "hash");
  EXPECT_EQ(by_name["stats"]["type"], "percpu_array");
  EXPECT_EQ(by_name["routes"]["type"], "lpm_trie");
  EXPECT_EQ(by_name["routes"]["flags"], BPF_F_NO_PREALLOC);
  EXPECT_EQ(by_name["routes"]["bytes_key"], 8);
  EXPECT_EQ(j["programs"][0]["maps"], nlohmann::json({"counts"}));
  auto route_maps = j["programs"][1]["maps"].get<std::set<std::string>>();
  EXPECT_EQ(route_maps, (std::set<std::string>{"stats", "routes"}));
}

TEST(ProgList, Text) {
  Result r = knod("prog show --max-entries 8 " + kCounter);  // bare N: maps declared with 0
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("0: xdp  name xdp_count  section xdp\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1: xdp  name xdp_route  section xdp.frags\n"), std::string::npos);
  EXPECT_NE(r.out.find("  gpl  maps counts\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lpm_trie  name routes  flags 0x1\n\tkey 8B  value 4B  max_entries 8\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("hash  name counts  flags 0x0\n\tkey 4B  value 8B  max_entries 16\n"),
            std::string::npos);
}

TEST(ProgDump, NamesHelpersAndMaps) {
  Result r = knod("prog dump --max-entries routes=8 " + kCounter + " -p xdp_count");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.rfind("xdp_count: xdp  section xdp  insns ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("call bpf_map_lookup_elem#1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("call bpf_map_update_elem#2"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("xdp_route"), std::string::npos);
  // The map load names the map and takes two slots: the next line number is 2 further on.
  size_t at = r.out.find("map_idx(0)");
  ASSERT_NE(at, std::string::npos) << r.out;
  size_t bol = r.out.rfind('\n', at) + 1, eol = r.out.find('\n', at);
  EXPECT_NE(r.out.substr(at, eol - at).find("counts"), std::string::npos) << r.out;
  int pc = std::stoi(r.out.substr(bol, at - bol));
  EXPECT_EQ(std::stoi(r.out.substr(eol + 1, 5)), pc + 2) << r.out;
}

TEST(ProgDump, JsonAllPrograms) {
  Result r = knod("prog dump -j --max-entries routes=8 " + kCounter);
  ASSERT_EQ(r.rc, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[1]["name"], "xdp_route");
  EXPECT_EQ(j[1]["insns"][0]["pc"], 0);
  EXPECT_EQ(j[1]["insns"].back()["disasm"], "exit");
}

TEST(MaxEntries, LoaderMessageNamesTheOption) {
  Result r = knod("prog list " + kCounter);
  EXPECT_EQ(r.rc, 1);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("knod: "), std::string::npos);
  EXPECT_NE(r.err.find("'routes'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--max-entries routes=N"), std::string::npos) << r.err;
}

TEST(MaxEntries, PerMapWinsOverTheObject) {
  Result r = knod("map list -j --max-entries routes=8 --max-entries counts=1000 " + kCounter);
  ASSERT_EQ(r.rc, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  for (const auto& m : j) {
    if (m["name"] == "counts") {
      EXPECT_EQ(m["max_entries"], 1000);
    }
    if (m["name"] == "stats") {
      EXPECT_EQ(m["max_entries"], 4);
    }
    if (m["name"] == "routes") {
      EXPECT_EQ(m["max_entries"], 8);
    }
  }
}

TEST(MaxEntries, RejectsBadValues) {
  for (const char* bad : {"routes=abc", "routes=", "=5", "-3", "routes=99999999999"}) {
    Result r = knod(std::string("map list --max-entries '") + bad + "' " + kCounter);
    EXPECT_EQ(r.rc, 1) << bad;
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("knod: --max-entries '", 0), 0u) << r.err;
  }
  Result r = knod("map list --max-entries routes=8 --max-entries nosuch=4 " + kCounter);
  EXPECT_EQ(r.rc, 1);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("no map 'nosuch'"), std::string::npos) << r.err;
}

TEST(Run, CountsEveryPacketInAMap) {
  std::string dir = temp_dir();
  Result r = knod("run " + kCounter + " -p xdp_count -r " + kPing4 +
                  " --max-entries routes=8 --map-dump " + dir + "/maps.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  nlohmann::json j = nlohmann::json::parse(read_file(dir + "/maps.json"));
  bool seen = false;
  for (const auto& m : j)
    if (m["name"] == "counts") {
      ASSERT_EQ(m["entries"].size(), 1u);
      EXPECT_EQ(m["entries"][0]["key"], nlohmann::json({"0x00", "0x00", "0x00", "0x00"}));
      EXPECT_EQ(m["entries"][0]["value"],
                nlohmann::json({"0x0a", "0x00", "0x00", "0x00", "0x00", "0x00", "0x00", "0x00"}));
      seen = true;
    }
  EXPECT_TRUE(seen) << j.dump();
}

const char* kPreload = R"({"maps": {
  "counts": [{"key": "07000000", "value": "2a00000000000000"}],
  "routes": [{"key": "2000000000000000", "value": "01000000"}]}})";

TEST(MapDump, AfterPreloadText) {
  std::string dir = temp_dir();
  write_file(dir + "/pre.json", kPreload);
  Result r = knod("map dump " + kCounter + " --max-entries routes=8 --map-load " + dir +
                  "/pre.json -m counts -m routes");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "counts: hash  key 4B  value 8B  max_entries 16\n"
            "key: 07 00 00 00  value: 2a 00 00 00 00 00 00 00\n"
            "Found 1 element\n"
            "\n"
            "routes: lpm_trie  key 8B  value 4B  max_entries 8\n"
            "key: 20 00 00 00 00 00 00 00  value: 01 00 00 00\n"
            "Found 1 element\n");
}

TEST(MapDump, JsonIsTheRunDumpFormat) {
  std::string dir = temp_dir();
  write_file(dir + "/pre.json", kPreload);
  Result r = knod("map dump -j " + kCounter + " --max-entries routes=8 --map-load counts=" + dir +
                  "/pre.json -m counts -m stats");
  ASSERT_EQ(r.rc, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["name"], "counts");
  EXPECT_EQ(j[0]["entries"].size(), 1u);
  EXPECT_EQ(j[1]["name"], "stats");
  ASSERT_EQ(j[1]["entries"].size(), 4u);               // an array has every key
  EXPECT_TRUE(j[1]["entries"][0].contains("values"));  // per-CPU
}

/// "180000000a006400": a preload file's key.
std::string hex(const std::vector<uint8_t>& b) {
  std::string s;
  for (uint8_t c : b) s += fmt::format("{:02x}", c);
  return s;
}

/// ["0x18", "0x00", ...]: a key as `knod map dump -j` (and `bpftool map dump -j`) writes it.
std::vector<std::string> hex_bytes(const std::vector<uint8_t>& b) {
  std::vector<std::string> s;
  for (uint8_t c : b) s.push_back(fmt::format("0x{:02x}", c));
  return s;
}

/// The keys a kernel map of `type` lists (BPF_MAP_GET_NEXT_KEY, as `bpftool map dump`) after
/// `keys` were added in that order (values of 1s; not for a per-CPU map); none, and `why` set,
/// when bpf() refuses the map.
std::vector<std::string> kernel_order(bpf_map_type type, uint32_t key_size, uint32_t value_size,
                                      uint32_t max_entries, uint32_t flags,
                                      const std::vector<std::vector<uint8_t>>& keys,
                                      std::string& why) {
  LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);
  int fd = bpf_map_create(type, "knod_order", key_size, value_size, max_entries, &o);
  if (fd < 0) {
    why = std::string("bpf(BPF_MAP_CREATE) refused: ") + std::strerror(errno);
    return {};
  }
  std::vector<uint8_t> value(value_size, 1);
  for (const auto& k : keys) EXPECT_EQ(bpf_map_update_elem(fd, k.data(), value.data(), 0), 0);
  std::vector<std::string> order;
  std::vector<uint8_t> prev(key_size), next(key_size);
  for (const void* p = nullptr; bpf_map_get_next_key(fd, p, next.data()) == 0; p = prev.data()) {
    order.push_back(nlohmann::json(hex_bytes(next)).dump());
    prev = next;
  }
  close(fd);
  return order;
}

// `knod map dump` lists keys in the order `bpftool map dump` lists the kernel's: an LPM_TRIE
// in post-order (kernel/bpf/lpm_trie.c: more specific prefixes first), an ARRAY by index
// (little-endian keys: index 256 after 255, not after 0). Before, knod sorted key bytes.
TEST(MapDump, InTheKernelsOrder) {
  const std::vector<std::vector<uint8_t>> routes = {
      {24, 0, 0, 0, 10, 0, 100, 0},  {8, 0, 0, 0, 192, 0, 0, 0},      {16, 0, 0, 0, 192, 168, 0, 0},
      {24, 0, 0, 0, 192, 168, 1, 0}, {24, 0, 0, 0, 192, 168, 128, 0}, {24, 0, 0, 0, 192, 168, 0, 0},
      {32, 0, 0, 0, 10, 0, 100, 5},  {0, 0, 0, 0, 0, 0, 0, 0}};
  std::string why, pre = R"({"maps": {"routes": [)";
  for (size_t i = 0; i < routes.size(); ++i)
    pre +=
        fmt::format(R"({}{{"key": "{}", "value": "0{}000000"}})", i ? ", " : "", hex(routes[i]), i);
  pre += "]}}";
  std::vector<std::string> kroutes =
      kernel_order(BPF_MAP_TYPE_LPM_TRIE, 8, 4, 16, BPF_F_NO_PREALLOC, routes, why);
  if (kroutes.empty()) GTEST_SKIP() << why;
  std::vector<std::string> kstats = kernel_order(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 300, 0, {}, why);
  ASSERT_EQ(kroutes.size(), 8u);
  ASSERT_EQ(kstats.size(), 300u);

  std::string dir = temp_dir();
  write_file(dir + "/pre.json", pre);
  Result r = knod("map dump -j " + kCounter + " --max-entries routes=16 --max-entries stats=300" +
                  " --map-load " + dir + "/pre.json -m routes -m stats");
  ASSERT_EQ(r.rc, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  std::map<std::string, std::vector<std::string>> knod_order;
  for (const nlohmann::json& m : j)
    for (const nlohmann::json& e : m["entries"])
      knod_order[m["name"].get<std::string>()].push_back(e["key"].dump());
  EXPECT_EQ(knod_order["stats"], kstats);
  EXPECT_EQ(knod_order["routes"], kroutes);
  // The kernel's post-order, written out: the /32 before its /24, the /24s before their /16.
  EXPECT_EQ(kroutes.front(), nlohmann::json(hex_bytes(routes[6])).dump());
  EXPECT_EQ(kroutes.back(), nlohmann::json(hex_bytes(routes[7])).dump());
}

TEST(Run, PreloadedRouteDropsEverything) {
  std::string dir = temp_dir();
  write_file(dir + "/pre.json", kPreload);
  Result r = knod("run " + kCounter + " -p xdp.frags -r " + kPing4 +
                  " --max-entries routes=8 --workers 1 --map-load " + dir + "/pre.json --stats " +
                  dir + "/stats.json --map-dump " + dir + "/maps.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  nlohmann::json s = nlohmann::json::parse(read_file(dir + "/stats.json"));
  EXPECT_EQ(s["packets"], 10);
  EXPECT_EQ(s["verdicts"]["XDP_DROP"], 10) << s.dump();
  EXPECT_EQ(s["cpu_device"]["workers"], 1) << s.dump();  // device::CpuStats
  EXPECT_EQ(s["cpu_device"]["packets_per_worker"], nlohmann::json::array({10})) << s.dump();
  nlohmann::json m = nlohmann::json::parse(read_file(dir + "/maps.json"));
  for (const auto& jm : m)
    if (jm["name"] == "stats") {
      EXPECT_EQ(jm["entries"][1]["values"][0]["value"][0], "0x0a") << jm.dump();
    }
}

// Every packet gets the zeroed headroom BPF_PROG_TEST_RUN gives it, not what the previous
// packet in its batch slot left there: the fixture reads a headroom byte after
// bpf_xdp_adjust_head(-16) and writes 0xab there (XDP_DROP when it finds one), on batches of
// one packet (every packet in slot 0) and of 256, on both devices.
TEST(Run, EveryPacketGetsAZeroedHeadroom) {
  const std::string obj = std::string(KNOD_CLI_FIXTURES) + "/headroom.o";
  for (const char* dev : {"cpu", "interp"})
    for (const char* batch : {"1", "3", "256"}) {
      const std::string dir = temp_dir();
      Result r = knod("run " + obj + " -r " + kHttp + " --device " + dev + " --batch " + batch +
                      " --workers 1 --stats " + dir + "/s.json");
      ASSERT_EQ(r.rc, 0) << r.err;
      nlohmann::json s = nlohmann::json::parse(read_file(dir + "/s.json"));
      EXPECT_EQ(s["verdicts"]["XDP_PASS"], 14) << dev << " batch " << batch << ": " << s.dump();
      EXPECT_EQ(s["verdicts"]["XDP_DROP"], 0) << dev << " batch " << batch;
    }
}

// One CPU takes its packets in capture order, as a CPU takes its receive queue: with 2
// workers each CPU's running count (PERCPU_ARRAY) rises by one along the capture, on the
// CPU device (whose workers once walked half their slices backward) as on the interpreter.
TEST(Run, EachCpuRunsItsPacketsInCaptureOrder) {
  const std::string obj = std::string(KNOD_CLI_FIXTURES) + "/order.o";
  const std::string pcap = std::string(KNOD_PCAP_DIR) + "/iperf3-tcp.pcap";  // 246 frames
  for (const char* dev : {"cpu", "interp"})
    for (const char* batch : {"64", "256"}) {
      const std::string dir = temp_dir();
      Result r = knod("run " + obj + " -r " + pcap + " --device " + dev + " --workers 2 --batch " +
                      batch + " -w " + dir + "/out.pcap --stats " + dir + "/s.json");
      ASSERT_EQ(r.rc, 0) << r.err;
      const std::string f = read_file(dir + "/out.pcap");
      uint32_t next[256] = {}, frames = 0;
      for (size_t off = 24; off + 16 <= f.size(); ++frames) {
        uint32_t caplen;
        std::memcpy(&caplen, f.data() + off + 8, 4);
        ASSERT_GE(caplen, 3u);
        ASSERT_LE(off + 16 + caplen, f.size());
        const auto* d = reinterpret_cast<const uint8_t*>(f.data() + off + 16);
        const uint32_t count = d[0] | d[1] << 8, cpu = d[2];
        ASSERT_LT(cpu, 2u) << dev;
        EXPECT_EQ(count, ++next[cpu]) << dev << " batch " << batch << " frame " << frames;
        off += 16 + caplen;
      }
      EXPECT_EQ(frames, 246u) << dev;
      // --stats counts each worker's packets as the program did (device::CpuStats::items).
      nlohmann::json s = nlohmann::json::parse(read_file(dir + "/s.json"));
      EXPECT_EQ(s["cpu_device"]["packets_per_worker"], nlohmann::json::array({next[0], next[1]}))
          << dev << " batch " << batch << ": " << s.dump();
    }
}

// A capture on 2 CPU workers is read 2 batches ahead, each batch run whole by one worker
// (xdp_job.cpp): the frames written and the verdicts are those of 1 worker, in capture order,
// whether the capture fills 6 batches of 4, one batch of 256 (cut between the workers) or one
// of 4 and a last of 2 (--count 6); --stats counts every packet on some worker.
TEST(Run, BatchesReadAheadPerWorkerWriteWhatOneWorkerWrites) {
  const std::string base = std::string(KNOD_EXAMPLE_OBJ_DIR) + "/vlan.o -r " + KNOD_PCAP_DIR +
                           "/vlan.pcap --map-load " + KNOD_EXAMPLE_SRC_DIR + "/vlan.maps.json";
  for (const char* extra : {"--batch 4", "--batch 256", "--batch 4 -c 6"}) {
    std::string out[2], verdicts[2];
    uint64_t ran[2] = {};
    for (uint32_t w = 1; w <= 2; ++w) {
      const std::string dir = temp_dir();
      Result r = knod("run " + base + " " + extra + " --workers " + std::to_string(w) + " -w " +
                      dir + "/out.pcap --stats " + dir + "/s.json");
      ASSERT_EQ(r.rc, 0) << r.err;
      out[w - 1] = read_file(dir + "/out.pcap");
      nlohmann::json s = nlohmann::json::parse(read_file(dir + "/s.json"));
      verdicts[w - 1] = s["verdicts"].dump();
      for (const auto& n : s["cpu_device"]["packets_per_worker"]) ran[w - 1] += n.get<uint64_t>();
    }
    EXPECT_GT(out[0].size(), 24u) << extra;
    EXPECT_EQ(out[0], out[1]) << extra;
    EXPECT_EQ(verdicts[0], verdicts[1]) << extra;
    const uint64_t want = std::string(extra).find("-c 6") != std::string::npos ? 6 : 24;
    EXPECT_EQ(ran[0], want) << extra;
    EXPECT_EQ(ran[1], want) << extra;
  }
}

// --xfrm after XDP on batches read ahead: ESP runs batch by batch in capture order (sequence
// numbers, IVs from the SA's counter), so 2 workers and batches of 16 write the ESP frames and
// counters of 1 worker.
TEST(Run, EspAfterBatchesReadAheadIsWhatOneWorkerWrites) {
  const std::string base = std::string(KNOD_EXAMPLE_OBJ_DIR) + "/proto_count.o -r " +
                           KNOD_PCAP_DIR + "/iperf3-udp.pcap --xfrm " + KNOD_EXAMPLE_SRC_DIR +
                           "/../xfrm/run_after_xdp.conf --xfrm-dir out --batch 16";
  std::string out[2], xfrm[2];
  for (uint32_t w = 1; w <= 2; ++w) {
    const std::string dir = temp_dir();
    Result r = knod("run " + base + " --workers " + std::to_string(w) + " -w " + dir +
                    "/out.pcap --stats " + dir + "/s.json");
    ASSERT_EQ(r.rc, 0) << r.err;
    out[w - 1] = read_file(dir + "/out.pcap");
    xfrm[w - 1] = nlohmann::json::parse(read_file(dir + "/s.json"))["xfrm"].dump();
  }
  EXPECT_GT(out[0].size(), 134u * 60) << "134 ESP frames";
  EXPECT_EQ(out[0], out[1]);
  EXPECT_NE(xfrm[0], "null");
  EXPECT_EQ(xfrm[0], xfrm[1]);
}

// `knod jit --slot-loop`: the module knod run compiles for the CPU device, the per-packet loop
// (<name>_slots) with the program's body inlined; none at -O0 (the device loops in knod).
TEST(Jit, SlotLoopShowsTheLoopWithTheBodyInlined) {
  const std::string obj = std::string(KNOD_EXAMPLE_OBJ_DIR) + "/icmp_echo.o";
  Result plain = knod("jit " + obj);
  ASSERT_EQ(plain.rc, 0) << plain.err;
  EXPECT_EQ(plain.out.find("@knod_prog_slots("), std::string::npos);
  Result loop = knod("jit --slot-loop " + obj);
  ASSERT_EQ(loop.rc, 0) << loop.err;
  const size_t def = loop.out.find(" @knod_prog_slots(ptr");
  ASSERT_NE(def, std::string::npos) << loop.out.substr(0, 2000);
  // Inlined: the loop's own code calls no body (the entry and tail calls still do).
  const std::string fn = loop.out.substr(def, loop.out.find("\n}\n", def) - def);
  EXPECT_EQ(fn.find("call i64 @knod_prog_sub0("), std::string::npos) << fn.substr(0, 2000);
  EXPECT_NE(fn.find("prefetch"), std::string::npos);  // the loop's prefetch of the next slot
  Result o0 = knod("jit -O 0 --slot-loop " + obj);
  ASSERT_EQ(o0.rc, 0) << o0.err;
  EXPECT_EQ(o0.out.find("@knod_prog_slots("), std::string::npos);
  Result gpu = knod("jit --target sm_90 --slot-loop " + obj);
  EXPECT_EQ(gpu.rc, 1);
  EXPECT_EQ(gpu.err_lines(),
            std::vector<std::string>{"knod: jit: --slot-loop is for the host target (x86_64)"});
}

// `knod jit -o FILE` on the host target writes the IR (or assembly) there, not to stdout.
TEST(Jit, OutputOptionWritesTheFile) {
  const std::string obj = std::string(KNOD_EXAMPLE_OBJ_DIR) + "/icmp_echo.o";
  const std::string dir = temp_dir();
  for (const char* flags : {"", "-S "}) {
    Result r = knod("jit " + std::string(flags) + obj + " -o " + dir + "/out");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "") << flags;
    const std::string code = read_file(dir + "/out");
    EXPECT_NE(code.find(*flags ? "knod_prog:" : "define"), std::string::npos)
        << flags << code.substr(0, 500);
  }
}

// Assembly text with a control character in a comment (a form feed) is text, not raw slots.
TEST(Jit, AssemblyWithAControlCharacterIsText) {
  const std::string dir = temp_dir();
  write_file(dir + "/p.s", "mov %r0, 2 #\fpage\nexit\n");
  Result r = knod("jit " + dir + "/p.s");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("ret i64 2"), std::string::npos) << r.out;
}

// Program files given wrongly: each one line that names the file, no binary bytes echoed,
// no exit 0 with an empty output.
TEST(AsmFiles, BadProgramFilesAreNamed) {
  const std::string d = temp_dir();
  const std::string obj = std::string(KNOD_EXAMPLE_OBJ_DIR) + "/icmp_echo.o";
  write_file(d + "/empty.s", "# nothing\n");
  const std::string junk = "bogus" + std::string(300, 'a');  // echoed at most 160 characters
  write_file(d + "/bad.s", "mov %r0, 1\n" + junk + " %r1\nexit\n");
  write_file(d + "/ff.bin", std::string(8, '\xff'));
  write_file(d + "/odd.bin", std::string(12, '\0'));
  const std::pair<std::string, std::string> cases[] = {
      {"asm " + d + "/empty.s -o " + d + "/o", d + "/empty.s: no instructions"},
      {"asm " + d + "/bad.s -o " + d + "/o",
       d + "/bad.s: " + ("line 2: invalid mnemonic '" + junk).substr(0, 160) + "..."},
      {"asm " + d + "/ff.bin -o " + d + "/o", d + "/ff.bin: binary data, not assembly text"},
      {"disasm " + obj, obj + ": an ELF object, not raw instructions (knod prog dump " + obj +
                            " disassembles its programs)"},
      {"disasm " + d + "/odd.bin",
       d + "/odd.bin: 12 bytes is not a whole number of 8-byte instructions"},
      {"jit " + d + "/empty.s", d + "/empty.s: no instructions"},
      {"jit " + d + "/ff.bin", "insn 0: unknown ALU opcode (code 0xff)"},  // raw slots
  };
  for (const auto& [args, want] : cases) {
    Result r = knod(args);
    EXPECT_EQ(r.rc, 1) << args;
    EXPECT_EQ(r.err_lines(), std::vector<std::string>{"knod: " + want}) << args;
  }
  EXPECT_FALSE(std::filesystem::exists(d + "/o"));
}

TEST(Usage, NoArgumentsListsCommands) {
  Result r = knod("");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "");
  for (const char* c : {"run", "prog", "map", "version"})
    EXPECT_NE(r.out.find(std::string("\n  ") + c), std::string::npos) << c << "\n" << r.out;
}

}  // namespace
}  // namespace knod::cli_test
