// GPL-only helpers (the kernel's bpf_func_proto.gpl_only): a program whose object's license is
// not GPL-compatible may not call them. knod's refusal must match the kernel's verifier, helper
// by helper: `call N; r0 = 0; exit` loaded with license "MIT" is refused with "cannot call
// GPL-restricted function from non-GPL compatible program" exactly for the gpl_only ones.
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cstring>
#include <set>

#include "base/error.h"
#include "harness.h"
#include "vm/prepare.h"
#include "xdp/helpers.h"

namespace knod::xdp::test {
namespace {

InsnVec call_then_exit(int id) {
  return {Insn{BPF_JMP | BPF_CALL, 0, 0, 0, id}, Insn{BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0},
          Insn{BPF_JMP | BPF_EXIT, 0, 0, 0, 0}};
}

/// Whether knod's prepare() refuses helper `id` for a program that is not GPL-compatible,
/// and accepts it for one that is.
bool knod_refuses(int id) {
  vm::Env env;
  env.helpers = &helpers();
  vm::prepare("gpl", call_then_exit(id), env);  // GPL-compatible: every XDP helper loads
  env.gpl_compatible = false;
  try {
    vm::prepare("mit", call_then_exit(id), env);
    return false;
  } catch (const Error& e) {
    EXPECT_NE(std::strstr(e.what(), "GPL-only"), nullptr) << e.what();
    EXPECT_NE(std::strstr(e.what(), helpers().name[id]), nullptr) << e.what();
    return true;
  }
}

/// Whether the running kernel's verifier refuses helper `id` in an XDP program with license
/// "MIT" for being GPL-only (other refusals, e.g. argument types, do not count).
bool kernel_refuses(int id) {
  static char log[1 << 16];
  const InsnVec p = call_then_exit(id);
  LIBBPF_OPTS(bpf_prog_load_opts, o, .log_level = 1, .log_size = sizeof log, .log_buf = log);
  log[0] = 0;
  int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "mit", "MIT", p.data(), p.size(), &o);
  if (fd >= 0) close(fd);
  return std::strstr(log, "cannot call GPL-restricted function") != nullptr;
}

std::set<int> xdp_helper_ids() {
  std::set<int> ids;
  for (int id = 0; id < vm::kMaxHelperId; ++id)
    if (helpers().fn[id]) ids.insert(id);
  return ids;
}

// The kernel's answer (Linux 6.18) for knod's XDP helpers: bpf_trace_printk (6),
// bpf_perf_event_output (25), bpf_fib_lookup (69), bpf_check_mtu (163) and
// bpf_tcp_raw_{gen,check}_syncookie_ipv{4,6} (204-207).
TEST(License, GplOnlyHelpersAsRecorded) {
  std::set<int> refused;
  for (int id : xdp_helper_ids())
    if (knod_refuses(id)) refused.insert(id);
  EXPECT_EQ(refused, (std::set<int>{
                         BPF_FUNC_trace_printk, BPF_FUNC_perf_event_output, BPF_FUNC_fib_lookup,
                         BPF_FUNC_check_mtu, BPF_FUNC_tcp_raw_gen_syncookie_ipv4,
                         BPF_FUNC_tcp_raw_gen_syncookie_ipv6, BPF_FUNC_tcp_raw_check_syncookie_ipv4,
                         BPF_FUNC_tcp_raw_check_syncookie_ipv6}));
}

TEST(License, GplOnlyHelpersAsTheKernel) {
  std::string why;
  if (!kernel_available(&why)) GTEST_SKIP() << "kernel oracle unavailable: " << why;
  for (int id : xdp_helper_ids())
    EXPECT_EQ(knod_refuses(id), kernel_refuses(id)) << "helper " << id << " " << helpers().name[id];
}

}  // namespace
}  // namespace knod::xdp::test
