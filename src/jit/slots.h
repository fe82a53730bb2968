// The XDP slot loop in a program's module (xdp/slot_loop.h, compiled into the runtime bitcode
// as knod_rt_xdp_slots): bound to the program's body and, after the -O pipeline, with the
// optimised body inlined into it. Shared by the host JIT (jit::JitExecutor, what the CPU
// device calls per run of slots) and `knod jit --slot-loop`.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace knod::jit {

/// The runtime function the loop comes from: link_runtime must keep it.
inline constexpr const char* kSlotsRuntimeSymbol = "knod_rt_xdp_slots";

/// Optimised IR instructions of a body above which the slot loop is not compiled. With the
/// loop the body's machine code is generated twice (the body stays for the entry and tail
/// calls, at -O0 codegen) and the loop once: compile time grows by 60-80% (examples, best of
/// 6 compiles: tailcall 16 -> 30 ms, ddos 24 -> 38, l4lb 25 -> 40), for 5-20% less time per
/// packet (docs/PERFORMANCE.md). At 700 the two largest examples, nat44 and vlan (~1000 and
/// ~1200 instructions, 38-40 ms without the loop), stay without it, under the 50 ms target.
inline constexpr size_t kSlotsBodyMax = 700;

/// The symbol of program `name`'s loop: vm::Executor::SlotsFn, void(xdp::SlotLoop*).
std::string slots_symbol(const std::string& name);

/// Before the pipeline: the runtime's loop becomes slots_symbol(name), its knod_rt_body call
/// a call of the program's body (not inlined by the pipeline: the body is NoInline). Throws
/// knod::Error when the module lacks the loop, the placeholder or the body.
void bind_slots(llvm::Module& m, const std::string& name);

/// After the pipeline: inlines the optimised body into the loop and cleans the loop up, so
/// that the loop's state lives in registers around the program's code; the entry and the body
/// are then generated the quick way (-O0 codegen: only Runtime::run_packet and tail calls use
/// them). A body over kSlotsBodyMax instructions, or `level` 0, gets no loop: it is removed.
/// Returns whether the module has the loop. Throws knod::Error when inlining fails.
bool inline_body_into_slots(llvm::Module& m, const std::string& name, llvm::TargetMachine* tm,
                            int level);

/// After inline_body_into_slots: moves what the loop does not run (the entry, the standalone
/// body, the subprograms' exported symbols) into a module of its own, which it returns; `m`
/// keeps the loop as its one exported function, with internal copies of what the loop calls.
/// The executor compiles `m` at once and the returned module on first use (only
/// Runtime::run_packet, tail calls and bpf_loop callbacks call into it), so a batch-only run
/// never generates the standalone code. The module has no global variables, so the copies
/// share no state.
std::unique_ptr<llvm::Module> split_off_entry(llvm::Module& m, const std::string& name);

}  // namespace knod::jit
