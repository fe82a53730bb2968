// Helper unit tests: each helper called directly on a Run, values from the kernel's
// definitions (net/core/filter.c) and RFCs.
#include "xdp/helpers.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>

#include "base/error.h"
#include "device/batch.h"
#include "insns.h"
#include "loader/object.h"
#include "maps/map.h"
#include "vm/interp.h"
#include "xdp/buff.h"
#include "xdp/fib.h"
#include "xdp/mono_clock.h"
#include "xdp/runtime.h"

namespace knod::xdp {
namespace {

uint64_t addr(const void* p) {
  return reinterpret_cast<uint64_t>(p);
}

/// A run with a 64-byte packet in a test_run frame and a writable scratch "stack".
struct Fixture : ::testing::Test {
  alignas(64) uint8_t frame[device::kFrameSize] = {};
  alignas(8) uint8_t stack[512] = {};
  Buff b;
  vm::Run run;
  vm::Env env;
  void SetUp() override {
    for (int i = 0; i < 64; ++i) frame[device::kXdpHeadroom + i] = uint8_t(i);
    env.helpers = &helpers();
    run.env = &env;
    b.init(frame, device::kFrameSize, device::kXdpHeadroom, 64, 0);
    ASSERT_TRUE(b.attach(run));
    run.add_region(addr(stack), addr(stack) + sizeof stack, true);
  }
  uint64_t call(int id, uint64_t r1 = 0, uint64_t r2 = 0, uint64_t r3 = 0, uint64_t r4 = 0,
                uint64_t r5 = 0) {
    EXPECT_NE(env.helpers->fn[id], nullptr) << "helper " << id;
    return env.helpers->fn[id](run, r1, r2, r3, r4, r5);
  }
  uint64_t ctx() const { return run.ctx_lo; }
};

using Ctx = Fixture;
TEST_F(Ctx, FieldsAsKernelRewrites) {
  uint64_t v = 0;
  ASSERT_TRUE(ctx_load(run, 0, 4, &v));
  EXPECT_EQ(v, addr(frame) + 256);
  ASSERT_TRUE(ctx_load(run, 4, 4, &v));
  EXPECT_EQ(v, addr(frame) + 256 + 64);
  ASSERT_TRUE(ctx_load(run, 8, 4, &v));
  EXPECT_EQ(v, addr(frame) + 256);  // data_meta == data without metadata
  ASSERT_TRUE(ctx_load(run, 12, 4, &v));
  EXPECT_EQ(v, 1u);  // loopback, as test_run
  ASSERT_TRUE(ctx_load(run, 16, 4, &v));
  EXPECT_EQ(v, 0u);
  EXPECT_FALSE(ctx_load(run, 24, 4, &v));
  EXPECT_FALSE(ctx_load(run, 0, 8, &v));
  EXPECT_FALSE(ctx_load(run, 2, 4, &v));
  EXPECT_FALSE(ctx_load(run, 12, 1, &v));
  EXPECT_FALSE(ctx_store(run, 12, 4, 3));
}

using Buffer = Fixture;
TEST_F(Buffer, AdjustHeadLimits) {
  // data may go down to data_hard_start + sizeof(struct xdp_frame) (40).
  EXPECT_EQ(int64_t(call(BPF_FUNC_xdp_adjust_head, ctx(), uint64_t(-217))), -EINVAL);
  EXPECT_EQ(call(BPF_FUNC_xdp_adjust_head, ctx(), uint64_t(-216)), 0u);
  EXPECT_EQ(b.data, addr(frame) + 40);
  EXPECT_EQ(b.len(), 64u + 216);
  EXPECT_TRUE(run.can_access(addr(frame) + 40, 280, true));
  EXPECT_FALSE(run.can_access(addr(frame) + 39, 1, false));
  // and up to data_end - ETH_HLEN.
  EXPECT_EQ(int64_t(call(BPF_FUNC_xdp_adjust_head, ctx(), 280 - 13)), -EINVAL);
  EXPECT_EQ(call(BPF_FUNC_xdp_adjust_head, ctx(), 280 - 14), 0u);
  EXPECT_EQ(b.len(), 14u);
}

TEST_F(Buffer, AdjustMetaMovesWithHead) {
  EXPECT_EQ(int64_t(call(BPF_FUNC_xdp_adjust_meta, ctx(), uint64_t(-3))), -EACCES);
  EXPECT_EQ(int64_t(call(BPF_FUNC_xdp_adjust_meta, ctx(), 4)), -EINVAL);  // past data
  EXPECT_EQ(call(BPF_FUNC_xdp_adjust_meta, ctx(), uint64_t(-8)), 0u);
  EXPECT_EQ(b.meta_len(), 8u);
  std::memcpy(frame + 248, "METADATA", 8);
  // adjust_head keeps sizeof(xdp_frame) + metalen free and carries the metadata along.
  EXPECT_EQ(int64_t(call(BPF_FUNC_xdp_adjust_head, ctx(), uint64_t(-209))), -EINVAL);
  EXPECT_EQ(call(BPF_FUNC_xdp_adjust_head, ctx(), uint64_t(-208)), 0u);
  EXPECT_EQ(std::memcmp(frame + 40, "METADATA", 8), 0);
  EXPECT_EQ(b.data, addr(frame) + 48);
}

TEST_F(Buffer, AdjustTailZeroesAndStopsAtTailroom) {
  const uint32_t room = device::kFrameSize - device::kTailroom - 256 - 64;  // 3456
  std::memset(frame + 320, 0xee, 16);
  EXPECT_EQ(call(BPF_FUNC_xdp_adjust_tail, ctx(), 16), 0u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(frame[320 + i], 0);
  EXPECT_EQ(int64_t(call(BPF_FUNC_xdp_adjust_tail, ctx(), room - 16 + 1)), -EINVAL);
  EXPECT_EQ(call(BPF_FUNC_xdp_adjust_tail, ctx(), room - 16), 0u);
  EXPECT_EQ(b.data_end, addr(frame) + device::kFrameSize - device::kTailroom);
  EXPECT_EQ(int64_t(call(BPF_FUNC_xdp_adjust_tail, ctx(), uint64_t(-int64_t(b.len() - 13)))),
            -EINVAL);
  EXPECT_EQ(call(BPF_FUNC_xdp_adjust_tail, ctx(), uint64_t(-int64_t(b.len() - 14))), 0u);
  EXPECT_EQ(b.len(), 14u);
}

TEST_F(Buffer, LoadStoreBytes) {
  EXPECT_EQ(call(BPF_FUNC_xdp_load_bytes, ctx(), 60, addr(stack), 4), 0u);
  EXPECT_EQ(stack[0], 60);
  EXPECT_EQ(stack[3], 63);
  EXPECT_EQ(int64_t(call(BPF_FUNC_xdp_load_bytes, ctx(), 61, addr(stack), 4)), -EINVAL);
  EXPECT_EQ(int64_t(call(BPF_FUNC_xdp_load_bytes, ctx(), 0x10000, addr(stack), 4)), -EFAULT);
  std::memcpy(stack, "\xaa\xbb", 2);
  EXPECT_EQ(call(BPF_FUNC_xdp_store_bytes, ctx(), 10, addr(stack), 2), 0u);
  EXPECT_EQ(frame[256 + 10], 0xaa);
  EXPECT_EQ(call(BPF_FUNC_xdp_get_buff_len, ctx()), 64u);
  // A buffer outside the run's memory is what the verifier would reject.
  uint8_t outside[8];
  call(BPF_FUNC_xdp_load_bytes, ctx(), 0, addr(outside), 4);
  EXPECT_EQ(run.fault, vm::Fault::kBadHelper);
}

using Csum = Fixture;
TEST_F(Csum, Rfc1071Example) {
  // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2 (network order); csum_diff
  // returns the folded sum in host order of the 16-bit loads: htons(0xddf2) on x86.
  const uint8_t w[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  std::memcpy(stack, w, 8);
  EXPECT_EQ(call(BPF_FUNC_csum_diff, 0, 0, addr(stack), 8, 0), htons(0xddf2));
  // Diffing equal data gives the ones' complement -0 (0xffff), as csum_sub does.
  EXPECT_EQ(call(BPF_FUNC_csum_diff, addr(stack), 8, addr(stack), 8, 0), 0xffffu);
  // Removing data: ~csum_partial(from, ~seed) = seed - sum.
  EXPECT_EQ(call(BPF_FUNC_csum_diff, addr(stack), 8, 0, 0, htons(0xddf2)), 0xffffu);
  EXPECT_EQ(call(BPF_FUNC_csum_diff, 0, 0, 0, 0, 0x12345678), 0x68acu);  // folded seed
}

using Redirect = Fixture;
TEST_F(Redirect, MapTargetsAndFallback) {
  auto dev = maps::create_map("dev", {BPF_MAP_TYPE_DEVMAP, 4, 4, 8, 0, -1}, 1);
  auto cpu = maps::create_map("cpu", {BPF_MAP_TYPE_CPUMAP, 4, 4, 8, 0, -1}, 4);
  auto xsk = maps::create_map("xsk", {BPF_MAP_TYPE_XSKMAP, 4, 4, 8, 0, -1}, 1);
  env.maps = {dev, cpu, xsk};
  uint32_t k = 3, v = 7;
  ASSERT_EQ(dev->user_update(&k, &v, 0), 0);
  k = 2;
  v = 128;
  ASSERT_EQ(cpu->user_update(&k, &v, 0), 0);
  k = 5;
  v = 42;
  ASSERT_EQ(xsk->user_update(&k, &v, 0), 0);
  const uint64_t d = addr(dev.get()), c = addr(cpu.get()), x = addr(xsk.get());
  EXPECT_EQ(call(BPF_FUNC_redirect_map, d, 3, 0), uint64_t(XDP_REDIRECT));
  EXPECT_EQ(b.redirect, device::redirect_encode(device::RedirectKind::kIfindex, 7));
  EXPECT_EQ(call(BPF_FUNC_redirect_map, d, 4, XDP_PASS), uint64_t(XDP_PASS));
  EXPECT_EQ(b.redirect, 0u);
  EXPECT_EQ(call(BPF_FUNC_redirect_map, d, 4, BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS),
            uint64_t(XDP_REDIRECT));
  EXPECT_EQ(device::redirect_kind(b.redirect), device::RedirectKind::kBroadcast);
  EXPECT_EQ(device::redirect_value(b.redirect), 0u);  // env.maps index
  EXPECT_EQ(device::redirect_flags(b.redirect), uint32_t(BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS));
  EXPECT_EQ(call(BPF_FUNC_redirect_map, c, 2, 0), uint64_t(XDP_REDIRECT));
  EXPECT_EQ(b.redirect, device::redirect_encode(device::RedirectKind::kCpu, 2));
  EXPECT_EQ(call(BPF_FUNC_redirect_map, c, 2, BPF_F_BROADCAST), uint64_t(XDP_ABORTED));
  EXPECT_EQ(call(BPF_FUNC_redirect_map, x, 5, 0), uint64_t(XDP_REDIRECT));
  EXPECT_EQ(b.redirect, device::redirect_encode(device::RedirectKind::kXsk, 5));
  EXPECT_EQ(call(BPF_FUNC_redirect_map, x, 6, XDP_DROP), uint64_t(XDP_DROP));
  EXPECT_EQ(call(BPF_FUNC_redirect, 9, 0), uint64_t(XDP_REDIRECT));
  EXPECT_EQ(b.redirect, device::redirect_encode(device::RedirectKind::kIfindex, 9));
  EXPECT_EQ(call(BPF_FUNC_redirect, 9, 1), uint64_t(XDP_ABORTED));
}

// bpf_map_lookup_percpu_elem (kernel/bpf/{arraymap,hashtab}.c *_lookup_percpu_elem): another
// CPU's value of a per-CPU map, NULL past the map's CPUs, for an absent key or another map type.
using Percpu = Fixture;
TEST_F(Percpu, LookupOnAnotherCpu) {
  auto arr = maps::create_map("a", {BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4}, 3);
  auto hash = maps::create_map("h", {BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 4}, 3);
  auto lru = maps::create_map("l", {BPF_MAP_TYPE_LRU_PERCPU_HASH, 4, 8, 4}, 3);
  auto plain = maps::create_map("p", {BPF_MAP_TYPE_HASH, 4, 8, 4}, 3);
  env.maps = {arr, hash, lru, plain};
  const uint64_t all[3] = {100, 101, 102};  // user view: one value per CPU
  uint32_t k = 2;
  for (auto& m : {arr, hash, lru}) ASSERT_EQ(m->user_update(&k, all, BPF_ANY), 0);
  ASSERT_EQ(plain->user_update(&k, all, BPF_ANY), 0);
  std::memcpy(stack, &k, 4);  // the key on the program's stack
  const uint64_t key = addr(stack);
  run.cpu = 0;
  for (auto& m : {arr, hash, lru}) {
    for (uint64_t c = 0; c < 3; ++c) {
      const uint64_t v = call(BPF_FUNC_map_lookup_percpu_elem, addr(m.get()), key, c);
      ASSERT_NE(v, 0u) << m->name() << " cpu " << c;
      EXPECT_EQ(*reinterpret_cast<const uint64_t*>(v), 100 + c) << m->name();
      EXPECT_EQ(v, addr(m->lookup(&k, uint32_t(c))));
    }
    EXPECT_EQ(call(BPF_FUNC_map_lookup_percpu_elem, addr(m.get()), key, 3), 0u);
    EXPECT_EQ(call(BPF_FUNC_map_lookup_percpu_elem, addr(m.get()), key, 1ull << 32), 0u);
  }
  EXPECT_EQ(call(BPF_FUNC_map_lookup_percpu_elem, addr(plain.get()), key, 0), 0u);
  k = 3;  // absent from the hashes
  std::memcpy(stack, &k, 4);
  EXPECT_EQ(call(BPF_FUNC_map_lookup_percpu_elem, addr(hash.get()), key, 1), 0u);
  EXPECT_EQ(run.fault, vm::Fault::kNone);
}

using Fib = Fixture;
TEST_F(Fib, LookupAgainstTable) {
  auto table = std::make_shared<FibTable>(parse_fib_table(R"({
    "ifaces": [{"ifindex": 2, "mac": "02:00:00:00:00:02", "mtu": 1500},
               {"ifindex": 3, "mac": "02:00:00:00:00:03", "mtu": 9000}],
    "routes": [{"prefix": "10.0.0.0/8", "ifindex": 3, "gateway": "192.168.1.1", "metric": 7},
               {"prefix": "10.1.0.0/16", "ifindex": 2},
               {"prefix": "10.9.0.0/16", "ifindex": 2, "type": "blackhole"}],
    "neighbours": [{"ip": "192.168.1.1", "mac": "02:00:00:00:00:01", "ifindex": 3},
                   {"ip": "10.1.2.3", "mac": "02:00:00:00:00:aa", "ifindex": 2}]})"));
  loader::Object obj;
  obj.programs.push_back(
      {"p", "xdp", BPF_PROG_TYPE_XDP, test::prog({test::mov64_imm(0, 2), test::exit_insn()})});
  Options o;
  o.fib = table;
  Runtime rt(obj, "p", o);
  run.env = &rt.env();
  auto* p = reinterpret_cast<bpf_fib_lookup*>(stack);
  auto lookup = [&](const char* dst, uint32_t ifindex, uint16_t tot_len, uint32_t flags) {
    std::memset(p, 0, sizeof *p);
    p->family = AF_INET;
    p->ifindex = ifindex;
    p->tot_len = tot_len;
    inet_pton(AF_INET, dst, &p->ipv4_dst);
    return call(BPF_FUNC_fib_lookup, ctx(), addr(p), sizeof *p, flags);
  };
  EXPECT_EQ(lookup("10.5.5.5", 2, 100, 0), uint64_t(BPF_FIB_LKUP_RET_SUCCESS));
  EXPECT_EQ(p->ifindex, 3u);
  EXPECT_EQ(p->ipv4_dst, inet_addr("192.168.1.1"));
  EXPECT_EQ(p->dmac[5], 0x01);
  EXPECT_EQ(p->smac[5], 0x03);
  EXPECT_EQ(p->rt_metric, 7u);
  EXPECT_EQ(p->mtu_result, 9000);
  EXPECT_EQ(lookup("10.1.2.3", 2, 100, 0), uint64_t(BPF_FIB_LKUP_RET_SUCCESS));
  EXPECT_EQ(p->dmac[5], 0xaa);
  EXPECT_EQ(lookup("10.1.2.4", 2, 100, 0), uint64_t(BPF_FIB_LKUP_RET_NO_NEIGH));
  EXPECT_EQ(lookup("10.1.2.4", 2, 100, BPF_FIB_LOOKUP_SKIP_NEIGH),
            uint64_t(BPF_FIB_LKUP_RET_SUCCESS));
  EXPECT_EQ(lookup("10.1.2.3", 2, 1501, 0), uint64_t(BPF_FIB_LKUP_RET_FRAG_NEEDED));
  EXPECT_EQ(p->mtu_result, 1500);
  EXPECT_EQ(lookup("10.9.0.1", 2, 100, 0), uint64_t(BPF_FIB_LKUP_RET_BLACKHOLE));
  EXPECT_EQ(lookup("11.0.0.1", 2, 100, 0), uint64_t(BPF_FIB_LKUP_RET_NOT_FWDED));
  EXPECT_EQ(lookup("10.1.2.3", 1, 100, 0), uint64_t(BPF_FIB_LKUP_RET_FWD_DISABLED));  // lo
  EXPECT_EQ(int64_t(lookup("10.1.2.3", 77, 100, 0)), -ENODEV);
  // bpf_check_mtu against ifindex 2 (1500 + ETH_HLEN).
  uint32_t* mtu = reinterpret_cast<uint32_t*>(stack + 100);
  *mtu = 1500;
  EXPECT_EQ(call(BPF_FUNC_check_mtu, ctx(), 2, addr(mtu), 0, 0), uint64_t(BPF_MTU_CHK_RET_SUCCESS));
  *mtu = 1501;
  EXPECT_EQ(call(BPF_FUNC_check_mtu, ctx(), 2, addr(mtu), 0, 0),
            uint64_t(BPF_MTU_CHK_RET_FRAG_NEEDED));
  EXPECT_EQ(*mtu, 1500u);
}

using Clock = Fixture;
TEST_F(Clock, RunClockWinsOverTheEnvClock) {
  // knod run --pcap-clock: a packet's capture time (Run::clock_ns) is what every time helper
  // reads; without it the env's pinned clock; jiffies at CONFIG_HZ 250 (4 ms).
  env.clock_ns = 7'000'000'000ull;
  EXPECT_EQ(call(BPF_FUNC_ktime_get_ns), 7'000'000'000ull);
  run.clock_ns = 1'700'000'000'123'456'789ull;
  EXPECT_EQ(call(BPF_FUNC_ktime_get_ns), 1'700'000'000'123'456'789ull);
  EXPECT_EQ(call(BPF_FUNC_ktime_get_boot_ns), 1'700'000'000'123'456'789ull);
  EXPECT_EQ(call(BPF_FUNC_ktime_get_coarse_ns), 1'700'000'000'123'456'789ull);
  EXPECT_EQ(call(BPF_FUNC_jiffies64), 1'700'000'000'123'456'789ull / 4'000'000);
  run.clock_ns = 0;
  EXPECT_EQ(call(BPF_FUNC_ktime_get_ns), 7'000'000'000ull);
}

using Syncookie = Fixture;
TEST_F(Syncookie, RoundTripAndMss) {
  env.clock_ns = 1'000'000'000'000ull;
  env.seed = 5;
  uint8_t* ip = stack;  // IPv4 header
  uint8_t* th = stack + 20;
  std::memset(stack, 0, 64);
  ip[0] = 0x45;
  inet_pton(AF_INET, "10.0.0.1", ip + 12);
  inet_pton(AF_INET, "10.0.0.2", ip + 16);
  th[0] = 0x30;  // sport 12345
  th[1] = 0x39;
  th[3] = 80;
  th[7] = 100;      // seq 100
  th[12] = 6 << 4;  // doff 6: one 4-byte option
  th[20] = 2;       // MSS 1400
  th[21] = 4;
  th[22] = 1400 >> 8;
  th[23] = 1400 & 0xff;
  const uint64_t r = call(BPF_FUNC_tcp_raw_gen_syncookie_ipv4, addr(ip), addr(th), 24);
  EXPECT_EQ(r >> 32, 1300u);  // largest msstab entry <= 1400
  EXPECT_EQ(int64_t(call(BPF_FUNC_tcp_raw_gen_syncookie_ipv4, addr(ip), addr(th), 20)), -EINVAL);
  // The client's ACK: seq + 1, ack = cookie + 1.
  const uint32_t cookie = uint32_t(r);
  uint32_t seq = htonl(101), ack = htonl(cookie + 1);
  std::memcpy(th + 4, &seq, 4);
  std::memcpy(th + 8, &ack, 4);
  EXPECT_EQ(call(BPF_FUNC_tcp_raw_check_syncookie_ipv4, addr(ip), addr(th)), 0u);
  // Any MSS index 0..3 in the low bits is accepted (as the kernel); index 1 + 4 is not, nor
  // a count 3 minutes off (MAX_SYNCOOKIE_AGE 2).
  for (uint32_t bad : {cookie + 4, cookie + (3u << 24)}) {
    ack = htonl(bad + 1);
    std::memcpy(th + 8, &ack, 4);
    EXPECT_EQ(int64_t(call(BPF_FUNC_tcp_raw_check_syncookie_ipv4, addr(ip), addr(th))), -EACCES);
  }
  // Other ports: the hashes differ.
  ack = htonl(cookie + 1);
  std::memcpy(th + 8, &ack, 4);
  th[3] = 81;
  EXPECT_EQ(int64_t(call(BPF_FUNC_tcp_raw_check_syncookie_ipv4, addr(ip), addr(th))), -EACCES);
}

TEST(Printk, FormatsTheKernelSubset) {
  loader::Object obj;
  obj.programs.push_back(
      {"p", "xdp", BPF_PROG_TYPE_XDP, test::prog({test::mov64_imm(0, 2), test::exit_insn()})});
  std::string got;
  Options o;
  o.trace = [&](uint32_t, std::string_view m) { got = m; };
  Runtime rt(obj, "p", o);
  vm::Run run;
  run.env = &rt.env();
  alignas(8) char fmt[64] = "a=%d b=%x c=%llu %s|%5i|%%\n";
  char str[] = "str";
  run.add_region(addr(fmt), addr(fmt) + sizeof fmt, false);
  run.add_region(addr(str), addr(str) + sizeof str, false);
  const vm::HelperFn f = helpers().fn[BPF_FUNC_trace_printk];
  uint64_t n = f(run, addr(fmt), std::strlen(fmt) + 1, uint64_t(-1), 255, addr(str));
  // 3 args at most: %s is the 4th specifier → -EINVAL.
  EXPECT_EQ(int64_t(n), -EINVAL);
  EXPECT_EQ(got, "");
  std::strcpy(fmt, "a=%d b=%x %s|%%");
  n = f(run, addr(fmt), std::strlen(fmt) + 1, uint64_t(-1), 0xffffffffffull, addr(str));
  EXPECT_EQ(got, "a=-1 b=ffffffff str|%");  // %x takes the low 32 bits
  std::strcpy(fmt, "%05d|%-4u|%X");
  n = f(run, addr(fmt), std::strlen(fmt) + 1, 42, 7, 0xabc);
  EXPECT_EQ(got, "00042|7   |ABC");
  std::strcpy(fmt, "%.2d");  // no precision in the kernel's subset
  EXPECT_EQ(int64_t(f(run, addr(fmt), std::strlen(fmt) + 1, 1, 0, 0)), -EINVAL);
  std::strcpy(fmt, "a=%d b=%lx %s");
  n = f(run, addr(fmt), std::strlen(fmt) + 1, uint64_t(-1), 0xffffffffffull, addr(str));
  EXPECT_EQ(got, "a=-1 b=ffffffffff str");
  EXPECT_EQ(n, got.size());
  std::strcpy(fmt, "%pI4 %c");
  uint8_t ipaddr[4] = {192, 168, 0, 1};
  run.add_region(addr(ipaddr), addr(ipaddr) + 4, false);
  n = f(run, addr(fmt), std::strlen(fmt) + 1, addr(ipaddr), 'Z', 0);
  EXPECT_EQ(got, "192.168.0.1 Z");
}

TEST(Runtime, VerdictsFaultsAndCounters) {
  loader::Object obj;
  obj.path = "mem";
  obj.programs.push_back(
      {"seven", "xdp", BPF_PROG_TYPE_XDP, test::prog({test::mov64_imm(0, 7), test::exit_insn()})});
  obj.programs.push_back(
      {"oob", "xdp", BPF_PROG_TYPE_XDP,
       test::prog({test::ldx(BPF_W, 2, 1, 0), test::ldx(BPF_B, 0, 2, 200), test::exit_insn()})});
  obj.programs.push_back({"meta", "xdp", BPF_PROG_TYPE_XDP,
                          test::prog({test::mov64_imm(2, -8), test::call(BPF_FUNC_xdp_adjust_meta),
                                      test::mov64_imm(0, XDP_PASS), test::exit_insn()})});
  EXPECT_THROW(Runtime(obj, "nope", {}), knod::Error);
  vm::Interpreter interp;
  alignas(64) uint8_t frame[device::kFrameSize] = {};
  uint32_t off = 256, len = 64, meta = 0, verdict = 99;
  uint64_t redirect = 5;
  uint8_t fault = 9;
  device::Batch b{1,       device::kFrameSize, frame,     &off,  &len, &meta, nullptr,
                  nullptr, &verdict,           &redirect, &fault};
  Runtime seven(obj, "seven", {});
  RunResult r = seven.run_packet(interp, b, 0, 0);
  EXPECT_EQ(r.retval, 7u);
  EXPECT_EQ(verdict, uint32_t(XDP_ABORTED));
  EXPECT_EQ(redirect, 0u);
  EXPECT_EQ(fault, 0);
  EXPECT_EQ(seven.verdict_count(XDP_ABORTED), 1u);
  Runtime oob(obj, "oob", {});
  r = oob.run_packet(interp, b, 0, 0);
  EXPECT_EQ(r.fault, vm::Fault::kOutOfBounds);
  EXPECT_EQ(fault, uint8_t(vm::Fault::kOutOfBounds));
  EXPECT_EQ(oob.fault_count(vm::Fault::kOutOfBounds), 1u);
  Runtime m(obj, "meta", {});
  r = m.run_packet(interp, b, 0, 0);
  EXPECT_EQ(verdict, uint32_t(XDP_PASS));
  EXPECT_EQ(meta, 8u);
  EXPECT_EQ(off, 256u);
  EXPECT_EQ(len, 64u);
  // A slot whose packet overlaps the tailroom is refused without running.
  len = device::kMaxPacket + 1;
  r = m.run_packet(interp, b, 0, 0);
  EXPECT_EQ(r.fault, vm::Fault::kOutOfBounds);
}

}  // namespace
}  // namespace knod::xdp

// bpf_ktime_get_ns reads CLOCK_MONOTONIC extrapolated from the TSC (xdp/mono_clock.h): over
// 5 ms (several anchors, the rate measured) every value lies between clock_gettime readings
// taken just before and after it (50 us of slack for the extrapolation) and never decreases.
TEST(MonoClock, FollowsClockMonotonicAndNeverDecreases) {
  constexpr uint64_t kSlackNs = 50'000;
  const uint64_t start = knod::xdp::mono_ns_exact();
  uint64_t prev = 0, n = 0, outside = 0;
  while (knod::xdp::mono_ns_exact() - start < 5'000'000) {
    const uint64_t before = knod::xdp::mono_ns_exact();
    const uint64_t v = knod::xdp::mono_ns();
    const uint64_t after = knod::xdp::mono_ns_exact();
    ASSERT_GE(v, prev);
    if (v + kSlackNs < before || v > after + kSlackNs) ++outside;
    prev = v;
    ++n;
  }
  EXPECT_GT(n, 1000u);
  EXPECT_EQ(outside, 0u);
}
