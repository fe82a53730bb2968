// `-- raw` sections of bpf_conformance .data files: instruction slots as hex (see asm.h).
#include <fmt/core.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "isa/asm.h"
#include "isa/number.h"

namespace knod::isa {

uint64_t insn_word(const Insn& i) {
  uint64_t w;
  std::memcpy(&w, &i, sizeof w);  // the ISA is little-endian; so is every host knod runs on
  return w;
}

Insn insn_from_word(uint64_t w) {
  Insn i;
  std::memcpy(&i, &w, sizeof i);
  return i;
}

InsnVec parse_raw(std::string_view text) {
  InsnVec out;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    line_no++;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::string_view> words;
    size_t k = 0;
    while (k < line.size()) {
      size_t b = line.find_first_not_of(" \t\r", k);
      if (b == std::string_view::npos) break;
      size_t e = line.find_first_of(" \t\r", b);
      if (e == std::string_view::npos) e = line.size();
      words.push_back(line.substr(b, e - b));
      k = e;
    }
    if (words.empty()) continue;
    if (words.size() == 1) {
      auto w = parse_imm64(words[0]);
      if (!w || !words[0].starts_with("0x"))
        throw Error(fmt::format("line {}: invalid raw instruction word '{}'", line_no, words[0]));
      out.push_back(insn_from_word(*w));
      continue;
    }
    if (words.size() != 8)
      throw Error(fmt::format("line {}: expected 8 hex bytes per instruction", line_no));
    uint8_t bytes[8];
    for (int b = 0; b < 8; ++b) {
      auto v = parse_imm64(fmt::format("0x{}", words[b]));
      if (!v || *v > 0xff || words[b].size() > 2)
        throw Error(fmt::format("line {}: invalid byte '{}'", line_no, words[b]));
      bytes[b] = static_cast<uint8_t>(*v);
    }
    Insn i;
    std::memcpy(&i, bytes, sizeof i);
    out.push_back(i);
  }
  return out;
}

}  // namespace knod::isa
