#include "server/config/json_value.hpp"

#include <charconv>
#include <cstdint>
#include <system_error>

#include "server/config/json_text.hpp"

namespace shiftcast {

std::optional<double> JsonValue::as_number() const {
  if (kind != Kind::kNumber) return std::nullopt;
  // from_chars, not strtod: the locale's decimal point must not change what a report says.
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || at != end) return std::nullopt;
  return value;
}

std::optional<bool> JsonValue::as_bool() const {
  if (kind != Kind::kBool) return std::nullopt;
  return boolean;
}

std::optional<std::string_view> JsonValue::as_string() const {
  if (kind != Kind::kString) return std::nullopt;
  return std::string_view(text);
}

const JsonValue* JsonValue::member(std::string_view key) const {
  if (kind != Kind::kObject) return nullptr;
  const JsonValue* found = nullptr;
  for (const auto& [name, value] : members)
    if (name == key) found = &value;
  return found;
}

const JsonValue& JsonValue::operator[](std::string_view key) const {
  static const JsonValue kAbsent;
  const JsonValue* v = member(key);
  return v != nullptr ? *v : kAbsent;
}

namespace {

// Recursive descent over the text. Every error names the byte where the text stops being JSON (the
// offending byte itself, or the end for text that stops short), and the first error is the one kept.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  JsonParse run() {
    JsonParse out;
    skip_space();
    if (!value(out.value, 0)) {
      out.error = error_;
      return out;
    }
    skip_space();
    if (pos_ != text_.size()) out.error = at("text after the value", pos_);
    return out;
  }

 private:
  static std::string at(const std::string& what, std::size_t byte) {
    return what + " at byte " + std::to_string(byte);
  }
  bool fail(const std::string& what, std::size_t byte) {
    if (error_.empty()) error_ = at(what, byte);
    return false;
  }
  bool fail(const std::string& what) { return fail(what, pos_); }
  bool more() const { return pos_ < text_.size(); }
  bool next_is(char c) const { return more() && text_[pos_] == c; }
  bool next_is_digit() const { return more() && text_[pos_] >= '0' && text_[pos_] <= '9'; }
  void skip_space() {
    while (more() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return fail("not a JSON value");
    pos_ += word.size();
    return true;
  }

  bool value(JsonValue& out, int depth) {
    if (depth > kMaxJsonDepth) return fail("nested too deep");
    if (!more()) return fail("unexpected end");
    const char c = text_[pos_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      out.kind = JsonValue::Kind::kString;
      return string(out.text);
    }
    if (c == 't' || c == 'f') {
      out.kind = JsonValue::Kind::kBool;
      out.boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') return literal("null");
    if (c == '-' || (c >= '0' && c <= '9')) return number(out);
    // NaN, Infinity, '+1', '.5', a bare word: none is JSON.
    return fail("not a JSON value");
  }

  bool object(JsonValue& out, int depth) {
    out.kind = JsonValue::Kind::kObject;
    ++pos_;
    skip_space();
    if (next_is('}')) {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_space();
      if (next_is('}')) return fail("trailing comma");
      if (!next_is('"')) return fail("expected a member name");
      std::string name;
      if (!string(name)) return false;
      skip_space();
      if (!next_is(':')) return fail("expected ':'");
      ++pos_;
      skip_space();
      JsonValue v;
      if (!value(v, depth + 1)) return false;
      out.members.push_back({std::move(name), std::move(v)});
      skip_space();
      if (next_is(',')) {
        ++pos_;
        continue;
      }
      if (next_is('}')) {
        ++pos_;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  bool array(JsonValue& out, int depth) {
    out.kind = JsonValue::Kind::kArray;
    ++pos_;
    skip_space();
    if (next_is(']')) {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_space();
      if (next_is(']')) return fail("trailing comma");
      JsonValue v;
      if (!value(v, depth + 1)) return false;
      out.items.push_back(std::move(v));
      skip_space();
      if (next_is(',')) {
        ++pos_;
        continue;
      }
      if (next_is(']')) {
        ++pos_;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool number(JsonValue& out) {
    const std::size_t start = pos_;
    auto digits = [&] {
      const std::size_t from = pos_;
      while (next_is_digit())
        ++pos_;
      return pos_ > from;
    };
    if (next_is('-')) ++pos_;
    if (next_is('0')) {
      ++pos_;
      if (next_is_digit()) return fail("leading zero", pos_ - 1);
    } else if (!digits()) {
      return fail("expected digits");
    }
    if (next_is('.')) {
      ++pos_;
      if (!digits()) return fail("expected digits after '.'");
    }
    if (next_is('e') || next_is('E')) {
      ++pos_;
      if (next_is('+') || next_is('-')) ++pos_;
      if (!digits()) return fail("expected exponent digits");
    }
    out.kind = JsonValue::Kind::kNumber;
    out.text = std::string(text_.substr(start, pos_ - start));
    return true;
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  // The four hex digits after "\u".
  bool hex4(std::uint32_t& out) {
    out = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      if (!more()) return fail("short \\u escape");
      const char h = text_[pos_];
      out <<= 4;
      if (h >= '0' && h <= '9') {
        out |= std::uint32_t(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        out |= std::uint32_t(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        out |= std::uint32_t(h - 'A' + 10);
      } else {
        return fail("bad \\u escape");
      }
    }
    return true;
  }

  // After "\u": one code point, a surrogate pair counting as one. A lone surrogate has no UTF-8 form.
  bool unicode_escape(std::string& out) {
    const std::size_t escape = pos_ - 2;
    std::uint32_t cp = 0;
    if (!hex4(cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("unpaired surrogate", escape);
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (text_.substr(pos_, 2) != "\\u") return fail("unpaired surrogate", escape);
      pos_ += 2;
      std::uint32_t low = 0;
      if (!hex4(low)) return false;
      if (low < 0xDC00 || low > 0xDFFF) return fail("unpaired surrogate", escape);
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, cp);
    return true;
  }

  bool string(std::string& out) {
    ++pos_;  // the opening quote
    while (more()) {
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in a string");
      if (c != '\\') {
        // RFC 8259 text is UTF-8: a reader that passed other bytes on would hand its callers text that
        // no other JSON reader agrees on.
        const std::size_t length = utf8_sequence_length(text_, pos_);
        if (length == 0) return fail("invalid UTF-8 in a string");
        out.append(text_.substr(pos_, length));
        pos_ += length;
        continue;
      }
      ++pos_;
      if (!more()) break;
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          if (!unicode_escape(out)) return false;
          break;
        default:
          return fail("bad escape", pos_ - 2);
      }
    }
    return fail("unterminated string");
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace

JsonParse parse_json(std::string_view text) {
  return Reader(text).run();
}

}  // namespace shiftcast
