// JSON string text, the project's one escaper: everything shiftcast writes as JSON by hand (shiftcast-sim's
// report, the spectator's matches, floor plan and view hello, the Agones SDK's request bodies) puts its
// strings through here, so a level called `a"b` or a failure reason quoting a peer's bytes cannot break a
// document. The output is always valid JSON: quote, backslash and control characters (and DEL) are
// escaped, valid UTF-8 passes through unchanged, and bytes that are not UTF-8 become U+FFFD. The reader
// is server/config/json_value.hpp. Lives in shiftcast_config so the server and shiftcast-sim share it;
// shiftcast-token, which links protocol alone, writes only addresses and hex, which need no escaping.
//
//   out += fmt::format(R"({{"level":"{}"}})", json_escaped(level.name));  // between quotes of your own
//   out += json_quoted(reason);                                             // with the quotes
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace shiftcast {

// `text` escaped for use between JSON quotes.
std::string json_escaped(std::string_view text);

// `text` as a JSON string: json_escaped between quotes.
std::string json_quoted(std::string_view text);

// The length of the valid UTF-8 sequence that starts at text[at], 0 when the bytes there are not one
// (a stray continuation byte, a cut or overlong sequence, a surrogate, beyond U+10FFFF) or `at` is past
// the end. What json_escaped replaces, and what parse_json refuses inside a string.
std::size_t utf8_sequence_length(std::string_view text, std::size_t at);

}  // namespace shiftcast
