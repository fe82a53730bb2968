// Reads bpf_conformance .data files (sections `-- asm`, `-- raw`, `-- mem`, `-- result`).
#include "conformance.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "base/error.h"
#include "isa/asm.h"

namespace knod::gpu_test {

std::vector<std::string> conformance_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".data") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

ConformanceCase load_conformance(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, std::string> sections;
  std::string line, cur;
  while (std::getline(in, line)) {
    if (line.rfind("-- ", 0) == 0) {
      cur = line.substr(3);
      while (!cur.empty() && isspace(static_cast<unsigned char>(cur.back()))) cur.pop_back();
      sections[cur];
      continue;
    }
    if (!cur.empty()) sections[cur] += line + "\n";
  }
  ConformanceCase c;
  c.name = std::filesystem::path(path).stem().string();
  try {
    if (sections.count("asm"))
      c.insns = isa::assemble(sections["asm"]);
    else if (sections.count("raw"))
      c.insns = isa::parse_raw(sections["raw"]);
  } catch (const Error& e) {
    c.assemble_error = e.what();
  }
  std::istringstream mem(sections["mem"]);
  std::string byte;
  while (mem >> byte) c.mem.push_back(static_cast<uint8_t>(std::stoul(byte, nullptr, 16)));
  if (sections.count("result")) {
    std::istringstream r(sections["result"]);
    std::string v;
    if (r >> v) c.result = std::stoull(v, nullptr, 0);
  }
  return c;
}

int run_command(const std::string& cmd, std::string* out) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace knod::gpu_test
