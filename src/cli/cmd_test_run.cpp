// `knod test-run OBJ -p PROG --data-in F`: one XDP program run the way BPF_PROG_TEST_RUN
// runs it (net/bpf/test_run.c bpf_prog_test_run_xdp): the packet in a 4096-byte frame after
// 256 bytes of headroom, optional struct xdp_md ctx_in (metadata length, ifindex, queue),
// `repeat` runs on the same buffer. Prints retval, data_out size and the mean duration.
// --device interp (the reference, default) or cpu (the JIT of `knod run`, compiled before the
// clock starts, tail-call targets too).
#include <fmt/core.h>
#include <net/if.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/error.h"
#include "base/file.h"
#include "cli/command.h"
#include "cli/file_roles.h"
#include "cli/load_args.h"
#include "cli/xdp_job.h"
#include "device/batch.h"
#include "io/map_json.h"
#include "jit/executor.h"
#include "loader/object.h"
#include "xdp/buff.h"
#include "xdp/fib.h"
#include "xdp/runtime.h"

namespace {

struct Args {
  std::string object, prog, data_in, data_out, ctx_in, ctx_out, device = "interp", fib, map_dump;
  std::vector<std::string> map_load;
  uint32_t repeat = 1;
  uint64_t clock_ns = 0, seed = 0, insn_budget = knod::vm::kDefaultInsnBudget;
};

std::vector<uint8_t> read_bytes(const std::string& path, const std::string& what) {
  const std::string s = knod::read_file(path, what);
  return {s.begin(), s.end()};
}

/// The device's RX queues as sysfs lists them (queues/rx-N: real_num_rx_queues); UINT32_MAX
/// where sysfs cannot tell (not mounted), so that nothing is refused on a guess.
uint32_t rx_queues(const char* ifname) {
  std::error_code ec;
  uint32_t n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string("/sys/class/net/") + ifname + "/queues", ec))
    n += e.path().filename().string().rfind("rx-", 0) == 0;
  return ec || n == 0 ? UINT32_MAX : n;
}

int test_run(const Args& a) {
  knod::cli::check_file_roles(
      {{"the object", a.object},
       {"--data-in", a.data_in},
       {"--ctx-in", a.ctx_in},
       {"--fib", a.fib}},
      {{"--data-out", a.data_out}, {"--ctx-out", a.ctx_out}, {"--map-dump", a.map_dump}});
  using namespace knod;
  if (a.device != "interp" && a.device != "cpu")
    throw Error(fmt::format("test-run: unknown device '{}' (available: interp, cpu)", a.device));
  std::vector<uint8_t> data = read_bytes(a.data_in, "packet file");
  // ctx_in: struct xdp_md, shorter input zero-padded, longer must be zero (bpf_ctx_init).
  xdp_md ctx{};
  const bool have_ctx = !a.ctx_in.empty();
  if (have_ctx) {
    std::vector<uint8_t> c = read_bytes(a.ctx_in, "ctx file");
    for (size_t i = sizeof ctx; i < c.size(); ++i)
      if (c[i])
        throw Error("test-run: ctx-in larger than struct xdp_md with non-zero tail (-E2BIG)");
    std::memcpy(&ctx, c.data(), std::min(c.size(), sizeof ctx));
  }
  if (data.size() < xdp::kEthHlen)
    throw Error(
        fmt::format("test-run: data-in is {} bytes, less than ETH_HLEN (-EINVAL)", data.size()));
  uint32_t meta = 0;
  if (have_ctx) {
    // bpf_prog_test_run_xdp: data_end past data-in, data after data_end, metadata unaligned or
    // too long, or fewer than ETH_HLEN bytes of data-in after it (frags included): -EINVAL.
    if (ctx.data_meta || ctx.data_end > data.size() || ctx.data > ctx.data_end || ctx.data % 4 ||
        ctx.data > xdp::kMaxMetaLen || data.size() - ctx.data < xdp::kEthHlen)
      throw Error("test-run: ctx-in data/data_meta/data_end do not describe data-in (-EINVAL)");
    if (ctx.data_end < data.size())  // the kernel puts the rest in frags
      throw Error(fmt::format(
          "test-run: ctx-in data_end {} below data-in's {} bytes puts the rest in frags (XDP frags "
          "unsupported)",
          ctx.data_end, data.size()));
    if (ctx.egress_ifindex || (!ctx.ingress_ifindex && ctx.rx_queue_index))
      throw Error("test-run: ctx-in egress_ifindex or rx_queue_index invalid (-EINVAL)");
    // xdp_convert_md_to_buff: the device must exist here (-ENODEV) and have that RX queue.
    if (ctx.ingress_ifindex) {
      char name[IF_NAMESIZE] = {};
      if (!if_indextoname(ctx.ingress_ifindex, name))
        throw Error(fmt::format("test-run: ctx-in ingress_ifindex {}: no such device (-ENODEV)",
                                ctx.ingress_ifindex));
      if (const uint32_t q = rx_queues(name); ctx.rx_queue_index >= q)
        throw Error(
            fmt::format("test-run: ctx-in rx_queue_index {}: {} has {} RX queue{} (-EINVAL)",
                        ctx.rx_queue_index, name, q, q == 1 ? "" : "s"));
    }
    meta = ctx.data;
  }
  if (data.size() - meta > device::kMaxPacket)
    throw Error(fmt::format("test-run: packet of {} bytes exceeds {} (XDP frags unsupported)",
                            data.size() - meta, device::kMaxPacket));

  loader::LoadOptions lo;
  lo.ncpus = 1;
  loader::Object obj = loader::load_object(a.object, lo);
  cli::apply_map_loads(a.map_load, obj);  // as `bpftool map update` before the test run
  xdp::Options opts;
  opts.clock_ns = a.clock_ns;
  opts.seed = a.seed;
  opts.insn_budget = a.insn_budget;
  if (!a.fib.empty()) opts.fib = std::make_shared<xdp::FibTable>(xdp::load_fib_table(a.fib));
  opts.trace = [](uint32_t cpu, std::string_view msg) {
    fmt::print("trace: [{:03}] bpf_trace_printk: {}{}", cpu, msg,
               msg.empty() || msg.back() != '\n' ? "\n" : "");
  };
  xdp::Runtime rt(obj, a.prog, opts);
  // bpf_prog_test_run_xdp(): a program for a DEVMAP or CPUMAP entry is not test-run.
  if (const loader::ProgramSpec* p = obj.find_program(a.prog);
      p && (p->expected_attach_type == BPF_XDP_DEVMAP || p->expected_attach_type == BPF_XDP_CPUMAP))
    throw Error(fmt::format(
        "test-run: program '{}' is for a {} entry (section '{}'): the kernel's "
        "BPF_PROG_TEST_RUN refuses it (-EINVAL)",
        p->name, p->expected_attach_type == BPF_XDP_DEVMAP ? "DEVMAP" : "CPUMAP", p->section));

  std::vector<uint8_t> frame(device::kFrameSize, 0);
  std::memcpy(frame.data() + device::kXdpHeadroom - meta, data.data(), data.size());
  uint32_t off = device::kXdpHeadroom, len = uint32_t(data.size()) - meta, mlen = meta;
  uint32_t ifindex = have_ctx && ctx.ingress_ifindex ? ctx.ingress_ifindex : xdp::kLoopbackIfindex;
  uint32_t rxq = have_ctx ? ctx.rx_queue_index : 0, verdict = 0;
  uint64_t redirect = 0;
  uint8_t fault = 0;
  device::Batch b{1,    device::kFrameSize, frame.data(), &off,  &len, &mlen, &ifindex,
                  &rxq, &verdict,           &redirect,    &fault};
  // One packet at a time through the entry (timed with --repeat): no slot loop, so the entry
  // keeps its optimised machine code.
  std::unique_ptr<vm::Executor> ex = cli::make_executor(a.device, /*slot_loop=*/false);
  if (auto* jit = dynamic_cast<jit::JitExecutor*>(ex.get())) {  // compile before the clock
    jit->compile(rt.program(), &rt.env());
    for (const vm::Program* p : rt.env().programs)  // tail-call targets
      if (p) jit->compile(*p, &rt.env());
  }
  const uint32_t repeat = a.repeat ? a.repeat : 1;
  xdp::RunResult r;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < repeat; ++i) r = rt.run_packet(*ex, b, 0, 0);
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  if (r.fault != vm::Fault::kNone)
    fmt::print("fault: {} at insn {} ({})\n", vm::fault_name(r.fault), r.fault_pc,
               r.fault == vm::Fault::kInsnBudget
                   ? "more instructions ran than --insn-budget allows; the kernel has no "
                     "run-time limit"
                   : "the kernel's verifier would reject this program");
  fmt::print("retval: {} ({})\n", r.retval, xdp::action_name(r.retval));
  fmt::print("data_out: {} bytes\n", mlen + len);
  fmt::print("duration: {} ns\n", ns / repeat);
  if (!a.data_out.empty()) knod::write_file(a.data_out, frame.data() + off - mlen, mlen + len);
  if (!a.map_dump.empty()) {
    std::fflush(stdout);  // the report first, also when the dump goes to /dev/stdout
    knod::write_file(a.map_dump, io::dump_maps_json(obj).dump(2) + "\n");
  }
  if (!a.ctx_out.empty()) {
    xdp_md out = ctx;  // xdp_convert_buff_to_md: offsets from data_meta
    out.data = mlen;
    out.data_end = mlen + len;
    out.data_meta = 0;
    knod::write_file(a.ctx_out, &out, sizeof out);
  }
  return 0;
}

}  // namespace

KNOD_COMMAND(test_run) {
  auto a = std::make_shared<Args>();
  auto* c =
      app.add_subcommand("test-run", "Run an XDP program once on a packet, as BPF_PROG_TEST_RUN");
  c->add_option("object", a->object, "BPF ELF object (clang -target bpf)")->required();
  c->add_option("-p,--prog", a->prog, "program name or section")->required();
  c->add_option("--data-in", a->data_in, "packet bytes (metadata first with --ctx-in)")->required();
  c->add_option("--data-out", a->data_out, "write the packet (from data_meta) after the run");
  c->add_option("--ctx-in", a->ctx_in, "struct xdp_md (24 bytes): data = metadata length");
  c->add_option("--ctx-out", a->ctx_out, "write struct xdp_md after the run");
  c->add_option("--repeat", a->repeat, "runs on the same buffer (mean duration printed)");
  c->add_option("--device", a->device,
                "executor: interp (the reference interpreter, default) or cpu (the JIT)");
  c->add_option("--fib", a->fib, "forwarding table JSON for bpf_fib_lookup / bpf_check_mtu");
  c->add_option("--clock-ns", a->clock_ns, "pin bpf_ktime_get_*_ns to this value");
  c->add_option("--seed", a->seed, "seed of bpf_get_prandom_u32 and syncookie secrets");
  c->add_option("--insn-budget", a->insn_budget,
                "instructions per run before XDP_ABORTED, knod's guard against endless runs "
                "(default 2^26; the kernel has none)")
      ->check(CLI::Range(uint64_t(1), uint64_t(1) << 40));
  c->add_option("--map-load", a->map_load, "preload maps: FILE.json or NAME=FILE.json");
  c->add_option("--map-dump", a->map_dump, "write every map after the run (bpftool-style JSON)");
  c->callback([a, set_action] { set_action([a] { return test_run(*a); }); });
}
