// Refusing command lines whose files would clobber each other: an output that is also an input
// (`--drop in.pcap` would truncate the capture being read) or two outputs on one file.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace knod::cli {

/// (option, path) pairs; an empty path is an option not given.
using NamedPaths = std::vector<std::pair<std::string, std::string>>;

/// Throws knod::Error "OPT1 and OPT2 both name FILE: ..." when an output names the same file as
/// an input or as another output. Same file: the same path, or, for files that exist, the same
/// inode (`./a.pcap` and `a.pcap`, hard links, symlinks). /dev/stdout and /dev/stderr may be
/// named by several outputs.
void check_file_roles(const NamedPaths& inputs, const NamedPaths& outputs);

}  // namespace knod::cli
