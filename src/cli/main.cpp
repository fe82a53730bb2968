// knod: command-line entry. Subcommands register through KNOD_COMMAND (see command.h).
#include <fmt/core.h>

#include <cstdio>
#include <map>
#include <string>

#include "base/error.h"
#include "cli/command.h"

namespace knod::cli {
namespace {
std::map<std::string, Register>& registry() {
  static std::map<std::string, Register> r;
  return r;
}
}  // namespace
Registrar::Registrar(const char* name, Register fn) { registry()[name] = fn; }
}  // namespace knod::cli

int main(int argc, char** argv) {
  CLI::App app{"knod: XDP programs and IPsec ESP SAs, offloaded in batches to CPU or GPU"};
  app.require_subcommand(1);
  std::function<int()> action;
  for (auto& [name, fn] : knod::cli::registry())
    fn(app, [&action](std::function<int()> a) { action = std::move(a); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "knod: {}\n", e.what());
    return 2;
  }
  try {
    return action ? action() : 0;
  } catch (const knod::Error& e) {
    fmt::print(stderr, "knod: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "knod: error: {}\n", e.what());
    return 1;
  }
}
