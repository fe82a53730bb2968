// Interpreter vs JIT on three programs (a counting loop, an XDP-style header parse with
// bounds checks, stack traffic), in ns per run; and JIT compile time per program at -O0..-O3
// (counter compile_ms). Run: bench_jit [--benchmark_filter=...].
#include <benchmark/benchmark.h>

#include <cstring>

#include "isa/asm.h"
#include "jit/executor.h"
#include "vm/interp.h"

namespace {

using knod::vm::Program;

const char* kLoop = R"(
    mov %r0, 0
    mov %r1, 1000
  l:
    add %r0, %r1
    xor %r0, 0x55
    sub %r1, 1
    jne %r1, 0, l
    exit)";

// Ethernet + IPv4 + UDP: returns 2 (pass) for UDP to port 53, else 1; data/data_end from ctx.
const char* kParse = R"(
    ldxw %r2, [%r1+0]
    ldxw %r3, [%r1+4]
    mov %r0, 1
    mov %r4, %r2
    add %r4, 42
    jgt %r4, %r3, out
    ldxh %r5, [%r2+12]
    jne %r5, 0x0008, out
    ldxb %r5, [%r2+23]
    jne %r5, 17, out
    ldxb %r5, [%r2+14]
    and %r5, 15
    jne %r5, 5, out
    ldxh %r5, [%r2+36]
    be16 %r5
    jne %r5, 53, out
    ldxw %r6, [%r2+26]
    ldxw %r7, [%r2+30]
    stxw [%r2+26], %r7
    stxw [%r2+30], %r6
    mov %r0, 2
  out:
    exit)";

const char* kStack = R"(
    mov %r2, 0
  fill:
    mov %r3, %r10
    add %r3, -256
    add %r3, %r2
    stxb [%r3+0], %r2
    add %r2, 1
    jlt %r2, 256, fill
    ldxdw %r0, [%r10-256]
    ldxdw %r4, [%r10-8]
    add %r0, %r4
    stdw [%r10-16], 7
    ldxdw %r4, [%r10-16]
    add %r0, %r4
    exit)";

struct Pkt {
  uint8_t bytes[64];
  uint32_t len;
};

bool ctx_load(knod::vm::Run& run, uint32_t off, uint32_t size, uint64_t* v) {
  auto* p = static_cast<Pkt*>(run.prog_state);
  if (size != 4 || off > 4) return false;
  *v = reinterpret_cast<uint64_t>(p->bytes) + (off == 4 ? p->len : 0);
  return true;
}

Pkt udp_packet() {
  Pkt p{};
  p.len = 60;
  p.bytes[12] = 0x08;
  p.bytes[14] = 0x45;
  p.bytes[23] = 17;
  p.bytes[37] = 53;
  return p;
}

void run_bench(benchmark::State& state, knod::vm::Executor& ex, const char* text, bool xdp) {
  Program prog{"bench", knod::isa::assemble(text)};
  knod::vm::Env env;
  Pkt pkt = udp_packet();
  uint64_t ctx[2] = {};
  uint64_t r0 = 0;
  for (auto _ : state) {
    knod::vm::Run run;
    run.env = &env;
    if (xdp) {
      run.prog_state = &pkt;
      run.ctx_lo = reinterpret_cast<uint64_t>(ctx);
      run.ctx_hi = run.ctx_lo + sizeof(ctx);
      run.ctx_load = ctx_load;
      run.add_region(reinterpret_cast<uint64_t>(pkt.bytes),
                     reinterpret_cast<uint64_t>(pkt.bytes) + pkt.len, true);
    }
    r0 = ex.run(run, prog, run.ctx_lo, 0);
    if (run.fault != knod::vm::Fault::kNone) state.SkipWithError("fault");
    benchmark::DoNotOptimize(r0);
  }
}

void BM_Interp(benchmark::State& state, const char* text, bool xdp) {
  knod::vm::Interpreter interp;
  run_bench(state, interp, text, xdp);
}

void BM_Jit(benchmark::State& state, const char* text, bool xdp) {
  knod::jit::JitOptions o;
  o.ctx = xdp ? knod::jit::CtxKind::kXdp : knod::jit::CtxKind::kOpaque;
  knod::jit::JitExecutor jit(o);
  Program prog{"bench", knod::isa::assemble(text)};
  state.counters["compile_ms"] = jit.compile(prog).compile_ms;
  state.counters["checked"] = jit.compile(prog).stats.checked;
  run_bench(state, jit, text, xdp);
}

void BM_Compile(benchmark::State& state, const char* text) {
  knod::jit::JitOptions o;
  o.opt_level = int(state.range(0));
  double total = 0;
  int n = 0;
  for (auto _ : state) {
    state.PauseTiming();
    knod::jit::JitExecutor jit(o);
    Program prog{"bench", knod::isa::assemble(text)};
    state.ResumeTiming();
    total += jit.compile(prog).compile_ms;
    ++n;
  }
  state.counters["compile_ms"] = total / n;
}

BENCHMARK_CAPTURE(BM_Interp, loop, kLoop, false);
BENCHMARK_CAPTURE(BM_Jit, loop, kLoop, false);
BENCHMARK_CAPTURE(BM_Interp, parse, kParse, true);
BENCHMARK_CAPTURE(BM_Jit, parse, kParse, true);
BENCHMARK_CAPTURE(BM_Interp, stack, kStack, false);
BENCHMARK_CAPTURE(BM_Jit, stack, kStack, false);
BENCHMARK_CAPTURE(BM_Compile, parse, kParse)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
