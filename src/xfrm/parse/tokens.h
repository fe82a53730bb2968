// Shell-like word splitting for ip-xfrm lines: blanks separate words, '...' and "..."
// quote (quotes removed, "" is an empty word), '#' starts a comment outside quotes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace knod::xfrm {

/// Splits `line`. Throws knod::Error on an unterminated quote.
std::vector<std::string> split_words(std::string_view line);

}  // namespace knod::xfrm
