// Programs and linking (libbpf's bpf_object__relocate(), kernel Documentation/bpf/llvm_reloc.rst):
// every global function of an executable section other than .text is a program; .text holds
// subprograms. Each program gets its own copy of every subprogram it reaches (bpf-to-bpf calls,
// callbacks), appended after its text in the order first reached; call and ld_imm64
// BPF_PSEUDO_FUNC immediates are re-targeted to the copies (pc-relative: target - pc - 1).
// R_BPF_64_64 on ld_imm64: a map symbol -> BPF_PSEUDO_MAP_IDX; a global-data symbol ->
// BPF_PSEUDO_MAP_IDX_VALUE with next.imm = symbol offset + addend; a function -> BPF_PSEUDO_FUNC.
// R_BPF_64_32 on a call: a bpf-to-bpf call (target = symbol / 8 + imm + 1). Relocations against
// undefined symbols (externs, kfuncs declared __ksym) are refused, naming the symbol.
#include <bpf/libbpf.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

#include "loader/builder.h"

namespace knod::loader {

namespace {

struct Func {
  size_t sec;
  uint32_t start, len;  // instruction indexes in the section
  std::string name;
};

class Linker {
 public:
  explicit Linker(Builder& b) : b_(b) {
    for (const ElfSymbol& s : b.elf.symbols()) {
      if (s.type() != STT_FUNC || s.sym.st_shndx == SHN_UNDEF || s.sym.st_shndx >= SHN_LORESERVE)
        continue;
      const ElfSection& sec = b.elf.sections()[s.sym.st_shndx];
      if (!sec.exec()) continue;
      if (s.sym.st_value % 8 || s.sym.st_size % 8 || s.sym.st_value > sec.size ||
          s.sym.st_size > sec.size - s.sym.st_value)
        b.fail(fmt::format("function '{}' lies outside its section '{}'", s.name, sec.name));
      funcs_[sec.index].push_back(
          {sec.index, uint32_t(s.sym.st_value / 8), uint32_t(s.sym.st_size / 8), s.name});
    }
    for (auto& [sec, list] : funcs_)
      std::sort(list.begin(), list.end(),
                [](const Func& a, const Func& c) { return a.start < c.start; });
    for (const ElfSection& sec : b.elf.sections()) {
      if (!sec.exec()) continue;
      if (sec.size % 8)
        b.fail(fmt::format("section '{}': size {} is not whole instructions", sec.name, sec.size));
      for (const ElfRel& r : b.elf.rels(sec.index)) {
        if (r.offset % 8 || r.offset >= sec.size)
          b.fail(fmt::format("section '{}': relocation at bad offset {}", sec.name, r.offset));
        relocs_[key(sec.index, uint32_t(r.offset / 8))] = r;
      }
    }
  }

  const std::map<size_t, std::vector<Func>>& funcs() const { return funcs_; }

  /// Links `main` into one instruction vector. Subprograms are appended depth-first in the
  /// order first reached, as libbpf's bpf_object__reloc_code() does, so the layout (and every
  /// call immediate) equals what libbpf hands the kernel.
  InsnVec link(const Func& main) {
    placed_.clear();
    out_.clear();
    place(main);
    return std::move(out_);
  }

 private:
  static uint64_t key(size_t sec, uint32_t idx) { return (uint64_t(sec) << 32) | idx; }

  /// Appends f (if new) and relocates it, recursing into what it calls. Returns its start.
  uint32_t place(const Func& f) {
    auto it = placed_.find(key(f.sec, f.start));
    if (it != placed_.end()) return it->second;
    uint32_t base = uint32_t(out_.size());
    placed_[key(f.sec, f.start)] = base;
    const ElfSection& sec = b_.elf.sections()[f.sec];
    out_.resize(out_.size() + f.len);
    std::memcpy(out_.data() + base, sec.data + size_t(f.start) * 8, size_t(f.len) * 8);
    if (++depth_ > 64) b_.fail(fmt::format("call chain through '{}' is too deep", f.name));
    for (uint32_t j = 0; j < f.len; ++j) fix(f, base, j);
    --depth_;
    return base;
  }

  const Func& func_at(size_t sec, int64_t idx, const std::string& ctx) {
    auto it = funcs_.find(sec);
    if (it != funcs_.end())
      for (const Func& f : it->second)
        if (idx >= f.start && idx < int64_t(f.start) + f.len) return f;
    b_.fail(fmt::format("{}: target instruction {} of section '{}' is in no function", ctx, idx,
                        b_.elf.sections()[sec].name));
  }

  /// New imm for a pc-relative reference from out[pc] to instruction `target` of section `sec`.
  int32_t retarget(size_t sec, int64_t target, uint32_t pc, const std::string& ctx) {
    const Func& g = func_at(sec, target, ctx);
    Func copy = g;  // place() may grow funcs_-independent state only; keep a copy anyway
    int64_t dest = int64_t(place(copy)) + (target - copy.start);
    return int32_t(dest - int64_t(pc) - 1);
  }

  void fix(const Func& f, uint32_t base, uint32_t& j) {
    uint32_t pc = base + j;
    Insn insn = out_[pc];
    const ElfSection& sec = b_.elf.sections()[f.sec];
    std::string ctx = fmt::format("program text '{}' insn {}", f.name, j);
    auto rit = relocs_.find(key(f.sec, f.start + j));
    const ElfRel* rel = rit == relocs_.end() ? nullptr : &rit->second;
    const ElfSymbol* sym = rel ? &b_.elf.symbols()[rel->sym] : nullptr;
    if (sym && sym->sym.st_shndx == SHN_UNDEF) {
      bool kfunc = insn.code == (BPF_JMP | BPF_CALL);
      b_.fail(fmt::format("{} '{}' is not supported (unresolved extern in '{}')",
                          kfunc ? "kfunc" : "extern symbol", sym->name, f.name));
    }
    if (is_lddw(insn)) {
      if (j + 1 >= f.len) b_.fail(fmt::format("{}: ld_imm64 lacks its second slot", ctx));
      Insn next = out_[pc + 1];
      ++j;
      // libbpf: "relocation doesn't point to a valid instruction" (bpf_program__record_reloc).
      if (relocs_.count(key(f.sec, f.start + j)))
        b_.fail(fmt::format("{}: relocation on the second slot of an ld_imm64", ctx));
      if (!rel) return;
      if (rel->type != 1 /* R_BPF_64_64 */)
        b_.fail(fmt::format("{}: relocation type {} on ld_imm64", ctx, rel->type));
      size_t tsec = sym->sym.st_shndx;
      if (tsec >= b_.elf.sections().size())
        b_.fail(fmt::format("{}: relocation against special symbol '{}'", ctx, sym->name));
      int64_t off = int64_t(sym->sym.st_value) + insn.imm;
      if (b_.elf.sections()[tsec].exec()) {  // callback address
        if (off % 8) b_.fail(fmt::format("{}: misaligned function reference", ctx));
        insn.src_reg = BPF_PSEUDO_FUNC;
        insn.imm = retarget(tsec, off / 8, pc, ctx);
        next.imm = 0;
        store2(pc, insn, next);
        return;
      }
      int m = b_.map_at(tsec, sym->sym.st_value);
      if (m >= 0 && b_.data_maps.count(tsec) == 0) {
        insn.src_reg = BPF_PSEUDO_MAP_IDX;
        insn.imm = m;
        next.imm = 0;
        store2(pc, insn, next);
        return;
      }
      auto d = b_.data_maps.find(tsec);
      if (d == b_.data_maps.end())
        b_.fail(
            fmt::format("{}: reference to '{}' in section '{}', which is neither a map nor "
                        "global data",
                        ctx, sym->name, b_.elf.sections()[tsec].name));
      if (off < 0 || uint64_t(off) >= b_.elf.sections()[tsec].size)
        b_.fail(fmt::format("{}: offset {} outside section '{}'", ctx, off,
                            b_.elf.sections()[tsec].name));
      insn.src_reg = BPF_PSEUDO_MAP_IDX_VALUE;
      insn.imm = d->second;
      next.imm = int32_t(off);
      store2(pc, insn, next);
      return;
    }
    if (insn.code == (BPF_JMP | BPF_CALL)) {
      if (rel) {
        if (rel->type != 10 /* R_BPF_64_32 */)
          b_.fail(fmt::format("{}: relocation type {} on a call", ctx, rel->type));
        size_t tsec = sym->sym.st_shndx;
        if (tsec >= b_.elf.sections().size() || !b_.elf.sections()[tsec].exec())
          b_.fail(fmt::format("{}: call to '{}', which is not a function", ctx, sym->name));
        if (sym->sym.st_value % 8) b_.fail(fmt::format("{}: misaligned call target", ctx));
        insn.src_reg = BPF_PSEUDO_CALL;
        insn.imm = retarget(tsec, int64_t(sym->sym.st_value / 8) + insn.imm + 1, pc, ctx);
      } else if (insn.src_reg == BPF_PSEUDO_CALL) {
        insn.imm = retarget(f.sec, int64_t(f.start) + j + insn.imm + 1, pc, ctx);
      } else if (insn.src_reg == BPF_PSEUDO_KFUNC_CALL) {
        b_.fail(fmt::format("{}: kfunc call without a symbol", ctx));
      }
      out_[pc] = insn;
      return;
    }
    if (rel)
      b_.fail(fmt::format(
          "{}: relocation (type {}) on an instruction that takes none (opcode 0x{:02x}) in '{}'",
          ctx, rel->type, insn.code, sec.name));
  }

  void store2(uint32_t pc, const Insn& a, const Insn& b) {
    out_[pc] = a;
    out_[pc + 1] = b;
  }

  Builder& b_;
  std::map<size_t, std::vector<Func>> funcs_;
  std::unordered_map<uint64_t, ElfRel> relocs_;
  std::unordered_map<uint64_t, uint32_t> placed_;
  InsnVec out_;
  int depth_ = 0;
};

/// libbpf's section table (libbpf_prog_type_by_name), quietly; "xdp*" falls back to XDP as
/// libbpf 0.x matched by prefix.
void guess_type(ProgramSpec& p) {
  bpf_prog_type type = BPF_PROG_TYPE_UNSPEC;
  bpf_attach_type attach = bpf_attach_type(0);
  libbpf_print_fn_t old = libbpf_set_print(nullptr);
  int err = libbpf_prog_type_by_name(p.section.c_str(), &type, &attach);
  libbpf_set_print(old);
  if (err) {
    type = p.section.rfind("xdp", 0) == 0 ? BPF_PROG_TYPE_XDP : BPF_PROG_TYPE_UNSPEC;
    attach = p.section.rfind("xdp", 0) == 0 ? BPF_XDP : bpf_attach_type(0);
  }
  p.prog_type = type;
  p.expected_attach_type = attach;
  if (p.section.rfind("xdp.frags", 0) == 0) p.prog_flags |= BPF_F_XDP_HAS_FRAGS;
}

}  // namespace

void collect_programs(Builder& b) {
  Linker linker(b);
  for (const ElfSection& sec : b.elf.sections()) {
    if (!sec.exec() || sec.size == 0 || sec.name == ".text") continue;
    std::vector<Func> progs;
    for (const ElfSymbol& s : b.elf.symbols()) {
      if (s.type() != STT_FUNC || s.sym.st_shndx != sec.index) continue;
      if (s.bind() == STB_LOCAL)  // libbpf's bpf_object__add_programs refuses it (-ENOTSUP)
        b.fail(fmt::format("section '{}': program '{}' is static and not supported", sec.name,
                           s.name));
      progs.push_back(
          {sec.index, uint32_t(s.sym.st_value / 8), uint32_t(s.sym.st_size / 8), s.name});
    }
    if (progs.empty())  // objects without function symbols: the section is the program
      progs.push_back({sec.index, 0, uint32_t(sec.size / 8), sec.name});
    std::sort(progs.begin(), progs.end(),
              [](const Func& a, const Func& c) { return a.start < c.start; });
    for (const Func& f : progs) {
      if (f.len == 0) continue;
      ProgramSpec p;
      p.name = f.name;
      p.section = sec.name;
      guess_type(p);
      p.insns = linker.link(f);
      b.obj.programs.push_back(std::move(p));
    }
  }
  if (b.obj.programs.empty()) b.fail("no programs (no executable section other than .text)");
}

}  // namespace knod::loader
