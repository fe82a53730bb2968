// knod run-time ABI: what every executor (reference interpreter, CPU JIT, GPU kernels) and
// every helper share. One program run = one `Run`; everything a run may touch is a Region.
// Sources: kernel include/linux/bpf.h (helper calling convention: r1-r5 in, r0 out),
// RFC 9669 §4 (calls), kernel Documentation/bpf/verifier.rst (memory the program may touch).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "isa/insn.h"
#include "maps/map.h"

namespace knod::vm {

/// Why a run stopped early. Anything but kNone aborts the run; for XDP that is XDP_ABORTED,
/// counted by reason.
enum class Fault : uint8_t {
  kNone = 0,
  kOutOfBounds,  ///< load/store outside every Region of the run
  kInsnBudget,   ///< more than Run::insn_budget instructions executed
  kBadInsn,      ///< an instruction the executor cannot run (should be caught at load)
  kCallDepth,    ///< more than kMaxCallDepth bpf-to-bpf frames
  kBadHelper,    ///< unknown helper id, or a helper argument that is not what it must be
  kCtxAccess,    ///< ctx access at a bad offset/size, or a store to a read-only field
};
const char* fault_name(Fault f);

/// Memory the program may touch: [lo, hi) in the executor's address space. A map value pool
/// (`stride` set) holds values of `value_size` bytes every `stride` bytes from `lo`: an access
/// must lie inside one value, as the kernel verifier bounds PTR_TO_MAP_VALUE accesses by
/// value_size (check_map_access), so no run reaches a neighbouring element through it.
struct Region {
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool writable = false;
  uint32_t stride = 0;      ///< bytes from one value to the next; 0: one flat region
  uint32_t value_size = 0;  ///< bytes of each value when `stride` is set

  /// True when [addr, addr+len) lies inside the region (inside one value of a pool) and is
  /// writable when `write`.
  bool holds(uint64_t addr, uint64_t len, bool write) const {
    return addr >= lo && len <= hi - lo && addr - lo <= hi - lo - len && (!write || writable) &&
           (!stride || (addr - lo) % stride + len <= value_size);
  }
};

struct Run;
struct Env;

/// A helper: bpf helper id N (linux/bpf.h `__BPF_FUNC_MAPPER`) takes r1-r5, returns r0.
/// Pointer arguments are validated with Run::can_access; a bad one sets run.fault.
using HelperFn = uint64_t (*)(Run& run, uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
                              uint64_t r5);

/// Program-type ctx rewriting (kernel `convert_ctx_access`): a load of `size` bytes at byte
/// offset `off` inside the ctx object. Returns false for an access the kernel would reject.
using CtxLoadFn = bool (*)(Run& run, uint32_t off, uint32_t size, uint64_t* value);
using CtxStoreFn = bool (*)(Run& run, uint32_t off, uint32_t size, uint64_t value);

constexpr int kMaxHelperId = 256;

/// Helpers by id. Unset entries make the program fail to load ("unknown helper N").
struct HelperTable {
  HelperFn fn[kMaxHelperId] = {};
  const char* name[kMaxHelperId] = {};
  /// The kernel's bpf_func_proto.gpl_only: a program that is not GPL-compatible
  /// (Env::gpl_compatible false) may not call it.
  bool gpl_only[kMaxHelperId] = {};
};

/// A program ready to run: linked text (main + subprograms), ld_imm64 map references
/// already turned into host values (see prepare()).
struct Program {
  std::string name;
  InsnVec insns;
};

/// Everything shared by all runs of a set of programs (one loaded object): maps, the
/// programs a tail call may reach, helpers, the static regions (map value pools).
struct Env {
  std::vector<maps::MapPtr> maps;        ///< index = BPF_PSEUDO_MAP_IDX imm
  std::vector<const Program*> programs;  ///< PROG_ARRAY values index this vector
  const HelperTable* helpers =
      nullptr;  ///< fixed once a program ran (the host JIT calls them directly)
  std::vector<Region> static_regions;  ///< map value storage (maps::Map::value_regions)
  uint64_t clock_ns = 0;               ///< pinned clock for time helpers; 0 = real clock
  uint64_t seed = 0;                   ///< seed for bpf_get_prandom_u32
  void* user = nullptr;                ///< program-type data (e.g. xdp::Runtime*)
  /// The object's license is GPL-compatible (loader::Object::gpl_compatible); when false,
  /// prepare() refuses calls to HelperTable::gpl_only helpers, as the kernel's verifier does.
  bool gpl_compatible = true;
  /// Unique per Env object in this process, never reused (addresses are): executors key
  /// code that depends on the env's maps (e.g. inlined ARRAY lookups) by it.
  uint64_t serial = next_serial();

 private:
  static uint64_t next_serial() {
    static std::atomic<uint64_t> n{0};
    return ++n;
  }
};

constexpr int kMaxRunRegions = 8;

/// Default Run::insn_budget: knod's guard against a run that never ends (the kernel has no
/// run-time limit; its verifier refuses such loops). 2^26 covers bpf_loop's maximum of
/// BPF_MAX_LOOPS (8M) iterations of a small callback, so verified programs do not reach it.
constexpr uint64_t kDefaultInsnBudget = uint64_t(1) << 26;

/// State of one program run (one packet). Set up by the program-type runtime, then given to
/// an executor. Helpers read and change it.
struct Run {
  const Env* env = nullptr;
  uint32_t cpu = 0;                           ///< per-CPU map slot / bpf_get_smp_processor_id
  uint64_t insn_budget = kDefaultInsnBudget;  ///< instructions per run before kInsnBudget
  uint64_t insns_executed = 0;

  Region regions[kMaxRunRegions];  ///< stack, packet, metadata, conformance memory...
  uint32_t nregions = 0;

  uint64_t ctx_lo = 0, ctx_hi = 0;  ///< the ctx object; accesses go through ctx_load/store
  CtxLoadFn ctx_load = nullptr;
  CtxStoreFn ctx_store = nullptr;
  void* prog_state = nullptr;  ///< program-type per-run state (e.g. xdp::Buff*)
  /// The xdp::Buff whose fields struct xdp_md loads read, for executors that inline them (the
  /// JIT's knod_rt_ctx_field); nullptr: ctx_load only. Set by xdp::Buff::attach.
  const void* ctx_fields = nullptr;

  uint64_t prng = 0;  ///< bpf_get_prandom_u32 state
  /// This run's clock for the time helpers (e.g. the packet's capture time, ns); wins over
  /// Env::clock_ns; 0: none.
  uint64_t clock_ns = 0;
  uint32_t tail_calls = 0;  ///< taken so far (max kMaxTailCalls)
  const Program* tail_target =
      nullptr;  ///< set by bpf_tail_call; the executor jumps after the call

  /// Executor hook for helpers that call back into the program (bpf_loop,
  /// bpf_for_each_map_elem): `func` is the value an ld_imm64 BPF_PSEUDO_FUNC produced.
  uint64_t (*call_func)(Run& run, uint64_t func, uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
                        uint64_t r5) = nullptr;
  void* executor = nullptr;
  /// JIT: where the code that calls a helper which runs BPF code through call_func (or a
  /// callx) stands, stored just before the call: its frame depth (1 = the entry's), frame
  /// pointer and stack region. The callee runs in the next frame down of the same stack and
  /// region, as a bpf-to-bpf call (kCallDepth past kMaxCallDepth frames, as the interpreter
  /// counts them). call_fp 0: not set (the callee gets a stack of its own).
  uint32_t call_depth = 0;
  int32_t call_region = -1;
  uint64_t call_fp = 0;

  /// A stack of kMaxCallDepth x kStackSize bytes that the run's owner keeps registered as
  /// region `stack_region` from run to run (a JIT entry only moves the region's low end to
  /// the deepest active frame), or nullptr: executors allocate and register one per run.
  uint8_t* stack = nullptr;
  int32_t stack_region = -1;

  Fault fault = Fault::kNone;
  uint32_t fault_pc = 0;
  bool exit_now = false;  ///< set by a helper to end the run with r0 = its return
  /// Executor cache: the env static region (map value pool) a run-time check matched last;
  /// checked first by the JIT's inline check. Valid as long as `env` is; {0, 0}: none.
  Region static_hint;

  int add_region(uint64_t lo, uint64_t hi, bool writable) {
    if (nregions == kMaxRunRegions) return -1;
    regions[nregions] = Region{lo, hi, writable};
    return static_cast<int>(nregions++);
  }
  /// True when [addr, addr+len) lies inside one region of the run or of the env (and it is
  /// writable when `write`). The ctx object is not a Region: use ctx_load/ctx_store.
  bool can_access(uint64_t addr, uint64_t len, bool write) const {
    for (uint32_t i = 0; i < nregions; ++i)
      if (regions[i].holds(addr, len, write)) return true;
    if (env)
      for (const Region& r : env->static_regions)
        if (r.holds(addr, len, write)) return true;
    return false;
  }
  /// The map an ld_imm64 BPF_PSEUDO_MAP_IDX produced, or nullptr (and a fault) if `ptr` is
  /// not one of the env's maps.
  maps::Map* map_arg(uint64_t ptr) {
    if (env)
      for (const auto& m : env->maps)
        if (reinterpret_cast<uint64_t>(m.get()) == ptr) return m.get();
    fault = Fault::kBadHelper;
    return nullptr;
  }
};

}  // namespace knod::vm
