// `knod bench --xfrm FILE [--sizes 64,512,1420,imix] [--packets N] [--seconds S]`: for each
// AEAD SA of FILE (rfc4106(gcm(aes)), rfc7539esp(chacha20,poly1305)), ESP encrypt and decrypt
// through knod's batch path (esp_encrypt_batch / esp_decrypt_batch, OpenSSL engine) on one
// core, raw OpenSSL EVP AEAD on the same buffers (same key, nonce, AAD and lengths), and
// knod-N: the same batch path with the crypto stage on N threads (`--workers`, default all
// cores; xfrm/crypto/threaded_engine.h).
//
// Method: packets are restored between batches, untimed; each batch is timed with the
// thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so other processes on the core do not count;
// knod-N with wall time (CLOCK_MONOTONIC: what the threads buy, as `knod bench`'s jit-N).
// knod, raw and knod-N alternate over 5 rounds; each side reports its best round. Gbps counts
// the plaintext IP packet bytes (the packet before encrypt = the packet after decrypt).
#include <fmt/core.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <functional>
#include <thread>

#include "base/error.h"
#include "cli/xfrm_bench.h"
#include "xfrm/bench.h"
#include "xfrm/install.h"
#include "xfrm/parse/ip_xfrm.h"

namespace knod::cli {
namespace {

using namespace knod::xfrm;

constexpr int kRounds = 5;

/// Seconds on the thread's CPU clock (cpu) or the monotonic wall clock.
double now(bool cpu) {
  timespec t;
  clock_gettime(cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
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

/// Best-round throughput of one side: seconds (CPU or wall), packets and plaintext bytes.
struct Rate {
  double sec = 0;
  uint64_t packets = 0, bytes = 0;
  double mpps() const { return sec > 0 ? packets / sec / 1e6 : 0; }
  double gbps() const { return sec > 0 ? bytes * 8 / sec / 1e9 : 0; }
};

/// One round: prep (untimed) + pass (timed: thread CPU time, or wall time when !cpu) until
/// `packets` or `seconds`, at least one batch.
Rate round(const std::function<void()>& prep, const std::function<bool()>& pass, uint32_t count,
           uint64_t bytes, uint64_t packets, double seconds, const char* what, bool cpu = true) {
  Rate r;
  do {
    prep();
    double t0 = now(cpu);
    bool ok = pass();
    r.sec += now(cpu) - t0;
    if (!ok) throw Error(fmt::format("bench: {}: packets failed", what));
    r.packets += count, r.bytes += bytes;
  } while ((!packets || r.packets < packets) && r.sec < seconds);
  return r;
}

Rate best(const Rate& a, const Rate& b) {
  return a.packets == 0 || (b.sec > 0 && b.packets / b.sec > a.packets / a.sec) ? b : a;
}

/// Pins this thread to the CPU it is on; returns the mask it had (worker threads started
/// later must get that one back: a thread inherits its creator's mask).
cpu_set_t pin_to_current_cpu() {
  cpu_set_t old;
  CPU_ZERO(&old);
  sched_getaffinity(0, sizeof old, &old);
  int cpu = sched_getcpu();
  if (cpu < 0) return old;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);  // best effort: the table is valid without it
  return old;
}

/// An EspBench whose crypto workers run on any CPU of `all` (this thread stays pinned).
std::unique_ptr<EspBench> unpinned_bench(const cpu_set_t& all, const SaConfig& s,
                                         const std::vector<uint32_t>& sizes, uint32_t count,
                                         uint32_t workers) {
  cpu_set_t pinned;
  CPU_ZERO(&pinned);
  sched_getaffinity(0, sizeof pinned, &pinned);
  sched_setaffinity(0, sizeof all, &all);
  auto b = std::make_unique<EspBench>(s, sizes, count, "openssl", workers);
  sched_setaffinity(0, sizeof pinned, &pinned);
  return b;
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
  x->workers = c->get_option_no_throw("--workers");  // `bench`'s: threads of knod-N
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
  uint32_t workers = a.workers && a.workers->count() ? a.workers->as<uint32_t>() : 0;
  if (!workers) workers = std::max(1u, std::thread::hardware_concurrency());
  const cpu_set_t all_cpus = pin_to_current_cpu();

  for (const SaConfig& s : cfg.states)
    if (!bench_aead(s))
      fmt::print("# skipped spi 0x{:08x}: {} (not an AEAD this bench measures)\n", s.spi,
                 alg_name(s));
  fmt::print(
      "ESP on 1 core, batches of {} packets, OpenSSL engine; raw = OpenSSL EVP AEAD alone on the "
      "same buffers\n(same key, nonce, AAD, lengths). Gbps = plaintext IP packet bytes; imix = "
      "64/576/1500 B at 7:4:1.\nBest of {} alternating rounds, thread CPU time; packets "
      "restored between batches, untimed.\nknod-N: the crypto stage of each batch on {} "
      "thread{} (wall time); N/1 = knod-N Gbps / knod Gbps.\n",
      count, kRounds, workers, workers == 1 ? "" : "s");
  fmt::print("{:<10} {:<18} {:<3} {:>5} {:>10} {:>10} {:>9} {:>9} {:>11} {:>6}\n", "spi", "alg",
             "dir", "size", "knod Mpps", "knod Gbps", "raw Gbps", "knod/raw", "knod-N Gbps", "N/1");
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
      std::unique_ptr<EspBench> ne = unpinned_bench(all_cpus, s, sp.sizes, count, workers),
                                nd = unpinned_bench(all_cpus, s, sp.sizes, count, workers);
      nd->seal();
      RawAead raw_enc(s, 1), raw_dec(s, 0);
      for (int enc : {1, 0}) {
        Rate k, r, kn;
        auto prep_e = [&] { xe.reset(); };
        auto prep_d = [&] { xd.reset(); };
        std::function<bool()> knod_pass = enc ? std::function<bool()>([&] { return xe.encrypt(); })
                                              : std::function<bool()>([&] { return xd.decrypt(); });
        std::function<void()> n_prep = enc ? std::function<void()>([&] { ne->reset(); })
                                           : std::function<void()>([&] { nd->reset(); });
        std::function<bool()> n_pass = enc ? std::function<bool()>([&] { return ne->encrypt(); })
                                           : std::function<bool()>([&] { return nd->decrypt(); });
        const uint64_t n_bytes = enc ? ne->plain_bytes : nd->plain_bytes;
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
          kn = best(kn, round(n_prep, n_pass, count, n_bytes, per_round, sec_round,
                              enc ? "knod-N encrypt" : "knod-N decrypt", false));
        }
        double ratio = r.gbps() > 0 ? 100 * k.gbps() / r.gbps() : 0;
        double scale = k.gbps() > 0 ? kn.gbps() / k.gbps() : 0;
        fmt::print(
            "0x{:08x} {:<18} {:<3} {:>5} {:>10.3f} {:>10.2f} {:>9.2f} {:>8.1f}% {:>11.2f} "
            "{:>5.2f}x\n",
            s.spi, alg, enc ? "enc" : "dec", sp.label, k.mpps(), k.gbps(), r.gbps(), ratio,
            kn.gbps(), scale);
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
