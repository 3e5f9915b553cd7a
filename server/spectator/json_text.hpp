// JSON string contents for the spectator's hand-written JSON (the dashboard's matches, the floor plan, a
// view's hello): one escaping for every name that reaches a page, so a level called `a"b` cannot break one.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace shiftcast {

// `text` escaped for use between JSON quotes: quote, backslash and control characters.
inline std::string json_escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace shiftcast
