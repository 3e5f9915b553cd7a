// JsonValue: a small JSON reader for what the Agones SDK sidecar answers (the GameServer a watch streams,
// a player call's {"bool": true}). RFC 8259 text in, a tree out, or the reason it is not JSON; numbers
// keep their text as well (int64 fields arrive as strings or numbers, grpc-gateway's JSON does both).
// Not a general-purpose library: no writer (the SDK's request bodies are built with json_escaped), inputs
// are bounded by the caller, nesting by kMaxJsonDepth.
//
//   JsonParse p = parse_json(line);
//   if (!p.ok()) log(p.error);
//   const JsonValue* state = p.value.find("result", "status", "state");
//   if (state && state->is_string()) use(state->text);
#pragma once

#include <cstddef>
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

  bool is_string() const { return kind == Kind::kString; }
  bool is_object() const { return kind == Kind::kObject; }
  // The member named `key` of an object (the last one when repeated); null when absent or not an object.
  const JsonValue* member(std::string_view key) const;
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
  std::string error;  // empty: parsed; else what was wrong and at which byte
  bool ok() const { return error.empty(); }
};

JsonParse parse_json(std::string_view text);

}  // namespace shiftcast
