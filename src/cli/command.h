// knod CLI: each subcommand lives in its own cmd_*.cpp and registers itself here.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace knod::cli {

/// Adds a subcommand to `app`. The callback runs the command and returns the exit status;
/// it may throw knod::Error for user errors (printed as one line, exit 1).
using Register = void (*)(CLI::App& app, std::function<void(std::function<int()>)> set_action);

struct Registrar {
  Registrar(const char* name, Register fn);
};

}  // namespace knod::cli

/// In a cmd_*.cpp: KNOD_COMMAND(name) { auto* c = app.add_subcommand(...); ...; set_action([=]{...}); }
#define KNOD_COMMAND(id)                                                                    \
  static void knod_cmd_##id(CLI::App& app, std::function<void(std::function<int()>)> set_action); \
  static ::knod::cli::Registrar knod_reg_##id(#id, &knod_cmd_##id);                         \
  static void knod_cmd_##id(CLI::App& app, std::function<void(std::function<int()>)> set_action)
