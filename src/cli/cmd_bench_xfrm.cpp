// `knod bench --xfrm FILE [--sizes 64,512,1420,imix] [--packets N] [--seconds S]`: for each
// AEAD SA of FILE (rfc4106(gcm(aes)), rfc7539esp(chacha20,poly1305)), ESP encrypt and decrypt
// through knod's batch path (esp_encrypt_batch / esp_decrypt_batch, OpenSSL engine) on one
// core, and raw OpenSSL EVP AEAD on the same buffers (same key, nonce, AAD and lengths).
//
// Method: packets are restored between batches, untimed; each batch is timed with the
// thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so other processes on the core do not count.
// knod and raw alternate over 5 rounds; each side reports its best round. Gbps counts the
// plaintext IP packet bytes (the packet before encrypt = the packet after decrypt).
#include <fmt/core.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <functional>

#include "base/error.h"
#include "cli/xfrm_bench.h"
#include "xfrm/bench.h"
#include "xfrm/install.h"
#include "xfrm/parse/ip_xfrm.h"

namespace knod::cli {
namespace {

using namespace knod::xfrm;

constexpr int kRounds = 5;

double cpu_now() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

struct SizeSpec {
  std::string label;  ///< "1420" or "imix"
  std::vector<uint32_t> sizes;
};

std::vector<SizeSpec> parse_sizes(const std::string& s) {
  std::vector<SizeSpec> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string w = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? s.size() + 1 : comma + 1;
    if (w == "imix") {
      out.push_back({"imix", imix_sizes()});
      continue;
    }
    char* end = nullptr;
    unsigned long v = std::strtoul(w.c_str(), &end, 10);
    if (w.empty() || *end || v < 48 || v > 1800)
      throw Error(fmt::format("bench: --sizes '{}': want IP packet sizes 48..1800 or imix", w));
    out.push_back({w, {uint32_t(v)}});
  }
  return out;
}

/// Best-round throughput of one side: seconds of CPU time, packets and plaintext bytes.
struct Rate {
  double sec = 0;
  uint64_t packets = 0, bytes = 0;
  double mpps() const { return sec > 0 ? packets / sec / 1e6 : 0; }
  double gbps() const { return sec > 0 ? bytes * 8 / sec / 1e9 : 0; }
};

/// One round: prep (untimed) + pass (timed) until `packets` or `seconds`, at least one batch.
Rate round(const std::function<void()>& prep, const std::function<bool()>& pass, uint32_t count,
           uint64_t bytes, uint64_t packets, double seconds, const char* what) {
  Rate r;
  do {
    prep();
    double t0 = cpu_now();
    bool ok = pass();
    r.sec += cpu_now() - t0;
    if (!ok) throw Error(fmt::format("bench: {}: packets failed", what));
    r.packets += count, r.bytes += bytes;
  } while ((!packets || r.packets < packets) && r.sec < seconds);
  return r;
}

Rate best(const Rate& a, const Rate& b) {
  return a.packets == 0 || (b.sec > 0 && b.packets / b.sec > a.packets / a.sec) ? b : a;
}

void pin_to_current_cpu() {
  int cpu = sched_getcpu();
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);  // best effort: the table is valid without it
}

}  // namespace

std::shared_ptr<XfrmBenchArgs> add_xfrm_bench_options(CLI::App* c) {
  auto x = std::make_shared<XfrmBenchArgs>();
  c->add_option("--xfrm", x->file,
                "ESP instead of XDP: each AEAD SA of this `ip xfrm` file, knod vs raw OpenSSL");
  c->add_option("--sizes", x->sizes, "--xfrm: IP packet bytes, comma-separated, or imix");
  c->add_option("--packets", x->packets, "--xfrm: packets per measurement (default: --seconds)");
  c->add_option("--seconds", x->seconds, "--xfrm: CPU seconds per measurement (default 0.2)")
      ->check(CLI::Range(0.0, 60.0));
  c->add_option("--xfrm-batch", x->batch, "--xfrm: packets per ESP batch (default 256)")
      ->check(CLI::Range(1u, 4096u));
  return x;
}

int run_xfrm_bench(const XfrmBenchArgs& a) {
  XfrmConfig cfg = parse_file(a.file);
  {  // the kernel's install rules first: a duplicate `state add` or an update of a missing SA
    Sad sad;  // is the same one-line error here as in `knod xfrm -f` / `ipsec` / `run --xfrm`
    Spd spd;
    install(cfg, sad, spd);
  }
  std::vector<SaConfig> sas;
  for (size_t i = 0; i < cfg.states.size(); ++i)  // each SA once: its `state add` line
    if (bench_aead(cfg.states[i]) && !(i < cfg.state_update.size() && cfg.state_update[i]))
      sas.push_back(cfg.states[i]);
  if (sas.empty())
    throw Error(
        fmt::format("bench: {}: no AEAD SA to measure (want aead rfc4106(gcm(aes)) or "
                    "rfc7539esp(chacha20,poly1305))",
                    a.file));
  std::vector<SizeSpec> specs = parse_sizes(a.sizes);
  uint32_t count = a.batch;
  if (a.packets && a.packets < count) count = uint32_t(a.packets);
  uint64_t per_round = a.packets ? (a.packets + kRounds - 1) / kRounds : 0;
  double sec_round = a.seconds / kRounds;
  pin_to_current_cpu();

  for (const SaConfig& s : cfg.states)
    if (!bench_aead(s))
      fmt::print("# skipped spi 0x{:08x}: {} (not an AEAD this bench measures)\n", s.spi,
                 alg_name(s));
  fmt::print(
      "ESP on 1 core, batches of {} packets, OpenSSL engine; raw = OpenSSL EVP AEAD alone on the "
      "same buffers\n(same key, nonce, AAD, lengths). Gbps = plaintext IP packet bytes; imix = "
      "64/576/1500 B at 7:4:1.\nBest of {} alternating rounds, thread CPU time; packets "
      "restored between batches, untimed.\n",
      count, kRounds);
  fmt::print("{:<10} {:<18} {:<3} {:>5} {:>10} {:>10} {:>9} {:>9}\n", "spi", "alg", "dir", "size",
             "knod Mpps", "knod Gbps", "raw Gbps", "knod/raw");
  // The min ratio is reported at 1420 B, or at the largest fixed size when 1420 is not run.
  std::string min_label;
  uint32_t largest = 0;
  for (const SizeSpec& sp : specs)
    if (sp.label != "imix") largest = std::max(largest, sp.sizes[0]);
  bool has1420 = std::any_of(specs.begin(), specs.end(),
                             [](const SizeSpec& sp) { return sp.label == "1420"; });
  uint32_t min_size = has1420 ? 1420 : largest;
  double min_ratio = 1e9;
  for (const SaConfig& s : sas) {
    std::string alg = alg_name(s);
    for (const SizeSpec& sp : specs) {
      EspBench xe(s, sp.sizes, count), xd(s, sp.sizes, count);
      xd.seal();
      RawAead raw_enc(s, 1), raw_dec(s, 0);
      for (int enc : {1, 0}) {
        Rate k, r;
        auto prep_e = [&] { xe.reset(); };
        auto prep_d = [&] { xd.reset(); };
        std::function<bool()> knod_pass = enc ? std::function<bool()>([&] { return xe.encrypt(); })
                                              : std::function<bool()>([&] { return xd.decrypt(); });
        RawAead& ra = enc ? raw_enc : raw_dec;
        auto raw_pass = [&] { return ra.run(xd.ops.data(), count); };
        for (int i = 0; i < kRounds; ++i) {
          if (enc)
            k = best(k, round(prep_e, knod_pass, count, xe.plain_bytes, per_round, sec_round,
                              "knod encrypt"));
          else
            k = best(k, round(prep_d, knod_pass, count, xd.plain_bytes, per_round, sec_round,
                              "knod decrypt"));
          r = best(r, round(prep_d, raw_pass, count, xd.plain_bytes, per_round, sec_round,
                            enc ? "raw encrypt" : "raw decrypt"));
        }
        double ratio = r.gbps() > 0 ? 100 * k.gbps() / r.gbps() : 0;
        fmt::print("0x{:08x} {:<18} {:<3} {:>5} {:>10.3f} {:>10.2f} {:>9.2f} {:>8.1f}%\n", s.spi,
                   alg, enc ? "enc" : "dec", sp.label, k.mpps(), k.gbps(), r.gbps(), ratio);
        std::fflush(stdout);
        if (sp.label != "imix" && sp.sizes[0] == min_size && ratio < min_ratio)
          min_ratio = ratio,
          min_label = fmt::format("0x{:08x} {} {}", s.spi, alg, enc ? "enc" : "dec");
      }
    }
  }
  if (!min_label.empty())
    fmt::print("min knod/raw at {} B: {:.1f}% ({})\n", min_size, min_ratio, min_label);
  return 0;
}

}  // namespace knod::cli
