// AMDGPU code objects: device/gpu codegen for amdgcn-amd-amdhsa, linked by ld.lld.
#include "device/amdgpu/code_object.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "device/gpu/codegen.h"

extern char** environ;

namespace knod::device::amdgpu {
namespace fs = std::filesystem;

std::string link_code_object(const std::string& object) {
  char tmpl[] = "/tmp/knod-hsaco-XXXXXX";
  if (!mkdtemp(tmpl)) throw Error("amdgpu: cannot create a temporary directory");
  fs::path dir(tmpl);
  struct Cleanup {
    fs::path d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};
  fs::path in = dir / "prog.o", out = dir / "prog.hsaco", log = dir / "lld.log";
  std::ofstream(in, std::ios::binary).write(object.data(), std::streamsize(object.size()));
  std::string lld = KNOD_LD_LLD;
  std::vector<std::string> args{lld, "-shared", "--no-undefined", in.string(), "-o", out.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawn(&pid, lld.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw Error(fmt::format("amdgpu: cannot run {}: {}", lld, strerror(rc)));
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::stringstream msg;
    msg << std::ifstream(log).rdbuf();
    throw Error(fmt::format("amdgpu: {} failed: {}", lld, msg.str()));
  }
  std::stringstream bytes;
  bytes << std::ifstream(out, std::ios::binary).rdbuf();
  return bytes.str();
}

std::string compile_code_object(llvm::Module& m, std::string_view gpu,
                                const std::vector<std::string>& programs) {
  device::gpu::Target t{device::gpu::Arch::kAmdgcn, std::string(gpu), "amdgpu"};
  device::gpu::prepare_module(m, t, programs);
  return link_code_object(device::gpu::emit(m, t));
}

std::string compile_code_object(llvm::Module& m, std::string_view gpu) {
  return compile_code_object(m, gpu, {"knod_prog"});
}

}  // namespace knod::device::amdgpu
