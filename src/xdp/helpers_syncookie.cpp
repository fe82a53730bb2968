// SYN cookies: bpf_tcp_raw_gen_syncookie_ipv4 (204), _ipv6 (205),
// bpf_tcp_raw_check_syncookie_ipv4 (206), _ipv6 (207). Source: net/core/filter.c,
// net/ipv4/syncookies.c, net/ipv6/syncookies.c, net/ipv4/tcp_input.c tcp_parse_mss_option.
// The algorithm is the kernel's (SipHash-2-4 cookie_hash, 24-bit count field, MSS table
// index in the low bits); the secrets are the kernel's random ones there and a function of
// Options::seed here, so cookie values differ from the kernel's and tests compare them
// structurally (round trip, encoded MSS, errors).
#include <arpa/inet.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <time.h>

#include <cstring>

#include "xdp/helpers.h"

namespace knod::xdp {
namespace {

constexpr uint32_t kCookieBits = 24;
constexpr uint32_t kCookieMask = (1u << kCookieBits) - 1;
constexpr uint32_t kMaxSyncookieAge = 2;
constexpr uint16_t kTcpMssDefault = 536;
constexpr uint16_t kMssTab4[] = {536, 1300, 1440, 1460};
constexpr uint16_t kMssTab6[] = {1280 - 60, 1480 - 60, 1500 - 60, 9000 - 60};
constexpr uint64_t kHz = 250;  // as bpf_jiffies64

struct TcpHdr {  // struct tcphdr, the fields used
  uint16_t source, dest;
  uint32_t seq, ack_seq;
  uint8_t doff_res;  // doff in the high nibble
  uint8_t flags;
  uint16_t window, check, urg_ptr;
};
static_assert(sizeof(TcpHdr) == 20);

/// SipHash-2-4 of msg under a 16-byte key (OpenSSL EVP_MAC "SIPHASH"), low 32 bits.
uint32_t siphash32(const void* msg, size_t len, const uint8_t key[16]) {
  static EVP_MAC* mac = EVP_MAC_fetch(nullptr, "SIPHASH", nullptr);
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  size_t outlen = 8;
  OSSL_PARAM params[] = {OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &outlen),
                         OSSL_PARAM_construct_end()};
  uint8_t out[8] = {};
  size_t got = 0;
  EVP_MAC_init(ctx, key, 16, params);
  EVP_MAC_update(ctx, static_cast<const uint8_t*>(msg), len);
  EVP_MAC_final(ctx, out, &got, sizeof out);
  EVP_MAC_CTX_free(ctx);
  uint32_t r;
  std::memcpy(&r, out, 4);  // the u64 result is little-endian
  return r;
}

/// syncookie_secret[c] (v6 = false) / syncookie6_secret[c] derived from the seed.
void secret(const vm::Run& run, bool v6, int c, uint8_t key[16]) {
  uint64_t x = (run.env ? run.env->seed : 0) + (v6 ? 0x100 : 0) + uint64_t(c) * 2;
  for (int half = 0; half < 2; ++half) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    std::memcpy(key + 8 * half, &z, 8);
  }
}

uint32_t cookie_time(const vm::Run& run) {
  return uint32_t(clock_ns(run, CLOCK_MONOTONIC) / (1'000'000'000ull / kHz) / (60 * kHz));
}

uint32_t cookie_hash(const vm::Run& run, const uint8_t* ip, bool v6, const TcpHdr& th,
                     uint32_t count, int c) {
  uint8_t key[16];
  secret(run, v6, c, key);
  if (!v6) {  // siphash_4u32(saddr, daddr, sport << 16 | dport, count)
    uint8_t m[16];
    std::memcpy(m, ip + 12, 8);  // iph->saddr, iph->daddr
    uint32_t ports = uint32_t(th.source) << 16 | th.dest;
    std::memcpy(m + 8, &ports, 4);
    std::memcpy(m + 12, &count, 4);
    return siphash32(m, sizeof m, key);
  }
  uint8_t m[40];  // {saddr, daddr, count, sport, dport}
  std::memcpy(m, ip + 8, 32);
  std::memcpy(m + 32, &count, 4);
  std::memcpy(m + 36, &th.source, 2);
  std::memcpy(m + 38, &th.dest, 2);
  return siphash32(m, sizeof m, key);
}

uint16_t parse_mss(const uint8_t* th) {
  const uint8_t* p = th + 20;
  int length = (th[12] >> 4) * 4 - 20;
  uint16_t mss = 0;
  while (length > 0) {
    int opcode = *p++;
    if (opcode == 0) return mss;  // TCPOPT_EOL
    if (opcode == 1) {            // TCPOPT_NOP
      --length;
      continue;
    }
    if (length < 2) return mss;
    int opsize = *p++;
    if (opsize < 2 || opsize > length) return mss;
    if (opcode == 2 && opsize == 4) {  // TCPOPT_MSS
      uint16_t in = uint16_t(p[0] << 8 | p[1]);
      if (in) mss = in;
    }
    p += opsize - 2;
    length -= opsize;
  }
  return mss;
}

uint64_t gen(vm::Run& run, uint64_t iph, uint64_t th, uint64_t th_len, bool v6) {
  const uint32_t ip_len = v6 ? 40 : 20;
  const uint32_t len = uint32_t(th_len);
  if (!arg_mem(run, iph, ip_len, false) || !arg_mem(run, th, len, false)) return 0;
  if (len < sizeof(TcpHdr)) return neg(EINVAL);
  TcpHdr h;
  std::memcpy(&h, ptr<void>(th), sizeof h);
  if (len != uint32_t(h.doff_res >> 4) * 4) return neg(EINVAL);
  uint16_t mss = parse_mss(ptr<uint8_t>(th));
  if (!mss) mss = kTcpMssDefault;
  const uint16_t* tab = v6 ? kMssTab6 : kMssTab4;
  uint32_t mssind = 3;
  for (; mssind; --mssind)
    if (mss >= tab[mssind]) break;
  const uint32_t count = cookie_time(run);
  const uint8_t* ip = ptr<uint8_t>(iph);
  const uint32_t cookie = cookie_hash(run, ip, v6, h, 0, 0) + ntohl(h.seq) +
                          (count << kCookieBits) +
                          ((cookie_hash(run, ip, v6, h, count, 1) + mssind) & kCookieMask);
  return cookie | uint64_t(tab[mssind]) << 32;
}

uint64_t check(vm::Run& run, uint64_t iph, uint64_t th, bool v6) {
  if (!arg_mem(run, iph, v6 ? 40 : 20, false) || !arg_mem(run, th, sizeof(TcpHdr), false)) return 0;
  TcpHdr h;
  std::memcpy(&h, ptr<void>(th), sizeof h);
  const uint8_t* ip = ptr<uint8_t>(iph);
  uint32_t cookie = ntohl(h.ack_seq) - 1;
  const uint32_t seq = ntohl(h.seq) - 1;
  const uint32_t count = cookie_time(run);
  cookie -= cookie_hash(run, ip, v6, h, 0, 0) + seq;
  const uint32_t diff = (count - (cookie >> kCookieBits)) & (0xffffffffu >> kCookieBits);
  if (diff >= kMaxSyncookieAge) return neg(EACCES);
  const uint32_t mssind = (cookie - cookie_hash(run, ip, v6, h, count - diff, 1)) & kCookieMask;
  return mssind < 4 ? 0 : neg(EACCES);
}

uint64_t gen4(vm::Run& run, uint64_t iph, uint64_t th, uint64_t len, uint64_t, uint64_t) {
  return gen(run, iph, th, len, false);
}
uint64_t gen6(vm::Run& run, uint64_t iph, uint64_t th, uint64_t len, uint64_t, uint64_t) {
  return gen(run, iph, th, len, true);
}
uint64_t check4(vm::Run& run, uint64_t iph, uint64_t th, uint64_t, uint64_t, uint64_t) {
  return check(run, iph, th, false);
}
uint64_t check6(vm::Run& run, uint64_t iph, uint64_t th, uint64_t, uint64_t, uint64_t) {
  return check(run, iph, th, true);
}

}  // namespace

void add_syncookie_helpers(vm::HelperTable& t) {
  set_helper(t, BPF_FUNC_tcp_raw_gen_syncookie_ipv4, "bpf_tcp_raw_gen_syncookie_ipv4", gen4,
             kGplOnly);
  set_helper(t, BPF_FUNC_tcp_raw_gen_syncookie_ipv6, "bpf_tcp_raw_gen_syncookie_ipv6", gen6,
             kGplOnly);
  set_helper(t, BPF_FUNC_tcp_raw_check_syncookie_ipv4, "bpf_tcp_raw_check_syncookie_ipv4", check4,
             kGplOnly);
  set_helper(t, BPF_FUNC_tcp_raw_check_syncookie_ipv6, "bpf_tcp_raw_check_syncookie_ipv6", check6,
             kGplOnly);
}

}  // namespace knod::xdp
