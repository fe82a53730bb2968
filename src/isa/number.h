// knod ISA text: numbers of the assembly syntax. Hex (`0x..`, raw bits of the field) or
// signed decimal, range-checked against the field: never silently truncated.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace knod::isa {

/// imm field: decimal in [-2^31, 2^31), hex `0x0`..`0xffffffff`, `-0x..` down to -2^31.
std::optional<int32_t> parse_imm32(std::string_view s);
/// off field: decimal in [-32768, 32767], hex up to 0xffff, `-0x..` down to -0x8000.
std::optional<int16_t> parse_off16(std::string_view s);
/// 64-bit value (lddw): decimal in [-2^63, 2^64), hex up to 16 digits; two's complement bits.
std::optional<uint64_t> parse_imm64(std::string_view s);

}  // namespace knod::isa
