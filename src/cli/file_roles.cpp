#include "cli/file_roles.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "base/error.h"

namespace knod::cli {
namespace {

bool same_file(const std::string& a, const std::string& b) {
  if (a == b) return true;
  std::error_code ec, ea, eb;
  if (std::filesystem::equivalent(a, b, ec) && !ec) return true;  // both exist: same inode
  // Not written yet: the same path once `.`, `..` and symlinked directories are resolved
  // (made absolute first: weakly_canonical leaves "x" relative but makes "./x" absolute).
  const auto ca = std::filesystem::weakly_canonical(std::filesystem::absolute(a), ea),
             cb = std::filesystem::weakly_canonical(std::filesystem::absolute(b), eb);
  return !ea && !eb && ca == cb;
}

bool shareable(const std::string& p) {
  return p == "-" || p == "/dev/stdout" || p == "/dev/stderr" || p == "/dev/null";
}

}  // namespace

void check_file_roles(const NamedPaths& inputs, const NamedPaths& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [opt, path] = outputs[i];
    if (path.empty() || shareable(path)) continue;
    for (const auto& [in_opt, in_path] : inputs)
      if (!in_path.empty() && same_file(path, in_path))
        throw Error(
            fmt::format("{} would overwrite {} ({}), which it reads: give the output "
                        "another file",
                        opt, in_path, in_opt));
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[j].second.empty() && same_file(path, outputs[j].second))
        throw Error(fmt::format("{} and {} both write {}: give each output its own file", opt,
                                outputs[j].first, path));
  }
}

}  // namespace knod::cli
