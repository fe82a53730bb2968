// `knod prog list OBJ` and `knod prog dump OBJ [-p PROG]`: an object's programs as
// `bpftool prog show` / `bpftool prog dump xlated` print loaded ones — type, section,
// instruction count, maps; disassembly with helper and map names.
#include <fmt/core.h>
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "cli/command.h"
#include "cli/load_args.h"
#include "cli/object_info.h"
#include "isa/asm.h"
#include "loader/object.h"
#include "xdp/helpers.h"

namespace {

struct ProgArgs {
  std::string obj;
  std::vector<std::string> progs, max_entries;
  bool json = false;
};

knod::loader::Object open(const ProgArgs& a) {
  knod::loader::LoadOptions lo;
  knod::cli::parse_max_entries(a.max_entries, lo);
  knod::loader::Object obj = knod::loader::load_object(a.obj, lo);
  knod::cli::check_max_entries_names(a.max_entries, obj);
  return obj;
}

/// The programs named by -p (name or section), or all of them.
std::vector<const knod::loader::ProgramSpec*> select(const knod::loader::Object& obj,
                                                     const std::vector<std::string>& names) {
  std::vector<const knod::loader::ProgramSpec*> out;
  for (const std::string& n : names) {
    const knod::loader::ProgramSpec* p = obj.find_program(n);
    if (!p) {
      std::vector<std::string> all;
      for (const auto& q : obj.programs) all.push_back(q.name);
      throw knod::Error(
          fmt::format("{}: no program '{}' (programs: {})", obj.path, n,
                      all.empty() ? "none" : fmt::format("{}", fmt::join(all, ", "))));
    }
    out.push_back(p);
  }
  if (names.empty())
    for (const auto& p : obj.programs) out.push_back(&p);
  return out;
}

int list(const ProgArgs& a) {
  knod::loader::Object obj = open(a);
  nlohmann::json progs = knod::cli::programs_json(obj), maps = knod::cli::maps_json(obj);
  if (a.json) {
    fmt::print("{}\n", nlohmann::json{{"programs", progs}, {"maps", maps}}.dump(2));
    return 0;
  }
  if (progs.empty()) fmt::print("no programs\n");
  knod::cli::print_programs(progs);
  if (!maps.empty()) fmt::print("maps:\n");
  knod::cli::print_maps(maps);
  return 0;
}

int dump(const ProgArgs& a) {
  knod::loader::Object obj = open(a);
  std::vector<const knod::loader::ProgramSpec*> progs = select(obj, a.progs);
  if (progs.empty()) throw knod::Error(fmt::format("{}: no programs", a.obj));
  knod::isa::DisasmNames names;
  names.helper = [](int32_t id) -> std::string {
    const char* n =
        id >= 0 && id < knod::vm::kMaxHelperId ? knod::xdp::helpers().name[id] : nullptr;
    return n ? n : "";
  };
  names.map = [&obj](int32_t idx) -> std::string {
    return idx >= 0 && size_t(idx) < obj.map_specs.size() ? obj.map_specs[idx].name : "";
  };
  nlohmann::json out = nlohmann::json::array();
  for (size_t k = 0; k < progs.size(); ++k) {
    const knod::loader::ProgramSpec& p = *progs[k];
    nlohmann::json lines = nlohmann::json::array();
    if (!a.json) {
      if (k) fmt::print("\n");
      fmt::print("{}: {}  section {}  insns {}\n", p.name, knod::cli::prog_type_name(p.prog_type),
                 p.section, p.insns.size());
    }
    // Line numbers are instruction slots, as in `bpftool prog dump xlated` (ld_imm64 takes 2).
    for (size_t pc = 0; pc < p.insns.size(); pc += knod::is_lddw(p.insns[pc]) ? 2 : 1) {
      std::string text = knod::isa::disassemble_one(p.insns, pc, &names);
      if (a.json)
        lines.push_back({{"pc", pc}, {"disasm", text}});
      else
        fmt::print("{:>4}: {}\n", pc, text);
    }
    if (a.json)
      out.push_back({{"name", p.name},
                     {"section", p.section},
                     {"type", knod::cli::prog_type_name(p.prog_type)},
                     {"insns", lines}});
  }
  if (a.json) fmt::print("{}\n", out.dump(2));
  return 0;
}

}  // namespace

KNOD_COMMAND(prog) {
  auto* c = app.add_subcommand("prog", "Inspect an object's programs (like bpftool prog)");
  c->require_subcommand(1);
  auto* l = c->add_subcommand("list", "Programs and maps of an object: type, section, insns");
  l->alias("show");
  auto* d = c->add_subcommand("dump", "Disassemble programs, with helper and map names");
  for (CLI::App* s : {l, d}) {
    auto a = std::make_shared<ProgArgs>();
    s->add_option("object", a->obj, "eBPF ELF object (clang -target bpf)")->required();
    s->add_flag("-j,--json", a->json, "JSON output");
    s->add_option("--max-entries", a->max_entries,
                  "NAME=N: max_entries of map NAME; N: for maps declared with 0 (repeatable)")
        ->allow_extra_args(false);
    if (s == d)
      s->add_option("-p,--prog", a->progs, "program name or section (repeatable; default: all)")
          ->allow_extra_args(false);
    bool is_list = s == l;
    s->callback([a, is_list, set_action] {
      set_action([a, is_list] { return is_list ? list(*a) : dump(*a); });
    });
  }
}
