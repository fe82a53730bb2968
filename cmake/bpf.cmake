# knod_bpf_object(<target> <out.o> <src.c> [INCLUDES dirs...])
# Compiles an XDP/BPF C source with `clang-19 -target bpf -O2 -g` (BTF included), as real
# deployments build their objects.
function(knod_bpf_object target out src)
  cmake_parse_arguments(A "" "" "INCLUDES;FLAGS" ${ARGN})
  set(incs "")
  foreach(i ${A_INCLUDES})
    list(APPEND incs -I${i})
  endforeach()
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${KNOD_CLANG_BPF} -target bpf -O2 -g -Wall -Werror
            -I/usr/include/x86_64-linux-gnu ${incs} ${A_FLAGS} -c ${src} -o ${out}
    DEPENDS ${src}
    COMMENT "BPF ${src}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${out})
endfunction()
