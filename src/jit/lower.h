// eBPF → LLVM IR: one target-neutral lowering shared by the CPU JIT and the GPU devices.
// A program becomes `i64 @<name>(ptr %run, i64 %r1, i64 %r2)`, which allocates the stack
// (kMaxCallDepth frames of 512 bytes, one Region of the run) and calls the body. The body
// (pc 0), each bpf-to-bpf subprogram and each callback reachable through ld_imm64
// BPF_PSEUDO_FUNC become
// `i64 @<name>_sub<pc>(ptr %run, ptr %fp, i64 %r1..%r5, i32 %depth, i32 %region)`,
// %fp being the top of the frame (r10), %depth the frames in use including this one and
// %region the index of the stack Region in run.regions (its lo follows the deepest frame).
// Helpers, ctx accesses, faults and unproven memory accesses call the runtime ABI of
// jit/runtime/rt.h; no host address is baked into the IR except ld_imm64 values that
// vm::prepare() already turned into host values.
// Semantics: RFC 9669 (incl. v4: sdiv/smod, movsx, ldsx, bswap, gotol), kernel
// Documentation/bpf/standardization/instruction-set.rst.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "isa/insn.h"
#include "maps/hash_view.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace knod::vm {
struct HelperTable;
}  // namespace knod::vm

namespace knod::jit {

/// Value of ld_imm64 BPF_PSEUDO_FUNC: tag | entry pc (the interpreter's vm::kFuncTag).
constexpr uint64_t kFuncTag = 0xfb0f'0000'0000'0000ull;

/// What r1 holds at entry, so that ctx accesses can be resolved at compile time.
enum class CtxKind : uint8_t {
  kOpaque = 0,  ///< unknown (conformance suite: r1 = plain memory); every access is checked
  kXdp,         ///< r1 = struct xdp_md; data/data_end/data_meta loads give packet pointers
};

/// What the lowering may assume about a map an ld_imm64 names (vm::prepare turned its
/// BPF_PSEUDO_MAP_* value into `addr`). Lets the range analysis type bpf_map_lookup_elem's
/// result as a pointer to `value_size` bytes or NULL, as the kernel verifier does
/// (PTR_TO_MAP_VALUE_OR_NULL, Documentation/bpf/verifier.rst), and the CPU JIT inline ARRAY
/// lookups (the kernel's array_map_gen_lookup). See jit/map_desc.h.
struct MapDesc {
  uint64_t addr = 0;  ///< the map's ld_imm64 value (BPF_PSEUDO_MAP_FD/IDX after vm::prepare)
  uint32_t type = 0;  ///< BPF_MAP_TYPE_*
  uint32_t key_size = 0, value_size = 0, max_entries = 0;  ///< bytes, bytes, entries
  bool values_typed = false;  ///< lookup returns value_size bytes or NULL (ARRAY, HASH, LPM...)
  bool readonly = false;      ///< program stores into values fault (BPF_F_RDONLY_PROG...)
  /// Element 0's value (BPF_PSEUDO_MAP_VALUE addresses fall in [value0, value0+value_size)),
  /// or 0. Non-per-CPU ARRAY maps only.
  uint64_t value0 = 0;
  /// Inline lookup (ARRAY / PERCPU_ARRAY on the host only; 0 = call the helper): element i
  /// of CPU c lives at values + (c * cpu_slots + i) * stride (maps/array.h).
  uint64_t values = 0;
  uint32_t stride = 0, ncpus = 1, cpu_slots = 0;
  /// Inline HASH / PERCPU_HASH / LRU_HASH / LRU_PERCPU_HASH lookup (host only; hash.head null
  /// = call the helper): the table's arrays (maps/hash_view.h), the LRU reference bytes (0
  /// if not LRU); per-CPU maps: CPU c's value `cpu_block` bytes after CPU 0's
  /// (maps::HashMap::cpu_block).
  maps::HashView hash{};
  uint64_t lru_ref = 0, cpu_block = 0;
  bool percpu = false;
  /// The map object lives in this process (a host executor): a lookup that is not inlined,
  /// with a proven key, may call its maps::Map::lookup directly (knod_host_map_lookup)
  /// instead of the helper, which would validate the map and key pointers first.
  bool host = false;
};

struct LowerOptions {
  std::string name = "knod_prog";  ///< symbol of the entry function; subprograms get suffixes
  CtxKind ctx = CtxKind::kOpaque;
  bool range_analysis = true;  ///< false: guard every memory access (for testing)
  std::vector<MapDesc> maps;   ///< maps the program's ld_imm64 values may name (may be empty)
  /// Host only: the helper table every run of this code will use (vm::Env::helpers). A helper
  /// call with a constant id it defines calls that function directly instead of dispatching
  /// through knod_rt_helper (no table lookup, no id check: the id is known here). Null: every
  /// helper call goes through knod_rt_helper (GPU targets, `knod jit` output).
  const vm::HelperTable* helpers = nullptr;
};

/// Per-program counts of memory accesses (static instructions).
struct LowerStats {
  uint32_t accesses = 0;         ///< LDX/ST/STX/atomic instructions lowered
  uint32_t proven = 0;           ///< proven in bounds: no run-time check
  uint32_t checked = 0;          ///< guarded by a run-time check
  uint32_t ctx_direct = 0;       ///< ctx accesses at a known offset (direct ctx_load call)
  uint32_t map_values = 0;       ///< of `proven`: map value accesses (typed lookups)
  uint32_t inlined_lookups = 0;  ///< bpf_map_lookup_elem calls inlined (ARRAY and HASH maps)
  uint32_t direct_helpers = 0;   ///< helper calls made directly (LowerOptions::helpers)
  uint32_t subprograms = 0;      ///< functions besides the entry
  std::vector<uint32_t> subprogram_pcs;  ///< entry pc of each function (0 = the body)
  std::vector<uint32_t> checked_pcs;     ///< pcs of the accesses left with a run-time check
};

/// Lowers `insns` into a new module of `ctx`. Throws knod::Error for a program that cannot be
/// lowered (jump outside its subprogram, truncated ld_imm64, unknown opcode...).
std::unique_ptr<llvm::Module> lower(const InsnVec& insns, llvm::LLVMContext& ctx,
                                    const LowerOptions& opts, LowerStats* stats = nullptr);

/// Symbol of the subprogram starting at `pc` for entry symbol `name`.
std::string subprogram_symbol(const std::string& name, uint32_t pc);

}  // namespace knod::jit
