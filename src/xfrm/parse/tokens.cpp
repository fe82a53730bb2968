#include "xfrm/parse/tokens.h"

#include "base/error.h"

namespace knod::xfrm {

std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\\') {
      ++i;
      continue;
    }
    if (c == '#') break;
    std::string w;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' &&
           line[i] != '\n') {
      char q = line[i];
      if (q == '\'' || q == '"') {
        size_t end = line.find(q, i + 1);
        if (end == std::string_view::npos) throw Error("xfrm: unterminated quote");
        w.append(line.substr(i + 1, end - i - 1));
        i = end + 1;
      } else {
        w.push_back(q);
        ++i;
      }
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace knod::xfrm
