// bpf_conformance .data parsing and running (see conformance.h).
#include "conformance/conformance.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/file.h"
#include "isa/asm.h"
#include "isa/number.h"
#include "vm/conformance_helpers.h"
#include "vm/prepare.h"

namespace knod::conformance {
namespace {

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::string strip_comments(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (size_t h = line.find('#'); h != std::string::npos) line.resize(h);
    out += line + "\n";
  }
  return out;
}

}  // namespace

ConformanceCase parse_data(std::string_view text, std::string name) {
  ConformanceCase c;
  c.name = std::move(name);
  std::string section;
  std::string body;
  auto flush = [&] {
    if (section == "asm")
      c.asm_text = body;
    else if (section == "raw")
      c.raw_text = body;
    else if (section == "error")
      c.error = trim(body);
    else if (section == "mem") {
      std::istringstream in(strip_comments(body));
      for (std::string b; in >> b;) {
        auto v = isa::parse_imm64("0x" + b);
        if (!v || *v > 0xff || b.size() > 2) {
          c.parse_error = "bad -- mem byte '" + b + "'";
          break;
        }
        c.mem.push_back(static_cast<uint8_t>(*v));
      }
    } else if (section == "result") {
      std::string v = trim(strip_comments(body));
      if (auto x = isa::parse_imm64(v))
        c.result = *x;
      else
        c.parse_error = "bad -- result '" + v + "'";
    }
    body.clear();
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.starts_with("--")) {
      flush();
      section = trim(line.substr(2));
      continue;
    }
    if (!section.empty()) {
      body += line;
      body += '\n';
    }
  }
  flush();
  return c;
}

ConformanceCase parse_data_file(const std::string& path) {
  return parse_data(read_file(path, "conformance data file"),
                    std::filesystem::path(path).filename().string());
}

InsnVec case_program(const ConformanceCase& c) {
  if (!c.parse_error.empty()) throw Error(c.parse_error);
  InsnVec prog;
  if (c.asm_text)
    prog = isa::assemble(*c.asm_text);
  else if (c.raw_text)
    prog = isa::parse_raw(*c.raw_text);
  if (prog.empty()) throw Error("no instructions (needs a -- asm or -- raw section)");
  return prog;
}

CaseOutcome run_case(const ConformanceCase& c, vm::Executor& exec) {
  CaseOutcome out;
  InsnVec prog;
  try {
    prog = case_program(c);
  } catch (const Error& e) {
    out.message = std::string("assembler: ") + e.what();
    return out;
  }
  out.stage = CaseOutcome::kLoad;
  vm::Env env;
  env.helpers = &vm::conformance_helpers();
  vm::Program p;
  try {
    p = vm::prepare(c.name, prog, env);
  } catch (const Error& e) {
    out.passed = c.error && !c.error->empty() && *c.error == trim(e.what());
    out.message = out.passed ? "" : std::string("load: ") + e.what();
    return out;
  }
  out.stage = CaseOutcome::kRun;
  std::vector<uint8_t> mem = c.mem;
  vm::Run run;
  run.env = &env;
  uint64_t r1 = 0;
  if (!mem.empty()) {
    r1 = reinterpret_cast<uint64_t>(mem.data());
    run.add_region(r1, r1 + mem.size(), true);
  }
  out.r0 = exec.run(run, p, r1, mem.size());
  out.fault = run.fault;
  if (run.fault != vm::Fault::kNone) {
    out.message = fmt::format("fault {} at insn {}", vm::fault_name(run.fault), run.fault_pc);
  } else if (c.error) {
    out.message = fmt::format("expected load error '{}', but it ran: r0 = {:#x}", *c.error, out.r0);
  } else if (!c.result) {
    out.message = "no -- result";
  } else if (out.r0 != *c.result) {
    out.message = fmt::format("r0 = {:#x}, expected {:#x}", out.r0, *c.result);
  } else {
    out.passed = true;
  }
  return out;
}

std::vector<std::string> data_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".data") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace knod::conformance
