// eBPF → LLVM IR driver: one LLVM function per subprogram, one basic block per leader,
// registers as allocas (SROA/mem2reg promote them), a [kMaxCallDepth x 512] stack buffer
// allocated by the entry function and registered as a Region of the run.
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "base/error.h"
#include "jit/cfg.h"
#include "jit/lower_impl.h"

namespace knod::jit {

using llvm::BasicBlock;
using llvm::Type;
using llvm::Value;

void RuntimeDecls::declare(llvm::Module& m) {
  auto& c = m.getContext();
  Type* p = llvm::PointerType::getUnqual(c);
  Type *i1 = Type::getInt1Ty(c), *i32 = Type::getInt32Ty(c), *i64 = Type::getInt64Ty(c),
       *v = Type::getVoidTy(c);
  auto fn = [&](const char* name, Type* ret, std::vector<Type*> args) {
    return m.getOrInsertFunction(name, llvm::FunctionType::get(ret, args, false));
  };
  check = fn("knod_rt_check", i1, {p, i64, i32, i1});
  load_slow = fn("knod_rt_load_slow", i64, {p, i64, i32, i32});
  store_slow = fn("knod_rt_store_slow", v, {p, i64, i32, i64, i32});
  ctx_ok = fn("knod_rt_ctx_ok", i1, {p, i32, i32});
  ctx_field = fn("knod_rt_ctx_field", i64, {p, i32});
  ctx_slow = fn("knod_rt_ctx_slow", i64, {p, i32, i32, i32});
  helper = fn("knod_rt_helper", i64, {p, i32, i64, i64, i64, i64, i64, i32});
  fault = fn("knod_rt_fault", v, {p, i32, i32});
  stopped = fn("knod_rt_stopped", i1, {p});
  fence_acquire = fn("knod_rt_fence_acquire", v, {});
  fence_release = fn("knod_rt_fence_release", v, {});
  set_caller = fn("knod_rt_set_caller", v, {p, i32, p, i32});
  budget = fn("knod_rt_budget", i1, {p, i64, i32});
  enter = fn("knod_rt_enter", i32, {p, p, i32});
  leave = fn("knod_rt_leave", v, {p, i32});
  tail_pending = fn("knod_rt_tail_pending", i1, {p});
  tail_call = fn("knod_rt_tail_call", i1, {p, i64, p, i32, i32, p});
  frame = fn("knod_rt_frame", v, {p, i32, p});
  stack = fn("knod_rt_stack", p, {p});
  stack_region = fn("knod_rt_stack_region", i32, {p});
  callx = fn("knod_rt_callx", i64, {p, i64, i64, i64, i64, i64, i64, i32});
}

std::string subprogram_symbol(const std::string& name, uint32_t pc) {
  return name + "_sub" + std::to_string(pc);
}

namespace {

constexpr int32_t kLoadAcquire = 0x100;   // BPF_LOAD_ACQ (kernel 6.15+)
constexpr int32_t kStoreRelease = 0x110;  // BPF_STORE_REL

/// The program with each load-acquire and store-release replaced by the plain LDX / STX MEM
/// access it makes (same registers, offset and size), and which pcs those were.
InsnVec plain_accesses(const InsnVec& insns, std::vector<Lowerer::Fence>& fences) {
  InsnVec out(insns);
  fences.assign(insns.size(), Lowerer::Fence::kNone);
  for (size_t pc = 0; pc < insns.size(); ++pc) {
    Insn& i = out[pc];
    if (insn_class(i) != BPF_STX || BPF_MODE(i.code) != BPF_ATOMIC) continue;
    if (i.imm == kLoadAcquire) {
      i.code = uint8_t(BPF_LDX | BPF_MEM | BPF_SIZE(i.code));
      fences[pc] = Lowerer::Fence::kAcquireAfter;
    } else if (i.imm == kStoreRelease) {
      i.code = uint8_t(BPF_STX | BPF_MEM | BPF_SIZE(i.code));
      fences[pc] = Lowerer::Fence::kReleaseBefore;
    } else {
      continue;
    }
    i.imm = 0;
  }
  return out;
}

}  // namespace

Lowerer::Lowerer(const InsnVec& insns, llvm::Module& m, const LowerOptions& opts, LowerStats& stats)
    : plain_(plain_accesses(insns, fences_)),
      insns_(plain_),
      m_(m),
      c_(m.getContext()),
      b_(m.getContext()),
      opts_(opts),
      stats_(stats) {
  rt_.declare(m_);
}

void Lowerer::bad(uint32_t pc, const std::string& why) const {
  throw Error("jit: " + why + " at pc " + std::to_string(pc));
}

Value* Lowerer::c64(uint64_t v) {
  return b_.getInt64(v);
}
Value* Lowerer::c32(uint32_t v) {
  return b_.getInt32(v);
}
Value* Lowerer::get(int r) {
  return b_.CreateLoad(b_.getInt64Ty(), regs_[r]);
}
Value* Lowerer::get32(int r) {
  return b_.CreateTrunc(get(r), b_.getInt32Ty());
}
void Lowerer::set(int r, Value* v) {
  b_.CreateStore(v, regs_[r]);
}

BasicBlock* Lowerer::new_block(const char* name) {
  return BasicBlock::Create(c_, name, fn_);
}

BasicBlock* Lowerer::block_at(int64_t pc) {
  if (pc < lo_ || pc >= hi_) bad(uint32_t(pc), "jump outside its subprogram");
  auto it = blocks_.find(uint32_t(pc));
  if (it == blocks_.end()) bad(uint32_t(pc), "jump into the middle of ld_imm64");
  return it->second;
}

void Lowerer::emit_return(Value* r0) {
  b_.CreateStore(r0, retval_);
  b_.CreateBr(ret_bb_);
}

void Lowerer::emit_fault(vm::Fault f, uint32_t pc) {
  b_.CreateCall(rt_.fault, {run_, c32(uint32_t(f)), c32(pc)});
  emit_return(c64(0));
}

void Lowerer::fault_if(Value* cond, vm::Fault f, uint32_t pc) {
  BasicBlock* bad_bb = new_block("fault");
  BasicBlock* ok = new_block("ok");
  b_.CreateCondBr(cond, bad_bb, ok);
  b_.SetInsertPoint(bad_bb);
  emit_fault(f, pc);
  b_.SetInsertPoint(ok);
}

void Lowerer::return_if_stopped(Value* r0) {
  Value* stop = b_.CreateCall(rt_.stopped, {run_});
  BasicBlock* out = new_block("stopped");
  BasicBlock* cont = new_block("cont");
  b_.CreateCondBr(stop, out, cont);
  b_.SetInsertPoint(out);
  emit_return(r0);
  b_.SetInsertPoint(cont);
}

void Lowerer::run() {
  subs_ = find_subprograms(insns_);
  frame_zero_.assign(subs_.size(), FrameZero{uint32_t(kStackSize), 0});
  access_ = opts_.range_analysis
                ? analyze_accesses(insns_, subs_, opts_.ctx, opts_.maps, &frame_zero_)
                : std::vector<AccessInfo>(insns_.size());
  Type* p = llvm::PointerType::getUnqual(c_);
  Type* i64 = b_.getInt64Ty();
  Type* i32 = b_.getInt32Ty();
  auto* sub_ty = llvm::FunctionType::get(i64, {p, p, i64, i64, i64, i64, i64, i32, i32}, false);
  for (uint32_t s : subs_) {
    fns_[s] = llvm::Function::Create(sub_ty, llvm::Function::ExternalLinkage,
                                     subprogram_symbol(opts_.name, s), m_);
    stats_.subprogram_pcs.push_back(s);
    if (s != 0) ++stats_.subprograms;
    // The body is also a tail-call target: one copy of its code, not one per caller.
    if (s == 0) fns_[s]->addFnAttr(llvm::Attribute::NoInline);
  }
  lower_entry();
  for (size_t i = 0; i < subs_.size(); ++i) lower_function(i);
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(m_, &os)) throw Error("jit: internal error, invalid IR: " + os.str());
}

// The entry: a [kMaxCallDepth x 512] stack registered as a Region (the active frames, as in
// the interpreter), then the body (pc 0). The run's own stack (run.stack, registered by its
// owner) when it has one, so a run does not register and drop a region.
void Lowerer::lower_entry() {
  Type* p = llvm::PointerType::getUnqual(c_);
  Type* i64 = b_.getInt64Ty();
  auto* ty = llvm::FunctionType::get(i64, {p, i64, i64}, false);
  fn_ = llvm::Function::Create(ty, llvm::Function::ExternalLinkage, opts_.name, m_);
  b_.SetInsertPoint(new_block("entry"));
  run_ = fn_->getArg(0);
  auto* stack_ty = llvm::ArrayType::get(b_.getInt8Ty(), kStackSize * kMaxCallDepth);
  llvm::AllocaInst* stack = b_.CreateAlloca(stack_ty, nullptr, "stack");  // static: entry block
  stack->setAlignment(llvm::Align(16));
  {
    Value* own = b_.CreateCall(rt_.stack, {run_});
    BasicBlock* kept = new_block("kept_stack");
    BasicBlock* fresh = new_block("fresh_stack");
    b_.CreateCondBr(b_.CreateIsNotNull(own), kept, fresh);
    b_.SetInsertPoint(kept);
    Value* region = b_.CreateCall(rt_.stack_region, {run_});
    Value* fp = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), own, kStackSize * kMaxCallDepth);
    b_.CreateCall(rt_.frame,
                  {run_, region, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), fp, -kStackSize)});
    b_.CreateRet(b_.CreateCall(fns_.at(0), {run_, fp, fn_->getArg(1), fn_->getArg(2), c64(0),
                                            c64(0), c64(0), c32(1), region}));
    b_.SetInsertPoint(fresh);
  }
  Value* saved = b_.CreateCall(rt_.enter, {run_, stack, c32(kStackSize * kMaxCallDepth)});
  BasicBlock* bad_bb = new_block("no_region");
  BasicBlock* ok = new_block("body");
  b_.CreateCondBr(b_.CreateICmpSLT(saved, c32(0)), bad_bb, ok);
  b_.SetInsertPoint(bad_bb);
  b_.CreateCall(rt_.fault, {run_, c32(uint32_t(vm::Fault::kOutOfBounds)), c32(0)});
  b_.CreateRet(c64(0));
  b_.SetInsertPoint(ok);
  // Frames grow down from the top of the buffer; the region covers the active ones.
  Value* fp = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), stack, kStackSize * kMaxCallDepth);
  b_.CreateCall(rt_.frame,
                {run_, saved, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), fp, -kStackSize)});
  Value* r0 = b_.CreateCall(fns_.at(0), {run_, fp, fn_->getArg(1), fn_->getArg(2), c64(0), c64(0),
                                         c64(0), c32(1), saved});
  b_.CreateCall(rt_.leave, {run_, saved});
  b_.CreateRet(r0);
}

void Lowerer::lower_function(size_t index) {
  lo_ = subs_[index];
  hi_ = subprogram_end(subs_, index, insns_.size());
  fn_ = fns_[lo_];
  blocks_.clear();
  BasicBlock* entry = new_block("entry");
  b_.SetInsertPoint(entry);
  auto* i64 = b_.getInt64Ty();
  for (int r = 0; r < kNumRegs; ++r)
    regs_[r] = b_.CreateAlloca(i64, nullptr, "r" + std::to_string(r));
  retval_ = b_.CreateAlloca(i64, nullptr, "retval");
  tail_r0_ = b_.CreateAlloca(i64, nullptr, "tail_r0");
  auto args = fn_->arg_begin();
  run_ = &*args++;
  fp_ = &*args++;
  for (int r = 0; r < kNumRegs; ++r) set(r, c64(0));
  for (int r = 1; r <= 5; ++r) set(r, &*args++);
  depth_ = &*args++;
  region_ = &*args++;
  set(10, b_.CreatePtrToInt(fp_, i64));
  // Each frame starts zeroed, as in the reference interpreter, as far as the code can see it
  // (the range analysis' FrameZero; the whole frame without it).
  if (const FrameZero z = frame_zero_[index]; z.deep > z.shallow)
    b_.CreateMemSet(b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), fp_, -int64_t(z.deep)),
                    b_.getInt8(0), z.deep - z.shallow, llvm::MaybeAlign(16));
  ret_bb_ = BasicBlock::Create(c_, "ret", fn_);
  std::vector<bool> lead = block_leaders(insns_, lo_, hi_);
  for (uint32_t pc = lo_; pc < hi_; ++pc)
    if (lead[pc - lo_]) blocks_[pc] = BasicBlock::Create(c_, "pc" + std::to_string(pc), fn_);
  b_.CreateBr(blocks_[lo_]);

  for (uint32_t pc = lo_; pc < hi_; ++pc) {
    if (lead[pc - lo_]) {
      if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(blocks_[pc]);
      b_.SetInsertPoint(blocks_[pc]);
    } else if (b_.GetInsertBlock()->getTerminator()) {
      b_.SetInsertPoint(new_block("dead"));
    }
    lower_insn(pc);
    if (is_lddw(insns_[pc])) ++pc;
  }
  if (!b_.GetInsertBlock()->getTerminator()) emit_fault(vm::Fault::kBadInsn, hi_ - 1);

  b_.SetInsertPoint(ret_bb_);
  b_.CreateRet(b_.CreateLoad(i64, retval_));
}

void Lowerer::lower_insn(uint32_t pc) {
  const Insn& i = insns_[pc];
  uint8_t cls = insn_class(i);
  bool src_is_reg = cls != BPF_LD && !(cls == BPF_JMP && BPF_OP(i.code) == BPF_CALL);
  if (i.dst_reg >= kNumRegs || (src_is_reg && i.src_reg >= kNumRegs)) bad(pc, "bad register");
  bool writes_dst = cls == BPF_ALU || cls == BPF_ALU64 || cls == BPF_LDX || cls == BPF_LD;
  if (writes_dst && i.dst_reg == 10) bad(pc, "write to r10");
  switch (cls) {
    case BPF_ALU:
    case BPF_ALU64:
      return lower_alu(i, pc);
    case BPF_JMP:
    case BPF_JMP32:
      return lower_jmp(i, pc);
    case BPF_LD:
      return lower_lddw(i, pc);
    case BPF_LDX:
      lower_load(i, pc);
      if (fences_[pc] == Fence::kAcquireAfter) b_.CreateCall(rt_.fence_acquire, {});
      return;
    case BPF_ST:
      return lower_store(i, pc);
    case BPF_STX:
      if (BPF_MODE(i.code) == BPF_ATOMIC) return lower_atomic(i, pc);
      if (fences_[pc] == Fence::kReleaseBefore) b_.CreateCall(rt_.fence_release, {});
      return lower_store(i, pc);
  }
}

std::unique_ptr<llvm::Module> lower(const InsnVec& insns, llvm::LLVMContext& ctx,
                                    const LowerOptions& opts, LowerStats* stats) {
  if (insns.empty()) throw Error("jit: empty program");
  auto m = std::make_unique<llvm::Module>(opts.name, ctx);
  LowerStats local;
  Lowerer l(insns, *m, opts, stats ? *stats : local);
  l.run();
  return m;
}

}  // namespace knod::jit
