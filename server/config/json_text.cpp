#include "server/config/json_text.hpp"

namespace shiftcast {

std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
  auto byte = [&](std::size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
  auto continuation = [&](std::size_t k) { return (byte(k) & 0xC0u) == 0x80u; };
  if (at >= text.size()) return 0;
  const unsigned c = byte(at);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return continuation(at + 1) ? 2 : 0;
  // The second byte's range excludes overlong forms, surrogates and code points above U+10FFFF.
  const unsigned low = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
  const unsigned high = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
  const unsigned second = byte(at + 1);
  if (second < low || second > high) return 0;
  if (c >= 0xE0 && c <= 0xEF) return continuation(at + 2) ? 3 : 0;
  if (c >= 0xF0 && c <= 0xF4) return continuation(at + 2) && continuation(at + 3) ? 4 : 0;
  return 0;
}

std::string json_escaped(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      // A JSON reader may refuse invalid UTF-8 (ours does), so the byte is replaced, not passed on.
      out += "\\ufffd";
      ++i;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      // DEL is legal raw JSON, escaped anyway so a report shown in a terminal stays readable.
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

std::string json_quoted(std::string_view text) {
  return '"' + json_escaped(text) + '"';
}

}  // namespace shiftcast
