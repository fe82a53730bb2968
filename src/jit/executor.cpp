#include "jit/executor.h"

#include <linux/bpf.h>
#include <llvm/ExecutionEngine/Orc/CompileOnDemandLayer.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "base/error.h"
#include "jit/map_desc.h"
#include "jit/pipeline.h"
#include "jit/runtime/rt.h"
#include "jit/slots.h"
#include "maps/map.h"
#include "vm/tail_call.h"
#include "xdp/buff.h"

// Host side of the runtime ABI (rt.h): env static regions (map value pools).
extern "C" bool knod_host_static_ok(knod::vm::Run* run, uint64_t addr, uint64_t len, bool write) {
  if (!run->env) return false;
  for (const knod::vm::Region& r : run->env->static_regions)
    if (r.holds(addr, len, write)) {
      run->static_hint = r;  // the next access to this map's values is checked inline
      return true;
    }
  return false;
}

namespace knod::jit {
namespace {

using RunState = CompiledProgram::Hook;

/// Per-thread memo of tail-call targets (direct-mapped by program address): a tail call
/// taken on every packet must not take the executor's shared lock (an atomic read-modify-write
/// on one cache line for all workers). Keyed by executor and env serials, never reused.
struct TailMemo {
  uint64_t ex_serial = 0, env_serial = 0;
  const knod::vm::Program* prog = nullptr;
  const CompiledProgram* cp = nullptr;
};
thread_local TailMemo tail_memo[8];

const CompiledProgram& tail_target(JitExecutor& ex, const knod::vm::Program& prog,
                                   const knod::vm::Env* env) {
  TailMemo& m = tail_memo[(reinterpret_cast<uintptr_t>(&prog) >> 6) % 8];
  const uint64_t env_serial = env ? env->serial : 0;
  if (m.prog != &prog || m.ex_serial != ex.serial() || m.env_serial != env_serial)
    m = TailMemo{ex.serial(), env_serial, &prog, &ex.compile(prog, env)};
  return *m.cp;
}

}  // namespace
}  // namespace knod::jit

// Host side of an inlined lookup on a map the JIT does not walk itself (jit/safety.h
// kMapLookup): what bpf_map_lookup_elem does once the map and key pointers are validated.
extern "C" uint64_t knod_host_map_lookup(knod::vm::Run* run, uint64_t map, const void* key) {
  return reinterpret_cast<uint64_t>(reinterpret_cast<knod::maps::Map*>(map)->lookup(key, run->cpu));
}

// Host side of knod_rt_xdp_adjust (bpf_xdp_adjust_head / adjust_meta with the ctx in r1).
extern "C" uint64_t knod_host_xdp_adjust(knod::vm::Run* run, int32_t id, uint64_t offset) {
  auto* b = static_cast<knod::xdp::Buff*>(const_cast<void*>(run->ctx_fields));
  return uint64_t(id == BPF_FUNC_xdp_adjust_meta ? b->adjust_meta(*run, int32_t(offset))
                                                 : b->adjust_head(*run, int32_t(offset)));
}

// Host side of knod_rt_tail_call: the target's body replaces the current frame.
extern "C" uint64_t knod_host_tail_call(knod::vm::Run* run, uint64_t r1, void* fp, uint32_t depth,
                                        int32_t region) {
  using namespace knod::jit;
  auto* st = static_cast<RunState*>(run->executor);
  const knod::vm::Program* target = run->tail_target;
  run->tail_target = nullptr;
  const CompiledProgram* cp;
  try {
    cp = &tail_target(*st->self, *target, run->env);
  } catch (const std::exception&) {
    run->fault = knod::vm::Fault::kBadInsn;
    return 0;
  }
  run->executor = const_cast<RunState*>(&cp->hook);
  uint64_t r0 = cp->body(run, fp, r1, 0, 0, 0, 0, depth, region);
  run->executor = st;
  return r0;
}

// Host side of bpf_tail_call on a PROG_ARRAY the JIT knows (jit/safety.h kTailCall: ctx in r1,
// the map from its ld_imm64): the helper's work without validating its arguments, then the
// target in place of the caller's frame (knod_rt_tail_call's work), in one call.
extern "C" bool knod_host_tail_jump(knod::vm::Run* run, uint64_t map, uint64_t index, uint64_t r1,
                                    void* fp, uint32_t depth, int32_t region, uint64_t* r0) {
  knod::vm::tail_call_to(*run, *reinterpret_cast<const knod::maps::ProgArray*>(map), index);
  if (!run->tail_target) return false;  // tail_call_to counted kMaxTailCalls
  ++run->tail_calls;
  *r0 = knod_host_tail_call(run, r1, fp, depth, region);
  return true;
}

namespace knod::jit {
namespace {

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// vm::Run::call_func for bpf_loop / bpf_for_each_map_elem callbacks (and callx): the next
// frame down of the caller's stack (vm::Run::call_fp, call_region), as a bpf-to-bpf call;
// without a caller stored, a fresh stack.
uint64_t call_func(vm::Run& run, uint64_t func, uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
                   uint64_t r5) {
  auto* st = static_cast<RunState*>(run.executor);
  if ((func & ~uint64_t(0xffffffff)) != kFuncTag) {
    run.fault = vm::Fault::kBadHelper;
    return 0;
  }
  auto it = st->prog->subs.find(func & 0xffffffff);
  if (it == st->prog->subs.end()) {
    run.fault = vm::Fault::kBadHelper;
    return 0;
  }
  // The caller's frames and the callback's count together (vm::Run::call_depth).
  const uint32_t depth = std::max(run.call_depth, 1u);
  if (depth >= uint32_t(kMaxCallDepth)) {
    run.fault = vm::Fault::kCallDepth;
    return 0;
  }
  const uint64_t caller_fp = run.call_fp;
  const int32_t caller_region = run.call_region;
  uint64_t r0;
  if (caller_fp && caller_region >= 0 && uint32_t(caller_region) < run.nregions) {
    // As lower_call: the callee's frame below the caller's, the region's low end moved down
    // to it for the call and back after.
    uint8_t* fp = reinterpret_cast<uint8_t*>(caller_fp) - kStackSize;
    run.regions[caller_region].lo = reinterpret_cast<uint64_t>(fp) - kStackSize;
    r0 = it->second(&run, fp, r1, r2, r3, r4, r5, depth + 1, caller_region);
    run.regions[caller_region].lo = caller_fp - kStackSize;
  } else {
    alignas(16) uint8_t stack[kStackSize * kMaxCallDepth];
    uint32_t saved = run.nregions;
    uint64_t top = reinterpret_cast<uint64_t>(stack) + sizeof(stack);
    int region = run.add_region(top - kStackSize, top, true);
    if (region < 0) {
      run.fault = vm::Fault::kOutOfBounds;
      return 0;
    }
    r0 = it->second(&run, stack + sizeof(stack), r1, r2, r3, r4, r5, depth + 1, region);
    run.nregions = saved;
  }
  // A helper the callback called stored its own caller: the next callback is this one's.
  run.call_depth = depth;
  run.call_fp = caller_fp;
  run.call_region = caller_region;
  return r0;
}

/// Where a call into a lazily compiled module goes when its compile failed (LLVM's error is
/// on stderr): the entry and every body take the run first, so the packet aborts.
uint64_t lazy_compile_failed(vm::Run* run) {
  run->fault = vm::Fault::kBadInsn;
  return 0;
}

}  // namespace

struct JitExecutor::Impl {
  std::unique_ptr<llvm::orc::LLLazyJIT> jit;  ///< eager modules and lazy ones (split_off_entry)
  std::unique_ptr<llvm::TargetMachine> tm;    ///< for the IR pipeline (used under compile_mu)
  std::shared_mutex mu;
  std::mutex compile_mu;
  struct Entry {
    InsnVec insns;        ///< the text compiled (a Program object may be reused for another text)
    uint64_t env_serial;  ///< vm::Env::serial of the maps compiled in, 0 for none
    const CompiledProgram* cp;
    bool slot_loop;  ///< compiled as asked with slot_loop (cp->slots may still be null)
  };
  std::map<const vm::Program*, Entry> cache;
  std::vector<std::unique_ptr<CompiledProgram>> all;  ///< every compiled program, kept alive
  const CompiledProgram* find(const vm::Program& prog, uint64_t env_serial, bool slot_loop) {
    auto it = cache.find(&prog);
    if (it == cache.end() || it->second.env_serial != env_serial ||
        (slot_loop && !it->second.slot_loop) || it->second.insns.size() != prog.insns.size() ||
        std::memcmp(it->second.insns.data(), prog.insns.data(), prog.insns.size() * sizeof(Insn)) !=
            0)
      return nullptr;
    return it->second.cp;
  }
  uint64_t next_id = 0;
};

JitExecutor::JitExecutor(JitOptions opts) : opts_(opts), impl_(std::make_unique<Impl>()) {
  init_native_target();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) throw Error("jit: " + llvm::toString(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(codegen_level(opts_.opt_level));
  auto jit = llvm::orc::LLLazyJITBuilder()
                 .setJITTargetMachineBuilder(std::move(*jtmb))
                 .setLazyCompileFailureAddr(llvm::orc::ExecutorAddr::fromPtr(&lazy_compile_failed))
                 .create();
  if (!jit) throw Error("jit: " + llvm::toString(jit.takeError()));
  impl_->jit = std::move(*jit);
  // A lazy module is compiled whole on the first call into any of its functions.
  impl_->jit->setPartitionFunction(llvm::orc::CompileOnDemandLayer::compileWholeModule);
  impl_->tm = host_target_machine(opts_.opt_level);
  auto& jd = impl_->jit->getMainJITDylib();
  llvm::orc::SymbolMap host;
  auto flags = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
  const auto def = [&](const char* name, auto* fn) {
    host[impl_->jit->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn), flags};
  };
  def("knod_host_static_ok", &knod_host_static_ok);
  def("knod_host_map_lookup", &knod_host_map_lookup);
  def("knod_host_tail_jump", &knod_host_tail_jump);
  def("knod_host_xdp_adjust", &knod_host_xdp_adjust);
  def("knod_host_tail_call", &knod_host_tail_call);
  // The runtime's out-of-line functions (jit/runtime/rt_host.cpp), compiled once into knod.
  def("knod_rt_check_regions", &knod_rt_check_regions);
  def("knod_rt_value_ok", &knod_rt_value_ok);
  def("knod_rt_fault", &knod_rt_fault);
  def("knod_rt_load_slow", &knod_rt_load_slow);
  def("knod_rt_store_slow", &knod_rt_store_slow);
  def("knod_rt_ctx_slow", &knod_rt_ctx_slow);
  def("knod_rt_helper", &knod_rt_helper);
  def("knod_rt_tail_call", &knod_rt_tail_call);
  def("knod_rt_callx", &knod_rt_callx);
  // Inlined hash lookups compare keys with memcmp (expanded inline from -O1 for small keys).
  def("memcmp", static_cast<int (*)(const void*, const void*, size_t)>(&std::memcmp));
  if (auto err = jd.define(llvm::orc::absoluteSymbols(std::move(host))))
    throw Error("jit: " + llvm::toString(std::move(err)));
}

JitExecutor::~JitExecutor() = default;

const CompiledProgram& JitExecutor::compile(const vm::Program& prog, const vm::Env* env,
                                            bool slot_loop) {
  if (!opts_.map_inline) env = nullptr;
  const uint64_t serial = env ? env->serial : 0;
  slot_loop = slot_loop && opts_.slot_loop && opts_.ctx == CtxKind::kXdp;
  {
    std::shared_lock lock(impl_->mu);
    if (const CompiledProgram* cp = impl_->find(prog, serial, slot_loop)) return *cp;
  }
  std::lock_guard compile_lock(impl_->compile_mu);
  {
    std::shared_lock lock(impl_->mu);
    if (const CompiledProgram* cp = impl_->find(prog, serial, slot_loop)) return *cp;
  }
  auto t0 = std::chrono::steady_clock::now();
  const double c0 = thread_cpu_ms();
  auto cp = std::make_unique<CompiledProgram>();
  LowerOptions lo;
  lo.name = "knod_prog" + std::to_string(impl_->next_id++);
  lo.ctx = opts_.ctx;
  lo.range_analysis = opts_.range_analysis;
  if (env) {
    lo.maps = describe_maps(*env, /*inline_arrays=*/true);
    lo.helpers = env->helpers;
  }
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = lower(prog.insns, *ctx, lo, &cp->stats);
  m->setDataLayout(impl_->jit->getDataLayout());
  m->setTargetTriple(impl_->jit->getTargetTriple().str());
  std::vector<std::string> keep{lo.name};
  for (uint32_t pc : cp->stats.subprogram_pcs) keep.push_back(subprogram_symbol(lo.name, pc));
  bool slots = slot_loop;
  if (slots) keep.push_back(kSlotsRuntimeSymbol);
  link_runtime(*m, keep);
  if (slots) bind_slots(*m, lo.name);
  optimize(*m, impl_->tm.get(), opts_.opt_level);
  if (slots && !inline_body_into_slots(*m, lo.name, impl_->tm.get(), opts_.opt_level))
    slots = false;
  // With the loop, the entry and the standalone body are compiled on their first call only:
  // a run of batches never calls them.
  std::unique_ptr<llvm::Module> lazy = slots ? split_off_entry(*m, lo.name) : nullptr;
  llvm::orc::ThreadSafeContext tsc(std::move(ctx));
  if (auto err = impl_->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), tsc)))
    throw Error("jit: " + llvm::toString(std::move(err)));
  if (lazy)
    if (auto err = impl_->jit->addLazyIRModule(llvm::orc::ThreadSafeModule(std::move(lazy), tsc)))
      throw Error("jit: " + llvm::toString(std::move(err)));
  auto sym = impl_->jit->lookup(lo.name);
  if (!sym) throw Error("jit: " + llvm::toString(sym.takeError()));
  cp->entry = sym->toPtr<CompiledProgram::EntryFn>();
  cp->hook = CompiledProgram::Hook{this, cp.get()};
  for (uint32_t pc : cp->stats.subprogram_pcs) {
    auto s = impl_->jit->lookup(subprogram_symbol(lo.name, pc));
    if (!s) throw Error("jit: " + llvm::toString(s.takeError()));
    cp->subs[pc] = s->toPtr<CompiledProgram::SubFn>();
  }
  cp->body = cp->subs.at(0);
  if (slots) {
    auto s = impl_->jit->lookup(slots_symbol(lo.name));
    if (!s) throw Error("jit: " + llvm::toString(s.takeError()));
    cp->slots = s->toPtr<vm::Executor::SlotsFn>();
  }
  cp->compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  cp->compile_cpu_ms = thread_cpu_ms() - c0;  // ORC compiles on this thread (no compile pool)
  std::unique_lock lock(impl_->mu);
  const CompiledProgram* out = cp.get();
  impl_->all.push_back(std::move(cp));
  impl_->cache[&prog] = Impl::Entry{prog.insns, serial, out, slot_loop};
  return *out;
}

vm::Executor::DirectFn JitExecutor::direct(vm::Run& run, const void* handle) {
  auto* cp = static_cast<const CompiledProgram*>(handle);
  run.executor = const_cast<CompiledProgram::Hook*>(&cp->hook);
  run.call_func = &call_func;
  return cp->entry;
}

vm::Executor::BodyFn JitExecutor::direct_body(const void* handle) {
  return static_cast<const CompiledProgram*>(handle)->body;
}

vm::Executor::SlotsFn JitExecutor::direct_slots(const void* handle) {
  return static_cast<const CompiledProgram*>(handle)->slots;
}

uint64_t JitExecutor::run_compiled(vm::Run& run, const CompiledProgram& cp, uint64_t r1,
                                   uint64_t r2) {
  void* saved_exec = run.executor;
  auto saved_cf = run.call_func;
  run.executor = const_cast<CompiledProgram::Hook*>(&cp.hook);
  run.call_func = &call_func;
  uint64_t r0 = cp.entry(&run, r1, r2);
  run.executor = saved_exec;
  run.call_func = saved_cf;
  return run.fault != vm::Fault::kNone ? 0 : r0;
}

uint64_t JitExecutor::run(vm::Run& run, const vm::Program& prog, uint64_t r1, uint64_t r2) {
  return run_compiled(run, compile(prog, run.env), r1, r2);
}

}  // namespace knod::jit
