// `knod conformance-plugin`: the bpf_conformance runner's plugin protocol on the reference
// interpreter (program as base16 bytes on stdin or --program, memory as base16 in the first
// positional argument; prints r0 in lowercase hex; load errors: message, non-zero exit).
// `knod conformance FILE...`: runs .data files directly and prints pass/fail.
#include <fmt/core.h>

#include <cctype>
#include <cstring>
#include <iostream>
#include <iterator>

#include "base/error.h"
#include "cli/command.h"
#include "conformance/conformance.h"
#include "vm/conformance_helpers.h"
#include "vm/interp.h"
#include "vm/prepare.h"

namespace {

std::vector<uint8_t> base16_decode(const std::string& s) {
  std::string hex;
  for (char ch : s)
    if (!std::isspace(static_cast<unsigned char>(ch))) hex += ch;
  if (hex.size() % 2 != 0) throw knod::Error("odd number of hex digits");
  std::vector<uint8_t> out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    auto nib = [&](char ch) -> int {
      if (ch >= '0' && ch <= '9') return ch - '0';
      if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
      if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
      throw knod::Error(fmt::format("invalid hex digit '{}'", ch));
    };
    out.push_back(static_cast<uint8_t>(nib(hex[i]) << 4 | nib(hex[i + 1])));
  }
  return out;
}

struct PluginArgs {
  std::string program;
  std::string memory;
  bool debug = false;
  bool elf = false;
};

int run_plugin(const PluginArgs& a) {
  if (a.elf) throw knod::Error("--elf is not supported by this plugin (raw programs only)");
  std::string text = a.program;
  if (text.empty()) text.assign(std::istreambuf_iterator<char>(std::cin), {});
  std::vector<uint8_t> bytes = base16_decode(text);
  if (bytes.size() % sizeof(knod::Insn) != 0)
    throw knod::Error("program is not a whole number of 8-byte instructions");
  knod::InsnVec insns(bytes.size() / sizeof(knod::Insn));
  std::memcpy(insns.data(), bytes.data(), bytes.size());

  knod::vm::Env env;
  env.helpers = &knod::vm::conformance_helpers();
  knod::vm::Program prog = knod::vm::prepare("conformance", insns, env);
  std::vector<uint8_t> mem = base16_decode(a.memory);
  knod::vm::Run run;
  run.env = &env;
  uint64_t r1 = 0;
  if (!mem.empty()) {
    r1 = reinterpret_cast<uint64_t>(mem.data());
    run.add_region(r1, r1 + mem.size(), true);
  }
  knod::vm::Interpreter interp;
  uint64_t r0 = interp.run(run, prog, r1, mem.size());
  if (run.fault != knod::vm::Fault::kNone)
    throw knod::Error(
        fmt::format("fault {} at insn {}", knod::vm::fault_name(run.fault), run.fault_pc));
  fmt::print("{:x}\n", r0);
  return 0;
}

}  // namespace

KNOD_COMMAND(conformance_plugin) {
  auto* c = app.add_subcommand("conformance-plugin",
                               "bpf_conformance plugin: run one program on the interpreter");
  auto a = std::make_shared<PluginArgs>();
  c->add_option("memory", a->memory, "Input memory as base16 bytes (r1 points to it)");
  c->add_option("--program", a->program, "Program as base16 bytes (default: read stdin)");
  c->add_flag("--debug", a->debug, "Accepted for compatibility");
  c->add_flag("--elf", a->elf, "ELF input (not supported)");
  c->callback([set_action, a] { set_action([a] { return run_plugin(*a); }); });
}

KNOD_COMMAND(conformance) {
  auto* c = app.add_subcommand("conformance", "Run bpf_conformance .data files on the interpreter");
  auto files = std::make_shared<std::vector<std::string>>();
  c->add_option("files", *files, ".data files")->required();
  c->callback([set_action, files] {
    set_action([files] {
      knod::vm::Interpreter interp;
      int passed = 0, failed = 0;
      for (const auto& f : *files) {
        auto o = knod::conformance::run_case(knod::conformance::parse_data_file(f), interp);
        if (o.passed) {
          ++passed;
          fmt::print("PASS {}\n", f);
        } else {
          ++failed;
          fmt::print("FAIL {}: {}\n", f, o.message);
        }
      }
      fmt::print("{} passed, {} failed\n", passed, failed);
      return failed == 0 ? 0 : 1;
    });
  });
}
