// trim_blanks: the spaces and tabs around a token of text the simulator parses (HTTP header values, the
// --net conditions), one definition for both.
#pragma once

#include <string_view>

namespace shiftcast {

inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

}  // namespace shiftcast
