// Differential test: every XDP program of every examples/xdp object, on every packet of every
// examples/pcap capture plus the crafted edge packets (edge_packets.h), run by the kernel
// (BPF_PROG_TEST_RUN on CPU 0, the oracle) and by knod three ways: vm::Interpreter and
// jit::JitExecutor packet by packet (Runtime::run_packet), and the JIT as the CPU device runs
// it (Runtime::run_packets: the compiled slot loop with the body inlined). Per packet it
// compares the retval (the verdict on the CPU device path), the output bytes (from data_meta,
// as test_run copies them) and the contents of every map afterwards. The last line printed is
// "N passed, M failed", N + M = packets x programs x 3.
//
// What differs by nature, and how it is handled (no bytes are masked):
// - bpf_ktime_get_ns: the kernel's clock is replayed. After the kernel runs a packet, the
//   timestamp fields the program stores (kClockFields: ddos rate_limit.last_ns and
//   syn_track.start_ns, nat44 conntrack.last_seen_ns) tell the kernel's `now` for that packet:
//   the largest of them, which grows by monotonicity. knod's pinned clock
//   (xdp::Runtime::set_clock_ns) is set to it before knod runs the packet, so the maps are
//   compared byte for byte. A packet that stores no timestamp runs with the last one seen;
//   the only use of `now` such a packet has (ddos: a SYN over the limit inside its window,
//   now - start_ns < 1 s) gives the same answer, since start_ns <= last seen <= now.
// - DEVMAP values: the kernel needs existing ifindexes, so its preload stores 1 (lo) where
//   the .maps.json has port numbers; DEVMAP keys are compared, values are not. A redirect
//   is compared as retval XDP_REDIRECT (test_run does not report the target) and knod's
//   target must be one of the ports of the .maps.json.
// - bpf_fib_lookup consults the caller's network namespace: the test enters a fresh one with
//   known routes and gives knod the same table (fib_netns.h). Without CAP_SYS_ADMIN the
//   programs that call bpf_fib_lookup (router) are skipped with the reason.
// - prandom and the CPU id: no example uses them; the kernel run is pinned to CPU 0 and knod
//   runs on cpu 0 with ncpus = possible CPUs, so per-CPU maps have the same layout.
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "device/batch.h"
#include "diff_common.h"
#include "edge_packets.h"
#include "fib_netns.h"
#include "io/map_json.h"
#include "io/pcap.h"
#include "jit/executor.h"
#include "kernel_oracle.h"
#include "loader/object.h"
#include "vm/interp.h"
#include "xdp/fib.h"
#include "xdp/runtime.h"

namespace knod::diff {
namespace {

uint64_t g_passed = 0, g_failed = 0;

class Summary : public ::testing::Environment {
 public:
  void TearDown() override {
    if (g_passed + g_failed == 0) return;  // no comparison ran in this process
    std::printf("%llu passed, %llu failed\n", static_cast<unsigned long long>(g_passed),
                static_cast<unsigned long long>(g_failed));
    std::fflush(stdout);
  }
};
const auto* const g_summary = ::testing::AddGlobalTestEnvironment(new Summary);

/// A u64 field the program fills with bpf_ktime_get_ns: object, map, byte offset in the value.
struct ClockField {
  const char* object;
  const char* map;
  size_t offset;
};
constexpr ClockField kClockFields[] = {
    {"ddos", "rate_limit", 8},  // struct bucket.last_ns
    {"ddos", "syn_track", 0},   // struct syn_window.start_ns
    {"nat44", "conntrack", 8},  // struct ct_entry.last_seen_ns
};

/// The largest timestamp of `object`'s clock fields in `maps`, or 0.
uint64_t kernel_now(const std::string& object, const std::map<std::string, MapContents>& maps) {
  uint64_t now = 0;
  for (const ClockField& f : kClockFields) {
    if (object != f.object) continue;
    auto it = maps.find(f.map);
    if (it == maps.end()) continue;
    for (const auto& [k, v] : it->second) {
      uint64_t t = 0;
      if (v.size() >= f.offset + 8) std::memcpy(&t, v.data() + f.offset, 8);
      now = std::max(now, t);
    }
  }
  return now;
}

bool is_devmap(const maps::Map& m) {
  return m.def().type == BPF_MAP_TYPE_DEVMAP || m.def().type == BPF_MAP_TYPE_DEVMAP_HASH;
}

/// knod's side: its own copy of the object (maps), the runtime and one executor.
struct KnodSide {
  std::string executor;  // "interp" | "jit" (run_packet) | "cpu" (the JIT, run_packets)
  loader::Object obj;
  std::unique_ptr<xdp::Runtime> rt;
  std::unique_ptr<vm::Executor> ex;
  uint32_t reported = 0;  // mismatch messages printed so far
};

/// Runs one packet on a knod side; returns the first difference from the kernel, or "".
std::string run_and_compare(KnodSide& s, const Bytes& pkt, const TestRunResult& k,
                            const std::map<std::string, MapContents>& kmaps,
                            const std::set<uint32_t>& ports) {
  std::vector<uint8_t> frame(device::kFrameSize, 0);
  uint32_t off = device::kXdpHeadroom, len = uint32_t(pkt.size()), meta = 0, verdict = 0;
  uint32_t ifindex = 1, rxq = 0;  // test_run's: the loopback device, queue 0
  uint64_t redirect = 0;
  uint8_t fault = 0;
  if (len <= device::kFrameSize - off) std::copy(pkt.begin(), pkt.end(), frame.begin() + off);
  device::Batch b;
  b.count = 1;
  b.stride = device::kFrameSize;
  b.frames = frame.data();
  b.data_off = &off;
  b.data_len = &len;
  b.meta_len = &meta;
  b.ingress_ifindex = &ifindex;
  b.rx_queue_index = &rxq;
  b.verdict = &verdict;
  b.redirect = &redirect;
  b.fault = &fault;
  xdp::RunResult r;
  if (s.executor == "cpu") {
    // The CPU device's path (CpuDevice::run_chunks calls run_packets): the JIT's slot loop
    // with the body inlined, where the program gets one. It reports the verdict, not r0.
    s.rt->run_packets(*s.ex, b, 0, 1, 0);
    r.verdict = r.retval = verdict;
    r.redirect = redirect;
    r.fault = vm::Fault(fault);
  } else {
    r = s.rt->run_packet(*s.ex, b, 0, 0);
  }
  // What the kernel's retval means as a verdict (> XDP_REDIRECT: XDP_ABORTED).
  const uint32_t kretval = s.executor != "cpu"        ? k.retval
                           : k.retval <= XDP_REDIRECT ? k.retval
                                                      : uint32_t(XDP_ABORTED);

  std::ostringstream d;
  if (k.err != 0) {
    // test_run refuses the frame (EINVAL: < ETH_HLEN or > 3520 B): knod must not run it.
    if (r.fault == vm::Fault::kNone)
      d << "kernel refuses the frame (err " << k.err << ") but knod ran it: retval " << r.retval;
  } else if (r.fault != vm::Fault::kNone) {
    d << "knod faulted (" << vm::fault_name(r.fault) << " at pc " << r.fault_pc
      << "), kernel retval " << k.retval;
  } else if (r.retval != kretval) {
    d << "retval: kernel " << kretval << ", knod " << r.retval;
  } else {
    const Bytes out(frame.begin() + (off - meta), frame.begin() + off + len);
    if (out != k.data_out) {
      d << "output bytes differ: kernel " << k.data_out.size() << " B, knod " << out.size()
        << " B (meta " << meta << ")";
      for (size_t i = 0; i < std::min(out.size(), k.data_out.size()); ++i)
        if (out[i] != k.data_out[i]) {
          d << ", first at byte " << i << ": kernel " << int(k.data_out[i]) << ", knod "
            << int(out[i]);
          break;
        }
    } else if (r.verdict == XDP_REDIRECT &&
               (device::redirect_kind(r.redirect) != device::RedirectKind::kIfindex ||
                !ports.count(device::redirect_value(r.redirect)))) {
      d << "redirect target " << std::hex << r.redirect << " is no port of the DEVMAP preload";
    }
  }
  if (!d.str().empty()) return d.str();

  for (const auto& [name, kc] : kmaps) {
    const int idx = s.obj.find_map(name);
    if (idx < 0) return "knod has no map " + name;
    maps::Map& m = *s.obj.maps[size_t(idx)];
    const auto kn = io::map_contents(m);
    if (is_devmap(m)) {
      std::set<Bytes> a, b2;
      for (const auto& e : kc) a.insert(e.first);
      for (const auto& e : kn) b2.insert(e.first);
      if (a != b2) return "DEVMAP " + name + ": keys differ";
      continue;
    }
    if (kn == kc) continue;
    d << "map " << name << ": kernel " << kc.size() << " entries, knod " << kn.size();
    for (const auto& [key, v] : kc) {
      auto it = kn.find(key);
      if (it == kn.end()) {
        d << "; key " << hex(key) << " missing in knod";
        break;
      }
      if (it->second != v) {
        d << "; key " << hex(key) << ": kernel " << hex(v) << ", knod " << hex(it->second);
        break;
      }
    }
    return d.str();
  }
  return "";
}

class Diff : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    if (!KernelObject::available(&why)) GTEST_SKIP() << why;
    netns_ok_ = enter_fib_netns(&netns_why_);
  }
  bool netns_ok_ = false;
  std::string netns_why_;
};

TEST_P(Diff, EveryProgramEveryPacketAgreesWithKernel) {
  const std::string name = GetParam();
  const std::string path = object_path(name), json = preload_path(name);
  const uint32_t ncpus = KernelObject::possible_cpus();
  const std::vector<Input> inputs = all_inputs();
  const io::MapPreload preload = io::read_map_preload(json);
  const std::set<uint32_t> ports = devmap_ports(preload, path);

  // Every program of the object: knod's loader and libbpf must agree on the list.
  std::vector<std::string> progs;
  {
    KernelObject k(path);
    loader::Object o = loader::load_object(path);
    auto kp = k.programs();
    ASSERT_EQ(kp.size(), o.programs.size()) << name;
    for (size_t i = 0; i < kp.size(); ++i) {
      EXPECT_EQ(kp[i].first, o.programs[i].name);
      EXPECT_EQ(kp[i].second, BPF_PROG_TYPE_XDP) << kp[i].first;
      progs.push_back(kp[i].first);
    }
  }
  ASSERT_FALSE(progs.empty());
  std::shared_ptr<const xdp::FibTable> fib;
  if (netns_ok_) {
    fib = std::make_shared<xdp::FibTable>(xdp::parse_fib_table(fib_json()));
  } else if (uses_fib_lookup(path)) {
    GTEST_SKIP() << name << " calls bpf_fib_lookup, whose kernel answer depends on the host's "
                 << "routes; the test namespace could not be made: " << netns_why_;
  }

  for (const std::string& prog : progs) {
    SCOPED_TRACE("program " + prog);
    KernelObject k(path);
    k.preload(json, /*devmap_ifindex=lo*/ 1);
    std::vector<KnodSide> sides;
    for (const char* exname : {"interp", "jit", "cpu"}) {
      KnodSide s;
      s.executor = exname;
      loader::LoadOptions lo;
      lo.ncpus = ncpus;
      s.obj = loader::load_object(path, lo);
      io::apply_map_preload(preload, s.obj, json);
      xdp::Options xo;
      xo.ncpus = ncpus;
      xo.clock_ns = 1;
      xo.fib = fib;
      s.rt = std::make_unique<xdp::Runtime>(s.obj, prog, xo);
      if (s.executor == "interp")
        s.ex = std::make_unique<vm::Interpreter>();
      else
        s.ex = std::make_unique<jit::JitExecutor>(
            jit::JitOptions{.opt_level = 2, .ctx = jit::CtxKind::kXdp});
      sides.push_back(std::move(s));
    }
    // Maps are dumped on both sides: the same names (internal maps included).
    {
      const auto kmaps = k.dump_maps();
      for (const auto& m : sides[0].obj.maps) {
        const auto t = m->def().type;
        if (t == BPF_MAP_TYPE_PROG_ARRAY || t == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
            t == BPF_MAP_TYPE_HASH_OF_MAPS || t == BPF_MAP_TYPE_PERF_EVENT_ARRAY ||
            t == BPF_MAP_TYPE_RINGBUF || t == BPF_MAP_TYPE_QUEUE || t == BPF_MAP_TYPE_STACK)
          continue;
        EXPECT_TRUE(kmaps.count(m->name())) << "kernel has no map " << m->name();
      }
    }
    uint64_t now = 1;
    std::array<uint64_t, 5> kverdicts{};
    uint64_t krefused = 0;
    for (const Input& in : inputs) {
      for (size_t i = 0; i < in.packets.size(); ++i) {
        const Bytes& pkt = in.packets[i].second;
        const TestRunResult kr = k.test_run(prog, pkt);
        const auto kmaps = k.dump_maps();
        now = std::max(now, kernel_now(name, kmaps));
        if (kr.err)
          krefused++;
        else
          kverdicts[kr.retval <= XDP_REDIRECT ? kr.retval : uint32_t(XDP_ABORTED)]++;
        for (KnodSide& s : sides) {
          s.rt->set_clock_ns(now);
          const std::string diff = run_and_compare(s, pkt, kr, kmaps, ports);
          if (diff.empty()) {
            ++g_passed;
            continue;
          }
          ++g_failed;
          if (s.reported++ < 10)
            ADD_FAILURE() << name << "/" << prog << " on " << s.executor << ", " << in.name
                          << " packet " << i << " (" << in.packets[i].first << ", " << pkt.size()
                          << " B): " << diff;
        }
      }
    }
    for (const KnodSide& s : sides)
      EXPECT_EQ(s.reported, 0u) << name << "/" << prog << " on " << s.executor;
    std::printf(
        "%s/%s: kernel verdicts ABORTED %llu DROP %llu PASS %llu TX %llu REDIRECT %llu, "
        "refused %llu\n",
        name.c_str(), prog.c_str(), (unsigned long long)kverdicts[0],
        (unsigned long long)kverdicts[1], (unsigned long long)kverdicts[2],
        (unsigned long long)kverdicts[3], (unsigned long long)kverdicts[4],
        (unsigned long long)krefused);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, Diff, ::testing::ValuesIn(example_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace knod::diff
