// knod: command-line entry. Subcommands register through KNOD_COMMAND (see command.h).
#include <fmt/core.h>

#include <cstdio>
#include <map>
#include <new>
#include <string>

#include "base/error.h"
#include "cli/command.h"

#ifndef KNOD_VERSION  // set by src/cli/CMakeLists.txt (test binaries built from main.cpp may not)
#define KNOD_VERSION "dev"
#endif

namespace knod::cli {
namespace {
std::map<std::string, Register>& registry() {
  static std::map<std::string, Register> r;
  return r;
}
}  // namespace
Registrar::Registrar(const char* name, Register fn) {
  registry()[name] = fn;
}
}  // namespace knod::cli

namespace {

/// The subcommand of `app` called `name` (or an alias of it), or nullptr.
CLI::App* find_subcommand(CLI::App& app, const std::string& name) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (sub->check_name(name)) return sub;
  return nullptr;
}

/// "knod prog dump" for `knod prog dump x.o --bad`: the command line's subcommand chain;
/// `last` gets the innermost command.
std::string command_path(CLI::App& app, int argc, char** argv, CLI::App** last) {
  std::string path = "knod";
  CLI::App* cur = &app;
  for (int i = 1; i < argc; ++i) {
    CLI::App* sub = find_subcommand(*cur, argv[i]);
    if (!sub) break;
    path += " " + sub->get_name();
    cur = sub;
  }
  *last = cur;
  return path;
}

/// "list, dump": the subcommands of `app`.
std::string subcommand_names(CLI::App& app) {
  std::string names;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

/// For `knod prog bogus`: the first word that should name a subcommand of a command that
/// has subcommands but does not; empty when there is none. `path` gets that command's name.
std::string unknown_subcommand(CLI::App& app, int argc, char** argv, std::string& path) {
  path = "knod";
  CLI::App* cur = &app;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') return "";
    CLI::App* sub = find_subcommand(*cur, argv[i]);
    if (!sub) return cur->get_subcommands([](CLI::App*) { return true; }).empty() ? "" : argv[i];
    path += " " + sub->get_name();
    cur = sub;
  }
  return "";
}

/// A message on one line (CLI11's may span several); "P: P: why" (a path repeated by a
/// library message that already names it) becomes "P: why".
std::string one_line(std::string s) {
  for (char& ch : s)
    if (ch == '\n' || ch == '\r') ch = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  size_t colon = s.find(": ");
  if (colon != std::string::npos && colon > 0) {
    std::string head = s.substr(0, colon + 2);
    if (s.compare(colon + 2, head.size(), head) == 0) s.erase(0, head.size());
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"knod: XDP programs and IPsec ESP SAs, offloaded in batches to CPU or GPU"};
  app.require_subcommand(1);
  std::function<int()> action;
  for (auto& [name, fn] : knod::cli::registry())
    fn(app, [&action](std::function<int()> a) { action = std::move(a); });
  if (argc < 2) {  // `knod` alone: what there is to run
    fmt::print("{}", app.help());
    return 0;
  }
  std::string first = argv[1];
  if (first == "-V" || first == "--version") {  // as `knod version`
    fmt::print("knod {}\n", KNOD_VERSION);
    return 0;
  }
  if (first[0] == '-' && first != "-h" && first != "--help") {
    fmt::print(stderr, "knod: unknown option '{}' (see knod --help)\n", first);
    return 2;
  }
  std::string parent;
  std::string unknown = unknown_subcommand(app, argc, argv, parent);
  if (!unknown.empty()) {
    fmt::print(stderr, "knod: unknown command '{}{}' (see {} --help)\n",
               parent == "knod" ? "" : parent.substr(5) + " ", unknown, parent);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    CLI::App* last = nullptr;
    std::string cmd = command_path(app, argc, argv, &last);
    std::string why = one_line(e.what());
    // A command with subcommands given none: say which there are.
    if (dynamic_cast<const CLI::RequiredError*>(&e) && last->get_subcommands().empty() &&
        !subcommand_names(*last).empty())
      why = "missing command: one of " + subcommand_names(*last);
    fmt::print(stderr, "knod: {}{}: {} (see {} --help)\n", cmd == "knod" ? "" : cmd.substr(5),
               cmd == "knod" ? "usage" : "", why, cmd);
    return 2;
  }
  try {
    return action ? action() : 0;
  } catch (const knod::Error& e) {
    fmt::print(stderr, "knod: {}\n", one_line(e.what()));
    return 1;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "knod: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "knod: error: {}\n", one_line(e.what()));
    return 1;
  } catch (...) {
    fmt::print(stderr, "knod: internal error: unknown exception\n");
    return 1;
  }
}
