// `knod jit FILE [-p PROG] [--target x86_64] [-S | --emit-llvm] [-O N] [--slot-loop] [--stats]`:
// shows what the JIT makes of a program: LLVM IR (after the runtime is linked and the -O
// pipeline ran), or host assembly; --slot-loop adds the CPU device's per-packet loop with the
// body inlined. FILE is an eBPF ELF object (program chosen with -p, prepared as for
// `knod run`: maps resolved, XDP ctx), raw instruction slots (`knod asm` output) or assembly
// text. --stats prints the memory-access counts and the compile time to stderr.
#include <fmt/core.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <chrono>
#include <memory>

#include "base/error.h"
#include "base/file.h"
#include "base/text.h"
#include "cli/asm_file.h"
#include "cli/command.h"
#include "device/amdgpu/code_object.h"
#include "device/cuda/ptx.h"
#include "device/gpu/program.h"
#include "isa/asm.h"
#include "jit/emit.h"
#include "jit/map_desc.h"
#include "loader/object.h"
#include "verifier/verifier.h"
#include "xdp/runtime.h"

namespace {

struct JitArgs {
  std::string file, prog, target = "x86_64", ctx = "auto", out;
  bool assembly = false, emit_llvm = false, stats = false, no_runtime = false, slot_loop = false;
  int opt = 2;
};

bool is_gpu_target(const std::string& t) {
  return t.rfind("sm_", 0) == 0 || t.rfind("gfx", 0) == 0;
}

/// The code to -o FILE, else to stdout.
int write_code(const JitArgs& a, const std::string& code) {
  if (a.out.empty()) {
    fmt::print("{}", code);
    return 0;
  }
  knod::write_file(a.out, code);
  return 0;
}

/// GPU targets: every program of the object in one module (tail calls), the batch kernel
/// `knod_xdp_batch`, PTX text (sm_XX) or an AMDGPU code object (gfxNNN).
int run_gpu(const JitArgs& a) {
  std::string bytes = knod::read_file(a.file, "program file");
  if (!knod::is_elf(bytes))
    throw knod::Error("jit: GPU targets take an eBPF ELF object, not " + a.file);
  knod::loader::LoadOptions lo;
  lo.ncpus = 1;
  knod::loader::Object obj = knod::loader::load_object(a.file, lo);
  if (obj.programs.empty()) throw knod::Error(a.file + ": no programs");
  std::string name = a.prog.empty() ? obj.programs[0].name : a.prog;
  knod::xdp::Runtime rt(obj, name, knod::xdp::Options{});
  llvm::LLVMContext ctx;
  std::vector<std::string> names;
  auto m = knod::device::gpu::lower_env(
      rt.env(), knod::jit::CtxKind::kXdp, ctx, [](uint64_t v) { return v; }, &names);
  std::string code = a.target[0] == 's'
                         ? knod::device::cuda::compile_ptx(*m, a.target, names)
                         : knod::device::amdgpu::compile_code_object(*m, a.target, names);
  if (a.out.empty() && a.target[0] != 's')
    throw knod::Error("jit: an AMDGPU code object is binary: write it with -o FILE.hsaco");
  return write_code(a, code);
}

int run_jit(const JitArgs& a) {
  if (is_gpu_target(a.target)) {
    if (a.slot_loop) throw knod::Error("jit: --slot-loop is for the host target (x86_64)");
    return run_gpu(a);
  }
  if (a.target != "x86_64" && a.target != "host")
    throw knod::Error(
        "jit: target '" + a.target +
        "' is not supported (x86_64, sm_80, sm_90, gfx900, gfx1030, gfx942, gfx1100)");
  if (a.opt < 0 || a.opt > 3) throw knod::Error("jit: -O must be 0..3");
  std::string bytes = knod::read_file(a.file, "program file");
  knod::jit::EmitOptions eo;
  eo.opt_level = a.opt;
  eo.assembly = a.assembly && !a.emit_llvm;
  eo.link_runtime = !a.no_runtime;
  eo.slot_loop = a.slot_loop;
  knod::InsnVec insns;
  if (knod::is_elf(bytes)) {
    knod::loader::Object obj = knod::loader::load_object(a.file);
    if (a.prog.empty() && obj.programs.size() != 1)
      throw knod::Error("jit: " + a.file + " has " + std::to_string(obj.programs.size()) +
                        " programs; choose one with -p");
    std::string name = a.prog.empty() ? obj.programs[0].name : a.prog;
    knod::xdp::Runtime rt(obj, name, knod::xdp::Options{});
    insns = rt.program().insns;
    eo.ctx = knod::jit::CtxKind::kXdp;
    eo.maps = knod::jit::describe_maps(rt.env(), /*inline_arrays=*/true);  // as knod run does
  } else if (knod::cli::looks_binary(bytes)) {
    insns = knod::cli::raw_slots(a.file, bytes);
  } else {
    insns = knod::cli::assemble_file(a.file, bytes);
  }
  // The load-time checks knod run makes (vm::prepare does them for ELF programs): a program
  // that falls off its end, jumps out of range or writes r10 is refused, not compiled.
  knod::verifier::check_structure(insns);
  if (a.ctx == "xdp")
    eo.ctx = knod::jit::CtxKind::kXdp;
  else if (a.ctx == "opaque")
    eo.ctx = knod::jit::CtxKind::kOpaque;
  else if (a.ctx != "auto")
    throw knod::Error("jit: --ctx must be auto, xdp or opaque");
  knod::jit::LowerStats st;
  auto t0 = std::chrono::steady_clock::now();
  std::string text = knod::jit::emit(insns, eo, &st);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  write_code(a, text);
  if (a.stats)
    fmt::print(stderr,
               "insns {}  subprograms {}  accesses {}  proven {} (map values {})  ctx {}  "
               "checked {}  inlined lookups {}  time {:.1f} ms (-O{})\n",
               insns.size(), st.subprograms, st.accesses, st.proven, st.map_values, st.ctx_direct,
               st.checked, st.inlined_lookups, ms, a.opt);
  if (a.stats && !st.checked_pcs.empty()) {
    fmt::print(stderr, "checked at run time:\n");
    for (uint32_t pc : st.checked_pcs)
      fmt::print(stderr, "  {:5}: {}\n", pc, knod::isa::disassemble_one(insns, pc));
  }
  return 0;
}

}  // namespace

KNOD_COMMAND(jit) {
  auto* c = app.add_subcommand("jit", "Show the LLVM IR or machine code the JIT makes");
  auto a = std::make_shared<JitArgs>();
  c->add_option("file", a->file, "eBPF ELF object, raw instructions (knod asm) or assembly")
      ->required();
  c->add_option("-p,--prog", a->prog, "Program name or section (ELF objects)");
  c->add_option("--target", a->target,
                "x86_64 (host), sm_80/sm_90 (PTX), gfx900/gfx1030/gfx942/gfx1100 (code object)");
  c->add_option("-o,--output", a->out,
                "Write the code here instead of stdout (required for gfx code objects)");
  c->add_flag("-S,--asm", a->assembly, "Print assembly for the target (default: LLVM IR)");
  c->add_flag("--emit-llvm", a->emit_llvm, "Print LLVM IR (the default)");
  c->add_option("-O", a->opt,
                "Optimisation level 0-3 (default 2: knod's pass list, half the compile time of "
                "LLVM -O2; 3: LLVM's -O3 pipeline)");
  c->add_option("--ctx", a->ctx, "What r1 is: auto (xdp for ELF objects), xdp, opaque");
  c->add_flag("--no-runtime", a->no_runtime, "IR as lowered: runtime not linked, not optimised");
  c->add_flag("--slot-loop", a->slot_loop,
              "XDP, host target: also the per-packet loop the CPU device runs, with the body "
              "inlined (knod_prog_slots; none at -O0 or for bodies over 700 IR instructions)");
  c->add_flag("--stats", a->stats, "Print access counts and compile time to stderr");
  c->callback([set_action, a] { set_action([a] { return run_jit(*a); }); });
}
