// Differential tests: tiny XDP programs run in knod (the interpreter and the CPU JIT) and in
// the running kernel (BPF_PROG_TEST_RUN); retval, data_out, ctx_out and map contents must be
// equal. Programs the kernel's verifier rejects must fault in knod instead. Prints "N passed,
// M failed".
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstring>
#include <functional>

#include "harness.h"
#include "insns.h"

namespace knod::xdp::test {
namespace {

struct DiffCase {
  std::string name;
  std::function<Case()> make;
  bool kernel_rejects = false;  ///< the verifier refuses it; knod must fault
};

Bytes packet(size_t n = 64) {
  Bytes p(n);
  const uint8_t eth[14] = {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00};
  std::memcpy(p.data(), eth, 14);
  for (size_t i = 14; i < n; ++i) p[i] = uint8_t(i * 7 + 3);
  return p;
}

/// r0 = helper(ctx, a2) with r1 = ctx.
Case ctx_helper(int helper, int32_t a2, size_t len = 64) {
  Case c;
  c.progs.push_back(prog({mov64_imm(2, a2), call(helper), exit_insn()}));
  c.packet = packet(len);
  return c;
}

Case csum(int from_off, int from_size, int to_off, int to_size, int32_t seed) {
  Case c;
  InsnVec p;
  ld_imm64(p, 1, 0x1122334455667788ull);
  p << stx(BPF_DW, 10, 1, -8);
  ld_imm64(p, 1, 0xaabbccddeeff0011ull);
  p << stx(BPF_DW, 10, 1, -16);
  ld_imm64(p, 1, 0x0102030405060708ull);
  p << stx(BPF_DW, 10, 1, -24);
  if (from_size)
    p << mov64_reg(1, 10) << alu64_imm(BPF_ADD, 1, from_off);
  else
    p << mov64_imm(1, 0);
  p << mov64_imm(2, from_size);
  if (to_size)
    p << mov64_reg(3, 10) << alu64_imm(BPF_ADD, 3, to_off);
  else
    p << mov64_imm(3, 0);
  p << mov64_imm(4, to_size) << mov64_imm(5, seed) << call(BPF_FUNC_csum_diff) << exit_insn();
  c.progs.push_back(p);
  c.packet = packet();
  return c;
}

Case redirect_map(uint32_t type, uint32_t key, int32_t flags, bool with_entry) {
  Case c;
  MapInit m;
  m.def = {type, 4, 4, 4, 0, -1};
  if (with_entry) m.entries.push_back({Bytes{0, 0, 0, 0}, Bytes{1, 0, 0, 0}});  // ifindex 1 (lo)
  c.maps.push_back(m);
  InsnVec p;
  ld_map(p, 1, 0);
  p << mov64_imm(2, int32_t(key)) << mov64_imm(3, flags) << call(BPF_FUNC_redirect_map)
    << exit_insn();
  c.progs.push_back(p);
  c.packet = packet();
  return c;
}

Case bytes_op(int helper, int32_t off, int32_t len) {
  Case c;
  InsnVec p;
  ld_imm64(p, 2, 0xa1a2a3a4a5a6a7a8ull);
  p << stx(BPF_DW, 10, 2, -8) << mov64_imm(2, off) << mov64_reg(3, 10) << alu64_imm(BPF_ADD, 3, -8)
    << mov64_imm(4, len) << call(helper) << exit_insn();
  c.progs.push_back(p);
  c.packet = packet();
  return c;
}

constexpr int32_t kLoadAcquire = 0x100;   // BPF_LOAD_ACQ
constexpr int32_t kStoreRelease = 0x110;  // BPF_STORE_REL

/// A load-acquire (dst = *(src + off)) or store-release (*(dst + off) = src) of `size`.
Insn acq_rel(int size, int32_t op, int dst, int src, int16_t off) {
  return insn(uint8_t(BPF_STX | BPF_ATOMIC | size), uint8_t(dst), uint8_t(src), off, op);
}

Case map_ops(uint32_t type, std::function<void(InsnVec&)> body) {
  Case c;
  c.maps.push_back({{type, 4, 8, 4, 0, -1}, {}});
  InsnVec p;
  body(p);
  c.progs.push_back(p);
  c.packet = packet();
  return c;
}

/// key at fp-4, value at fp-16; r1 = map, r2 = &key, r3 = &value, r4 = flags.
void update(InsnVec& p, int32_t key, int32_t value, int32_t flags) {
  p << st(BPF_W, 10, -4, key) << st(BPF_DW, 10, -16, value);
  ld_map(p, 1, 0);
  p << mov64_reg(2, 10) << alu64_imm(BPF_ADD, 2, -4) << mov64_reg(3, 10)
    << alu64_imm(BPF_ADD, 3, -16) << mov64_imm(4, flags) << call(BPF_FUNC_map_update_elem);
}

Case check_mtu(int32_t ifindex, int32_t mtu_in, int32_t len_diff, int32_t flags, bool ret_mtu) {
  Case c;
  InsnVec p;
  p << st(BPF_W, 10, -4, mtu_in) << mov64_imm(2, ifindex) << mov64_reg(3, 10)
    << alu64_imm(BPF_ADD, 3, -4) << mov64_imm(4, len_diff) << mov64_imm(5, flags)
    << call(BPF_FUNC_check_mtu);
  if (ret_mtu) p << ldx(BPF_W, 0, 10, -4);
  p << exit_insn();
  c.progs.push_back(p);
  c.packet = packet();
  return c;
}

/// `high`: return r0 >> 32, the high half of bpf_loop's result (test_run's retval is 32 bits).
Case loop(int32_t n, int32_t stop_at, int32_t flags, bool high = false) {
  Case c;
  InsnVec p;
  p << mov64_imm(1, n);
  ld_imm64(p, 2, high ? 6 : 5, BPF_PSEUDO_FUNC);  // callback: insn 1 + 1 + 5 (+ 1) = 7 (8)
  p << mov64_imm(3, 0) << mov64_imm(4, flags) << call(BPF_FUNC_loop);
  if (high) p << alu64_imm(BPF_RSH, 0, 32);
  p << exit_insn();
  // callback(index, ctx): 1 when index == stop_at
  p << mov64_imm(0, 0) << jmp_imm(BPF_JNE, 1, stop_at, 1) << mov64_imm(0, 1) << exit_insn();
  c.progs.push_back(p);
  c.subprogs = {high ? 8u : 7u};
  c.packet = packet();
  return c;
}

/// bpf_for_each_map_elem over map 0 with a callback that adds 1 to each value and returns
/// `stop` (0: continue, 1: stop).
Case for_each(uint32_t type, std::vector<std::pair<Bytes, Bytes>> entries, int32_t stop,
              int32_t flags) {
  Case c;
  c.maps.push_back({{type, 4, 8, 4, 0, -1}, std::move(entries)});
  InsnVec p;
  ld_map(p, 1, 0);
  ld_imm64(p, 2, 5, BPF_PSEUDO_FUNC);  // callback: insn 2 + 1 + 5 = 8
  p << mov64_imm(3, 0) << mov64_imm(4, flags) << call(BPF_FUNC_for_each_map_elem) << exit_insn();
  p << ldx(BPF_DW, 0, 3, 0) << alu64_imm(BPF_ADD, 0, 1) << stx(BPF_DW, 3, 0, 0)
    << mov64_imm(0, stop) << exit_insn();
  c.progs.push_back(p);
  c.subprogs = {8};
  c.packet = packet();
  return c;
}

Case tail_call(int32_t index, bool fill) {
  Case c;
  c.maps.push_back({{BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0, -1}, {}});
  InsnVec p;
  ld_map(p, 2, 0);
  p << mov64_imm(3, index) << call(BPF_FUNC_tail_call) << mov64_imm(0, 9) << exit_insn();
  c.progs.push_back(p);
  c.progs.push_back(prog({mov64_imm(0, 3), exit_insn()}));
  if (fill) c.prog_slots.push_back({0, 1, 1});
  c.packet = packet();
  return c;
}

Case printk(const char* fmt, size_t fmt_size, int64_t a1, int64_t a2) {
  Case c;
  InsnVec p;
  char buf[32] = {};
  std::memcpy(buf, fmt, std::min<size_t>(std::strlen(fmt) + 1, sizeof buf));
  for (int i = 0; i < 4; ++i) {
    uint64_t w;
    std::memcpy(&w, buf + 8 * i, 8);
    ld_imm64(p, 1, w);
    p << stx(BPF_DW, 10, 1, int16_t(-32 + 8 * i));
  }
  p << mov64_reg(1, 10) << alu64_imm(BPF_ADD, 1, -32) << mov64_imm(2, int32_t(fmt_size));
  ld_imm64(p, 3, uint64_t(a1));
  ld_imm64(p, 4, uint64_t(a2));
  p << mov64_imm(5, 77) << call(BPF_FUNC_trace_printk) << exit_insn();
  c.progs.push_back(p);
  c.packet = packet();
  return c;
}

Case fib(int32_t plen, uint8_t family, int32_t flags) {
  Case c;
  InsnVec p;
  for (int off = -64; off < 0; off += 8) p << st(BPF_DW, 10, int16_t(off), 0);
  p << st(BPF_B, 10, -64, family) << st(BPF_W, 10, -56, 1) << mov64_reg(2, 10)
    << alu64_imm(BPF_ADD, 2, -64) << mov64_imm(3, plen) << mov64_imm(4, flags)
    << call(BPF_FUNC_fib_lookup) << exit_insn();
  c.progs.push_back(p);
  c.packet = packet();
  return c;
}

Case ring(int32_t size, int32_t flags) {
  Case c;
  c.maps.push_back({{BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0, -1}, {}});
  InsnVec p;
  p << st(BPF_DW, 10, -8, 0x55) << st(BPF_DW, 10, -16, 0x66);
  ld_map(p, 1, 0);
  p << mov64_reg(2, 10) << alu64_imm(BPF_ADD, 2, -16) << mov64_imm(3, size) << mov64_imm(4, flags)
    << call(BPF_FUNC_ringbuf_output) << exit_insn();
  c.progs.push_back(p);
  c.packet = packet();
  return c;
}

/// A program that counts its runs in array map 0 and tail-calls PROG_ARRAY map 1: first the
/// empty slot 1 (when try_empty), then slot 0 (itself). Kernel 6.18 stops after
/// MAX_TAIL_CALL_CNT (33) taken tail calls (34 runs); attempts on empty slots do not count.
Case tail_chain(bool try_empty, bool dynamic_key = false) {
  Case c;
  c.maps.push_back({{BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0, -1}, {}});
  c.maps.push_back({{BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 2, 0, -1}, {}});
  InsnVec p;
  p << mov64_reg(6, 1) << st(BPF_W, 10, -4, 0);
  ld_map(p, 1, 0);
  p << mov64_reg(2, 10) << alu64_imm(BPF_ADD, 2, -4) << call(BPF_FUNC_map_lookup_elem)
    << jmp_imm(BPF_JEQ, 0, 0, 3) << ldx(BPF_DW, 1, 0, 0) << alu64_imm(BPF_ADD, 1, 1)
    << stx(BPF_DW, 0, 1, 0);
  for (int slot : {1, 0}) {
    if (slot == 1 && !try_empty) continue;
    p << mov64_reg(1, 6);
    ld_map(p, 2, 1);
    if (dynamic_key)  // rx_queue_index (0) + slot: unknown to the verifier
      p << ldx(BPF_W, 3, 6, 16) << alu64_imm(BPF_ADD, 3, slot) << mov64_reg(1, 6);
    else
      p << mov64_imm(3, slot);
    p << call(BPF_FUNC_tail_call);
  }
  p << mov64_imm(0, 2) << exit_insn();
  c.progs.push_back(p);
  c.prog_slots.push_back({1, 0, 0});
  c.packet = packet();
  return c;
}

std::vector<DiffCase> cases() {
  std::vector<DiffCase> v;
  auto add = [&](std::string n, std::function<Case()> f, bool rej = false) {
    for (char& ch : n)
      if (ch == '-') ch = 'm';  // gtest names: [A-Za-z0-9_]
    v.push_back({std::move(n), std::move(f), rej});
  };
  auto ctx_field = [](int16_t off) {
    Case c;
    c.progs.push_back(prog({ldx(BPF_W, 0, 1, off), exit_insn()}));
    c.packet = packet();
    return c;
  };
  add("ctx_ingress_ifindex", [=] { return ctx_field(12); });
  add("ctx_rx_queue_index", [=] { return ctx_field(16); });
  add("ctx_len", [] {
    Case c;
    c.progs.push_back(prog({ldx(BPF_W, 2, 1, 0), ldx(BPF_W, 3, 1, 4), mov64_reg(0, 3),
                            alu64_reg(BPF_SUB, 0, 2), exit_insn()}));
    c.packet = packet(77);
    return c;
  });
  for (uint32_t meta : {0u, 8u, 32u}) {
    add("ctx_meta_len_" + std::to_string(meta), [=] {
      Case c;
      c.progs.push_back(prog({ldx(BPF_W, 2, 1, 8), ldx(BPF_W, 3, 1, 0), mov64_reg(0, 3),
                              alu64_reg(BPF_SUB, 0, 2), exit_insn()}));
      c.packet = packet(64 + meta);
      c.with_ctx = true;
      c.ctx_meta = meta;
      return c;
    });
  }
  add(
      "ctx_store_rejected",
      [] {
        Case c;
        c.progs.push_back(prog({st(BPF_W, 1, 12, 5), mov64_imm(0, 2), exit_insn()}));
        c.packet = packet();
        return c;
      },
      true);
  add(
      "ctx_narrow_load_rejected",
      [] {
        Case c;
        c.progs.push_back(prog({ldx(BPF_B, 0, 1, 12), exit_insn()}));
        c.packet = packet();
        return c;
      },
      true);
  add(
      "ctx_offset_24_rejected", [=] { return ctx_field(24); }, true);
  add(
      "packet_oob_rejected",
      [] {
        Case c;
        c.progs.push_back(prog({ldx(BPF_W, 2, 1, 0), ldx(BPF_B, 0, 2, 100), exit_insn()}));
        c.packet = packet();
        return c;
      },
      true);
  add("packet_read_checked", [] {
    Case c;
    c.progs.push_back(
        prog({ldx(BPF_W, 2, 1, 0), ldx(BPF_W, 3, 1, 4), mov64_reg(4, 2), alu64_imm(BPF_ADD, 4, 20),
              mov64_imm(0, 1), jmp_reg(BPF_JGT, 4, 3, 1), ldx(BPF_B, 0, 2, 19), exit_insn()}));
    c.packet = packet();
    return c;
  });
  add("retval_7", [] {
    Case c;
    c.progs.push_back(prog({mov64_imm(0, 7), exit_insn()}));
    c.packet = packet();
    return c;
  });
  for (int off : {-256, -217, -216, -100, -1, 0, 1, 50, 51, 1000})
    add("adjust_head_" + std::to_string(off),
        [=] { return ctx_helper(BPF_FUNC_xdp_adjust_head, off); });
  for (int off : {-208, -209}) {
    add("adjust_head_meta8_" + std::to_string(off), [=] {
      Case c = ctx_helper(BPF_FUNC_xdp_adjust_head, off, 72);
      c.with_ctx = true;
      c.ctx_meta = 8;
      return c;
    });
  }
  for (int off : {-4, -32, -36, -64, -216, -217, -252, -256, -3, 4, 0})
    add("adjust_meta_" + std::to_string(off),
        [=] { return ctx_helper(BPF_FUNC_xdp_adjust_meta, off); });
  for (int off : {1, -1, 16, 3456, 3457, -50, -51, 0})
    add("adjust_tail_" + std::to_string(off),
        [=] { return ctx_helper(BPF_FUNC_xdp_adjust_tail, off); });
  add("get_buff_len", [] { return ctx_helper(BPF_FUNC_xdp_get_buff_len, 0, 99); });
  add("csum_diff_4_4", [] { return csum(-16, 4, -8, 4, 0); });
  add("csum_diff_8_8_seed", [] { return csum(-16, 8, -8, 8, 0x1234); });
  add("csum_diff_to_only", [] { return csum(0, 0, -8, 8, 0xffff); });
  add("csum_diff_from_only", [] { return csum(-16, 8, 0, 0, 0); });
  add("csum_diff_none_seed", [] { return csum(0, 0, 0, 0, int32_t(0xdeadbeef)); });
  add("csum_diff_same", [] { return csum(-8, 8, -8, 8, 0); });
  add("csum_diff_to_6", [] { return csum(0, 0, -8, 6, 0); });
  add("csum_diff_from_3_to_5", [] { return csum(-16, 3, -8, 5, 7); });
  add("csum_diff_24", [] { return csum(-24, 24, 0, 0, -1); });
  add("redirect_ok", [] {
    Case c;
    c.progs.push_back(
        prog({mov64_imm(1, 5), mov64_imm(2, 0), call(BPF_FUNC_redirect), exit_insn()}));
    c.packet = packet();
    return c;
  });
  add("redirect_flags", [] {
    Case c;
    c.progs.push_back(
        prog({mov64_imm(1, 5), mov64_imm(2, 1), call(BPF_FUNC_redirect), exit_insn()}));
    c.packet = packet();
    return c;
  });
  for (int32_t flags : {0, 1, 2, 3, 8, 0x10, 0x12, 0x18, 0x21, 4})
    add("redirect_map_devmap_missing_f" + std::to_string(flags),
        [=] { return redirect_map(BPF_MAP_TYPE_DEVMAP, 1, flags, false); });
  add("redirect_map_devmap_hit", [] { return redirect_map(BPF_MAP_TYPE_DEVMAP, 0, 2, true); });
  add("redirect_map_devmap_key_oob", [] { return redirect_map(BPF_MAP_TYPE_DEVMAP, 9, 1, true); });
  add("redirect_map_devmap_hash_missing",
      [] { return redirect_map(BPF_MAP_TYPE_DEVMAP_HASH, 7, 3, false); });
  for (int32_t flags : {3, 8})
    add("redirect_map_cpumap_missing_f" + std::to_string(flags),
        [=] { return redirect_map(BPF_MAP_TYPE_CPUMAP, 1, flags, false); });
  add("redirect_map_xskmap_missing", [] { return redirect_map(BPF_MAP_TYPE_XSKMAP, 1, 2, false); });
  for (auto [off, len] :
       std::vector<std::pair<int, int>>{{0, 4}, {60, 4}, {61, 4}, {0x10000, 4}, {-1, 4}})
    add("load_bytes_" + std::to_string(off) + "_" + std::to_string(len),
        [=] { return bytes_op(BPF_FUNC_xdp_load_bytes, off, len); });
  for (auto [off, len] : std::vector<std::pair<int, int>>{{2, 8}, {56, 8}, {57, 8}, {0x10000, 4}})
    add("store_bytes_" + std::to_string(off) + "_" + std::to_string(len),
        [=] { return bytes_op(BPF_FUNC_xdp_store_bytes, off, len); });
  add("hash_update_lookup", [] {
    return map_ops(BPF_MAP_TYPE_HASH, [](InsnVec& p) {
      update(p, 1, 100, BPF_ANY);
      update(p, 2, 200, BPF_ANY);
      update(p, 1, 111, BPF_NOEXIST);  // -EEXIST
      p << mov64_reg(6, 0);
      update(p, 3, 300, BPF_EXIST);  // -ENOENT
      p << alu64_imm(BPF_LSH, 6, 8) << alu64_reg(BPF_OR, 6, 0);
      p << st(BPF_W, 10, -4, 9);
      ld_map(p, 1, 0);
      p << mov64_reg(2, 10) << alu64_imm(BPF_ADD, 2, -4) << call(BPF_FUNC_map_delete_elem)
        << alu64_imm(BPF_LSH, 6, 8) << alu64_reg(BPF_OR, 6, 0) << mov64_reg(0, 6) << exit_insn();
    });
  });
  // A full LRU map: an update takes a node (evicting the least recently used key) before it
  // looks at the key and the flags (htab_lru_map_update_elem), so even an update that fails
  // or replaces its key leaves one key fewer. The map dump is compared.
  for (auto [name, flags] : std::vector<std::pair<const char*, int32_t>>{
           {"any", BPF_ANY}, {"noexist", BPF_NOEXIST}, {"exist", BPF_EXIST}})
    for (int32_t key : {101, 200})
      add(std::string("lru_full_update_") + name + (key == 101 ? "_hit" : "_miss"), [=] {
        return map_ops(BPF_MAP_TYPE_LRU_HASH, [=](InsnVec& p) {
          for (int32_t k = 100; k < 104; ++k) update(p, k, k, BPF_ANY);
          update(p, key, 0x37, flags);
          p << exit_insn();
        });
      });
  // A replaced key's new node is referenced (htab_lru_map_update_elem: bpf_lru_node_set_ref),
  // so the cold inserts after it evict the others first.
  add("lru_replace_then_inserts", [] {
    return map_ops(BPF_MAP_TYPE_LRU_HASH, [](InsnVec& p) {
      for (int32_t k = 100; k < 103; ++k) update(p, k, k, BPF_ANY);  // 3 of 4: no eviction
      update(p, 100, 0x37, BPF_ANY);
      for (int32_t k = 103; k < 108; ++k) update(p, k, k, BPF_ANY);
      p << exit_insn();
    });
  });
  add("array_update_errors", [] {
    return map_ops(BPF_MAP_TYPE_ARRAY, [](InsnVec& p) {
      update(p, 1, 100, BPF_ANY);
      update(p, 2, 200, BPF_NOEXIST);  // -EEXIST
      p << mov64_reg(6, 0);
      update(p, 4, 300, BPF_ANY);  // -E2BIG
      p << alu64_imm(BPF_LSH, 6, 8) << alu64_reg(BPF_OR, 6, 0);
      p << st(BPF_W, 10, -4, 0);
      ld_map(p, 1, 0);
      p << mov64_reg(2, 10) << alu64_imm(BPF_ADD, 2, -4) << call(BPF_FUNC_map_delete_elem)
        << alu64_imm(BPF_LSH, 6, 8) << alu64_reg(BPF_OR, 6, 0) << mov64_reg(0, 6) << exit_insn();
    });
  });
  // Load-acquire / store-release (kernel 6.15+: BPF_STX | BPF_ATOMIC, imm BPF_LOAD_ACQ 0x100
  // reads [src + off] into dst zero-extended, BPF_STORE_REL 0x110 writes src to [dst + off]):
  // every size on the stack, and through an array map value (the map dump compared too).
  add("load_acquire_store_release_stack", [] {
    Case c;
    InsnVec p;
    p << st(BPF_DW, 10, -16, 0) << st(BPF_DW, 10, -24, 0);  // every byte read is written
    ld_imm64(p, 1, 0x8877665544332211ull);
    p << acq_rel(BPF_DW, kStoreRelease, 10, 1, -8) << acq_rel(BPF_B, kStoreRelease, 10, 1, -9)
      << acq_rel(BPF_H, kStoreRelease, 10, 1, -12) << acq_rel(BPF_W, kStoreRelease, 10, 1, -20)
      << mov64_imm(0, 0);
    const std::pair<int, int16_t> loads[] = {{BPF_B, -8},   {BPF_H, -12}, {BPF_W, -20},
                                             {BPF_DW, -16}, {BPF_DW, -8}, {BPF_B, -9}};
    for (auto [size, off] : loads)  // r0 = r0 * 31 + load-acquire(fp + off)
      p << acq_rel(size, kLoadAcquire, 2, 10, off) << alu64_imm(BPF_MUL, 0, 31)
        << alu64_reg(BPF_ADD, 0, 2);
    p << mov64_reg(1, 0) << alu64_imm(BPF_RSH, 1, 32) << alu64_reg(BPF_XOR, 0, 1) << exit_insn();
    c.progs.push_back(p);
    c.packet = packet();
    return c;
  });
  add("load_acquire_store_release_map_value", [] {
    return map_ops(BPF_MAP_TYPE_ARRAY, [](InsnVec& p) {
      p << st(BPF_W, 10, -4, 2);
      ld_map(p, 1, 0);
      p << mov64_reg(2, 10) << alu64_imm(BPF_ADD, 2, -4) << call(BPF_FUNC_map_lookup_elem)
        << jmp_imm(BPF_JEQ, 0, 0, 8) << mov64_imm(1, 0x1234567) << alu64_imm(BPF_LSH, 1, 20)
        << acq_rel(BPF_DW, kStoreRelease, 0, 1, 0) << acq_rel(BPF_H, kStoreRelease, 0, 1, 2)
        << acq_rel(BPF_W, kLoadAcquire, 3, 0, 4) << acq_rel(BPF_B, kLoadAcquire, 4, 0, 1)
        << alu64_reg(BPF_ADD, 3, 4) << mov64_reg(0, 3) << exit_insn();
    });
  });
  add("array_lookup_write", [] {
    return map_ops(BPF_MAP_TYPE_ARRAY, [](InsnVec& p) {
      p << st(BPF_W, 10, -4, 3);
      ld_map(p, 1, 0);
      p << mov64_reg(2, 10) << alu64_imm(BPF_ADD, 2, -4) << call(BPF_FUNC_map_lookup_elem)
        << jmp_imm(BPF_JEQ, 0, 0, 2) << st(BPF_DW, 0, 0, 0x4242) << mov64_imm(0, 2) << exit_insn();
    });
  });
  add("queue_push_pop", [] {
    Case c;
    c.maps.push_back({{BPF_MAP_TYPE_QUEUE, 0, 8, 2, 0, -1}, {}});
    InsnVec p;
    for (int v : {5, 6, 7}) {
      p << st(BPF_DW, 10, -8, v);
      ld_map(p, 1, 0);
      p << mov64_reg(2, 10) << alu64_imm(BPF_ADD, 2, -8) << mov64_imm(3, 0)
        << call(BPF_FUNC_map_push_elem);
    }
    p << mov64_reg(6, 0);  // third push: -E2BIG
    ld_map(p, 1, 0);
    p << mov64_reg(2, 10) << alu64_imm(BPF_ADD, 2, -8) << call(BPF_FUNC_map_pop_elem)
      << ldx(BPF_DW, 0, 10, -8) << alu64_imm(BPF_LSH, 6, 8) << alu64_reg(BPF_OR, 0, 6)
      << exit_insn();
    c.progs.push_back(p);
    c.packet = packet();
    return c;
  });
  // Pop/peek on an empty QUEUE/STACK: -ENOENT and the value zeroed (__queue_map_get).
  for (uint32_t type : {BPF_MAP_TYPE_QUEUE, BPF_MAP_TYPE_STACK})
    for (int helper : {BPF_FUNC_map_pop_elem, BPF_FUNC_map_peek_elem})
      add(std::string(type == BPF_MAP_TYPE_QUEUE ? "queue" : "stack") +
              (helper == BPF_FUNC_map_pop_elem ? "_pop" : "_peek") + "_empty_zeroes",
          [=] {
            Case c;
            c.maps.push_back({{type, 0, 8, 2, 0, -1}, {}});
            InsnVec p;
            p << st(BPF_DW, 10, -8, 0x55555555);
            ld_map(p, 1, 0);
            p << mov64_reg(2, 10) << alu64_imm(BPF_ADD, 2, -8) << call(helper)
              << ldx(BPF_DW, 6, 10, -8) << alu64_reg(BPF_ADD, 0, 6)  // -ENOENT + value
              << exit_insn();
            c.progs.push_back(p);
            c.packet = packet();
            return c;
          });
  add("trace_printk_len", [] { return printk("x=%d y=%x %s\n", 16, -5, 255); });
  add("trace_printk_ll", [] { return printk("%lld %llx|%5u|", 16, -5, 0x1234567890); });
  add("trace_printk_no_nul", [] { return printk("abcdefgh", 8, 0, 0); });
  add("trace_printk_bad_spec", [] { return printk("%f\n", 4, 0, 0); });
  add("trace_printk_pct", [] { return printk("100%% %c", 8, 'A', 0); });
  add("check_mtu_lo", [] { return check_mtu(0, 0, 0, 0, true); });
  add("check_mtu_ret", [] { return check_mtu(0, 0, 0, 0, false); });
  add("check_mtu_frag", [] { return check_mtu(0, 65600, 0, 0, false); });
  add("check_mtu_diff", [] { return check_mtu(0, 0, 65536, 0, false); });
  add("check_mtu_nodev", [] { return check_mtu(12345, 0, 0, 0, false); });
  add("check_mtu_flags", [] { return check_mtu(0, 0, 0, 1, false); });
  add("loop_stop", [] { return loop(10, 5, 0); });
  add("loop_all", [] { return loop(10, 50, 0); });
  add("loop_zero", [] { return loop(0, 50, 0); });
  add("loop_e2big", [] { return loop((1 << 23) + 1, 0, 0); });
  add("loop_flags", [] { return loop(3, 0, 1); });
  // The high halves (helper-54): flags 0 inlines the loop, whose -E2BIG is a 32-bit move (high
  // half 0); flags 1 calls the helper, whose -EINVAL is sign-extended (0xffffffff).
  add("loop_e2big_high", [] { return loop((1 << 23) + 1, 0, 0, true); });
  add("loop_flags_high", [] { return loop(3, 0, 1, true); });
  const Bytes k1{1, 0, 0, 0}, k3{3, 0, 0, 0}, v5{5, 0, 0, 0, 0, 0, 0, 0};
  add("for_each_array", [] { return for_each(BPF_MAP_TYPE_ARRAY, {}, 0, 0); });
  add("for_each_array_stop", [] { return for_each(BPF_MAP_TYPE_ARRAY, {}, 1, 0); });
  add("for_each_hash", [=] { return for_each(BPF_MAP_TYPE_HASH, {{k1, v5}, {k3, v5}}, 0, 0); });
  add("for_each_hash_empty", [] { return for_each(BPF_MAP_TYPE_HASH, {}, 0, 0); });
  add("for_each_flags", [] { return for_each(BPF_MAP_TYPE_ARRAY, {}, 0, 1); });
  add("tail_call_limit", [] { return tail_chain(false); });
  add("tail_call_limit_empty_slot_first", [] { return tail_chain(true); });
  add("tail_call_limit_dynamic_key", [] { return tail_chain(true, true); });
  add("tail_call_hit", [] { return tail_call(1, true); });
  add("tail_call_empty", [] { return tail_call(1, false); });
  add("tail_call_oob", [] { return tail_call(7, true); });
  add("fib_plen_small", [] { return fib(60, AF_INET, 0); });
  add("fib_family", [] { return fib(64, 99, 0); });
  add("fib_flags", [] { return fib(64, AF_INET, 0x80); });
  add("ringbuf_output", [] { return ring(16, 0); });
  add("ringbuf_output_flags", [] { return ring(16, 4); });
  // bpf_ringbuf_query after one 16-byte record: AVAIL_DATA 24 (8-byte header), RING_SIZE 4096,
  // CONS_POS 0, PROD_POS 24, an unknown flag 0. Returned as a sum of distinct shifts.
  add("ringbuf_query", [] {
    Case c = ring(16, 0);
    InsnVec& p = c.progs[0];
    p.pop_back();  // exit
    p << mov64_imm(6, 0);
    for (int32_t flag : {0, 1, 2, 3, 9}) {
      ld_map(p, 1, 0);
      p << mov64_imm(2, flag) << call(BPF_FUNC_ringbuf_query) << alu64_imm(BPF_LSH, 0, 6 * flag)
        << alu64_reg(BPF_ADD, 6, 0);
    }
    p << mov64_reg(0, 6) << exit_insn();
    return c;
  });
  return v;
}

int g_passed = 0, g_failed = 0;

class Diff : public ::testing::TestWithParam<DiffCase> {
 protected:
  static void SetUpTestSuite() { have_kernel_ = kernel_available(&why_); }
  static bool have_kernel_;
  static std::string why_;
};
bool Diff::have_kernel_ = false;
std::string Diff::why_;

std::string hex(const Bytes& b) {
  std::string s;
  char t[4];
  for (uint8_t x : b) {
    std::snprintf(t, sizeof t, "%02x", x);
    s += t;
  }
  return s;
}

// Every path against the kernel: the reference interpreter, the CPU JIT (which inlines some
// helpers, e.g. bpf_xdp_adjust_head/meta, and proves packet accesses) packet by packet, and
// the JIT's compiled slot loop as the CPU device runs it.
TEST_P(Diff, SameAsKernel) {
  if (!have_kernel_) GTEST_SKIP() << "kernel oracle unavailable: " << why_;
  const DiffCase& dc = GetParam();
  Case c = dc.make();
  Outcome k = run_kernel(c);
  struct Count {
    ~Count() { (::testing::Test::HasFailure() ? g_failed : g_passed)++; }
  } count;
  for (Engine e : {Engine::kInterp, Engine::kJit, Engine::kCpu}) {
    SCOPED_TRACE(e == Engine::kInterp ? "knod interpreter"
                 : e == Engine::kJit  ? "knod JIT, run_packet"
                                      : "knod JIT, run_packets (the CPU device's slot loop)");
    Outcome n = run_knod(c, e);
    // The CPU device's path reports the verdict: the kernel's retval as one.
    const uint32_t kretval =
        e != Engine::kCpu || k.retval <= XDP_REDIRECT ? k.retval : uint32_t(XDP_ABORTED);
    if (dc.kernel_rejects) {
      EXPECT_FALSE(k.loaded) << "kernel accepted a program expected to be rejected";
      EXPECT_NE(n.fault, vm::Fault::kNone) << "knod ran it without a fault, retval " << n.retval;
      continue;
    }
    ASSERT_TRUE(k.loaded) << k.error;
    ASSERT_TRUE(n.loaded) << n.error;
    EXPECT_EQ(k.run_err, 0);
    EXPECT_EQ(n.fault, vm::Fault::kNone) << vm::fault_name(n.fault);
    EXPECT_EQ(n.retval, kretval) << "knod " << int32_t(n.retval) << " kernel " << int32_t(k.retval);
    EXPECT_EQ(hex(n.data_out), hex(k.data_out));
    if (c.with_ctx) {
      EXPECT_EQ(n.ctx_data, k.ctx_data);
      EXPECT_EQ(n.ctx_data_end, k.ctx_data_end);
    }
    EXPECT_EQ(n.map_dump, k.map_dump);
  }
}

INSTANTIATE_TEST_SUITE_P(Xdp, Diff, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

class Summary : public ::testing::Environment {
 public:
  void TearDown() override {
    if (g_passed + g_failed)
      std::printf("differential: %d passed, %d failed\n", g_passed, g_failed);
  }
};
const auto* g_env = ::testing::AddGlobalTestEnvironment(new Summary);

}  // namespace
}  // namespace knod::xdp::test
