// Example runs on the CPU JIT and on a GPU batch device (see sim_job.h).
#include "sim_job.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <filesystem>
#include <stdexcept>

#include "device/batch.h"
#include "io/map_json.h"
#include "io/pcap.h"
#include "jit/executor.h"

namespace knod::gpu_test {
namespace {

constexpr uint64_t kClockNs = 1'700'000'000'000'000'000ull;  // pinned bpf_ktime_get_ns
constexpr uint64_t kSeed = 42;

/// Batch arrays for `n` packets, frames laid out as `knod run` does.
struct Store {
  explicit Store(const std::vector<std::vector<uint8_t>>& frames)
      : n(uint32_t(frames.size())),
        mem(size_t(n) * device::kFrameSize),
        off(n, device::kXdpHeadroom),
        len(n),
        meta(n),
        ifx(n, 1),
        rxq(n),
        verdict(n),
        redirect(n),
        fault(n) {
    for (uint32_t i = 0; i < n; ++i) {
      std::memcpy(&mem[size_t(i) * device::kFrameSize + device::kXdpHeadroom], frames[i].data(),
                  frames[i].size());
      len[i] = uint32_t(frames[i].size());
    }
  }
  /// Packets [first, first + count) as a batch.
  device::Batch batch(uint32_t first, uint32_t count) {
    device::Batch b;
    b.count = count;
    b.stride = device::kFrameSize;
    b.frames = &mem[size_t(first) * device::kFrameSize];
    b.data_off = &off[first];
    b.data_len = &len[first];
    b.meta_len = &meta[first];
    b.ingress_ifindex = &ifx[first];
    b.rx_queue_index = &rxq[first];
    b.verdict = &verdict[first];
    b.redirect = &redirect[first];
    b.fault = &fault[first];
    return b;
  }
  SimOutcome outcome(const loader::Object& obj) {
    SimOutcome o{verdict, redirect, fault, {}, {}};
    for (uint32_t i = 0; i < n; ++i) {
      const uint8_t* d = &mem[size_t(i) * device::kFrameSize + off[i]];
      o.bytes.emplace_back(d, d + len[i]);
    }
    for (const auto& m : obj.maps) o.maps.push_back(io::map_contents(*m));
    return o;
  }
  uint32_t n;
  std::vector<uint8_t> mem;
  std::vector<uint32_t> off, len, meta, ifx, rxq, verdict;
  std::vector<uint64_t> redirect;
  std::vector<uint8_t> fault;
};

}  // namespace

std::vector<std::vector<uint8_t>> read_frames(const std::string& pcap) {
  io::PcapReader in(pcap);
  io::Packet p;
  std::vector<std::vector<uint8_t>> out;
  while (in.next(p))
    if (p.data.size() >= 14) out.push_back(p.data);
  return out;
}

LoadedExample::LoadedExample(const std::string& obj_path, const std::string& prog,
                             const std::string& maps_json, uint32_t ncpus) {
  loader::LoadOptions lo;
  lo.ncpus = ncpus;
  obj = loader::load_object(obj_path, lo);
  if (!maps_json.empty() && std::filesystem::exists(maps_json))
    io::apply_map_preload(io::read_map_preload(maps_json), obj, maps_json);
  xdp::Options xo;
  xo.ncpus = ncpus;
  xo.clock_ns = kClockNs;
  xo.seed = kSeed;
  rt = std::make_unique<xdp::Runtime>(obj, prog, xo);
  const auto& progs = rt->env().programs;
  for (size_t i = 0; i < progs.size(); ++i)
    if (progs[i] == &rt->program()) entry = i;
}

SimOutcome run_on_cpu(LoadedExample& ex, const std::vector<std::vector<uint8_t>>& frames,
                      uint32_t ncpus) {
  Store st(frames);
  jit::JitOptions o;
  o.ctx = jit::CtxKind::kXdp;
  jit::JitExecutor jit(o);
  device::Batch b = st.batch(0, st.n);
  for (uint32_t i = 0; i < st.n; ++i) ex.rt->run_packet(jit, b, i, i % ncpus);
  return st.outcome(ex.obj);
}

SimOutcome run_on_device(LoadedExample& ex, device::gpu::BatchDevice& dev,
                         const std::vector<std::vector<uint8_t>>& frames, uint32_t batch) {
  Store st(frames);
  dev.load(ex.rt->env(), ex.entry, device::gpu::Mode::kXdp);
  for (uint32_t first = 0; first < st.n; first += batch) {
    device::Batch b = st.batch(first, std::min(batch, st.n - first));
    dev.run(b);
  }
  return st.outcome(ex.obj);
}

void expect_same(const SimOutcome& got, const SimOutcome& want, const loader::Object& obj) {
  ASSERT_EQ(got.verdict.size(), want.verdict.size());
  for (size_t i = 0; i < want.verdict.size(); ++i) {
    EXPECT_EQ(got.verdict[i], want.verdict[i]) << "packet " << i;
    EXPECT_EQ(got.redirect[i], want.redirect[i]) << "packet " << i;
    EXPECT_EQ(int(got.fault[i]), int(want.fault[i])) << "packet " << i;
    EXPECT_EQ(got.bytes[i], want.bytes[i]) << "packet " << i;
  }
  ASSERT_EQ(got.maps.size(), want.maps.size());
  for (size_t m = 0; m < want.maps.size(); ++m)
    EXPECT_EQ(got.maps[m], want.maps[m]) << "map " << obj.map_specs[m].name;
}

SimOutcome run_on_session(LoadedExample& ex, device::gpu::BatchDevice& dev,
                          const std::vector<std::vector<uint8_t>>& frames,
                          const SessionPlan& plan) {
  Store st(frames);
  if (std::all_of(plan.sizes.begin(), plan.sizes.end(), [](uint32_t n) { return n == 0; }))
    throw std::invalid_argument("run_on_session: every batch size is 0");
  dev.load(ex.rt->env(), ex.entry, device::gpu::Mode::kXdp);
  dev.start_persistent(plan.opts);
  std::deque<device::Batch> batches;  // stable addresses while in flight
  for (uint32_t first = 0, k = 0; first < st.n || (first == 0 && st.n == 0); ++k) {
    uint32_t size = plan.sizes[k % plan.sizes.size()];
    batches.push_back(st.batch(first, std::min(size, st.n - first)));
    dev.submit(batches.back());
    if (k == 0 && plan.during) plan.during();
    first += batches.back().count;
    if (st.n == 0) break;
  }
  if (plan.complete_before_stop)
    while (auto seq = dev.complete())
      if (plan.completed) plan.completed->push_back(*seq);
  dev.stop();
  return st.outcome(ex.obj);
}

}  // namespace knod::gpu_test
