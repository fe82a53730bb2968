#include "cli/xdp_job.h"

#include <fmt/core.h>
#include <linux/bpf.h>

#include <chrono>
#include <cstring>
#include <optional>

#include "base/error.h"
#include "device/cpu/cpu_device.h"
#include "io/pcap.h"
#include "jit/executor.h"
#include "vm/interp.h"

namespace knod::cli {

std::unique_ptr<vm::Executor> make_executor(const std::string& device) {
  if (device == "interp") return std::make_unique<vm::Interpreter>();
  if (device == "cpu") {
    jit::JitOptions o;
    o.ctx = jit::CtxKind::kXdp;
    return std::make_unique<jit::JitExecutor>(o);
  }
  throw Error(fmt::format("unknown device '{}' for packet runs (use interp or cpu)", device));
}

namespace {

/// Batch storage: structure of arrays with fixed-stride frames (device/batch.h).
struct BatchStore {
  explicit BatchStore(uint32_t n)
      : frames(size_t(n) * device::kFrameSize), off(n), len(n), meta(n), ifx(n), rxq(n),
        verdict(n), redirect(n), fault(n), ts(n), wire(n) {
    b.stride = device::kFrameSize;
    b.frames = frames.data();
    b.data_off = off.data();
    b.data_len = len.data();
    b.meta_len = meta.data();
    b.ingress_ifindex = ifx.data();
    b.rx_queue_index = rxq.data();
    b.verdict = verdict.data();
    b.redirect = redirect.data();
    b.fault = fault.data();
  }
  device::Batch b;
  std::vector<uint8_t> frames;
  std::vector<uint32_t> off, len, meta, ifx, rxq, verdict;
  std::vector<uint64_t> redirect;
  std::vector<uint8_t> fault;
  std::vector<uint64_t> ts;
  std::vector<uint32_t> wire;
};

}  // namespace

JobResult run_pcap_job(xdp::Runtime& rt, vm::Executor& ex, const JobOptions& opts) {
  JobResult res;
  io::PcapReader in(opts.in_pcap);
  std::optional<io::PcapWriter> all;
  std::optional<io::PcapWriter> by[5];
  if (!opts.out_all.empty()) all.emplace(opts.out_all);
  for (int v = 0; v < 5; ++v)
    if (!opts.out_by_verdict[v].empty()) by[v].emplace(opts.out_by_verdict[v]);

  const uint32_t cap = std::max(1u, opts.batch);
  BatchStore st(cap);
  device::CpuOptions co;
  co.workers = std::max(1u, opts.workers);
  device::CpuDevice dev(co);
  io::Packet pkt;
  auto last_report = std::chrono::steady_clock::now();
  for (bool more = true; more;) {
    uint32_t n = 0;
    while (n < cap && (more = in.next(pkt))) {
      uint8_t* slot = st.frames.data() + size_t(n) * device::kFrameSize;
      std::memcpy(slot + device::kXdpHeadroom, pkt.data.data(), pkt.data.size());
      st.off[n] = device::kXdpHeadroom;
      st.len[n] = static_cast<uint32_t>(pkt.data.size());
      st.meta[n] = 0;
      st.ifx[n] = opts.ifindex;
      st.rxq[n] = opts.rxq;
      st.ts[n] = pkt.ts_ns;
      st.wire[n] = pkt.wire_len;
      res.bytes += pkt.data.size();
      ++n;
    }
    if (n == 0) break;
    st.b.count = n;
    auto t0 = std::chrono::steady_clock::now();
    dev.run(n, [&](uint32_t i, uint32_t cpu) { rt.run_packet(ex, st.b, i, cpu); });
    res.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t v = st.verdict[i] <= uint32_t(XDP_REDIRECT) ? st.verdict[i] : uint32_t(XDP_ABORTED);
      const uint8_t* data = st.frames.data() + size_t(i) * device::kFrameSize + st.off[i];
      std::span<const uint8_t> out(data, st.len[i]);
      ++res.verdict_packets[v];
      res.verdict_bytes[v] += st.len[i];
      if (st.fault[i] < 8) ++res.faults[st.fault[i]];
      if (all) all->write(out, st.ts[i]);
      if (by[v]) by[v]->write(out, st.ts[i]);
    }
    res.packets += n;
    if (opts.progress) {
      auto now = std::chrono::steady_clock::now();
      if (now - last_report > std::chrono::seconds(1)) {
        fmt::print(stderr, "\r{} packets", res.packets);
        last_report = now;
      }
    }
  }
  res.skipped_snapped = in.skipped_count(io::SkipReason::kSnapped);
  res.skipped_too_large = in.skipped_count(io::SkipReason::kTooLarge);
  res.truncated = in.truncated();
  res.truncated_error = in.error();
  if (all) all->close();
  for (auto& w : by)
    if (w) w->close();
  return res;
}

}  // namespace knod::cli
