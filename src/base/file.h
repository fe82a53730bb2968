// Whole-file reads and writes for the CLI's inputs and outputs (objects, configs, JSON,
// packets): every failure is a knod::Error naming the file, never an empty read or a silent
// short write.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/error.h"

namespace knod {

/// The bytes of the file at `path`; `what` names it in errors: "PATH: is a directory, not a
/// WHAT", "PATH: cannot open WHAT (STRERROR)", "PATH: read error (STRERROR)". (A directory
/// opened with std::ifstream reads as an empty file, which callers took for an empty config.)
inline std::string read_file(const std::string& path, const std::string& what = "file") {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(path + ": is a directory, not a " + what);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(path + ": cannot open " + what + " (" + std::strerror(errno) + ")");
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const bool bad = std::ferror(f);
  const int err = errno;
  std::fclose(f);
  if (bad) throw Error(path + ": read error (" + std::strerror(err) + ")");
  return out;
}

/// Writes `n` bytes to `path` (created or truncated). Errors: "PATH: cannot write (STRERROR)";
/// "PATH: write error (STRERROR)" when any byte does not reach the file (a full disk,
/// /dev/full): the write, the flush and the close are all checked.
inline void write_file(const std::string& path, const void* data, size_t n) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error(path + ": cannot write (" + std::strerror(errno) + ")");
  bool ok = std::fwrite(data, 1, n, f) == n && std::fflush(f) == 0;
  int err = errno;
  if (std::fclose(f) != 0 && ok) ok = false, err = errno;
  if (!ok) throw Error(path + ": write error (" + std::strerror(err) + ")");
}
inline void write_file(const std::string& path, const std::string& text) {
  write_file(path, text.data(), text.size());
}

}  // namespace knod
