// `knod asm IN.s -o OUT.bin` and `knod disasm IN.bin`: eBPF assembly <-> raw instruction
// slots (little-endian struct bpf_insn, 8 bytes each). Syntax: isa/asm.h.
#include <fmt/core.h>

#include "base/error.h"
#include "base/file.h"
#include "cli/asm_file.h"
#include "cli/command.h"
#include "isa/asm.h"

KNOD_COMMAND(asm) {
  auto* c = app.add_subcommand("asm", "Assemble eBPF assembly into raw instructions");
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  c->add_option("input", *in, "Assembly file (bpf_conformance syntax)")->required();
  c->add_option("-o,--output", *out, "Output file: 8 bytes per instruction slot")->required();
  c->callback([set_action, in, out] {
    set_action([in, out] {
      knod::InsnVec prog = knod::cli::assemble_file(*in, knod::read_file(*in, "assembly file"));
      knod::write_file(*out, prog.data(), prog.size() * sizeof(knod::Insn));
      return 0;
    });
  });
}

KNOD_COMMAND(disasm) {
  auto* c = app.add_subcommand("disasm", "Disassemble raw eBPF instructions");
  auto in = std::make_shared<std::string>();
  c->add_option("input", *in, "Raw instruction file (8 bytes per slot, little-endian)")->required();
  c->callback([set_action, in] {
    set_action([in] {
      const knod::InsnVec prog =
          knod::cli::raw_slots(*in, knod::read_file(*in, "raw instruction file"));
      fmt::print("{}", knod::isa::disassemble(prog));
      return 0;
    });
  });
}
