# cmake -DIN=<file> -DOUT=<file.cpp> -P embed.cmake
# Writes `std::string_view knod::xfrm::gpu::esp_ptx()` returning IN's bytes.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "(..)" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "// Generated from ${IN} by embed.cmake.\n#include <string_view>\n"
  "namespace knod::xfrm::gpu {\nstatic const unsigned char k_esp_ptx[] = {${bytes}};\n"
  "std::string_view esp_ptx() {\n"
  "  return {reinterpret_cast<const char*>(k_esp_ptx), sizeof k_esp_ptx};\n}\n}\n")
