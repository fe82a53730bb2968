#include "maps/util.h"

#include <bpf/libbpf.h>
#include <fmt/format.h>

#include "base/error.h"

namespace knod::maps {

std::string map_type_name(uint32_t type) {
  const char* s = libbpf_bpf_map_type_str(static_cast<bpf_map_type>(type));
  if (!s) return fmt::format("map type {}", type);
  std::string up = "BPF_MAP_TYPE_";
  for (const char* p = s; *p; ++p) up += static_cast<char>(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
  return up;
}

void bad_def(const std::string& name, const MapDef& def, const std::string& why, const char* err) {
  throw Error(fmt::format("map '{}' ({}): {} (the kernel rejects it with -{})", name,
                          map_type_name(def.type), why, err));
}

void check_flags(const std::string& name, const MapDef& def, uint32_t allowed) {
  uint32_t bad = def.map_flags & ~allowed;
  if (bad) bad_def(name, def, fmt::format("map_flags 0x{:x} not supported for this type", bad));
}

}  // namespace knod::maps
