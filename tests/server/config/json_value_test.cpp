// parse_json, the project's one JSON reader: values, escapes and accessors read back as written, and every
// kind of text that is not RFC 8259 JSON refused with the reason and the byte (0-based) where it shows.
// The oracle is the RFC's grammar, worked by hand into the expected errors below.
#include "server/config/json_value.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace shiftcast {
namespace {

TEST(JsonValue, ValuesAndEscapes) {
  const JsonParse p = parse_json(R"( {"s":"a\"b\\c\/\b\f\r\t\u00e9\ud83d\ude00\n","n":-12.5e3,"t":true,)"
                                 R"("f":false,"z":null,"a":[1,[2],{}],"dup":1,"dup":2} )");
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.value.member("s")->text, "a\"b\\c/\b\f\r\t\xc3\xa9\xf0\x9f\x98\x80\n");
  EXPECT_EQ(p.value.member("n")->text, "-12.5e3");
  EXPECT_TRUE(p.value.member("t")->boolean);
  EXPECT_FALSE(p.value.member("f")->boolean);
  EXPECT_EQ(p.value.member("z")->kind, JsonValue::Kind::kNull);
  EXPECT_EQ(p.value.member("a")->items.size(), 3u);
  EXPECT_EQ(p.value.member("dup")->text, "2");  // the last of a repeated name
  EXPECT_EQ(p.value.member("missing"), nullptr);
  EXPECT_EQ(p.value.find("a"), p.value.member("a"));
}

TEST(JsonValue, RawUtf8PassesThrough) {
  const JsonParse p = parse_json("[\"caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80\"]");
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.value.items.at(0).text, "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80");
}

TEST(JsonValue, AccessorsAnswerOnlyForTheirKind) {
  const JsonParse p =
      parse_json(R"({"n":-0.5,"big":1e400,"s":"7","t":true,"f":false,"z":null,"o":{"k":[]}})");
  ASSERT_TRUE(p.ok()) << p.error;
  const JsonValue& v = p.value;
  EXPECT_EQ(v["n"].as_number(), -0.5);
  EXPECT_EQ(v["big"].as_number(), std::nullopt);  // beyond a double: not a value to compute with
  EXPECT_EQ(v["big"].text, "1e400");              // the text is still there
  EXPECT_EQ(v["s"].as_number(), std::nullopt);    // a string of digits is a string
  EXPECT_EQ(v["s"].as_string(), "7");
  EXPECT_EQ(v["n"].as_string(), std::nullopt);
  EXPECT_EQ(v["t"].as_bool(), true);
  EXPECT_EQ(v["f"].as_bool(), false);
  EXPECT_EQ(v["z"].as_bool(), std::nullopt);
  EXPECT_TRUE(v["z"].is_null());
  EXPECT_TRUE(v["o"]["k"].is_array());
  EXPECT_TRUE(v.has("z"));
  EXPECT_FALSE(v.has("k"));
  // A missing step reads as null, and so does a member of something that is not an object.
  EXPECT_TRUE(v["missing"]["deeper"].is_null());
  EXPECT_TRUE(v["n"]["k"].is_null());
  EXPECT_EQ(v["missing"].as_number(), std::nullopt);
  EXPECT_EQ(v.find("o", "k"), &v["o"]["k"]);
  EXPECT_EQ(v.find("o", "missing", "k"), nullptr);
  for (const char* number : {"0", "-0", "0.5", "1e-7", "1E+2", "123456789.125", "-12.5e3"}) {
    const JsonParse n = parse_json(number);
    ASSERT_TRUE(n.ok()) << number << ": " << n.error;
    EXPECT_EQ(n.value.as_number(), std::stod(number)) << number;
  }
}

struct Refusal {
  std::string_view text;
  const char* error;
};

TEST(JsonValue, RefusesWhatIsNotJsonNamingTheByte) {
  using namespace std::string_view_literals;
  const Refusal refusals[] = {
      {"", "unexpected end at byte 0"},
      {"  ", "unexpected end at byte 2"},
      {"{", "expected a member name at byte 1"},
      {R"({"a"})", "expected ':' at byte 4"},
      {R"({"a":})", "not a JSON value at byte 5"},
      {R"({"a" 1})", "expected ':' at byte 5"},
      {R"({"a":1 "b":2})", "expected ',' or '}' at byte 7"},
      {"{a:1}", "expected a member name at byte 1"},
      {"[1 2]", "expected ',' or ']' at byte 3"},
      {"[1", "expected ',' or ']' at byte 2"},
      // Trailing commas.
      {"[1,]", "trailing comma at byte 3"},
      {"[1, ]", "trailing comma at byte 4"},
      {R"({"a":1,})", "trailing comma at byte 7"},
      // Raw control characters in strings (a tab, a newline, NUL and 0x1f), escaped ones are fine.
      {"\"a\tb\"", "control character in a string at byte 2"},
      {"[\"a\nb\"]", "control character in a string at byte 3"},
      {"\"a\0b\""sv, "control character in a string at byte 2"},
      {"\"\x1fz\"", "control character in a string at byte 1"},
      // NaN, Infinity and other numbers JSON does not have.
      {"NaN", "not a JSON value at byte 0"},
      {"[nan]", "not a JSON value at byte 1"},
      {"Infinity", "not a JSON value at byte 0"},
      {"-Infinity", "expected digits at byte 1"},
      {"+1", "not a JSON value at byte 0"},
      {".5", "not a JSON value at byte 0"},
      {"-", "expected digits at byte 1"},
      {"1.", "expected digits after '.' at byte 2"},
      {"1.e3", "expected digits after '.' at byte 2"},
      {"1e", "expected exponent digits at byte 2"},
      {"1e+", "expected exponent digits at byte 3"},
      {"0x10", "text after the value at byte 1"},
      // Leading zeros.
      {"01", "leading zero at byte 0"},
      {"00", "leading zero at byte 0"},
      {"[-012]", "leading zero at byte 2"},
      {R"({"n":007})", "leading zero at byte 5"},
      // Text after the value.
      {"{} {}", "text after the value at byte 3"},
      {"[1] x", "text after the value at byte 4"},
      {"1 2", "text after the value at byte 2"},
      {"true false", "text after the value at byte 5"},
      // Literals, escapes, strings.
      {"tru", "not a JSON value at byte 0"},
      {"True", "not a JSON value at byte 0"},
      {"nul", "not a JSON value at byte 0"},
      {R"("\x")", "bad escape at byte 1"},
      {R"("ab\'")", "bad escape at byte 3"},
      {R"("\u12")", "bad \\u escape at byte 5"},
      {R"("\u12)", "short \\u escape at byte 5"},
      {R"("\ud800")", "unpaired surrogate at byte 1"},
      {R"("\udc00")", "unpaired surrogate at byte 1"},
      {R"("x\ud800\u0041")", "unpaired surrogate at byte 2"},
      {R"("\ud800\ud800")", "unpaired surrogate at byte 1"},
      {"\"a", "unterminated string at byte 2"},
      {"\"a\\", "unterminated string at byte 3"},
      {"'a'", "not a JSON value at byte 0"},
      // Bytes that are not UTF-8: stray, cut, overlong, an encoded surrogate, beyond U+10FFFF.
      {"\"\xff\"", "invalid UTF-8 in a string at byte 1"},
      {"\"ab\x80\"", "invalid UTF-8 in a string at byte 3"},
      {"\"\xc3\"", "invalid UTF-8 in a string at byte 1"},
      {"\"\xc0\xaf\"", "invalid UTF-8 in a string at byte 1"},
      {"\"\xed\xa0\x80\"", "invalid UTF-8 in a string at byte 1"},
      {"\"\xf4\x90\x80\x80\"", "invalid UTF-8 in a string at byte 1"},
      {"{\"k\xff\":1}", "invalid UTF-8 in a string at byte 3"},
  };
  for (const Refusal& r : refusals) {
    const JsonParse p = parse_json(r.text);
    EXPECT_FALSE(p.ok()) << r.text;
    EXPECT_EQ(p.error, r.error) << r.text;
  }
}

TEST(JsonValue, NestingIsBounded) {
  std::string deep(kMaxJsonDepth + 1, '[');
  deep += std::string(kMaxJsonDepth + 1, ']');
  EXPECT_TRUE(parse_json(deep).ok()) << parse_json(deep).error;
  const std::string deeper = "[" + deep + "]";
  EXPECT_EQ(parse_json(deeper).error, "nested too deep at byte " + std::to_string(kMaxJsonDepth + 1));
}

}  // namespace
}  // namespace shiftcast
