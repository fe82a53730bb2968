// bpf_conformance plugin helpers (see conformance_helpers.h).
#include "vm/conformance_helpers.h"

namespace knod::vm {
namespace {

uint64_t unwind(Run& run, uint64_t r1, uint64_t, uint64_t, uint64_t, uint64_t) {
  if (r1 == 0) run.exit_now = true;
  return r1;
}

HelperTable make_table() {
  HelperTable t;
  t.fn[5] = &unwind;
  t.name[5] = "unwind";
  return t;
}

}  // namespace

const HelperTable& conformance_helpers() {
  static const HelperTable table = make_table();
  return table;
}

}  // namespace knod::vm
