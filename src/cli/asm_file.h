// Program files for `knod asm`, `disasm` and `jit`: assembly text or raw 8-byte slots, with
// errors that name the file and never echo binary bytes or a whole line of garbage.
#pragma once

#include <string>

#include "isa/insn.h"

namespace knod::cli {

/// True when `bytes` cannot be assembly text: a byte outside printable ASCII and whitespace
/// (raw slots hold NUL bytes; a binary file given by mistake holds others).
bool looks_binary(const std::string& bytes);

/// Assembles `text`, read from `path`. Errors: "PATH: line N: ..." (the assembler's message,
/// bytes outside printable ASCII as \xNN, at most 160 characters), "PATH: binary data, not
/// assembly text", "PATH: no instructions".
InsnVec assemble_file(const std::string& path, const std::string& text);

/// Raw slots read from `path`. Errors: "PATH: an ELF object, not raw instructions (knod prog
/// dump PATH disassembles its programs)", "PATH: N bytes is not a whole number of 8-byte
/// instructions", "PATH: no instructions".
InsnVec raw_slots(const std::string& path, const std::string& bytes);

}  // namespace knod::cli
