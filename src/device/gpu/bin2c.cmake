# cmake -DIN=<file> -DOUT=<file.cpp> -DNAME=<function> -P bin2c.cmake
# Writes `std::string_view knod::device::gpu::<NAME>()` returning IN's bytes.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "(..)" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "// Generated from ${IN} by bin2c.cmake.\n#include <string_view>\n"
  "namespace knod::device::gpu {\nstatic const unsigned char k_${NAME}[] = {${bytes}};\n"
  "std::string_view ${NAME}() {\n  return {reinterpret_cast<const char*>(k_${NAME}), sizeof k_${NAME}};\n}\n}\n")
