// Internal state of the eBPF → LLVM lowering, shared by lower_*.cpp (one file per
// instruction family). Not a public header.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <map>
#include <string>
#include <vector>

#include "jit/lower.h"
#include "jit/safety.h"
#include "vm/abi.h"

namespace knod::jit {

/// Runtime ABI declarations (jit/runtime/rt.h).
struct RuntimeDecls {
  llvm::FunctionCallee check, load_slow, store_slow, ctx_ok, ctx_field, ctx_slow, helper, fault,
      stopped, budget, enter, leave, tail_pending, tail_call, callx, frame, stack, stack_region,
      fence_acquire, fence_release, set_caller;
  void declare(llvm::Module& m);
};

class Lowerer {
 public:
  /// What a pc's access needs around it (load-acquire, store-release; see plain_).
  enum class Fence : uint8_t { kNone, kAcquireAfter, kReleaseBefore };
  Lowerer(const InsnVec& insns, llvm::Module& m, const LowerOptions& opts, LowerStats& stats);
  void run();

 private:
  // ---- functions and blocks (lower.cpp)
  void lower_entry();
  void lower_function(size_t sub_index);
  void lower_insn(uint32_t pc);
  llvm::BasicBlock* block_at(int64_t pc);
  llvm::BasicBlock* new_block(const char* name);
  [[noreturn]] void bad(uint32_t pc, const std::string& why) const;
  // ---- registers
  llvm::Value* get(int r);
  llvm::Value* get32(int r);
  void set(int r, llvm::Value* v);  ///< v is i64
  llvm::Value* c64(uint64_t v);
  llvm::Value* c32(uint32_t v);
  // ---- control: faults and early return
  void emit_fault(vm::Fault f, uint32_t pc);                   ///< terminates the current block
  void fault_if(llvm::Value* cond, vm::Fault f, uint32_t pc);  ///< continues on !cond
  void return_if_stopped(llvm::Value* r0);                     ///< after helper / subprogram calls
  void after_helper(llvm::Value* r0);                          ///< stop / exit_now / tail call
  void emit_return(llvm::Value* r0);                           ///< terminates the current block
  // ---- families
  void lower_alu(const Insn& i, uint32_t pc);   // lower_alu.cpp
  void lower_jmp(const Insn& i, uint32_t pc);   // lower_jumps.cpp
  void lower_call(const Insn& i, uint32_t pc);  // lower_calls.cpp
  llvm::Value* key_ptr(const AccessInfo& a);
  void lower_tail_call(const AccessInfo& a);
  void lower_direct_helper(uint32_t id, uint32_t pc);
  void lower_xdp_adjust(const AccessInfo& a, uint32_t pc);
  void lower_map_lookup(const AccessInfo& a);
  void lower_array_lookup(const AccessInfo& a);
  void lower_hash_lookup(const AccessInfo& a);
  void lower_lddw(const Insn& i, uint32_t pc);  // lower_memory.cpp
  void lower_load(const Insn& i, uint32_t pc);
  void lower_store(const Insn& i, uint32_t pc);
  void lower_atomic(const Insn& i, uint32_t pc);  // lower_atomics.cpp
  llvm::Value* checked_addr(const Insn& i, uint32_t pc, int base_reg, unsigned size, bool write,
                            llvm::BasicBlock** slow);  // lower_memory.cpp
  llvm::Value* stack_ptr(int32_t off);
  /// The run-time check of a kChecked access: knod_rt_check, or knod_rt_check_off_stack
  /// (AccessInfo::off_stack). Returns the i1 "in bounds".
  llvm::Value* check_access(const AccessInfo& a, llvm::Value* addr, unsigned size, bool write);

  /// Load-acquire and store-release (BPF_STX | BPF_ATOMIC, imm BPF_LOAD_ACQ 0x100 /
  /// BPF_STORE_REL 0x110, kernel 6.15+) are lowered as the plain LDX / STX MEM access they
  /// make, as the interpreter runs them (range analysis, frame zeroing and run-time checks
  /// alike), with an acquire fence after the load or a release fence before the store.
  std::vector<Fence> fences_;  ///< per pc (set before plain_)
  InsnVec plain_;              ///< the program as lowered: insns_ refers to it
  const InsnVec& insns_;
  llvm::Module& m_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;
  const LowerOptions& opts_;
  LowerStats& stats_;
  RuntimeDecls rt_;
  std::vector<uint32_t> subs_;
  std::vector<AccessInfo> access_;
  std::vector<FrameZero> frame_zero_;        ///< per subprogram: bytes zeroed below r10 at entry
  std::map<uint32_t, llvm::Function*> fns_;  ///< by entry pc

  // per function
  llvm::Function* fn_ = nullptr;
  uint32_t lo_ = 0, hi_ = 0;
  llvm::Value* run_ = nullptr;
  llvm::Value* fp_ = nullptr;      ///< ptr: top of this frame (r10)
  llvm::Value* depth_ = nullptr;   ///< i32: frames including this one
  llvm::Value* region_ = nullptr;  ///< i32: index of the stack Region in run.regions
  llvm::AllocaInst* regs_[kNumRegs] = {};
  llvm::AllocaInst* retval_ = nullptr;
  llvm::AllocaInst* tail_r0_ = nullptr;
  llvm::BasicBlock* ret_bb_ = nullptr;
  std::map<uint32_t, llvm::BasicBlock*> blocks_;
};

}  // namespace knod::jit
