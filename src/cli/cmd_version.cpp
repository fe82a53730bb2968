// `knod version`: prints the version and build configuration.
#include <fmt/core.h>

#include "cli/command.h"

KNOD_COMMAND(version) {
  auto* c = app.add_subcommand("version", "Print knod's version");
  c->callback([set_action] {
    set_action([] {
      fmt::print("knod {}\n", KNOD_VERSION);
      return 0;
    });
  });
}
