// `knod run OBJ -r IN.pcap ...`: the main job. Runs an XDP program over a capture on a
// device and writes the packets out split by verdict (tcpdump/bpftool conventions).
// `knod run OBJ --tap NAME ...` / `--xsk IFACE[:QUEUE]`: the same on live ports (a TAP
// interface, an AF_XDP socket on a NIC queue), with XDP_TX frames sent back out of the port
// and XDP_REDIRECT into another, until -c packets, --duration or Ctrl-C.
#include <fmt/core.h>
#include <fmt/format.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "base/error.h"
#include "cli/command.h"
#include "cli/file_roles.h"
#include "cli/gpu_session.h"
#include "cli/load_args.h"
#include "cli/xdp_job.h"
#include "device/batch.h"
#include "io/map_json.h"
#include "io/xsk.h"
#include "loader/object.h"
#include "vm/abi.h"
#include "xdp/runtime.h"

namespace {

struct RunArgs {
  std::string obj, prog, in, out_all, verdict_out[5], map_dump, stats, device = "cpu";
  std::string fib, trace, perf, ringbuf;
  std::string xfrm, xfrm_dir = "out", xfrm_engine = "openssl";  // ESP after XDP_PASS
  std::vector<std::string> map_load, max_entries;
  std::vector<std::string> tap;  // --tap NAME (repeatable) instead of -r
  std::string pass_tap;          // --pass-tap NAME: the ports' XDP_PASS frames to the stack
  std::vector<std::string> xsk;  // --xsk IFACE[:QUEUE] (repeatable) instead of -r
  uint32_t ifindex = 1, rxq = 0, batch = 256, workers = 0;
  bool ifindex_set = false, rxq_set = false;
  uint64_t count = 0;   // -c: packets
  double duration = 0;  // --duration: seconds (ports)
  uint64_t clock_ns = 0, seed = 0, insn_budget = knod::vm::kDefaultInsnBudget;
  bool pcap_clock = false;
  bool quiet = false;
  bool persistent = false;        // GPU: persistent kernel session (mailbox ring)
  uint64_t batch_timeout_us = 0;  // --persistent: cut a batch this long after its first packet
};

std::string hex(const uint8_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", p[i]);
  return s;
}

/// "kt0" for a TAP, "eth1:0" (interface:queue) for AF_XDP.
std::string port_name(const knod::cli::PortCounters& p) {
  return p.kind == "xsk" ? fmt::format("{}:{}", p.name, p.queue) : p.name;
}

/// Outputs that name an input or each other would clobber it: refuse before running.
void check_distinct_outputs(const RunArgs& a) {
  knod::cli::NamedPaths ins = {
      {"the object", a.obj}, {"-r", a.in}, {"--xfrm", a.xfrm}, {"--fib", a.fib}};
  for (const std::string& m : a.map_load) {  // NAME=FILE or FILE
    const size_t eq = m.find('=');
    ins.push_back({"--map-load", eq == std::string::npos ? m : m.substr(eq + 1)});
  }
  knod::cli::NamedPaths outs = {{"-w", a.out_all},
                                {"--aborted", a.verdict_out[XDP_ABORTED]},
                                {"--drop", a.verdict_out[XDP_DROP]},
                                {"--pass", a.verdict_out[XDP_PASS]},
                                {"--tx", a.verdict_out[XDP_TX]},
                                {"--redirect", a.verdict_out[XDP_REDIRECT]},
                                {"--stats", a.stats},
                                {"--map-dump", a.map_dump},
                                {"--trace", a.trace},
                                {"--perf", a.perf},
                                {"--ringbuf", a.ringbuf}};
  knod::cli::check_file_roles(ins, outs);
}

std::atomic<bool> g_stop{false};  // --tap: SIGINT / SIGTERM end the run after its batch

extern "C" void on_stop_signal(int) {
  g_stop.store(true, std::memory_order_relaxed);
}

/// --tap: Ctrl-C and SIGTERM stop the run cleanly (counters printed, files closed, exit 0).
/// No SA_RESTART, so that a wait for the next frame returns at once.
void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);  // the terminal closed: end as Ctrl-C does
}

int run(const RunArgs& a) {
  check_distinct_outputs(a);
  // The device first: a GPU that cannot be used fails before anything is loaded.
  knod::cli::JobDevice dev = knod::cli::make_device(a.device);
  uint32_t workers = a.workers ? a.workers : std::max(1u, std::thread::hardware_concurrency());
  if (a.device == "interp" && !a.workers) workers = 1;
  // A GPU runs whole batches; --workers N gives it N virtual CPUs (lane i is CPU i % N).
  if (dev.batch && !a.workers) workers = 1;
  knod::loader::LoadOptions lo;
  lo.ncpus = workers;
  knod::cli::parse_max_entries(a.max_entries, lo);
  knod::loader::Object obj = knod::loader::load_object(a.obj, lo);
  knod::cli::check_max_entries_names(a.max_entries, obj);
  knod::cli::apply_map_loads(a.map_load, obj);

  knod::xdp::Options xo;
  xo.ncpus = workers;
  xo.clock_ns = a.clock_ns;
  xo.seed = a.seed;
  xo.insn_budget = a.insn_budget;
  if (!a.fib.empty())
    xo.fib = std::make_shared<knod::xdp::FibTable>(knod::xdp::load_fib_table(a.fib));
  std::ofstream trace, perf, ring;
  std::mutex out_mu;
  if (!a.trace.empty()) {
    trace.open(a.trace);
    if (!trace) throw knod::Error(fmt::format("{}: cannot write trace file", a.trace));
    xo.trace = [&](uint32_t cpu, std::string_view msg) {
      std::lock_guard g(out_mu);
      trace << "cpu " << cpu << ": " << msg << (msg.ends_with('\n') ? "" : "\n");
    };
  }
  if (!a.perf.empty()) {
    perf.open(a.perf);
    if (!perf) throw knod::Error(fmt::format("{}: cannot write perf file", a.perf));
    xo.perf = [&](const knod::maps::Map& m, uint32_t idx, const uint8_t* d, size_t n) {
      std::lock_guard g(out_mu);
      perf << nlohmann::json{{"map", m.name()}, {"cpu", idx}, {"data", hex(d, n)}}.dump() << "\n";
    };
  }
  if (!a.ringbuf.empty()) {
    ring.open(a.ringbuf);
    if (!ring) throw knod::Error(fmt::format("{}: cannot write ringbuf file", a.ringbuf));
    xo.ringbuf = [&](const knod::maps::Map& m, const uint8_t* d, size_t n) {
      std::lock_guard g(out_mu);
      ring << nlohmann::json{{"map", m.name()}, {"data", hex(d, n)}}.dump() << "\n";
    };
  }
  // Output files are opened before the run, so that a bad path fails fast.
  std::ofstream stats_f, dump_f;
  // Opened to append now (a bad path fails before the run; a file already there is left as
  // it was if the run fails), truncated and written at the end. An error before then removes
  // the files this run created (not left empty).
  struct Unmade {
    std::vector<std::string> paths;
    ~Unmade() {
      for (const std::string& p : paths) ::unlink(p.c_str());
    }
  } unmade;
  for (const std::string* p : {&a.stats, &a.map_dump})
    if (!p->empty() && ::access(p->c_str(), F_OK) != 0) unmade.paths.push_back(*p);
  if (!a.stats.empty()) {
    stats_f.open(a.stats, std::ios::app);  // not truncated until the run has its counters
    if (!stats_f)
      throw knod::Error(fmt::format("{}: cannot write stats file ({})", a.stats, strerror(errno)));
  }
  if (!a.map_dump.empty()) {
    dump_f.open(a.map_dump, std::ios::app);
    if (!dump_f)
      throw knod::Error(fmt::format("{}: cannot write map dump ({})", a.map_dump, strerror(errno)));
  }
  std::string prog = a.prog;
  if (prog.empty()) {
    if (obj.programs.empty()) throw knod::Error(fmt::format("{}: no programs", a.obj));
    prog = obj.programs[0].name;
  }
  knod::xdp::Runtime rt(obj, prog, xo);

  knod::cli::JobOptions jo;
  jo.in_pcap = a.in;
  jo.in_taps = a.tap;
  jo.in_xsks = a.xsk;
  jo.pass_tap = a.pass_tap;
  jo.max_packets = a.count;
  jo.duration_ns = static_cast<uint64_t>(a.duration * 1e9);
  const bool live = !a.tap.empty() || !a.xsk.empty();
  if (live) {
    catch_stop_signals();
    jo.stop = &g_stop;
  }
  jo.out_all = a.out_all;
  for (int v = 0; v < 5; ++v) jo.out_by_verdict[v] = a.verdict_out[v];
  jo.ifindex = !live || a.ifindex_set ? a.ifindex : 0;  // 0: the port's own
  jo.rxq = !live || a.rxq_set ? a.rxq : knod::cli::JobOptions::kPortsQueue;
  jo.batch = a.batch;
  jo.workers = workers;
  jo.progress = !a.quiet && isatty(STDERR_FILENO);
  jo.pcap_clock = a.pcap_clock;
  jo.persistent = a.persistent;
  jo.batch_timeout_ns = a.batch_timeout_us * 1000;
  if (a.batch_timeout_us && !a.persistent)
    throw knod::Error("--batch-timeout-us: only with --persistent");
  if (a.persistent && !dev.batch)
    throw knod::Error(
        fmt::format("--persistent: needs a GPU device (cuda[:N] or gpusim), not {}", a.device));
  if (a.pcap_clock && a.clock_ns)
    throw knod::Error("--pcap-clock and --clock-ns both set the clock: choose one");
  std::unique_ptr<knod::cli::XfrmStage> xfrm;
  if (!a.xfrm.empty())
    xfrm = std::make_unique<knod::cli::XfrmStage>(a.xfrm, a.xfrm_dir, a.xfrm_engine, workers);
  jo.xfrm = xfrm.get();
  knod::cli::JobResult r = knod::cli::run_pcap_job(rt, dev, jo);
  if (jo.progress) fmt::print(stderr, "\r");

  if (!a.quiet) {
    std::string from = a.in;
    for (const knod::cli::PortCounters& t : r.ports)
      from += fmt::format("{}{} {} (ifindex {}{})", from.empty() ? "" : ", ", t.kind, port_name(t),
                          t.ifindex, t.mode.empty() ? "" : ", " + t.mode);
    fmt::print("{} on {} ({} worker{}): {} packets, {} bytes from {}\n", prog, a.device, workers,
               workers == 1 ? "" : "s", r.packets, r.bytes, from);
    fmt::print("{:<14}{:>10}{:>12}{:>9}\n", "verdict", "packets", "bytes", "%");
    for (uint32_t v = 0; v < 5; ++v)
      fmt::print("{:<14}{:>10}{:>12}{:>8.1f}%\n", knod::xdp::action_name(v), r.verdict_packets[v],
                 r.verdict_bytes[v], r.packets ? 100.0 * r.verdict_packets[v] / r.packets : 0.0);
    for (uint32_t f = 1; f < 8; ++f)
      if (r.faults[f])
        fmt::print("aborted by {}: {}\n", knod::vm::fault_name(knod::vm::Fault(f)), r.faults[f]);
    if (r.skipped_snapped || r.skipped_too_large || r.skipped_runt)
      fmt::print(
          "skipped: {} snapped (caplen < len), {} larger than the XDP frame, {} shorter "
          "than ETH_HLEN\n",
          r.skipped_snapped, r.skipped_too_large, r.skipped_runt);
    for (const knod::cli::PortCounters& t : r.ports)
      fmt::print("{} {}: {} frames in; out: {} XDP_TX, {} XDP_REDIRECT{}{}{}\n", t.kind,
                 port_name(t), t.rx, t.tx, t.redirected,
                 t.refused ? fmt::format(" ({} more could not be sent)", t.refused) : "",
                 t.kernel_dropped
                     ? fmt::format("; {} dropped by the kernel before knod ({})", t.kernel_dropped,
                                   t.kind == "xsk" ? "XDP_STATISTICS" : "tx_dropped, queue full")
                     : "",
                 t.unread ? fmt::format("; {}{} queued at the end, not run",
                                        t.unread_capped ? "at least " : "", t.unread)
                          : "");
    if (r.redirect_unsent)
      fmt::print("XDP_REDIRECT to no port (counted, not sent): {}\n", r.redirect_unsent);
    if (!r.pass_tap.empty())
      fmt::print(
          "pass-tap {}: {} XDP_PASS frames to the kernel{}{}; {} frames from it sent by {}{}{}\n",
          r.pass_tap, r.passed,
          r.pass_refused
              ? fmt::format(" ({} refused by it: the interface down, no buffer)", r.pass_refused)
              : "",
          r.pass_stack_dropped
              ? fmt::format(" ({} dropped by its stack: rx_dropped, no protocol took them)",
                            r.pass_stack_dropped)
              : "",
          r.from_host, port_name(r.ports.at(0)),
          r.from_host_refused ? fmt::format(" ({} more could not be sent)", r.from_host_refused)
                              : "",
          r.from_host_dropped ? fmt::format(" ({} dropped before knod: tx_dropped, queue full)",
                                            r.from_host_dropped)
                              : "");
    if (xfrm) xfrm->print();
    if (r.packets && r.seconds > 0)
      fmt::print("time: {:.3f} ms, {:.0f} ns/packet\n", r.seconds * 1e3,
                 r.seconds * 1e9 / r.packets);
    if (a.persistent)
      fmt::print(
          "persistent: {} batches ({} cut by the timeout), latency p50 {:.1f} us p99 {:.1f} us\n",
          r.batch_latency_ns.size(), r.batches_by_timeout,
          knod::cli::percentile_ns(r.batch_latency_ns, 50) / 1e3,
          knod::cli::percentile_ns(r.batch_latency_ns, 99) / 1e3);
  }
  // Every warning on one stderr line: packets not run, a capture cut short.
  std::vector<std::string> warn;
  if (r.skipped_too_large)
    warn.push_back(fmt::format("{} packet{} skipped: larger than the XDP frame ({} bytes)",
                               r.skipped_too_large, r.skipped_too_large == 1 ? "" : "s",
                               knod::device::kMaxPacket));
  if (r.skipped_runt)
    warn.push_back(fmt::format("{} packet{} skipped: shorter than ETH_HLEN (14 bytes)",
                               r.skipped_runt, r.skipped_runt == 1 ? "" : "s"));
  if (r.skipped_snapped)
    warn.push_back(fmt::format("{} packet{} skipped: snapped by the capture (caplen < len)",
                               r.skipped_snapped, r.skipped_snapped == 1 ? "" : "s"));
  if (r.truncated) {
    const uint64_t read = r.packets + r.skipped_too_large + r.skipped_snapped + r.skipped_runt;
    warn.push_back(knod::io::cut_short_note(r.truncated_error, read));
  }
  if (!warn.empty()) fmt::print(stderr, "knod: warning: {}\n", fmt::join(warn, "; "));

  if (!a.stats.empty()) {
    nlohmann::json s;
    s["program"] = prog;
    s["device"] = a.device;
    s["packets"] = r.packets;
    s["bytes"] = r.bytes;
    for (uint32_t v = 0; v < 5; ++v) {
      s["verdicts"][knod::xdp::action_name(v)] = r.verdict_packets[v];
      s["verdict_bytes"][knod::xdp::action_name(v)] = r.verdict_bytes[v];
    }
    nlohmann::json& e = s["errors"];
    e = nlohmann::json::object();
    for (uint32_t f = 1; f < 8; ++f) e[knod::vm::fault_name(knod::vm::Fault(f))] = r.faults[f];
    e["skipped_snapped"] = r.skipped_snapped;
    e["skipped_too_large"] = r.skipped_too_large;
    e["skipped_runt"] = r.skipped_runt;
    e["truncated_capture"] = r.truncated;
    if (!r.cpu.items.empty())  // the CPU device's workers: what each ran, how batches went
      s["cpu_device"] = {{"workers", r.cpu.items.size()},
                         {"packets_per_worker", r.cpu.items},
                         {"late_worker_slices", r.cpu.late},
                         {"stalled_worker_slices", r.cpu.stalls}};
    if (xfrm) s["xfrm"] = xfrm->stats_json();
    if (!r.ports.empty()) {
      s["ports"] = nlohmann::json::array();
      for (const knod::cli::PortCounters& t : r.ports) {
        nlohmann::json j = {{"kind", t.kind},
                            {"name", t.name},
                            {"ifindex", t.ifindex},
                            {"rx", t.rx},
                            {"tx", t.tx},
                            {"redirected", t.redirected},
                            {"refused", t.refused},
                            {"unread", t.unread},
                            {"kernel_dropped", t.kernel_dropped},
                            {"unread_capped", t.unread_capped}};
        if (t.kind == "xsk") j["queue"] = t.queue, j["mode"] = t.mode;
        s["ports"].push_back(j);
      }
      s["redirect_unsent"] = r.redirect_unsent;
      if (!r.pass_tap.empty())
        s["pass_tap"] = {{"name", r.pass_tap},
                         {"passed", r.passed},
                         {"refused", r.pass_refused},
                         {"from_host", r.from_host},
                         {"from_host_refused", r.from_host_refused},
                         {"stack_dropped", r.pass_stack_dropped},
                         {"from_host_dropped", r.from_host_dropped}};
      if (!r.port_error.empty()) s["port_error"] = r.port_error;
    }
    if (a.persistent)
      s["persistent"] = {{"batches", r.batch_latency_ns.size()},
                         {"batches_by_timeout", r.batches_by_timeout},
                         {"batch_timeout_us", a.batch_timeout_us},
                         {"latency_p50_ns", knod::cli::percentile_ns(r.batch_latency_ns, 50)},
                         {"latency_p99_ns", knod::cli::percentile_ns(r.batch_latency_ns, 99)}};
    stats_f.close();
    stats_f.open(a.stats, std::ios::trunc);
    stats_f << s.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    if (!stats_f.flush())
      throw knod::Error(fmt::format("{}: write failed ({})", a.stats, strerror(errno)));
    std::erase(unmade.paths, a.stats);
  }
  if (!a.map_dump.empty()) {
    dump_f.close();
    dump_f.open(a.map_dump, std::ios::trunc);
    dump_f << knod::io::dump_maps_json(obj).dump(2, ' ', false,
                                                 nlohmann::json::error_handler_t::replace)
           << "\n";
    if (!dump_f.flush())
      throw knod::Error(fmt::format("{}: write failed ({})", a.map_dump, strerror(errno)));
    std::erase(unmade.paths, a.map_dump);
  }
  const std::pair<std::ofstream*, const std::string*> logs[] = {
      {&trace, &a.trace}, {&perf, &a.perf}, {&ring, &a.ringbuf}};
  for (const auto& [f, path] : logs)
    if (!path->empty() && !f->flush())
      throw knod::Error(fmt::format("{}: write failed ({})", *path, strerror(errno)));
  // A port that went away ended the run: its counters are out above; the error is the exit.
  if (!r.port_error.empty()) throw knod::Error(r.port_error);
  return r.truncated ? 3 : 0;
}

}  // namespace

KNOD_COMMAND(run) {
  auto a = std::make_shared<RunArgs>();
  auto* c =
      app.add_subcommand("run", "Run an XDP program over a capture, split packets by verdict");
  c->add_option("object", a->obj, "eBPF ELF object (clang -target bpf)")->required();
  c->add_option("-p,--prog", a->prog, "program name or section (default: the first)");
  c->add_option("-r,--read", a->in, "input capture (pcap or pcapng, Ethernet)");
  c->add_option("--tap", a->tap,
                "instead of -r: a TAP interface (created if absent; bring it up with `ip link "
                "set NAME up`): knod runs the frames the kernel sends out of it and sends XDP_TX "
                "frames back into it, until -c, --duration or Ctrl-C; needs CAP_NET_ADMIN. "
                "Repeatable: XDP_REDIRECT to a port's ifindex (bpf_redirect, DEVMAP) goes into "
                "that port")
      ->allow_extra_args(false);
  c->add_option(
       "--xsk", a->xsk,
       "instead of -r: IFACE[:QUEUE], an AF_XDP socket on that RX queue (default 0): "
       "knod attaches its own XDP program to IFACE (the interface must have none), runs "
       "the queue's frames and sends XDP_TX frames back out of IFACE; the frames of queues "
       "knod does not hold go on to the kernel. Needs root. Repeatable: IFACE's other "
       "queues (give each queue the NIC spreads traffic over: ethtool -l IFACE), other "
       "interfaces, with --tap too")
      ->allow_extra_args(false);
  CLI::Option* pass_tap = c->add_option(
      "--pass-tap", a->pass_tap,
      "with --xsk ports of one interface: write the XDP_PASS frames (after --xfrm: what it keeps) "
      "into TAP interface NAME, so that the host's stack receives them (AF_XDP takes "
      "a queue's frames from the stack), and send what the host sends out of NAME out "
      "of the port; a TAP knod creates gets the port's Ethernet address and is "
      "brought up");
  c->add_option("-c,--count", a->count, "stop after this many packets (as tcpdump -c)")
      ->check(CLI::Range(uint64_t(1), UINT64_MAX));
  c->add_option("--duration", a->duration, "--tap, --xsk: stop after this many seconds")
      ->check(CLI::Range(0.001, 1e6));
  c->add_option("-w,--write", a->out_all, "write every packet as the program left it (pcap)");
  c->add_option("--aborted", a->verdict_out[XDP_ABORTED], "write XDP_ABORTED packets here");
  c->add_option("--drop", a->verdict_out[XDP_DROP], "write XDP_DROP packets here");
  c->add_option("--pass", a->verdict_out[XDP_PASS], "write XDP_PASS packets here");
  c->add_option("--tx", a->verdict_out[XDP_TX], "write XDP_TX packets here");
  c->add_option("--redirect", a->verdict_out[XDP_REDIRECT], "write XDP_REDIRECT packets here");
  c->add_option("--map-load", a->map_load, "preload maps: FILE.json or NAME=FILE.json")
      ->allow_extra_args(false);
  c->add_option("--map-dump", a->map_dump, "write every map afterwards (bpftool-style JSON)");
  c->add_option("--stats", a->stats, "write counters as JSON");
  c->add_option("--device", a->device,
                "cpu (JIT, default), interp (reference interpreter), cuda[:N] (NVIDIA GPU N, "
                "batches of --batch packets), gpusim (the GPU runtime simulated on the host, "
                "lanes in order) or amdgpu (not runnable yet)");
  c->add_option("--workers", a->workers,
                "CPU device threads (default: all cores; interp: 1). Packets of a batch run "
                "concurrently: use 1 for the kernel's one-by-one order with stateful programs. "
                "GPU devices: virtual CPUs, lane i of a batch is CPU i % N (default 1). --xfrm: "
                "also the threads of each ESP batch's crypto")
      ->check(CLI::Range(1u, 1024u));
  c->add_option("--batch", a->batch, "packets per batch")->check(CLI::Range(1u, 1u << 20));
  c->add_flag("--persistent", a->persistent,
              "GPU devices (cuda, gpusim): one resident kernel fed batches through a 3-slot "
              "mailbox ring instead of a launch per batch; maps are written back at the end");
  c->add_option("--batch-timeout-us", a->batch_timeout_us,
                "--persistent: cut a batch this many us after its first packet was read, even "
                "if it holds fewer than --batch packets (latency control; 0: never)");
  auto* ifx = c->add_option("--ifindex", a->ifindex,
                            "xdp_md->ingress_ifindex (default 1; --tap, --xsk: the port's)");
  auto* rxq = c->add_option("--rxq", a->rxq,
                            "xdp_md->rx_queue_index (default 0; --xsk: the socket's queue)");
  c->add_option("--clock-ns", a->clock_ns, "pin bpf_ktime_get_*_ns to this value");
  c->add_flag("--pcap-clock", a->pcap_clock,
              "time helpers read each packet's capture timestamp (replays rate limits as "
              "captured)");
  c->add_option("--seed", a->seed, "seed for bpf_get_prandom_u32");
  c->add_option("--fib", a->fib, "route/neighbour table for bpf_fib_lookup (JSON)");
  c->add_option("--trace", a->trace, "write bpf_trace_printk output here");
  c->add_option("--perf", a->perf, "write bpf_perf_event_output records here (JSON lines)");
  c->add_option("--ringbuf", a->ringbuf, "write ring buffer records here (JSON lines)");
  c->add_option("--max-entries", a->max_entries,
                "NAME=N: max_entries of map NAME; N: for maps declared with 0 (repeatable)")
      ->allow_extra_args(false);
  c->add_option("--insn-budget", a->insn_budget,
                "instructions per packet before XDP_ABORTED, knod's guard against endless runs "
                "(default 2^26; interp: exact; cpu and GPUs: counted per loop iteration, so "
                "loop-free programs never reach it)")
      ->check(CLI::Range(uint64_t(1), uint64_t(1) << 40));
  c->add_option("--xfrm", a->xfrm,
                "ip-xfrm state/policy file: ESP on XDP_PASS packets (SPD/SAD, see --xfrm-dir)");
  CLI::Option* xfrm_dir =
      c->add_option("--xfrm-dir", a->xfrm_dir, "out: SPD + ESP encrypt (default); in: ESP decrypt")
          ->check(CLI::IsMember({"in", "out"}));
  CLI::Option* xfrm_engine =
      c->add_option("--xfrm-engine", a->xfrm_engine, "openssl (default), portable or cuda[:N]");
  c->add_flag("-q,--quiet", a->quiet, "print nothing but errors");
  c->callback([a, ifx, rxq, pass_tap, xfrm_dir, xfrm_engine, set_action] {
    // Command line errors (exit 2), before anything is loaded.
    const bool live = !a->tap.empty() || !a->xsk.empty();
    if (a->in.empty() && !live)
      throw CLI::ValidationError(
          "--read is required (or --tap NAME / --xsk IFACE[:QUEUE] for a live interface)");
    for (const std::string& x : a->xsk) try {
        knod::io::XskPort::parse(x);
      } catch (const knod::Error& e) {
        throw CLI::ValidationError(e.what());
      }
    if (!a->in.empty() && live)
      throw CLI::ValidationError(fmt::format("-r and {} both give the packets: choose one",
                                             a->tap.empty() ? "--xsk" : "--tap"));
    for (const CLI::Option* o : {xfrm_dir, xfrm_engine})  // helper-53: ignored without --xfrm
      if (o->count() && a->xfrm.empty())
        throw CLI::ValidationError(fmt::format("{}: only with --xfrm FILE", o->get_name()));
    if (pass_tap->count() && a->pass_tap.empty())
      throw CLI::ValidationError("--pass-tap '': an interface name has 1 to 15 bytes");
    // --pass-tap: every --xsk on the first one's interface (an altname is the same one).
    auto interface_of = [](const std::string& x) {
      const std::string n = knod::io::XskPort::parse(x).first;
      const unsigned i = ::if_nametoindex(n.c_str());
      return std::pair(i, i ? std::string() : n);
    };
    if (!a->pass_tap.empty() &&
        (a->xsk.empty() || !a->tap.empty() ||
         std::any_of(a->xsk.begin(), a->xsk.end(),
                     [&, first = interface_of(a->xsk.at(0))](const std::string& x) {
                       return interface_of(x) != first;
                     })))
      throw CLI::ValidationError(
          "--pass-tap: only with --xsk ports of one interface (the TAP takes its place in the "
          "host's stack)");
    if (std::isnan(a->duration))  // CLI::Range compares, and NaN compares false both ways
      throw CLI::ValidationError("--duration: nan is not a number of seconds (0.001 to 1e6)");
    if (a->duration > 0 && !live)
      throw CLI::ValidationError(
          "--duration: only with --tap or --xsk (a capture ends; -c limits it)");
    a->ifindex_set = ifx->count() > 0;
    a->rxq_set = rxq->count() > 0;
    set_action([a] { return run(*a); });
  });
}
