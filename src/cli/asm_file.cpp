#include "cli/asm_file.h"

#include <fmt/core.h>

#include <cstring>

#include "base/error.h"
#include "base/text.h"
#include "isa/asm.h"

namespace knod::cli {
namespace {

constexpr size_t kMaxMessage = 160;  ///< bytes of an assembler message echoed

bool text_byte(unsigned char c) {
  return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

bool looks_binary(const std::string& bytes) {
  for (unsigned char c : bytes)
    if (!text_byte(c)) return true;
  return false;
}

InsnVec assemble_file(const std::string& path, const std::string& text) {
  if (looks_binary(text)) throw Error(path + ": binary data, not assembly text");
  InsnVec prog;
  try {
    prog = isa::assemble(text);
  } catch (const Error& e) {
    throw Error(path + ": " + printable(e.what(), kMaxMessage));
  }
  if (prog.empty()) throw Error(path + ": no instructions");
  return prog;
}

InsnVec raw_slots(const std::string& path, const std::string& bytes) {
  if (is_elf(bytes))
    throw Error(path + ": an ELF object, not raw instructions (knod prog dump " + path +
                " disassembles its programs)");
  if (bytes.size() % sizeof(Insn) != 0)
    throw Error(fmt::format("{}: {} bytes is not a whole number of 8-byte instructions", path,
                            bytes.size()));
  if (bytes.empty()) throw Error(path + ": no instructions");
  InsnVec prog(bytes.size() / sizeof(Insn));
  std::memcpy(prog.data(), bytes.data(), bytes.size());
  return prog;
}

}  // namespace knod::cli
