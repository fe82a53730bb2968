// Small byte-string checks and escapes shared by the CLI's readers.
#pragma once

#include <elf.h>
#include <fmt/core.h>

#include <cstring>
#include <string>
#include <string_view>

namespace knod {

/// `bytes` for an error message: its first `max` bytes, those outside printable ASCII as \xNN,
/// then "..." if cut (so that a binary file named as a config or a program never writes itself
/// to the terminal).
inline std::string printable(std::string_view bytes, size_t max) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f)
      out += char(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  return bytes.size() > max ? out + "..." : out;
}

/// Whether `bytes` starts with the ELF magic (elf.h ELFMAG, "\x7fELF").
inline bool is_elf(std::string_view bytes) {
  return bytes.size() >= SELFMAG && std::memcmp(bytes.data(), ELFMAG, SELFMAG) == 0;
}

}  // namespace knod
