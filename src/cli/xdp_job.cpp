#include "cli/xdp_job.h"

#include <fmt/core.h>
#include <linux/bpf.h>
#include <net/if.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "base/error.h"
#include "cli/gpu_session.h"
#include "device/cpu/batch_store.h"
#include "device/cpu/cpu_device.h"
#include "device/gpu/host_sim.h"
#ifdef KNOD_HAVE_CUDA
#include "device/cuda/device.h"
#endif
#include "io/pcap.h"
#include "io/tap.h"
#include "io/xsk.h"
#include "jit/executor.h"
#include "vm/interp.h"
#include "xfrm/crypto/engines.h"
#include "xfrm/install.h"
#include "xfrm/ip.h"
#include "xfrm/parse/ip_xfrm.h"

namespace knod::cli {

std::unique_ptr<vm::Executor> make_executor(const std::string& device, bool slot_loop) {
  if (device == "interp") return std::make_unique<vm::Interpreter>();
  if (device == "cpu") {
    jit::JitOptions o;
    o.ctx = jit::CtxKind::kXdp;
    o.slot_loop = slot_loop;
    return std::make_unique<jit::JitExecutor>(o);
  }
  throw Error(fmt::format(
      "unknown device '{}' for packet runs (use cpu, interp, cuda[:N], gpusim or amdgpu)", device));
}

JobDevice make_device(const std::string& device) {
  JobDevice d;
  auto is = [&](std::string_view name) {
    return device == name || device.starts_with(std::string(name) + ":");
  };
  if (!is("cuda") && !is("amdgpu") && device != "gpusim") {
    d.executor = make_executor(device);  // interp, cpu; throws for an unknown name
    return d;
  }
  try {
    if (device == "gpusim") {
      d.batch = std::make_unique<device::gpu::HostSim>();
    } else if (is("cuda")) {
#ifdef KNOD_HAVE_CUDA
      d.batch = device::cuda::Device::open(device);
#else
      throw Error("knod was built without CUDA support (no cuda.h at build time)");
#endif
    } else {
      throw Error("no AMD GPU runtime (knod compiles AMDGPU code objects but cannot run them yet)");
    }
  } catch (const Error& e) {
    throw Error(fmt::format("--device {}: {}", device, e.what()));
  }
  return d;
}

constexpr uint32_t kXfrmStride = 8192, kXfrmHead = 256;  // room for any XDP frame + ESP

XfrmStage::XfrmStage(const std::string& file, const std::string& d, const std::string& engine,
                     uint32_t workers)
    : engine_name(engine) {
  if (d != "in" && d != "out") throw Error(fmt::format("--xfrm-dir '{}': expected in or out", d));
  dir = d == "in" ? xfrm::Dir::kIn : xfrm::Dir::kOut;
  xfrm::XfrmConfig cfg = xfrm::parse_file(file);
  xfrm::install(cfg, sad, spd);  // state add / update with the kernel's EEXIST / ESRCH
  eng = xfrm::make_engine(engine, workers);
  xfrm::engine_load(*eng, sad);
}

void XfrmStage::run(device::Batch& b, uint32_t n, std::vector<uint8_t>& keep) {
  keep.assign(n, 1);
  frames_.resize(size_t(n) * kXfrmStride);
  off_.resize(n), len_.resize(n), sa_.resize(n), drop_.resize(n), idx_.resize(n);
  l2_.resize(size_t(n) * 18);
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (b.verdict[i] != XDP_PASS) continue;
    const uint8_t* f = b.frames + size_t(i) * b.stride + b.data_off[i];
    uint32_t len = b.data_len[i], l2 = 14;
    if (len >= 18 && f[12] == 0x81 && f[13] == 0x00) l2 = 18;
    uint16_t et = len >= l2 ? uint16_t(f[l2 - 2] << 8 | f[l2 - 1]) : 0;
    // Not IP, or not the IP version its ethertype names: the host's stack drops such a frame
    // before xfrm, so the stage passes it on as it is.
    if (len < l2 || !xfrm::ip_of_ethertype(et, f + l2, len - l2)) {
      ++passed_through;
      continue;
    }
    std::memcpy(&l2_[size_t(m) * 18], f, l2);
    std::memcpy(&frames_[size_t(m) * kXfrmStride + kXfrmHead], f + l2, len - l2);
    off_[m] = kXfrmHead, len_[m] = len - l2, idx_[m] = i;
    ++m;
  }
  if (!m) return;
  xfrm::PacketBatch pb{m,           kXfrmStride,  frames_.data(), off_.data(),
                       len_.data(), drop_.data(), sa_.data()};
  xfrm::Counters c;
  xfrm::process_batch(sad, spd, *eng, dir, pb, c);
  for (uint32_t k = 0; k < m; ++k) {
    uint32_t i = idx_[k];
    auto d = xfrm::Drop(drop_[k]);
    if (d == xfrm::Drop::kNoPolicy || d == xfrm::Drop::kNotEsp) {  // unchanged
      --c[d];
      ++passed_through;
      continue;
    }
    uint8_t* slot = b.frames + size_t(i) * b.stride;
    const uint8_t* l2h = &l2_[size_t(k) * 18];
    uint32_t l2 = l2h[12] == 0x81 && l2h[13] == 0x00 ? 18 : 14;
    uint32_t total_len = l2 + len_[k];
    if (d == xfrm::Drop::kOk && total_len > device::frame_size(b))
      d = xfrm::Drop::kTooBig, ++c[d], --c.packets, c.bytes -= len_[k];
    if (d != xfrm::Drop::kOk) {
      keep[i] = 0;
      continue;
    }
    uint32_t off = std::min(b.data_off[i], device::frame_size(b) - total_len);
    std::memcpy(slot + off, l2h, l2);
    const uint8_t* ip = &frames_[size_t(k) * kXfrmStride + off_[k]];
    std::memcpy(slot + off + l2, ip, len_[k]);
    uint16_t et = (ip[0] >> 4) == 6 ? 0x86dd : 0x0800;
    slot[off + l2 - 2] = uint8_t(et >> 8), slot[off + l2 - 1] = uint8_t(et);
    b.data_off[i] = off, b.data_len[i] = total_len;
  }
  total.add(c);
}

namespace {
nlohmann::json counters_json(const xfrm::Counters& c) {
  nlohmann::json j = {{"packets", c.packets}, {"bytes", c.bytes}};
  j["drops"] = nlohmann::json::object();
  for (uint32_t d = 1; d < uint32_t(xfrm::Drop::kCount); ++d)
    if (c.drops[d]) j["drops"][xfrm::drop_name(xfrm::Drop(d))] = c.drops[d];
  return j;
}
}  // namespace

void XfrmStage::print() const {
  fmt::print("xfrm ({}, engine {}): {} packets processed, {} passed through unchanged\n",
             dir == xfrm::Dir::kIn ? "in" : "out", engine_name, total.packets, passed_through);
  for (uint32_t i = 0; i < sad.size(); ++i) {
    const xfrm::Sa& sa = sad[i];
    const xfrm::Counters& c = sa.stats.c;
    fmt::print("  spi 0x{:08x} {} -> {}: {} packets, {} bytes", sa.cfg.spi,
               xfrm::to_string(sa.cfg.src), xfrm::to_string(sa.cfg.dst), c.packets, c.bytes);
    for (uint32_t d = 1; d < uint32_t(xfrm::Drop::kCount); ++d)
      if (c.drops[d]) fmt::print(", {} {}", xfrm::drop_name(xfrm::Drop(d)), c.drops[d]);
    fmt::print("\n");
  }
  for (uint32_t d = 1; d < uint32_t(xfrm::Drop::kCount); ++d)
    if (total.drops[d])
      fmt::print("  dropped ({}): {}\n", xfrm::drop_name(xfrm::Drop(d)), total.drops[d]);
}

nlohmann::json XfrmStage::stats_json() const {
  nlohmann::json j = {{"direction", dir == xfrm::Dir::kIn ? "in" : "out"},
                      {"engine", engine_name},
                      {"passed_through", passed_through},
                      {"total", counters_json(total)}};
  j["sas"] = nlohmann::json::array();
  for (uint32_t i = 0; i < sad.size(); ++i) {
    const xfrm::Sa& sa = sad[i];
    nlohmann::json s = counters_json(sa.stats.c);
    s["spi"] = fmt::format("0x{:08x}", sa.cfg.spi);
    s["src"] = xfrm::to_string(sa.cfg.src);
    s["dst"] = xfrm::to_string(sa.cfg.dst);
    j["sas"].push_back(s);
  }
  return j;
}

namespace {
constexpr size_t kEthHlen = 14;  ///< ETH_HLEN

/// Index of rt's entry program in rt.env().programs (tail-call index).
size_t entry_index(const xdp::Runtime& rt) {
  const auto& progs = rt.env().programs;
  for (size_t i = 0; i < progs.size(); ++i)
    if (progs[i] == &rt.program()) return i;
  throw Error("the entry program is not in its env");
}

/// The job on `ex` (per packet, CPU workers) or, when `gpu` is set, on that batch device.
JobResult run_job(xdp::Runtime& rt, vm::Executor* ex, device::gpu::BatchDevice* gpu,
                  const JobOptions& opts);
}  // namespace

JobResult run_pcap_job(xdp::Runtime& rt, vm::Executor& ex, const JobOptions& opts) {
  return run_job(rt, &ex, nullptr, opts);
}

JobResult run_pcap_job(xdp::Runtime& rt, JobDevice& dev, const JobOptions& opts) {
  return run_job(rt, dev.executor.get(), dev.batch.get(), opts);
}

namespace {
JobResult run_job(xdp::Runtime& rt, vm::Executor* ex, device::gpu::BatchDevice* gpu,
                  const JobOptions& opts) {
  JobResult res;
  std::optional<io::PcapReader> in;
  std::vector<std::unique_ptr<io::Port>> owned;
  std::vector<io::Port*> ports;
  if (opts.in_taps.empty() && opts.in_xsks.empty()) in.emplace(opts.in_pcap);
  auto add = [&](std::unique_ptr<io::Port> p) {
    res.ports.push_back({std::string(p->kind()), p->name(), p->ifindex(), p->queue(), p->mode()});
    ports.push_back(owned.emplace_back(std::move(p)).get());
  };
  for (const std::string& name : opts.in_taps) {
    for (const auto& c : res.ports)
      if (c.name == name) throw Error(fmt::format("--tap {}: given twice", name));
    add(std::make_unique<io::TapPort>(name));
  }
  // --xsk: the queues of one interface (by ifindex: an altname is the same interface) open
  // together (io::XskPort::open_stopped), in the order of the interfaces' first --xsk, and
  // knod's program goes on no interface before every socket is open.
  struct Xsks {
    std::string name;  // as first given
    uint32_t ifindex;  // 0: no such interface (open_stopped says so)
    std::vector<uint32_t> queues;
  };
  std::vector<Xsks> xsks;
  for (const std::string& arg : opts.in_xsks) {
    const auto [name, queue] = io::XskPort::parse(arg);
    for (const auto& c : res.ports)
      if (c.name == name) throw Error(fmt::format("--xsk {}: {} is a --tap port too", arg, name));
    const uint32_t ifindex = ::if_nametoindex(name.c_str());
    auto it = std::find_if(xsks.begin(), xsks.end(), [&](const Xsks& x) {
      return ifindex ? x.ifindex == ifindex : x.name == name;
    });
    if (it == xsks.end()) it = xsks.insert(xsks.end(), {name, ifindex, {}});
    if (std::find(it->queues.begin(), it->queues.end(), queue) != it->queues.end())
      throw Error(fmt::format("--xsk {}:{}: given twice{}", name, queue,
                              name == it->name ? "" : " (" + it->name + " is " + name + ")"));
    it->queues.push_back(queue);
  }
  std::vector<std::vector<std::unique_ptr<io::XskPort>>> opened;
  for (const Xsks& x : xsks) opened.push_back(io::XskPort::open_stopped(x.name, x.queues));
  for (auto& o : opened) {
    o.at(0)->start();
    // Generic XDP takes a frame's RX queue from its skb: the one its driver recorded, else 0.
    // A veth records none of its own: a frame comes to the queue one below the peer's TX queue
    // (TX queue 0 counts as none: queue 0), so of two queues all come to 0 and the sockets on
    // other queues may get nothing: say so while it runs.
    const auto above0 = std::find_if(o.begin(), o.end(), [](auto& p) { return p->queue() > 0; });
    if (o[0]->attach_mode() == "xdpgeneric" && above0 != o.end())
      fmt::print(stderr,
                 "knod: warning: --xsk {}:{}: knod's program runs as generic XDP (the driver "
                 "has no XDP of its own, or refused it), where a frame's RX queue is the one its "
                 "driver recorded: the queue may get none (on a veth, a frame arrives on the "
                 "peer's TX queue minus one, 0 for TX queue 0: with two queues, all on queue 0)\n",
                 (*above0)->name(), (*above0)->queue());
  }
  for (auto& o : opened)
    for (auto& p : o) add(std::move(p));
  // --pass-tap (--xsk ports of one interface): a TAP knod made gets its Ethernet address and goes
  // up, so that the stack takes the unicast frames sent to the port. The port's frames wait in its
  // ring meanwhile.
  std::optional<io::TapPort> pass;
  if (!opts.pass_tap.empty()) {
    const std::string& port = ports.at(0)->name();
    const auto mac = io::hw_addr(port);
    if (!mac)
      throw Error(
          fmt::format("--pass-tap {}: {} has no Ethernet address to give it", opts.pass_tap, port));
    pass.emplace(opts.pass_tap, io::PcapReader::kDefaultMaxLen, "--pass-tap");
    if (pass->created())
      pass->set_up(*mac);
    else if (!pass->is_up())
      throw Error(
          fmt::format("--pass-tap {0}: the interface is down (ip link set {0} up)", pass->name()));
    res.pass_tap = pass->name();
  }
  std::vector<io::Port*> waits = ports;  // what an empty batch waits on
  if (pass) waits.push_back(&*pass);
  std::optional<io::PcapWriter> all;
  std::optional<io::PcapWriter> by[5];
  if (!opts.out_all.empty()) all.emplace(opts.out_all);
  for (int v = 0; v < 5; ++v)
    if (!opts.out_by_verdict[v].empty()) by[v].emplace(opts.out_by_verdict[v]);

  const uint32_t cap = std::max(1u, opts.batch);
  device::CpuOptions co;
  co.workers = gpu ? 1u : std::max(1u, opts.workers);
  co.walk_apart = rt.order_free();  // else each worker runs its packets in capture order
  device::CpuDevice dev(co);
  // A capture on N > 1 CPU workers: N batches read ahead, each run whole by one worker (as N
  // receive queues each give a CPU its own packets: no batch is cut between workers, no
  // worker waits for another between two of its packets; docs/PERFORMANCE.md, session 24).
  // Ports and GPU devices: one batch at a time (a live port's frames are not held back).
  const uint32_t ahead = in && !gpu && !opts.persistent ? dev.workers() : 1;
  std::vector<std::unique_ptr<device::BatchStore>> stores;
  for (uint32_t q = 0; q < ahead; ++q)
    stores.push_back(std::make_unique<device::BatchStore>(
        cap, gpu ? device::kFrameSize : device::kSlotPitch));  // GPU: one frame a slot
  device::BatchStore& st = *stores[0];
  // Between two rounds of batches the caller writes and reads the capture (a few hundred us):
  // the threads poll through it, else each would join the next round asleep, ~40 us late, and
  // find its batch taken by the caller (CpuDevice::run(): a late owner's slice). Not with
  // --xfrm, whose crypto threads (xfrm::ThreadedEngine) share these CPUs right after each XDP
  // round; busy_poll itself declines more workers than CPUs.
  if (ahead > 1 && !opts.xfrm) dev.busy_poll(true);
  // Per worker: the batches and packets it ran whole (CpuStats counts a batch as one item).
  struct alignas(64) Whole {
    uint64_t batches = 0, packets = 0;
  };
  std::vector<Whole> whole(dev.workers());
  io::Packet pkt;
  // Per batch read ahead: what xfrm keeps, and the frame lengths before xfrm.
  std::vector<std::vector<uint8_t>> keep(ahead);
  std::vector<std::vector<uint32_t>> xdp_len(ahead);
  // Compile now, outside the timed batches.
  if (gpu && opts.pcap_clock)
    throw Error("--pcap-clock: not supported on " + std::string(gpu->name()) +
                " yet (use --device cpu or interp)");
  if (opts.pcap_clock)
    for (auto& s : stores) s->b.clock_ns = s->clock();
  if (gpu)
    gpu->load(rt.env(), entry_index(rt), device::gpu::Mode::kXdp);
  else
    ex->bind(rt.program(), &rt.env());
  std::optional<GpuSession> session;  // --persistent
  if (opts.persistent) {
    if (!gpu) throw Error("--persistent: needs a GPU device (cuda[:N] or gpusim)");
    session.emplace(*gpu, cap, opts.batch_timeout_ns);
  }
  std::vector<uint32_t> port_of(ports.empty() ? 0 : cap);  // the port slot i came from
  size_t turn = 0;  // the port read first next time, so that a busy port cannot starve the others
  auto read_any = [&](uint32_t n) {
    for (size_t k = 0; k < ports.size(); ++k) {
      const size_t p = (turn + k) % ports.size();
      if (!ports[p]->read(pkt, 0)) continue;
      port_of[n] = static_cast<uint32_t>(p);
      turn = p + 1;
      return true;
    }
    return false;
  };
  // Ports: XDP_TX back into the frame's port; XDP_REDIRECT to a port's ifindex into that port.
  auto send = [&](const device::Batch& b, uint32_t i, uint32_t v, std::span<const uint8_t> out) {
    uint32_t to = port_of[i];
    if (v == XDP_REDIRECT) {
      const uint64_t r = b.redirect[i];
      to = UINT32_MAX;
      if (device::redirect_kind(r) == device::RedirectKind::kIfindex)
        for (uint32_t p = 0; p < res.ports.size() && to == UINT32_MAX; ++p)
          if (res.ports[p].ifindex == device::redirect_value(r)) to = p;  // its first queue
      if (to == UINT32_MAX) {
        ++res.redirect_unsent;
        return;
      }
    } else if (v == XDP_PASS && pass) {
      ++(pass->write(out) ? res.passed : res.pass_refused);
      return;
    } else if (v != XDP_TX) {
      return;
    }
    PortCounters& c = res.ports[to];
    if (!ports[to]->write(out))
      ++c.refused;
    else
      ++(v == XDP_TX ? c.tx : c.redirected);
  };
  // --pass-tap, the other way: the frames the host's stack sends out of the TAP leave by the
  // port, as the NIC would send them (not run: XDP sees what arrives). Up to 256 a call.
  io::Packet host;
  auto from_host = [&] {
    if (!pass) return;
    uint32_t k = 0;
    for (; k < 256 && pass->read(host, 0); ++k)
      ++(ports[0]->write(host.data) ? res.from_host : res.from_host_refused);
    if (k) ports[0]->flush();
  };
  auto last_report = std::chrono::steady_clock::now();
  const auto deadline = last_report + std::chrono::nanoseconds(opts.duration_ns);
  // The next frame for slot n of the batch: 1 (in pkt); 0: none waiting on a port now, run
  // what the batch holds (as NAPI takes what the ring has); -1: the end (the capture is over,
  // -c packets were taken, --duration passed, a signal).
  uint64_t pending = 0;  // packets of the batches read ahead, not yet counted in res.packets
  auto next = [&](uint32_t n) -> int {
    if (opts.max_packets && res.packets + pending + n >= opts.max_packets) return -1;
    if (in) return in->next(pkt) ? 1 : -1;
    if (n) return read_any(n) ? 1 : 0;
    from_host();
    for (;;) {  // an empty batch waits, looking at the stop conditions every 100 ms at most
      if (opts.stop && opts.stop->load(std::memory_order_relaxed)) return -1;
      int wait_ms = 100;
      if (opts.duration_ns) {
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::nanoseconds(0)) return -1;
        wait_ms = static_cast<int>(
            std::min<int64_t>(wait_ms, std::chrono::ceil<std::chrono::milliseconds>(left).count()));
      }
      if (read_any(0)) return 1;
      io::wait_any(waits, wait_ms);
      from_host();
    }
  };
  // Fills `b` with the next packets, up to cap: how many; `more` false at the end.
  auto fill = [&](device::BatchStore& b, bool& more) {
    uint32_t n = 0;
    while (n < cap && !(session && n && session->due())) {
      int got = -1;
      try {
        got = next(n);
      } catch (const Error& e) {  // a port went away: run what the batch holds, then end
        if (ports.empty()) throw;
        res.port_error = e.what();
      }
      if (got <= 0) {
        more = got == 0;
        break;
      }
      if (pkt.data.size() < kEthHlen) {  // BPF_PROG_TEST_RUN refuses these (-EINVAL)
        ++res.skipped_runt;
        continue;
      }
      // The headroom (metadata included) as BPF_PROG_TEST_RUN gives it, zeroed: not what the
      // slot's previous packet left there (bpf_xdp_adjust_head(-N) then a read).
      std::memset(b.slot(n), 0, device::kXdpHeadroom);
      std::memcpy(b.slot(n) + device::kXdpHeadroom, pkt.data.data(), pkt.data.size());
      b.b.data_off[n] = device::kXdpHeadroom;
      b.b.data_len[n] = static_cast<uint32_t>(pkt.data.size());
      b.b.meta_len[n] = 0;
      b.b.ingress_ifindex[n] =
          !ports.empty() && opts.ifindex == 0 ? res.ports[port_of[n]].ifindex : opts.ifindex;
      b.b.rx_queue_index[n] = !ports.empty() && opts.rxq == JobOptions::kPortsQueue
                                  ? res.ports[port_of[n]].queue
                                  : opts.rxq;
      b.clock()[n] = pkt.ts_ns;
      res.bytes += pkt.data.size();
      ++n;
      if (session) session->added();
    }
    b.b.count = n;
    return n;
  };
  // Writes batch q's packets out by verdict and counts them.
  auto output = [&](uint32_t q) {
    device::BatchStore& b = *stores[q];
    const uint32_t n = b.b.count;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t verdict = b.b.verdict[i];
      const uint32_t v = verdict <= uint32_t(XDP_REDIRECT) ? verdict : uint32_t(XDP_ABORTED);
      std::span<const uint8_t> out(b.slot(i) + b.b.data_off[i], b.b.data_len[i]);
      ++res.verdict_packets[v];
      res.verdict_bytes[v] += opts.xfrm ? xdp_len[q][i] : b.b.data_len[i];  // as XDP left it
      if (b.b.fault[i] < 8) ++res.faults[b.b.fault[i]];
      if (!ports.empty()) ++res.ports[port_of[i]].rx;
      if (opts.xfrm && !keep[q][i]) continue;  // dropped by xfrm after XDP_PASS
      if (all) all->write(out, b.clock()[i]);
      if (by[v]) by[v]->write(out, b.clock()[i]);
      if (!ports.empty()) send(b.b, i, v, out);
    }
    for (io::Port* p : ports) p->flush();
    res.packets += n;
  };
  for (bool more = true; more;) {
    uint32_t filled = 0;
    pending = 0;
    while (filled < ahead && more) {
      const uint32_t n = fill(*stores[filled], more);
      if (n == 0) break;
      pending += n;
      ++filled;
    }
    if (filled == 0) {
      if (more) continue;
      break;
    }
    auto t0 = std::chrono::steady_clock::now();
    if (session)
      session->run(st.b);
    else if (gpu)
      gpu->run(st.b);
    else if (filled == 1)
      dev.run_chunks(st.b.count, [&](uint32_t lo, uint32_t hi, uint32_t cpu) {
        rt.run_packets(*ex, st.b, lo, hi, cpu, dev.backward(cpu), dev.continues(cpu));
      });
    else  // one worker a batch, in capture order within it
      dev.for_chunks(filled, 1, [&](uint32_t lo, uint32_t hi, uint32_t cpu) {
        for (uint32_t q = lo; q < hi; ++q) {
          rt.run_packets(*ex, stores[q]->b, 0, stores[q]->b.count, cpu, false, false);
          ++whole[cpu].batches;
          whole[cpu].packets += stores[q]->b.count;
        }
      });
    for (uint32_t q = 0; opts.xfrm && q < filled; ++q) {  // ESP after XDP, batch by batch
      device::Batch& b = stores[q]->b;
      xdp_len[q].assign(b.data_len, b.data_len + b.count);
      opts.xfrm->run(b, b.count, keep[q]);
    }
    res.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (uint32_t q = 0; q < filled; ++q) output(q);
    pending = 0;
    if (opts.progress) {
      auto now = std::chrono::steady_clock::now();
      if (now - last_report > std::chrono::seconds(1)) {
        fmt::print(stderr, "\r{} packets", res.packets);
        last_report = now;
      }
    }
  }
  if (session) {  // the device's maps back to the host maps
    session->stop();
    res.batch_latency_ns = session->latency_ns();
    res.batches_by_timeout = session->flushed_by_timeout();
  }
  // What the ports still hold: knod's program comes off first (nothing more arrives), then
  // each frame queued is counted as unread. Up to kDrainMost frames a port: a TAP under a
  // flood is never empty.
  try {  // what the host sent last
    from_host();
  } catch (const Error& e) {
    if (res.port_error.empty()) res.port_error = e.what();
  }
  constexpr uint64_t kDrainMost = 8192;
  for (size_t p = 0; p < ports.size(); ++p) {
    ports[p]->stop_input();
    try {  // 2 ms for frames in flight when the program came off
      while (res.ports[p].unread < kDrainMost && ports[p]->read(pkt, 2)) ++res.ports[p].unread;
      res.ports[p].unread_capped = res.ports[p].unread == kDrainMost;
    } catch (const Error& e) {
      if (res.port_error.empty()) res.port_error = e.what();
    }
  }
  if (!gpu) {
    res.cpu = dev.stats();
    for (size_t w = 0; w < whole.size() && w < res.cpu.items.size(); ++w)
      res.cpu.items[w] += whole[w].packets - whole[w].batches;  // packets, as the slices count
  }
  if (in) {
    res.skipped_snapped = in->skipped_count(io::SkipReason::kSnapped);
    res.skipped_too_large = in->skipped_count(io::SkipReason::kTooLarge);
    res.truncated = in->truncated();
    res.truncated_error = in->error();
  }
  for (size_t p = 0; p < ports.size(); ++p) {
    res.skipped_too_large += ports[p]->skipped_too_large();
    res.ports[p].kernel_dropped = ports[p]->kernel_drops();
  }
  if (pass)
    res.pass_stack_dropped = pass->stack_drops(), res.from_host_dropped = pass->kernel_drops();
  if (all) all->close();
  for (auto& w : by)
    if (w) w->close();
  return res;
}

}  // namespace

}  // namespace knod::cli
