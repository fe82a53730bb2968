// Field checks of loads, stores, atomics and ld_imm64 (kernel do_check / check_atomic /
// check_ld_imm; RFC 9669 §5).
#include "verifier/checks.h"

namespace knod::verifier {
namespace {

constexpr int32_t kLoadAcquire = 0x100;   // BPF_LOAD_ACQ (kernel 6.15+)
constexpr int32_t kStoreRelease = 0x110;  // BPF_STORE_REL

std::string check_atomic(const Insn& i) {
  const uint8_t size = BPF_SIZE(i.code);
  if (i.imm == kLoadAcquire) {
    if (auto e = check_src(i.src_reg); !e.empty()) return e;
    return check_dst_write(i.dst_reg);
  }
  if (i.imm == kStoreRelease) {
    if (auto e = check_src(i.src_reg); !e.empty()) return e;
    return check_dst_read(i.dst_reg);
  }
  switch (i.imm) {
    case BPF_ADD:
    case BPF_ADD | BPF_FETCH:
    case BPF_OR:
    case BPF_OR | BPF_FETCH:
    case BPF_AND:
    case BPF_AND | BPF_FETCH:
    case BPF_XOR:
    case BPF_XOR | BPF_FETCH:
    case BPF_XCHG:
    case BPF_CMPXCHG:
      break;
    default:
      return "BPF_ATOMIC uses invalid atomic opcode " + std::to_string(i.imm);
  }
  if (size != BPF_W && size != BPF_DW) return "invalid atomic operand size";
  if (auto e = check_dst_read(i.dst_reg); !e.empty()) return e;
  if (i.imm & BPF_FETCH) {
    if (i.imm != BPF_CMPXCHG) return check_dst_write(i.src_reg);
  }
  return check_src(i.src_reg);
}

/// A direct frame-pointer access (r10 + off) must lie inside the frame's kStackSize bytes
/// (kernel check_stack_access_within_bounds: "invalid write to stack R10 off=-520 size=8").
std::string check_stack_bounds(const Insn& i, uint8_t base, bool write) {
  if (base != 10) return "";
  static constexpr int kBytes[4] = {4, 2, 1, 8};  // BPF_W, BPF_H, BPF_B, BPF_DW
  const int size = kBytes[BPF_SIZE(i.code) >> 3];
  if (i.off >= -kStackSize && i.off + size <= 0) return "";
  return "invalid " + std::string(write ? "write to" : "read from") +
         " stack R10 off=" + std::to_string(i.off) + " size=" + std::to_string(size);
}

std::string check_mem_fields(const Insn& i) {
  const uint8_t mode = BPF_MODE(i.code);
  switch (BPF_CLASS(i.code)) {
    case BPF_LDX:
      if (mode != BPF_MEM && mode != BPF_MEMSX) return "unknown BPF_LDX mode";
      if (mode == BPF_MEMSX && BPF_SIZE(i.code) == BPF_DW) return "unknown BPF_LDX opcode";
      if (i.imm != 0) return "BPF_LDX uses reserved fields";
      if (auto e = check_src(i.src_reg); !e.empty()) return e;
      return check_dst_write(i.dst_reg);
    case BPF_ST:
      if (mode != BPF_MEM) return "unknown BPF_ST mode";
      if (i.src_reg != 0) return "BPF_ST uses reserved fields";
      return check_dst_read(i.dst_reg);
    case BPF_STX:
      if (mode == BPF_ATOMIC) return check_atomic(i);
      if (mode != BPF_MEM) return "unknown BPF_STX mode";
      if (i.imm != 0) return "BPF_STX uses reserved fields";
      if (auto e = check_src(i.src_reg); !e.empty()) return e;
      return check_dst_read(i.dst_reg);
  }
  return "not a memory instruction";
}

}  // namespace

std::string check_mem(const Insn& i) {
  std::string e = check_mem_fields(i);
  if (!e.empty()) return e;
  switch (BPF_CLASS(i.code)) {
    case BPF_LDX:
      return check_stack_bounds(i, i.src_reg, false);
    case BPF_ST:
      return check_stack_bounds(i, i.dst_reg, true);
    default:  // BPF_STX, atomics: a load-acquire reads [src + off], the rest write [dst + off]
      return BPF_MODE(i.code) == BPF_ATOMIC && i.imm == kLoadAcquire
                 ? check_stack_bounds(i, i.src_reg, false)
                 : check_stack_bounds(i, i.dst_reg, true);
  }
}

std::string check_ld(const Insn* prog, size_t n, size_t pc) {
  const Insn& i = prog[pc];
  if (i.code != (BPF_LD | BPF_IMM | BPF_DW))
    return "unsupported BPF_LD instruction (legacy LD_ABS/LD_IND are not XDP instructions)";
  if (pc + 1 >= n) return "invalid bpf_ld_imm64 insn (missing second slot)";
  const Insn& hi = prog[pc + 1];
  if (hi.code != 0 || hi.dst_reg != 0 || hi.src_reg != 0 || hi.off != 0 || i.off != 0)
    return "invalid bpf_ld_imm64 insn";
  if (i.src_reg > BPF_PSEUDO_MAP_IDX_VALUE)
    return "unrecognized bpf_ld_imm64 insn (src_reg " + std::to_string(i.src_reg) + ")";
  if (i.src_reg == BPF_PSEUDO_FUNC && hi.imm != 0) return "invalid bpf_ld_imm64 func insn";
  if ((i.src_reg == BPF_PSEUDO_MAP_FD || i.src_reg == BPF_PSEUDO_MAP_IDX) && hi.imm != 0)
    return "invalid bpf_ld_imm64 map insn (second imm must be 0)";
  return check_dst_write(i.dst_reg);
}

}  // namespace knod::verifier
