// JsonValue and parse_json: the project's one JSON reader. It reads what the Agones SDK sidecar answers
// (the GameServer a watch streams, a player call's {"bool": true}), and it is the tests' strict oracle
// for the JSON shiftcast writes (shiftcast-sim's report, the spectator's /api/matches). RFC 8259 text in,
// a tree out, or the reason it is not JSON and the byte where that shows: raw control characters and
// invalid UTF-8 in strings, unpaired surrogate escapes, trailing commas, NaN and Infinity, leading zeros,
// a bare '-' or '.', and text after the value are all errors, never guessed at. Numbers keep their text
// as well (int64 fields arrive as strings or numbers, grpc-gateway's JSON does both). Errors are values,
// nothing throws. Inputs are bounded by the caller, nesting by kMaxJsonDepth. The writer side is
// server/config/json_text.hpp (json_escaped). In shiftcast_config so the server and shiftcast-sim share it.
//
//   JsonParse p = parse_json(line);
//   if (!p.ok()) log(p.error);                                     // "... at byte 17"
//   const JsonValue* state = p.value.find("result", "status", "state");
//   if (state && state->is_string()) use(state->text);
//   std::optional<double> n = p.value["servers"]["count"].as_number();  // nullopt if absent or not one
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shiftcast {

inline constexpr int kMaxJsonDepth = 64;

struct JsonMember;

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  std::string text;              // a string's contents (unescaped), or a number's text as written
  std::vector<JsonValue> items;  // an array's elements
  // An object's, in document order. A struct of its own rather than std::pair: a pair of an incomplete
  // type may not be instantiated (clang refuses what gcc lets pass).
  std::vector<JsonMember> members;

  bool is_null() const { return kind == Kind::kNull; }
  bool is_bool() const { return kind == Kind::kBool; }
  bool is_number() const { return kind == Kind::kNumber; }
  bool is_string() const { return kind == Kind::kString; }
  bool is_array() const { return kind == Kind::kArray; }
  bool is_object() const { return kind == Kind::kObject; }

  // The value when it is of that kind, else nullopt. as_number is also nullopt for a number beyond a
  // double's range. Compare the optionals with ==: EXPECT_TRUE(v.as_bool()) only asks "is it a bool".
  std::optional<double> as_number() const;
  std::optional<bool> as_bool() const;
  std::optional<std::string_view> as_string() const;

  // The member named `key` of an object (the last one when repeated); null when absent or not an object.
  const JsonValue* member(std::string_view key) const;
  bool has(std::string_view key) const { return member(key) != nullptr; }
  // member(key), or a null value when there is none: for chains (v["a"]["b"].as_number()) whose end
  // checks the kind, so a missing step reads as "not a number" rather than a null pointer.
  const JsonValue& operator[](std::string_view key) const;
  // member(a)->member(b)->...; null when any step is missing.
  template <class... Keys>
  const JsonValue* find(std::string_view first, Keys... rest) const {
    const JsonValue* v = member(first);
    if constexpr (sizeof...(rest) == 0) {
      return v;
    } else {
      return v == nullptr ? nullptr : v->find(rest...);
    }
  }
};

struct JsonMember {
  std::string name;
  JsonValue value;
};

struct JsonParse {
  JsonValue value;
  std::string error;  // empty: parsed; else what was wrong and at which byte (0-based)
  bool ok() const { return error.empty(); }
};

JsonParse parse_json(std::string_view text);

}  // namespace shiftcast
