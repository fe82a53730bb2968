// Range analysis (see safety.h): abstract interpretation of each subprogram to a fixpoint.
#include "jit/safety.h"

#include <algorithm>
#include <deque>
#include <initializer_list>
#include <optional>
#include <utility>

#include "jit/cfg.h"
#include "jit/frame_zero.h"

namespace knod::jit {
namespace {

enum class K : uint8_t {
  kUnknown,
  kScalar,
  kFp,
  kCtx,
  kPkt,
  kPktEnd,
  kPktMeta,       // data_meta + x, x in [lo, hi] (constant offsets only)
  kPktOrNull,     // a kPkt (its fields) or NULL: a join of the two (`p = ok ? data + n : NULL`)
  kMapPtr,        // an ld_imm64 naming maps[map]
  kMapValOrNull,  // bpf_map_lookup_elem result: value of maps[map] + lo, or NULL
  kMapVal,        // value of maps[map] (or of several maps: map -1) + x, x in [lo, hi]
  kAnchored,      // some packet or map value pointer of those above (a join of two): not the stack
};

// kScalar: unsigned value in [lo, hi]. kFp/kCtx: base + lo (lo == hi). kPkt: data + x with
// x in [lo, hi] (joins of different constant offsets, bounded variable offsets). kPktMeta:
// data_meta + x, proven below data by `meta + x > data` tests (the kernel's
// PTR_TO_PACKET_META, whose range is against data: check_packet_access). kMapValOrNull
// carries `id` (1 + pc of its call) so that a NULL test on one copy types all of them.
// kPktOrNull: the join of a packet pointer and the constant 0 (a parser's `return NULL`); a
// NULL test on that register gives back the packet pointer with what was proven about it
// (packet addresses are never 0). Only the tested register: copies are not linked.
// Map values carry the bytes they have (`size`) and whether stores are allowed (`ro`), so
// that a join of values of two maps (clang merges identical tails) still proves accesses.
// A packet pointer with a variable offset (data + ihl * 4...) gets an `id` (1 + pc of the add
// that made it) shared by its copies, its constant offset `c` from that base B, and in `size`
// the bytes proven after B (B + size <= data_end), learnt from `B + c > data_end` tests:
// the kernel verifier's reg->id / reg->range (find_good_pkt_pointers).
struct Val {
  K k = K::kUnknown;
  int64_t lo = 0, hi = 0;
  int32_t map = -1;
  uint32_t id = 0;
  int64_t size = 0;
  bool ro = false;
  int64_t c = 0;
  bool operator==(const Val&) const = default;
};

/// An 8-byte stack slot holding a tracked value: a register spilled with `stxdw [r10 + off]`
/// and filled back with `ldxdw` from the same offset (the kernel's spilled_ptr).
struct Slot {
  int32_t off;  ///< below r10, a multiple of 8
  Val v;
  bool operator==(const Slot&) const = default;
};

struct State {
  Val r[kNumRegs];
  std::vector<Slot> slots;  ///< sorted by off
  int64_t pkt_range = 0;    ///< data + pkt_range <= data_end holds
  int64_t meta_range = 0;   ///< data_meta + meta_range <= data holds
  /// A stack address became unknown at a join on some path here (the frame bytes it reaches
  /// are no longer known: frame_reach).
  bool fp_lost = false;
  bool operator==(const State&) const = default;
};

constexpr int64_t kMaxOff = 1 << 16;       ///< packet offsets tracked (MAX_PACKET_OFF)
constexpr int64_t kMaxScalar = 1ll << 40;  ///< scalar bounds tracked
constexpr int kWidenAfter = 8;             ///< visits of a pc before joins stop widening
constexpr int64_t kXdpMdBytes = 24;        ///< sizeof(struct xdp_md): past it, not the ctx
constexpr int64_t kLost = kStackSize + 1;  ///< frame_reach: any byte of the frame, unknown which

Val scalar(int64_t lo, int64_t hi) {
  if (lo < 0 || hi > kMaxScalar || lo > hi) return Val{};
  return Val{K::kScalar, lo, hi};
}

Val offset(Val v, int64_t dlo, int64_t dhi) {
  switch (v.k) {
    case K::kScalar:
      return scalar(v.lo + dlo, v.hi + dhi);
    case K::kFp:
    case K::kCtx:
      if (dlo != dhi || v.lo + dlo > kMaxOff || v.lo + dlo < -kMaxOff) return Val{};
      return Val{v.k, v.lo + dlo, v.lo + dlo};
    case K::kPkt:
    case K::kPktMeta:
    case K::kMapVal:
      if (v.lo + dlo < -kMaxOff || v.hi + dhi > kMaxOff) return Val{};
      v.lo += dlo;
      v.hi += dhi;
      if (v.k == K::kPkt && v.id) {
        if (dlo != dhi) return Val{};  // a new variable part: step_alu gives a new id
        v.c += dlo;
      }
      return v;
    default:
      return Val{};
  }
}

/// A pointer into a packet (data, data_meta, data_end or p-or-NULL) or a map value, at a
/// bounded offset (offset() keeps these within kMaxOff): not a stack address.
bool anchored_off_stack(const Val& v) {
  return v.k == K::kPkt || v.k == K::kPktEnd || v.k == K::kPktMeta || v.k == K::kPktOrNull ||
         v.k == K::kMapVal || v.k == K::kMapValOrNull || v.k == K::kAnchored;
}

Val join(const Val& a, const Val& b, bool widen) {
  if (a == b) return a;
  if (widen) {  // a packet pointer p joined with NULL, or with p-or-NULL: p-or-NULL
    const auto ptr = [](const Val& v) { return v.k == K::kPkt || v.k == K::kPktOrNull; };
    const auto null = [](const Val& v) { return v.k == K::kScalar && v.lo == 0 && v.hi == 0; };
    for (auto [p, q] : {std::pair{a, b}, std::pair{b, a}}) {
      Val v = p;
      v.k = K::kPktOrNull;
      if (ptr(p) && (null(q) || v == q)) return v;
    }
  }
  if (a.k == K::kMapVal && b.k == K::kMapVal && (widen || (a.lo == b.lo && a.hi == b.hi))) {
    Val v = a;  // values of two maps (or two offsets): what both allow
    v.lo = std::min(a.lo, b.lo);
    v.hi = std::max(a.hi, b.hi);
    v.size = std::min(a.size, b.size);
    v.ro = a.ro || b.ro;
    if (a.map != b.map) v.map = -1;
    return v;
  }
  if (!widen || a.k != b.k || a.map != b.map ||
      (a.k != K::kPkt && a.k != K::kPktMeta && a.k != K::kScalar && a.k != K::kMapVal))
    return anchored_off_stack(a) && anchored_off_stack(b) ? Val{K::kAnchored} : Val{};
  Val v{a.k, std::min(a.lo, b.lo), std::max(a.hi, b.hi), a.map};
  if (a.k == K::kPkt && a.id == b.id && a.c == b.c) {  // same base: the range both proved
    v.id = a.id;
    v.c = a.c;
    v.size = std::min(a.size, b.size);
  }
  return v;
}

State join(const State& a, const State& b, bool widen) {
  State s;
  s.fp_lost = a.fp_lost || b.fp_lost;
  for (const Slot& x : a.slots)  // slots both paths hold, with what both allow
    for (const Slot& y : b.slots)
      if (x.off == y.off) {
        Val v = join(x.v, y.v, widen);
        if (v.k != K::kUnknown) s.slots.push_back({x.off, v});
      }
  for (int i = 0; i < kNumRegs; ++i) {
    s.r[i] = join(a.r[i], b.r[i], widen);
    if ((a.r[i].k == K::kFp || b.r[i].k == K::kFp) && s.r[i].k != K::kFp) s.fp_lost = true;
  }
  s.pkt_range = std::min(a.pkt_range, b.pkt_range);
  s.meta_range = std::min(a.meta_range, b.meta_range);
  return s;
}

unsigned size_of(const Insn& i) {
  switch (BPF_SIZE(i.code)) {
    case BPF_B:
      return 1;
    case BPF_H:
      return 2;
    case BPF_W:
      return 4;
    default:
      return 8;
  }
}

bool one_of(int32_t id, std::initializer_list<int32_t> ids) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Helpers that never move or resize the packet (kernel bpf_helper_changes_pkt_data is false):
// map ops, time, printk, prandom, cpu id, tail call, redirects, csum_diff, fib_lookup,
// check_mtu, xdp_get_buff_len, xdp_load_bytes, perf/ringbuf output.
bool keeps_packet(int32_t id) {
  return one_of(id, {1,  2,  3,  5,   6,   7,   8,   12,  23,  25,  28,  51,  69,
                     87, 88, 89, 125, 130, 131, 132, 133, 160, 163, 188, 189, 208});
}

// Packet bound learned from `if (a OP b)` on the taken (`taken`=true) or fall-through edge.
void learn(State& s, const Insn& i, bool taken) {
  if (insn_class(i) != BPF_JMP || BPF_SRC(i.code) != BPF_X) return;
  Val a = s.r[i.dst_reg], b = s.r[i.src_reg];
  uint8_t op = BPF_OP(i.code);
  // "ptr REL end": a packet pointer against data_end, or a metadata pointer against data
  // itself (data + 0, the metadata's end).
  auto bounds = [](const Val& ptr, const Val& end) {
    return (ptr.k == K::kPkt && end.k == K::kPktEnd) ||
           (ptr.k == K::kPktMeta && end.k == K::kPkt && end.lo == 0 && end.hi == 0 && !end.id);
  };
  if (bounds(b, a)) {  // normalise "end REL ptr"
    std::swap(a, b);
    switch (op) {
      case BPF_JGT:
        op = BPF_JLT;
        break;
      case BPF_JGE:
        op = BPF_JLE;
        break;
      case BPF_JLT:
        op = BPF_JGT;
        break;
      case BPF_JLE:
        op = BPF_JGE;
        break;
      default:
        return;
    }
  }
  if (!bounds(a, b)) return;
  // ptr + x <= end (x >= a.lo) holds on: JGT/JGE fall-through, JLT/JLE taken.
  bool le =
      ((op == BPF_JGT || op == BPF_JGE) && !taken) || ((op == BPF_JLT || op == BPF_JLE) && taken);
  if (a.k == K::kPktMeta) {
    if (le && a.lo > s.meta_range) s.meta_range = a.lo;
    return;
  }
  if (le && a.lo > s.pkt_range) s.pkt_range = a.lo;
  if (le && a.id)  // B + c <= data_end: c bytes after B, for every copy of the pointer
    for (Val& r : s.r)
      if (r.k == K::kPkt && r.id == a.id && r.size < a.c) r.size = a.c;
}

// `if (rX > K)` and the other unsigned compares with a constant bound a scalar on each edge
// (the kernel's reg_set_min_max), e.g. an offset read from the packet or the metadata,
// `if (off > 512) return`, before `data + off`. JMP32 only when the scalar fits in 32 bits.
void learn_scalar(State& s, const Insn& i, bool taken) {
  const uint8_t cls = insn_class(i), op = BPF_OP(i.code);
  if ((cls != BPF_JMP && cls != BPF_JMP32) || BPF_SRC(i.code) != BPF_K) return;
  Val& v = s.r[i.dst_reg];
  if (v.k != K::kScalar) return;
  const int64_t k = cls == BPF_JMP32 ? int64_t(uint32_t(i.imm)) : int64_t(uint64_t(int64_t(i.imm)));
  if (k < 0 || (cls == BPF_JMP32 && v.hi > int64_t(UINT32_MAX))) return;  // beyond kMaxScalar
  int64_t lo = v.lo, hi = v.hi;
  switch (op) {
    case BPF_JGT:  // taken: v > k
      taken ? lo = std::max(lo, k + 1) : hi = std::min(hi, k);
      break;
    case BPF_JGE:
      taken ? lo = std::max(lo, k) : hi = std::min(hi, k - 1);
      break;
    case BPF_JLT:
      taken ? hi = std::min(hi, k - 1) : lo = std::max(lo, k);
      break;
    case BPF_JLE:
      taken ? hi = std::min(hi, k) : lo = std::max(lo, k + 1);
      break;
    default:
      return;
  }
  if (lo > hi) return;  // an edge never taken: leave it as it is
  v = scalar(lo, hi);
}

// False when `if (rX == K)` / `if (rX != K)` (64-bit) cannot go this way: rX is the constant
// scalar it compares (e.g. a pointer-or-NULL register on its NULL path, tested again).
bool feasible(const State& s, const Insn& i, bool taken) {
  const uint8_t op = BPF_OP(i.code);
  if (insn_class(i) != BPF_JMP || BPF_SRC(i.code) != BPF_K || (op != BPF_JEQ && op != BPF_JNE))
    return true;
  const Val& v = s.r[i.dst_reg];
  if (v.k != K::kScalar || v.lo != v.hi) return true;
  const bool equal = uint64_t(v.lo) == uint64_t(int64_t(i.imm));
  return (op == BPF_JEQ ? equal : !equal) == taken;
}

// `if (rX == 0)` / `if (rX != 0)` on a lookup result: NULL on one edge, a map value on the
// other, for every copy (same id), as the kernel's mark_ptr_or_null_regs.
void learn_null(State& s, const Insn& i, bool taken) {
  uint8_t op = BPF_OP(i.code);
  if (insn_class(i) != BPF_JMP || BPF_SRC(i.code) != BPF_K || i.imm != 0 ||
      (op != BPF_JEQ && op != BPF_JNE))
    return;
  const Val v = s.r[i.dst_reg];
  bool null = (op == BPF_JEQ) == taken;
  if (v.k == K::kPktOrNull) {  // only the tested register (copies are not linked)
    Val& r = s.r[i.dst_reg];
    if (null)
      r = scalar(0, 0);
    else
      r.k = K::kPkt;
    return;
  }
  if (v.k != K::kMapValOrNull) return;
  auto type = [&](Val& r) {
    if (r.k == K::kMapValOrNull && r.id == v.id)
      r = null ? scalar(0, 0) : Val{K::kMapVal, r.lo, r.hi, r.map, 0, r.size, r.ro};
  };
  for (Val& r : s.r) type(r);
  for (Slot& x : s.slots) type(x.v);
}

// ld_imm64 value `v` (after vm::prepare): a map, a BPF_PSEUDO_MAP_VALUE address, or a scalar.
Val imm64_value(uint64_t v, const std::vector<MapDesc>& maps) {
  for (size_t m = 0; m < maps.size(); ++m) {
    const MapDesc& d = maps[m];
    if (v == d.addr) return Val{K::kMapPtr, 0, 0, int32_t(m)};
    if (d.value0 && v >= d.value0 && v - d.value0 < d.value_size) {
      int64_t o = int64_t(v - d.value0);
      return Val{K::kMapVal, o, o, int32_t(m), 0, d.value_size, d.readonly};
    }
  }
  return Val{};
}

// `n` bytes at base + off lie inside the frame below r10 (a constant offset) or inside the
// packet bytes proven below data_end (pkt_range, or the variable base's own proven size), or
// inside a map value (stores only where the map is writable).
bool stack_proven(const Val& base, int64_t off, int64_t n) {
  return base.k == K::kFp && base.lo + off >= -kStackSize && base.lo + off + n <= 0;
}
bool map_value_proven(const Val& base, int64_t off, int64_t n, bool write) {
  return base.k == K::kMapVal && base.lo + off >= 0 && base.hi + off + n <= base.size &&
         !(write && base.ro);
}
bool packet_proven(const State& s, const Val& base, int64_t off, int64_t n) {
  if (base.k == K::kPktMeta)  // [data_meta, data): inside the packet region too
    return base.lo + off >= 0 && base.hi + off + n <= s.meta_range;
  return base.k == K::kPkt && base.lo + off >= 0 &&
         (base.hi + off + n <= s.pkt_range ||
          (base.id && base.c + off >= 0 && base.c + off + n <= base.size));
}

// ---- stack slots -------------------------------------------------------------------------

// Forgets the slots that bytes [lo, hi) below r10 overlap.
void clobber(State& s, int64_t lo, int64_t hi) {
  std::erase_if(s.slots, [&](const Slot& x) { return x.off < hi && x.off + 8 > lo; });
}

// What a spill may keep: pointers the analysis types (not stack addresses, whose escape
// frame_reach handles) and bounded scalars.
bool spillable(const Val& v) {
  return v.k != K::kUnknown && v.k != K::kFp;
}

// A store of n bytes at base + off: a spill (8 bytes at a slot's offset) records the value;
// any other store to the frame forgets what it overlaps; a store the analysis cannot place
// (checked at run time, so it may land in the frame) forgets every slot, unless its base is
// a packet or map value pointer, whose check leaves the frame out (AccessInfo::off_stack).
void store(State& s, const Insn& i, const Val& base, int64_t n, const Val& value) {
  if (base.k == K::kFp) {
    const int64_t o = base.lo + i.off;
    clobber(s, o, o + n);
    if (n == 8 && o % 8 == 0 && o >= -kStackSize && o < 0 && spillable(value) &&
        BPF_MODE(i.code) == BPF_MEM) {
      Slot x{int32_t(o), value};
      s.slots.insert(std::lower_bound(s.slots.begin(), s.slots.end(), x,
                                      [](const Slot& a, const Slot& b) { return a.off < b.off; }),
                     x);
    }
    return;
  }
  const bool atomic = BPF_MODE(i.code) == BPF_ATOMIC;
  if (!(!atomic && packet_proven(s, base, i.off, n)) && !map_value_proven(base, i.off, n, true) &&
      !anchored_off_stack(base))
    s.slots.clear();
}

// A `ldxdw` from a slot gives back the spilled value.
std::optional<Val> fill(const State& s, const Insn& i, const Val& base) {
  if (base.k != K::kFp || BPF_MODE(i.code) != BPF_MEM || size_of(i) != 8) return std::nullopt;
  for (const Slot& x : s.slots)
    if (x.off == base.lo + i.off) return x.v;
  return std::nullopt;
}

// Helpers that write no memory through their arguments: they only read what their pointer
// arguments name (map_lookup/update/delete_elem, trace_printk, perf_event_output, csum_diff,
// ringbuf_output, xdp_store_bytes) or take none (ktime_get_ns, get_prandom_u32,
// get_smp_processor_id, tail_call, redirect, redirect_map; xdp_adjust_head/meta/tail change
// the packet, which the call's packet rule covers).
bool writes_no_memory(int32_t id) {
  return one_of(id, {1, 2, 3, 5, 6, 7, 8, 12, 23, 25, 28, 44, 51, 54, 65, 130, 190});
}

constexpr int32_t kMapLookupElem = 1;   // BPF_FUNC_map_lookup_elem
constexpr int32_t kTailCall = 12;       // BPF_FUNC_tail_call
constexpr int32_t kXdpAdjustHead = 44;  // BPF_FUNC_xdp_adjust_head
constexpr int32_t kXdpAdjustMeta = 54;  // BPF_FUNC_xdp_adjust_meta

// dst (a packet pointer) += a scalar of unknown exact value: a new variable base.
bool variable_packet_add(State& s, const Insn& i, uint32_t pc) {
  Val& d = s.r[i.dst_reg];
  if (insn_class(i) != BPF_ALU64 || BPF_OP(i.code) != BPF_ADD || BPF_SRC(i.code) != BPF_X)
    return false;
  Val src = s.r[i.src_reg];
  const Val* ptr = d.k == K::kPkt ? &d : src.k == K::kPkt ? &src : nullptr;
  const Val* var = d.k == K::kPkt ? &src : &d;
  if (!ptr || var->k != K::kScalar || var->lo == var->hi) return false;
  Val v = offset(Val{K::kPkt, ptr->lo, ptr->hi}, var->lo, var->hi);
  if (v.k == K::kPkt) {
    v.id = pc + 1;
    auto unlink = [&](Val& r) {  // an older pointer made here (loops) is no longer this base
      if (r.k == K::kPkt && r.id == v.id) r.id = 0, r.c = 0, r.size = 0;
    };
    for (Val& r : s.r) unlink(r);
    for (Slot& x : s.slots) unlink(x.v);
  }
  d = v;
  return true;
}

void step_alu(State& s, const Insn& i) {
  Val& d = s.r[i.dst_reg];
  uint8_t op = BPF_OP(i.code);
  bool is64 = insn_class(i) == BPF_ALU64;
  bool k = BPF_SRC(i.code) == BPF_K;
  Val src = k ? (i.imm >= 0 ? scalar(i.imm, i.imm) : Val{}) : s.r[i.src_reg];
  if (op == BPF_MOV && (k ? true : i.off == 0)) {
    if (!is64)
      d = k ? scalar(uint32_t(i.imm), uint32_t(i.imm)) : scalar(0, UINT32_MAX);
    else
      d = src;
    if (is64 && k && i.imm < 0) d = Val{};
    return;
  }
  if (!is64) {  // 32-bit results: only their width is known
    d = (op == BPF_AND && k && i.imm >= 0) ? scalar(0, i.imm) : scalar(0, UINT32_MAX);
    return;
  }
  if (op == BPF_ADD && src.k == K::kScalar) {
    d = offset(d, src.lo, src.hi);
  } else if (op == BPF_ADD && d.k == K::kScalar && src.k != K::kUnknown) {
    d = offset(src, d.lo, d.hi);
  } else if (op == BPF_ADD && k && i.imm < 0) {
    d = offset(d, i.imm, i.imm);
  } else if (op == BPF_SUB && k && d.k != K::kScalar) {
    d = offset(d, -int64_t(i.imm), -int64_t(i.imm));
  } else if (op == BPF_AND && src.k == K::kScalar && src.lo == src.hi) {
    d = scalar(0, d.k == K::kScalar ? std::min(d.hi, src.hi) : src.hi);
  } else if (op == BPF_LSH && k && d.k == K::kScalar && i.imm >= 0 && i.imm < 32 &&
             d.hi <= (kMaxScalar >> i.imm)) {
    d = scalar(d.lo << i.imm, d.hi << i.imm);
  } else if (op == BPF_RSH && k && d.k == K::kScalar && i.imm >= 0 && i.imm < 64) {
    d = scalar(d.lo >> i.imm, d.hi >> i.imm);
  } else {
    d = Val{};
  }
}

// Bytes helper `id` reads through its stack argument r`ptr`, where its prototype says
// (include/uapi/linux/bpf.h; the kernel's ARG_PTR_TO_MAP_KEY / _VALUE and ARG_PTR_TO_MEM with
// its ARG_CONST_SIZE register): the map's key or value size, or the size register's bound.
std::optional<int64_t> helper_reads(int32_t id, int ptr, const State& s,
                                    const std::vector<MapDesc>& maps) {
  const MapDesc* map =
      s.r[1].k == K::kMapPtr && s.r[1].map >= 0 ? &maps[size_t(s.r[1].map)] : nullptr;
  auto key = [&]() -> std::optional<int64_t> {
    if (map && map->key_size) return map->key_size;
    return std::nullopt;
  };
  auto value = [&]() -> std::optional<int64_t> {
    if (map && map->value_size) return map->value_size;
    return std::nullopt;
  };
  auto size = [&](int r) -> std::optional<int64_t> {
    if (s.r[r].k == K::kScalar) return s.r[r].hi;
    return std::nullopt;
  };
  switch (id) {
    case 1:  // map_lookup_elem(map, key)
    case 3:  // map_delete_elem(map, key)
      if (ptr == 2) return key();
      break;
    case 2:  // map_update_elem(map, key, value, flags)
      if (ptr == 2) return key();
      if (ptr == 3) return value();
      break;
    case 87:  // map_push_elem(map, value, flags)
      if (ptr == 2) return value();
      break;
    case 6:  // trace_printk(fmt, fmt_size, ...)
      if (ptr == 1) return size(2);
      break;
    case 25:  // perf_event_output(ctx, map, flags, data, size)
      if (ptr == 4) return size(5);
      break;
    case 28:  // csum_diff(from, from_size, to, to_size, seed)
      if (ptr == 1) return size(2);
      if (ptr == 3) return size(4);
      break;
    case 69:  // fib_lookup(ctx, params, plen, flags): reads the params it fills in
      if (ptr == 2) return size(3);
      break;
    case 130:  // ringbuf_output(ringbuf, data, size, flags)
      if (ptr == 2) return size(3);
      break;
    case 189:  // xdp_load_bytes(ctx, offset, to, len): writes `to` (taken as read: zeroes more)
    case 190:  // xdp_store_bytes(ctx, offset, from, len)
      if (ptr == 3) return size(4);
      break;
    default:
      break;
  }
  return std::nullopt;
}

// The frame bytes call `i` may read: a helper's stack arguments as helper_reads sizes them;
// any other stack argument (another helper's, a kfunc's, a callee's) from the pointer up to
// r10, as does any argument past the two ranges a StackUse holds.
StackUse call_reads(const State& s, const Insn& i, const std::vector<MapDesc>& maps) {
  const bool helper = BPF_SRC(i.code) == BPF_K && i.src_reg == 0;
  StackUse u;
  size_t n = 0;
  int64_t up = 0;  // the deepest pointer read up to r10
  for (int r = 1; r <= 5; ++r) {
    const Val& v = s.r[r];
    if (v.k != K::kFp) continue;
    if (v.lo >= 0) continue;  // at or above r10: no byte of this frame
    const int64_t lo = std::max<int64_t>(v.lo, -kStackSize);
    const auto bytes = helper ? helper_reads(i.imm, r, s, maps) : std::nullopt;
    if (bytes && n < 2)
      u.read[n++] = StackRange{int32_t(lo), uint32_t(std::clamp<int64_t>(*bytes, 0, -lo))};
    else
      up = std::min(up, lo);
  }
  if (up < 0 && n < 2) {
    u.read[n] = StackRange{int32_t(up), uint32_t(-up)};
  } else if (up < 0) {  // no room left: one range, from the deepest of the three up to r10
    const int64_t deep = std::min({up, int64_t(u.read[0].off), int64_t(u.read[1].off)});
    u.read[0] = StackRange{int32_t(deep), uint32_t(-deep)};
    u.read[1] = StackRange{};
  }
  return u;
}

}  // namespace

// Bytes below r10 that instruction `i` (in state `s`) may reach through the stack, or
// kLost when a stack address leaves the analysis (kept in memory, turned into a scalar or
// an unknown pointer, compared with a number, lost at a join, returned), after which any
// access or helper may reach any byte. Helpers read up from a stack pointer (a size
// argument); bpf-to-bpf calls and callbacks may read anywhere in the frames above theirs, so
// programs with subprograms zero whole frames (analyze_accesses).
int64_t frame_reach(const State& s, const Insn& i, uint32_t pc) {
  if (s.fp_lost) return kLost;
  const uint8_t cls = insn_class(i);
  auto below = [](const Val& v) {
    return v.lo < -kStackSize ? kStackSize : std::max<int64_t>(0, -v.lo);
  };
  if (cls == BPF_ALU || cls == BPF_ALU64) {
    const bool src_fp = BPF_SRC(i.code) == BPF_X && s.r[i.src_reg].k == K::kFp;
    if (s.r[i.dst_reg].k != K::kFp && !src_fp) return 0;
    State t = s;
    if (BPF_OP(i.code) == BPF_END)
      t.r[i.dst_reg] = Val{};
    else if (!variable_packet_add(t, i, pc))
      step_alu(t, i);
    return t.r[i.dst_reg].k == K::kFp ? below(t.r[i.dst_reg]) : kLost;
  }
  if (cls == BPF_STX && s.r[i.src_reg].k == K::kFp) return kLost;  // spilled
  if ((cls == BPF_JMP || cls == BPF_JMP32) && BPF_OP(i.code) == BPF_CALL) {
    int64_t n = 0;  // a callee may read up from each stack argument
    for (int r = 1; r <= 5; ++r)
      if (s.r[r].k == K::kFp) n = std::max(n, below(s.r[r]));
    return n;
  }
  if (cls == BPF_JMP && BPF_OP(i.code) == BPF_EXIT && s.r[0].k == K::kFp) return kLost;
  if (jump_target(i, pc) && !ends_flow(i)) {  // a conditional jump
    // A stack address compared with anything but another one gives its bits away: `if r10 <
    // rX` bit by bit rebuilds it as a number the analysis cannot see, which a helper then
    // reads through.
    const bool dst_fp = s.r[i.dst_reg].k == K::kFp;
    if (BPF_SRC(i.code) == BPF_X ? dst_fp != (s.r[i.src_reg].k == K::kFp) : dst_fp) return kLost;
  }
  return 0;
}

std::vector<AccessInfo> analyze_accesses(const InsnVec& insns, const std::vector<uint32_t>& subs,
                                         CtxKind ctx, const std::vector<MapDesc>& maps,
                                         std::vector<FrameZero>* frame) {
  std::vector<AccessInfo> out(insns.size());
  if (frame) frame->assign(subs.size(), FrameZero{});
  std::vector<StackUse> uses(frame ? insns.size() : 0);
  for (size_t si = 0; si < subs.size(); ++si) {
    int64_t reach = 0;  // bytes below r10 this subprogram's code may reach
    uint32_t lo = subs[si], hi = subprogram_end(subs, si, insns.size());
    std::vector<std::optional<State>> in(hi - lo);
    State entry;
    entry.r[10] = Val{K::kFp, 0, 0};
    if (lo == 0 && ctx == CtxKind::kXdp) entry.r[1] = Val{K::kCtx, 0, 0};
    std::vector<int> visits(hi - lo, 0);
    in[0] = entry;
    std::deque<uint32_t> work{lo};
    auto flow = [&](int64_t to, const State& s) {
      if (to < lo || to >= hi) return;
      auto& slot = in[to - lo];
      State n = slot ? join(*slot, s, ++visits[to - lo] <= kWidenAfter) : s;
      if (slot && *slot == n) return;
      slot = n;
      work.push_back(uint32_t(to));
    };
    while (!work.empty()) {
      uint32_t pc = work.front();
      work.pop_front();
      State s = *in[pc - lo];
      const Insn& i = insns[pc];
      uint8_t cls = insn_class(i);
      if (i.dst_reg >= kNumRegs || i.src_reg >= kNumRegs) continue;
      if (cls == BPF_ALU || cls == BPF_ALU64) {
        if (BPF_OP(i.code) == BPF_END)
          s.r[i.dst_reg] = Val{};
        else if (!variable_packet_add(s, i, pc))
          step_alu(s, i);
        flow(pc + 1, s);
      } else if (cls == BPF_LD) {
        s.r[i.dst_reg] = Val{};
        if (is_lddw(i) && i.src_reg == 0 && pc + 1 < hi)
          s.r[i.dst_reg] = imm64_value(
              uint64_t(uint32_t(i.imm)) | uint64_t(uint32_t(insns[pc + 1].imm)) << 32, maps);
        flow(pc + 2, s);
      } else if (cls == BPF_LDX) {
        Val base = s.r[i.src_reg];
        Val res{};
        unsigned n = size_of(i);
        if (BPF_MODE(i.code) == BPF_MEM && n < 8) res = scalar(0, (int64_t(1) << (8 * n)) - 1);
        if (auto spilled = fill(s, i, base)) res = *spilled;
        if (base.k == K::kCtx && ctx == CtxKind::kXdp && BPF_MODE(i.code) == BPF_MEM && n == 4) {
          int64_t o = base.lo + i.off;
          if (o == 0)
            res = Val{K::kPkt, 0, 0};  // xdp_md->data
          else if (o == 4)
            res = Val{K::kPktEnd, 0, 0};  // xdp_md->data_end
          else if (o == 8)
            res = Val{K::kPktMeta, 0, 0};  // xdp_md->data_meta
          else
            res = Val{};
        }
        s.r[i.dst_reg] = res;
        flow(pc + 1, s);
      } else if (cls == BPF_ST || cls == BPF_STX) {
        const Val value = cls == BPF_STX ? s.r[i.src_reg]
                          : i.imm >= 0   ? scalar(i.imm, i.imm)
                                         : Val{};
        store(s, i, s.r[i.dst_reg], size_of(i), value);
        if (cls == BPF_STX && BPF_MODE(i.code) == BPF_ATOMIC)
          s.r[i.imm == BPF_CMPXCHG ? 0 : i.src_reg] = Val{};
        flow(pc + 1, s);
      } else if (BPF_OP(i.code) == BPF_CALL) {
        const Val map = s.r[1];
        bool helper = i.src_reg == 0 && BPF_SRC(i.code) == BPF_K;
        // Slots survive helpers that write no memory. Any other helper may write the frame
        // through an argument (a stack pointer, or an address forged from a scalar that a
        // run-time check lets through), and a bpf-to-bpf call (or callx) may reach the
        // caller's frame through checked accesses: slots are forgotten.
        if (!helper || !writes_no_memory(i.imm)) s.slots.clear();
        for (int r = 0; r <= 5; ++r) s.r[r] = Val{};
        for (int r = 6; r < 10; ++r)  // an older result of this call site (loops)
          if (s.r[r].k == K::kMapValOrNull && s.r[r].id == pc + 1) s.r[r] = Val{};
        std::erase_if(s.slots,
                      [&](const Slot& x) { return x.v.k == K::kMapValOrNull && x.v.id == pc + 1; });
        if (helper && i.imm == kMapLookupElem && map.k == K::kMapPtr &&
            maps[size_t(map.map)].values_typed)
          s.r[0] = Val{K::kMapValOrNull,
                       0,
                       0,
                       map.map,
                       pc + 1,
                       maps[size_t(map.map)].value_size,
                       maps[size_t(map.map)].readonly};
        if (!helper || !keeps_packet(i.imm)) {
          const auto packet = [](const Val& v) {
            return v.k == K::kPkt || v.k == K::kPktEnd || v.k == K::kPktMeta ||
                   v.k == K::kPktOrNull;
          };
          for (int r = 6; r < 10; ++r)
            if (packet(s.r[r])) s.r[r] = Val{};
          std::erase_if(s.slots, [&](const Slot& x) { return packet(x.v); });
          s.pkt_range = s.meta_range = 0;
        }
        flow(pc + 1, s);
      } else if (BPF_OP(i.code) == BPF_EXIT) {
      } else if (auto t = jump_target(i, pc)) {
        if (BPF_OP(i.code) == BPF_JA) {
          flow(*t, s);
        } else {
          State taken = s, fall = s;
          learn(taken, i, true);
          learn(fall, i, false);
          learn_null(taken, i, true);
          learn_null(fall, i, false);
          learn_scalar(taken, i, true);
          learn_scalar(fall, i, false);
          if (feasible(s, i, true)) flow(*t, taken);
          if (feasible(s, i, false)) flow(pc + 1, fall);
        }
      }
    }
    for (uint32_t pc = lo; pc < hi; ++pc) {
      const Insn& i = insns[pc];
      uint8_t cls = insn_class(i);
      bool mem = cls == BPF_LDX || cls == BPF_ST || cls == BPF_STX;
      if (!in[pc - lo] || i.dst_reg >= kNumRegs || i.src_reg >= kNumRegs) continue;
      const State& s = *in[pc - lo];
      reach = std::max(reach, frame_reach(s, i, pc));
      if (frame && cls == BPF_JMP && BPF_OP(i.code) == BPF_CALL) uses[pc] = call_reads(s, i, maps);
      const bool helper_call = cls == BPF_JMP && BPF_OP(i.code) == BPF_CALL &&
                               BPF_SRC(i.code) == BPF_K && i.src_reg == 0;
      if (helper_call && i.imm == kTailCall) {
        const Val ctx_arg = s.r[1], m = s.r[2];
        if (ctx_arg.k == K::kCtx && ctx_arg.lo == 0 && ctx_arg.hi == 0 && m.k == K::kMapPtr &&
            maps[size_t(m.map)].host && maps[size_t(m.map)].type == BPF_MAP_TYPE_PROG_ARRAY)
          out[pc] = AccessInfo{AccessKind::kTailCall, 0, m.map};
        continue;
      }
      if (helper_call && (i.imm == kXdpAdjustHead || i.imm == kXdpAdjustMeta)) {
        const Val ctx_arg = s.r[1];
        if (ctx_arg.k == K::kCtx && ctx_arg.lo == 0 && ctx_arg.hi == 0)
          out[pc] = AccessInfo{AccessKind::kXdpAdjust, i.imm};
        continue;
      }
      if (helper_call && i.imm == kMapLookupElem) {
        const Val m = s.r[1], key = s.r[2];
        if (m.k != K::kMapPtr) continue;
        const MapDesc& d = maps[size_t(m.map)];
        const int64_t n = d.values ? 4 : int64_t(d.key_size);
        // The key: n bytes on the stack at a constant offset, or n packet bytes proven below
        // data_end (the kernel's verifier takes both for ARG_PTR_TO_MAP_KEY).
        const bool on_stack = stack_proven(key, 0, n), in_packet = packet_proven(s, key, 0, n);
        if (!on_stack && !in_packet) continue;
        const AccessKind kind = d.values      ? AccessKind::kArrayLookup
                                : d.hash.head ? AccessKind::kHashLookup
                                : d.host      ? AccessKind::kMapLookup
                                              : AccessKind::kNone;
        if (kind != AccessKind::kNone)
          out[pc] = AccessInfo{kind, on_stack ? int32_t(key.lo) : 0, m.map, in_packet};
        continue;
      }
      if (!mem) continue;
      Val base = s.r[cls == BPF_LDX ? i.src_reg : i.dst_reg];
      int64_t o = base.lo + i.off, n = size_of(i);
      AccessInfo& a = out[pc];
      a.kind = AccessKind::kChecked;
      if (stack_proven(base, i.off, n)) {
        a = AccessInfo{AccessKind::kStack, int32_t(o)};
        reach = std::max(reach, -o);
        if (frame) {
          const StackRange bytes{int32_t(o), uint32_t(n)};
          const bool atomic = cls == BPF_STX && BPF_MODE(i.code) == BPF_ATOMIC;
          if (cls == BPF_LDX || atomic) uses[pc].read[0] = bytes;
          if (cls != BPF_LDX) uses[pc].write = bytes;
        }
      } else if (packet_proven(s, base, i.off, n) &&
                 !(cls == BPF_STX && BPF_MODE(i.code) == BPF_ATOMIC)) {
        a.kind = AccessKind::kPacket;
      } else if (base.k == K::kCtx && cls == BPF_LDX && o >= 0 && o + n <= kXdpMdBytes) {
        a = AccessInfo{AccessKind::kCtx, int32_t(o)};
      } else if (map_value_proven(base, i.off, n, cls != BPF_LDX)) {
        bool atomic = cls == BPF_STX && BPF_MODE(i.code) == BPF_ATOMIC;
        if (!atomic || (base.lo == base.hi && o % n == 0))
          a = AccessInfo{AccessKind::kMapValue, int32_t(o), base.map};
      }
      // A checked access may land anywhere in the frame, unless its base is a packet or map
      // value pointer: its check then leaves the stack's region out (the kernel's verifier
      // keeps packet and map value accesses inside their object; the frame is an allocation
      // of its own, which such a pointer reaches only where an allocator put the two close
      // together, and then the access faults instead of landing in the frame).
      if (a.kind == AccessKind::kChecked) {
        a.off_stack = anchored_off_stack(base);
        if (!a.off_stack) reach = kLost;
      }
    }
    if (frame && reach >= kLost) {
      (*frame)[si] = FrameZero{uint32_t(kStackSize), 0};
    } else if (frame && reach > 0) {  // every stack access known: only what is read unwritten
      std::vector<bool> reachable(hi - lo);
      for (uint32_t pc = lo; pc < hi; ++pc) reachable[pc - lo] = in[pc - lo].has_value();
      (*frame)[si] = frame_zero(insns, lo, hi, uses, reachable);
    }
  }
  // A callee (or callback) reaches its callers' frames through the stack region (r10 plus a
  // positive offset, a pointer argument minus an offset), which no single function's analysis
  // bounds: with subprograms every frame is zeroed whole, as the interpreter does.
  if (frame && subs.size() > 1) frame->assign(subs.size(), FrameZero{uint32_t(kStackSize), 0});
  return out;
}

}  // namespace knod::jit
