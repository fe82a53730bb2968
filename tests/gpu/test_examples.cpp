// Every example XDP program (examples/xdp, built here with clang -target bpf), loaded and
// prepared as for a run (loader + xdp::Runtime), then compiled for the GPUs: its PTX must
// assemble with ptxas (sm_90, sm_80) and its gfx1030/gfx900 code object must link and
// disassemble (both with the batch and the persistent kernel), or the compile must fail with the
// one expected "not supported" error.
#include <gtest/gtest.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "base/error.h"
#include "device/amdgpu/code_object.h"
#include "device/cuda/ptx.h"
#include "device/gpu/program.h"
#include "loader/object.h"
#include "run_command.h"
#include "xdp/runtime.h"

namespace knod::gpu_test {
namespace {

// Programs the GPU runtime cannot run yet, with the load-time error they must give.
const std::map<std::string, std::string> kExpectedErrors = {
    {"router", "helper bpf_fib_lookup (69) not supported on {} yet"},
};

std::string write_temp(const std::string& name, const std::string& bytes) {
  auto p = std::filesystem::temp_directory_path() /
           ("knod-gpu-ex-" + std::to_string(getpid()) + "-" + name);
  std::ofstream(p, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  return p.string();
}

class ExampleCodegen : public ::testing::TestWithParam<std::string> {};

TEST_P(ExampleCodegen, CompilesForBothGpus) {
  const std::string example = GetParam();
  const std::string obj_path = std::string(KNOD_GPU_EXAMPLES_DIR) + "/" + example + ".o";
  ASSERT_TRUE(std::filesystem::exists(obj_path)) << obj_path;
  loader::LoadOptions lo;
  lo.ncpus = 1;
  loader::Object obj = loader::load_object(obj_path, lo);
  ASSERT_FALSE(obj.programs.empty());
  // Every program of the object is in the env (tail-call targets), so the first one will do.
  xdp::Runtime rt(obj, obj.programs.front().name, xdp::Options{});
  auto expected = kExpectedErrors.find(example);
  for (const char* target : {"sm_90", "sm_80", "gfx1030", "gfx900"}) {
    bool cuda = target[0] == 's';
    llvm::LLVMContext ctx;
    std::vector<std::string> names;
    auto m = device::gpu::lower_env(
        rt.env(), jit::CtxKind::kXdp, ctx, [](uint64_t v) { return v; }, &names);
    std::string out, file;
    try {
      if (cuda) {
        std::string ptx = device::cuda::compile_ptx(*m, target, names);
        file = write_temp(example + "-" + target + ".ptx", ptx);
        int rc = run_command(
            std::string(KNOD_PTXAS) + " -arch=" + target + " " + file + " -o /dev/null", &out);
        EXPECT_EQ(rc, 0) << target << " ptxas: " << out;
        EXPECT_NE(ptx.find(".entry knod_xdp_persistent"), std::string::npos) << target;
      } else {
        std::string co = device::amdgpu::compile_code_object(*m, target, names);
        file = write_temp(example + "-" + target + ".hsaco", co);
        int rc = run_command(std::string(KNOD_LLVM_OBJDUMP) +
                                 " --triple=amdgcn-amd-amdhsa --mcpu=" + target + " -d " + file,
                             &out);
        EXPECT_EQ(rc, 0) << target << " llvm-objdump: " << out;
        EXPECT_NE(out.find("<knod_xdp_batch>:"), std::string::npos) << target;
        EXPECT_NE(out.find("<knod_xdp_persistent>:"), std::string::npos) << target;
      }
      EXPECT_EQ(expected, kExpectedErrors.end()) << example << " compiled for " << target;
    } catch (const Error& e) {
      ASSERT_NE(expected, kExpectedErrors.end()) << target << ": " << e.what();
      std::string want = expected->second;
      want.replace(want.find("{}"), 2, cuda ? "cuda" : "amdgpu");
      EXPECT_EQ(std::string(e.what()), want);
    }
    if (!file.empty()) std::filesystem::remove(file);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleCodegen,
                         ::testing::Values("l4lb", "ddos", "vlan", "icmp_echo", "proto_count",
                                           "tailcall", "nat44", "router"));

}  // namespace
}  // namespace knod::gpu_test
