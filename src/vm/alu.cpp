// RFC 9669 §4 arithmetic and jump conditions (see alu.h).
#include "vm/alu.h"

namespace knod::vm {
namespace {

bool alu64(uint8_t op, int16_t off, int32_t imm, uint64_t& d, uint64_t s) {
  const int64_t sd = static_cast<int64_t>(d), ss = static_cast<int64_t>(s);
  switch (op) {
    case BPF_ADD:
      d += s;
      return true;
    case BPF_SUB:
      d -= s;
      return true;
    case BPF_MUL:
      d *= s;
      return true;
    case BPF_OR:
      d |= s;
      return true;
    case BPF_AND:
      d &= s;
      return true;
    case BPF_XOR:
      d ^= s;
      return true;
    case BPF_LSH:
      d <<= (s & 63);
      return true;
    case BPF_RSH:
      d >>= (s & 63);
      return true;
    case BPF_ARSH:
      d = static_cast<uint64_t>(sd >> (s & 63));
      return true;
    case BPF_NEG:
      d = 0 - d;
      return true;
    case BPF_DIV:
      if (off == 0) {
        d = s == 0 ? 0 : d / s;
      } else if (off == 1) {
        if (s == 0)
          d = 0;
        else if (ss == -1)
          d = 0 - d;  // INT64_MIN / -1 wraps to INT64_MIN
        else
          d = static_cast<uint64_t>(sd / ss);
      } else {
        return false;
      }
      return true;
    case BPF_MOD:
      if (off == 0) {
        if (s != 0) d %= s;
      } else if (off == 1) {
        if (ss == -1)
          d = 0;
        else if (s != 0)
          d = static_cast<uint64_t>(sd % ss);
      } else {
        return false;
      }
      return true;
    case BPF_MOV:
      if (off == 0)
        d = s;
      else if (off == 8 || off == 16 || off == 32)
        d = sign_extend(s, off);
      else
        return false;
      return true;
    case BPF_END:  // BPF_ALU64 | BPF_END | BPF_TO_LE: unconditional bswap (v4)
      if (imm == 16)
        d = __builtin_bswap16(static_cast<uint16_t>(d));
      else if (imm == 32)
        d = __builtin_bswap32(static_cast<uint32_t>(d));
      else if (imm == 64)
        d = __builtin_bswap64(d);
      else
        return false;
      return true;
  }
  return false;
}

bool alu32(uint8_t op, int16_t off, int32_t imm, bool to_be, uint64_t& d64, uint64_t s64) {
  uint32_t d = static_cast<uint32_t>(d64), s = static_cast<uint32_t>(s64);
  const int32_t sd = static_cast<int32_t>(d), ss = static_cast<int32_t>(s);
  switch (op) {
    case BPF_ADD:
      d += s;
      break;
    case BPF_SUB:
      d -= s;
      break;
    case BPF_MUL:
      d *= s;
      break;
    case BPF_OR:
      d |= s;
      break;
    case BPF_AND:
      d &= s;
      break;
    case BPF_XOR:
      d ^= s;
      break;
    case BPF_LSH:
      d <<= (s & 31);
      break;
    case BPF_RSH:
      d >>= (s & 31);
      break;
    case BPF_ARSH:
      d = static_cast<uint32_t>(sd >> (s & 31));
      break;
    case BPF_NEG:
      d = 0 - d;
      break;
    case BPF_DIV:
      if (off == 0) {
        d = s == 0 ? 0 : d / s;
      } else if (off == 1) {
        if (s == 0)
          d = 0;
        else if (ss == -1)
          d = 0 - d;
        else
          d = static_cast<uint32_t>(sd / ss);
      } else {
        return false;
      }
      break;
    case BPF_MOD:
      if (off == 0) {
        if (s != 0) d %= s;
      } else if (off == 1) {
        if (ss == -1)
          d = 0;
        else if (s != 0)
          d = static_cast<uint32_t>(sd % ss);
      } else {
        return false;
      }
      break;
    case BPF_MOV:
      if (off == 0)
        d = s;
      else if (off == 8 || off == 16)
        d = static_cast<uint32_t>(sign_extend(s, off));
      else
        return false;
      break;
    case BPF_END:  // le/be: the width is imm; the result is not truncated to 32 bits for 64
      if (imm == 16)
        d64 = to_be ? __builtin_bswap16(static_cast<uint16_t>(d64)) : uint16_t(d64);
      else if (imm == 32)
        d64 = to_be ? __builtin_bswap32(static_cast<uint32_t>(d64)) : uint32_t(d64);
      else if (imm == 64)
        d64 = to_be ? __builtin_bswap64(d64) : d64;
      else
        return false;
      return true;
    default:
      return false;
  }
  d64 = d;
  return true;
}

}  // namespace

bool alu(const Insn& i, uint64_t& dst, uint64_t src) {
  const uint8_t op = BPF_OP(i.code);
  if (BPF_CLASS(i.code) == BPF_ALU64) return alu64(op, i.off, i.imm, dst, src);
  return alu32(op, i.off, i.imm, BPF_SRC(i.code) == BPF_X, dst, src);
}

std::optional<bool> jump_taken(uint8_t op, bool is32, uint64_t d, uint64_t s) {
  if (is32) {
    d = static_cast<uint32_t>(d);
    s = static_cast<uint32_t>(s);
  }
  const int64_t sd = is32 ? int64_t(int32_t(uint32_t(d))) : int64_t(d);
  const int64_t ss = is32 ? int64_t(int32_t(uint32_t(s))) : int64_t(s);
  switch (op) {
    case BPF_JEQ:
      return d == s;
    case BPF_JNE:
      return d != s;
    case BPF_JGT:
      return d > s;
    case BPF_JGE:
      return d >= s;
    case BPF_JLT:
      return d < s;
    case BPF_JLE:
      return d <= s;
    case BPF_JSET:
      return (d & s) != 0;
    case BPF_JSGT:
      return sd > ss;
    case BPF_JSGE:
      return sd >= ss;
    case BPF_JSLT:
      return sd < ss;
    case BPF_JSLE:
      return sd <= ss;
  }
  return std::nullopt;
}

}  // namespace knod::vm
