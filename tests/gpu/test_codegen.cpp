// Every conformance program, lowered by jit::lower and compiled by the GPU back ends: the PTX
// must assemble with NVIDIA's ptxas (sm_80, sm_90) and the AMD code objects (gfx900, gfx1030)
// must link with ld.lld and disassemble with llvm-objdump, with the batch kernel and the
// persistent kernel (mailbox ring) present.
#include <gtest/gtest.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "conformance/conformance.h"
#include "conformance_params.h"
#include "device/amdgpu/code_object.h"
#include "device/cuda/ptx.h"
#include "device/gpu/codegen.h"
#include "isa/asm.h"
#include "jit/lower.h"
#include "run_command.h"

namespace knod::gpu_test {
namespace {

std::string temp_file(const std::string& name, const std::string& bytes) {
  auto p = std::filesystem::temp_directory_path() /
           ("knod-gpu-test-" + std::to_string(getpid()) + "-" + name);
  std::ofstream(p, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  return p.string();
}

std::unique_ptr<llvm::Module> lowered(const InsnVec& insns, llvm::LLVMContext& ctx) {
  jit::LowerOptions o;
  o.name = "knod_prog";
  return jit::lower(insns, ctx, o);
}

/// `insns` lowered for the GPUs: the PTX assembles with ptxas (sm_90, sm_80), the AMD code
/// objects (gfx900, gfx1030) disassemble, both with the batch and the persistent kernel.
void expect_gpu_code(const std::string& name, const InsnVec& insns) {
  for (const char* sm : {"sm_90", "sm_80"}) {
    llvm::LLVMContext ctx;
    auto m = lowered(insns, ctx);
    std::string ptx = device::cuda::compile_ptx(*m, sm);
    EXPECT_NE(ptx.find(".entry knod_xdp_batch"), std::string::npos) << sm;
    EXPECT_NE(ptx.find(".entry knod_xdp_persistent"), std::string::npos) << sm;
    std::string f = temp_file(name + "-" + sm + ".ptx", ptx), out;
    int rc =
        run_command(std::string(KNOD_PTXAS) + " -arch=" + sm + " " + f + " -o /dev/null", &out);
    EXPECT_EQ(rc, 0) << sm << ": ptxas: " << out;
    std::filesystem::remove(f);
  }
  for (const char* gfx : {"gfx900", "gfx1030"}) {
    llvm::LLVMContext ctx;
    auto m = lowered(insns, ctx);
    std::string co = device::amdgpu::compile_code_object(*m, gfx);
    ASSERT_GE(co.size(), 4u);
    EXPECT_EQ(co.substr(0, 4),
              "\x7f"
              "ELF");
    std::string f = temp_file(name + "-" + gfx + ".hsaco", co), out;
    int rc = run_command(
        std::string(KNOD_LLVM_OBJDUMP) + " --triple=amdgcn-amd-amdhsa --mcpu=" + gfx + " -d " + f,
        &out);
    EXPECT_EQ(rc, 0) << gfx << ": llvm-objdump: " << out;
    EXPECT_NE(out.find("<knod_xdp_batch>:"), std::string::npos) << gfx << ":\n" << out;
    EXPECT_NE(out.find("<knod_xdp_persistent>:"), std::string::npos) << gfx;
    EXPECT_NE(out.find("s_endpgm"), std::string::npos) << gfx;
    std::filesystem::remove(f);
  }
}

class ConformanceCodegen : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceCodegen, PtxAssemblesAndCodeObjectsLink) {
  conformance::ConformanceCase c = conformance::parse_data_file(GetParam());
  InsnVec insns;
  try {
    insns = conformance::case_program(c);
  } catch (const Error& e) {
    GTEST_SKIP() << "does not assemble: " << e.what();
  }
  // Tests whose program the lowering refuses are the JIT's (not the GPU's) business.
  {
    llvm::LLVMContext ctx;
    try {
      lowered(insns, ctx);
    } catch (const Error& e) {
      if (c.result) FAIL() << "lowering refused a valid program: " << e.what();
      GTEST_SKIP() << "lowering refuses it (expected error): " << e.what();
    }
  }
  expect_gpu_code(c.name, insns);
}

// Load-acquire and store-release (BPF_STX | BPF_ATOMIC, imm 0x100 / 0x110, kernel 6.15+) of
// every size, on the stack and through a checked address: their fences compile for the GPUs.
TEST(GpuCodegen, LoadAcquireAndStoreReleaseCompile) {
  // BPF_STX | BPF_ATOMIC | size; imm 0x100: dst = *(src + off), 0x110: *(dst + off) = src.
  const auto acq = [](uint8_t size, uint8_t dst, uint8_t src, int16_t off) {
    return Insn{uint8_t(BPF_STX | BPF_ATOMIC | size), dst, src, off, 0x100};
  };
  const auto rel = [](uint8_t size, uint8_t dst, uint8_t src, int16_t off) {
    return Insn{uint8_t(BPF_STX | BPF_ATOMIC | size), dst, src, off, 0x110};
  };
  InsnVec p = isa::assemble("lddw %r1, 0x8877665544332211");
  p.insert(p.end(), {rel(BPF_DW, 10, 1, -8), rel(BPF_W, 10, 1, -12), rel(BPF_H, 10, 1, -14),
                     rel(BPF_B, 10, 1, -15), acq(BPF_B, 0, 10, -15), acq(BPF_H, 2, 10, -14),
                     acq(BPF_W, 3, 10, -12), acq(BPF_DW, 4, 10, -8), acq(BPF_DW, 5, 1, 0),
                     rel(BPF_DW, 5, 0, 8)});
  const InsnVec tail = isa::assemble("add %r0, %r2\nadd %r0, %r3\nadd %r0, %r4\nexit");
  p.insert(p.end(), tail.begin(), tail.end());
  expect_gpu_code("acq_rel", p);
}

INSTANTIATE_TEST_SUITE_P(Conformance, ConformanceCodegen, ::testing::ValuesIn(suite_files()),
                         suite_test_name);

TEST(GpuCodegen, ConformanceSuitePresent) {
  EXPECT_GT(conformance::data_files(std::string(KNOD_SHARED_DIR) + "/conformance/tests").size(),
            100u)
      << "KNOD_SHARED_DIR=" << KNOD_SHARED_DIR;
}

// A helper the GPU runtime lacks is a load-time error naming it, on both back ends.
TEST(GpuCodegen, UnsupportedHelperIsALoadError) {
  InsnVec p = isa::assemble("mov %r1, 0\ncall 69\nexit\n");
  for (int cuda = 1; cuda >= 0; --cuda) {
    llvm::LLVMContext ctx;
    auto m = lowered(p, ctx);
    try {
      if (cuda)
        device::cuda::compile_ptx(*m, "sm_90");
      else
        device::amdgpu::compile_code_object(*m, "gfx1030");
      FAIL() << "bpf_fib_lookup compiled for the GPU";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), cuda ? "helper bpf_fib_lookup (69) not supported on cuda yet"
                                  : "helper bpf_fib_lookup (69) not supported on amdgpu yet");
    }
  }
}

// Supported helpers compile: map lookup, adjust_head, csum_diff, redirect and ktime.
TEST(GpuCodegen, SupportedHelpersCompile) {
  InsnVec p = isa::assemble(
      "mov %r1, 1\nmov %r2, 0\ncall 23\n"                                      // bpf_redirect(1, 0)
      "call 5\n"                                                               // bpf_ktime_get_ns
      "mov %r1, 0\nmov %r2, 0\nmov %r3, 0\nmov %r4, 0\nmov %r5, 0\ncall 28\n"  // csum_diff
      "exit\n");
  llvm::LLVMContext ctx;
  auto m = lowered(p, ctx);
  std::string ptx = device::cuda::compile_ptx(*m, "sm_90");
  EXPECT_NE(ptx.find("globaltimer"), std::string::npos);
}

TEST(GpuCodegen, UnknownTargetIsAnError) {
  InsnVec p = isa::assemble("mov %r0, 0\nexit\n");
  llvm::LLVMContext ctx;
  auto m = lowered(p, ctx);
  EXPECT_THROW(device::amdgpu::compile_code_object(*m, "gfx9999"), Error);
}

}  // namespace
}  // namespace knod::gpu_test
