// json_escaped and json_quoted, the project's one JSON string escaper: quote, backslash and every control
// character escaped, valid UTF-8 (two, three and four bytes) passed through as it is, bytes that are not
// UTF-8 replaced by U+FFFD; and what it writes read back by parse_json as the text it was given.
#include "server/config/json_text.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "server/config/json_value.hpp"

namespace shiftcast {
namespace {

using namespace std::string_view_literals;

TEST(JsonText, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json_escaped(R"(a"b\c/d)"), R"(a\"b\\c/d)");
  EXPECT_EQ(json_escaped("\n\r\t"), R"(\n\r\t)");
  EXPECT_EQ(json_escaped("\b\f\x01\x1f\x7f"), R"(\u0008\u000c\u0001\u001f\u007f)");
  EXPECT_EQ(json_escaped("a\0b"sv), R"(a\u0000b)");
  EXPECT_EQ(json_escaped(""), "");
  EXPECT_EQ(json_quoted(R"(say "hi")"), R"("say \"hi\"")");
  EXPECT_EQ(json_quoted(""), R"("")");
}

TEST(JsonText, PassesUtf8ThroughAndReplacesWhatIsNotUtf8) {
  const std::string utf8 = "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf";  // up to U+10FFFF
  EXPECT_EQ(json_escaped(utf8), utf8);
  EXPECT_EQ(json_escaped("bad \xff byte"), R"(bad \ufffd byte)");
  EXPECT_EQ(json_escaped("cut \xe2\x82"), R"(cut \ufffd\ufffd)");
  EXPECT_EQ(json_escaped("\xc3"), R"(\ufffd)");
  EXPECT_EQ(json_escaped("\xc0\xaf"), R"(\ufffd\ufffd)");                      // overlong '/'
  EXPECT_EQ(json_escaped("\xed\xa0\x80"), R"(\ufffd\ufffd\ufffd)");            // a surrogate, encoded
  EXPECT_EQ(json_escaped("\xf4\x90\x80\x80"), R"(\ufffd\ufffd\ufffd\ufffd)");  // beyond U+10FFFF
}

TEST(JsonText, Utf8SequenceLengths) {
  EXPECT_EQ(utf8_sequence_length("a", 0), 1u);
  EXPECT_EQ(utf8_sequence_length("\xc3\xa9", 0), 2u);
  EXPECT_EQ(utf8_sequence_length("\xe2\x9c\x93", 0), 3u);
  EXPECT_EQ(utf8_sequence_length("\xf0\x9f\x98\x80", 0), 4u);
  EXPECT_EQ(utf8_sequence_length("\xf0\x9f\x98\x80", 1), 0u);  // a continuation byte alone
  EXPECT_EQ(utf8_sequence_length("\xe0\x80\x80", 0), 0u);      // overlong
  EXPECT_EQ(utf8_sequence_length("a", 1), 0u);                 // past the end
}

TEST(JsonText, WhatItWritesReadsBackAsWritten) {
  for (std::string_view text : {"plain"sv, "q\"uo\\te/"sv, "\n\r\t\b\f\x01\x1f\x7f"sv, "nul \0 inside"sv,
                                "caf\xc3\xa9 \xf0\x9f\x98\x80"sv}) {
    const JsonParse p = parse_json(json_quoted(text));
    ASSERT_TRUE(p.ok()) << p.error;
    EXPECT_EQ(p.value.as_string(), text);
  }
  const JsonParse replaced = parse_json(json_quoted("x\xffy"));
  ASSERT_TRUE(replaced.ok()) << replaced.error;
  EXPECT_EQ(replaced.value.as_string(), "x\xef\xbf\xbdy");  // U+FFFD
}

}  // namespace
}  // namespace shiftcast
