// knod::Error: the one exception type for user-facing errors (bad ELF, bad option, bad file).
// The CLI prints what() as its single error line and exits non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace knod {
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
}  // namespace knod
