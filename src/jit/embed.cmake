# cmake -DIN=file.bc -DOUT=file.cpp -DSYM=name -P embed.cmake
# Writes a C++ source defining `extern "C" const unsigned char SYM[]` and `SYM_size`.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE ${OUT} "#include <cstddef>\nextern \"C\" const unsigned char ${SYM}[] = {${body}};\nextern \"C\" const size_t ${SYM}_size = ${bytes};\n")
