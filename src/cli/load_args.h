// Options shared by the subcommands that open an object: --max-entries and --map-load.
#pragma once

#include <string>
#include <vector>

#include "loader/object.h"

namespace knod::cli {

/// Fills `opts` from --max-entries values: `NAME=N` sets max_entries of map NAME (wins over
/// the object's own value), a bare `N` sets default_max_entries (maps declared with 0).
/// Throws knod::Error for a malformed value ("--max-entries 'x': want NAME=N or N").
void parse_max_entries(const std::vector<std::string>& values, loader::LoadOptions& opts);

/// Checks that every NAME of `--max-entries NAME=N` is a map of `obj` (a typo would
/// otherwise be ignored silently). Throws knod::Error naming the map.
void check_max_entries_names(const std::vector<std::string>& values, const loader::Object& obj);

/// Applies --map-load values to the object's maps, in order: `FILE.json` (every map of the
/// file) or `NAME=FILE.json` (only map NAME). Format: examples/xdp/README.md. Throws
/// knod::Error naming the file (unreadable, malformed, unknown map, wrong key/value size).
void apply_map_loads(const std::vector<std::string>& specs, const loader::Object& obj);

}  // namespace knod::cli
