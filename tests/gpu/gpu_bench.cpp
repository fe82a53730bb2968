// knod_gpu_bench: the pieces of scripts/gpu-check.sh.
//   run   --device cpu|cuda|gpusim OBJ PROG PCAP [MAPS.json]   canonical per-packet results and map
//         contents (text), so the CPU and CUDA outputs can be compared with diff(1);
//   bench OBJ PROG [MAPS.json] [--sizes 1024,...] [--bytes 64,1500] [--iters N]
//         CUDA throughput (Mpps) and batch latency (p50/p99, us), device-resident and
//         end-to-end through pinned host memory; one TSV row per configuration. --cpus N
//         (default 32768): virtual CPUs, the most lanes a program with per-CPU maps runs on.
// The CPU side runs xdp::Runtime with the JIT executor (the kernel-checked reference).
#include <fmt/core.h>
#include <linux/bpf.h>
#define PCAP_DONT_INCLUDE_PCAP_BPF_H  // its struct bpf_insn clashes with linux/bpf.h
#include <pcap/pcap.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "device/batch.h"
#include "device/cuda/device.h"
#include "device/gpu/host_sim.h"
#include "jit/executor.h"
#include "loader/object.h"
#include "xdp/runtime.h"

namespace {

using namespace knod;

std::vector<uint8_t> hex(const std::string& s) {
  std::vector<uint8_t> out;
  std::string digits;
  for (char c : s)
    if (isxdigit(static_cast<unsigned char>(c))) digits += c;
  if (digits.size() % 2) throw Error("odd hex string: " + s);
  for (size_t i = 0; i < digits.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoul(digits.substr(i, 2), nullptr, 16)));
  return out;
}

// <name>.maps.json (examples/xdp/README.md) into knod's maps: per-CPU values on every CPU,
// PROG_ARRAY "prog" entries as program indexes.
void preload(loader::Object& obj, const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(std::ifstream(path));
  for (auto& [name, entries] : j["maps"].items()) {
    int mi = obj.find_map(name);
    if (mi < 0) throw Error("preload: no map " + name);
    maps::Map& m = *obj.maps[mi];
    for (auto& e : entries) {
      std::vector<uint8_t> key = hex(e["key"].get<std::string>()), value;
      if (e.contains("prog")) {
        std::string p = e["prog"].get<std::string>();
        uint32_t idx = 0;
        while (idx < obj.programs.size() && obj.programs[idx].name != p) ++idx;
        if (idx == obj.programs.size()) throw Error("preload: no program " + p);
        value.resize(4);
        std::memcpy(value.data(), &idx, 4);
      } else {
        value = hex(e["value"].get<std::string>());
        uint32_t user = m.user_value_size();
        if (user > value.size()) {  // per-CPU: the value on every CPU (8-byte aligned slots)
          uint32_t stride = (m.def().value_size + 7) & ~7u;
          std::vector<uint8_t> all(user, 0);
          for (uint32_t off = 0; off + value.size() <= user; off += stride)
            std::memcpy(all.data() + off, value.data(), value.size());
          value = all;
        }
      }
      if (long rc = m.user_update(key.data(), value.data(), BPF_ANY); rc != 0)
        throw Error(fmt::format("preload: map {}: update failed ({})", name, rc));
    }
  }
}

struct Packets {
  std::vector<uint8_t> frames;
  std::vector<uint32_t> off, len, meta, ifindex, rxq, verdict;
  std::vector<uint64_t> redirect;
  std::vector<uint8_t> fault;
  uint32_t stride = device::kFrameSize;
  device::Batch batch() {
    device::Batch b;
    b.count = uint32_t(off.size());
    b.stride = stride;
    b.frames = frames.data();
    b.data_off = off.data();
    b.data_len = len.data();
    b.meta_len = meta.data();
    b.ingress_ifindex = ifindex.data();
    b.rx_queue_index = rxq.data();
    b.verdict = verdict.data();
    b.redirect = redirect.data();
    b.fault = fault.data();
    return b;
  }
  void add(const uint8_t* data, uint32_t n) {
    n = std::min(n, stride - device::kXdpHeadroom - device::kTailroom);
    size_t at = frames.size();
    frames.resize(at + stride, 0);
    std::memcpy(frames.data() + at + device::kXdpHeadroom, data, n);
    off.push_back(device::kXdpHeadroom);
    len.push_back(n);
    meta.push_back(0);
    ifindex.push_back(1);
    rxq.push_back(0);
    verdict.push_back(0);
    redirect.push_back(0);
    fault.push_back(0);
  }
};

Packets read_pcap(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  if (!p) throw Error(fmt::format("{}: {}", path, err));
  Packets pk;
  pcap_pkthdr* h;
  const u_char* data;
  while (pcap_next_ex(p, &h, &data) == 1) pk.add(data, h->caplen);
  pcap_close(p);
  return pk;
}

// Ethernet / IPv4 / UDP 10.0.0.1:1234 -> 10.0.0.2:53, `bytes` long (checksums left 0).
Packets synthetic(uint32_t count, uint32_t bytes) {
  std::vector<uint8_t> f(bytes, 0);
  const uint8_t eth[14] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00};
  std::memcpy(f.data(), eth, 14);
  uint16_t ip_len = uint16_t(bytes - 14), udp_len = uint16_t(bytes - 34);
  const uint8_t ip[20] = {0x45,
                          0,
                          uint8_t(ip_len >> 8),
                          uint8_t(ip_len),
                          0,
                          0,
                          0x40,
                          0,
                          64,
                          17,
                          0,
                          0,
                          10,
                          0,
                          0,
                          1,
                          10,
                          0,
                          0,
                          2};
  std::memcpy(f.data() + 14, ip, 20);
  const uint8_t udp[8] = {0x04, 0xd2, 0, 53, uint8_t(udp_len >> 8), uint8_t(udp_len), 0, 0};
  std::memcpy(f.data() + 34, udp, 8);
  Packets pk;
  pk.stride = (device::kXdpHeadroom + bytes + device::kTailroom + 63) & ~63u;
  pk.frames.reserve(size_t(count) * pk.stride);
  for (uint32_t i = 0; i < count; ++i) pk.add(f.data(), bytes);
  return pk;
}

size_t entry_index(const xdp::Runtime& rt) {
  const auto& progs = rt.env().programs;
  for (size_t i = 0; i < progs.size(); ++i)
    if (progs[i] == &rt.program()) return i;
  throw Error("entry program not in the env");
}

void dump_maps(const loader::Object& obj) {
  for (size_t i = 0; i < obj.maps.size(); ++i) {
    maps::Map& m = *obj.maps[i];
    if (m.def().type == BPF_MAP_TYPE_PROG_ARRAY) continue;
    std::vector<uint8_t> key(m.def().key_size), next(m.def().key_size), val(m.user_value_size());
    std::vector<std::string> lines;
    const void* prev = nullptr;
    while (m.get_next_key(prev, next.data()) == 0) {
      key = next;
      prev = key.data();
      if (m.user_lookup(key.data(), val.data()) != 0) continue;
      std::string l = "map " + m.name() + " ";
      for (uint8_t b : key) l += fmt::format("{:02x}", b);
      l += " = ";
      for (uint8_t b : val) l += fmt::format("{:02x}", b);
      lines.push_back(l);
    }
    std::sort(lines.begin(), lines.end());  // hash iteration order differs between devices
    for (const auto& l : lines) fmt::print("{}\n", l);
  }
}

int cmd_run(const std::string& dev, const std::string& obj_path, const std::string& prog,
            const std::string& pcap, const std::string& maps_json) {
  loader::LoadOptions lo;
  lo.ncpus = 1;
  loader::Object obj = loader::load_object(obj_path, lo);
  if (!maps_json.empty()) preload(obj, maps_json);
  xdp::Options xo;
  xo.clock_ns = 1'000'000'000;  // pinned clock: same ktime on both devices
  xdp::Runtime rt(obj, prog, xo);
  Packets pk = read_pcap(pcap);
  device::Batch b = pk.batch();
  if (dev == "cpu") {
    jit::JitOptions jo;
    jo.ctx = jit::CtxKind::kXdp;
    jit::JitExecutor ex(jo);
    for (uint32_t i = 0; i < b.count; ++i) rt.run_packet(ex, b, i, 0);
  } else {  // a GPU batch device: the whole capture as one batch
    std::unique_ptr<device::gpu::BatchDevice> d;
    if (dev == "gpusim")
      d = std::make_unique<device::gpu::HostSim>();
    else
      d = device::cuda::Device::open(dev);
    d->load(rt.env(), entry_index(rt), device::gpu::Mode::kXdp);
    d->run(b);
  }
  for (uint32_t i = 0; i < b.count; ++i) {
    std::string bytes;
    for (uint32_t k = 0; k < b.data_len[i]; ++k)
      bytes += fmt::format("{:02x}", b.frames[size_t(i) * b.stride + b.data_off[i] + k]);
    fmt::print("pkt {} verdict {} redirect {:x} fault {} off {} len {} meta {} {}\n", i,
               b.verdict[i], b.redirect[i], b.fault[i], b.data_off[i], b.data_len[i], b.meta_len[i],
               bytes);
  }
  dump_maps(obj);
  return 0;
}

std::vector<uint32_t> list(const std::string& s) {
  std::vector<uint32_t> v;
  size_t at = 0;
  while (at <= s.size()) {
    size_t comma = s.find(',', at);
    if (comma == std::string::npos) comma = s.size();
    v.push_back(uint32_t(std::stoul(s.substr(at, comma - at))));
    at = comma + 1;
  }
  return v;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

int cmd_bench(const std::string& obj_path, const std::string& prog, const std::string& maps_json,
              const std::vector<uint32_t>& sizes, const std::vector<uint32_t>& bytes, int iters,
              uint32_t cpus) {
  // Virtual CPUs: a program with per-CPU maps runs one lane per CPU (at most `cpus` lanes),
  // and its per-CPU maps hold `cpus` slots, copied back after every e2e batch.
  loader::LoadOptions lo;
  lo.ncpus = cpus;
  loader::Object obj = loader::load_object(obj_path, lo);
  if (!maps_json.empty()) preload(obj, maps_json);
  xdp::Options xo;
  xo.ncpus = cpus;
  xdp::Runtime rt(obj, prog, xo);
  auto d = device::cuda::Device::open("cuda");
  d->load(rt.env(), entry_index(rt), device::cuda::Mode::kXdp);
  fmt::print("program\tbytes\tbatch\tmode\tMpps\tp50_us\tp99_us\n");
  for (uint32_t by : bytes) {
    for (uint32_t n : sizes) {
      Packets base = synthetic(n, by);
      int it = n >= 65536 ? std::max(5, iters / 5) : iters;
      for (const char* mode : {"e2e", "resident"}) {
        std::vector<double> us;
        for (int k = -2; k < it; ++k) {  // two warm-up batches
          Packets pk = base;             // programs rewrite packets: fresh input each batch
          device::Batch b = pk.batch();
          if (std::string(mode) == "e2e") {
            auto t0 = std::chrono::steady_clock::now();
            d->run(b);
            auto t1 = std::chrono::steady_clock::now();
            if (k >= 0) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
          } else {
            if (k == -2) d->run(b);
            d->run_resident(n);
            if (k >= 0) us.push_back(d->last_timing().kernel_ms * 1000.0);
          }
        }
        double p50 = percentile(us, 0.5), p99 = percentile(us, 0.99);
        fmt::print("{}\t{}\t{}\t{}\t{:.2f}\t{:.1f}\t{:.1f}\n", prog, by, n, mode, n / p50, p50,
                   p99);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  try {
    if (a.size() >= 6 && a[0] == "run" && a[1] == "--device")
      return cmd_run(a[2], a[3], a[4], a[5], a.size() > 6 ? a[6] : "");
    if (a.size() >= 3 && a[0] == "bench") {
      std::string maps_json;
      std::vector<uint32_t> sizes{1024, 16384, 65536, 1048576}, bytes{64, 1500};
      int iters = 50;
      uint32_t cpus = 32768;
      for (size_t i = 3; i < a.size(); ++i) {
        if (a[i] == "--sizes" && i + 1 < a.size())
          sizes = list(a[++i]);
        else if (a[i] == "--bytes" && i + 1 < a.size())
          bytes = list(a[++i]);
        else if (a[i] == "--iters" && i + 1 < a.size())
          iters = std::stoi(a[++i]);
        else if (a[i] == "--cpus" && i + 1 < a.size())
          cpus = uint32_t(std::stoul(a[++i]));
        else
          maps_json = a[i];
      }
      return cmd_bench(a[1], a[2], maps_json, sizes, bytes, iters, cpus);
    }
    fmt::print(stderr,
               "usage: knod_gpu_bench run --device cpu|cuda[:N]|gpusim OBJ PROG PCAP [MAPS.json]\n"
               "       knod_gpu_bench bench OBJ PROG [MAPS.json] [--sizes N,..] [--bytes B,..] "
               "[--iters N] [--cpus N]\n");
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "knod_gpu_bench: {}\n", e.what());
    return 1;
  }
}
