// Json and JsonReader: a small strict JSON reader, the tests' oracle for what shiftcast-sim writes
// (report_json): raw control characters, trailing commas, NaN and leading zeros are errors, and so are
// surrogate escapes (report_json never writes them). Throws std::runtime_error with the position.
//
//   Json report = JsonReader(text).document();
//   report["servers"].items[0]["matches"].number ...
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace shiftcast {

struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> items;        // array elements, or object values
  std::vector<std::string> keys;  // object keys, parallel to items

  bool has(const std::string& key) const {
    return kind == Kind::kObject && std::find(keys.begin(), keys.end(), key) != keys.end();
  }
  const Json& operator[](const std::string& key) const {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return items[i];
    }
    throw std::runtime_error("no key " + key);
  }
};

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : text_(text) {}

  Json document() {
    Json value = read();
    space();
    if (pos_ != text_.size()) fail("trailing text");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(what + " at " + std::to_string(pos_));
  }
  void space() {
    while (pos_ < text_.size() && std::string_view(" \t\r\n").find(text_[pos_]) != std::string_view::npos)
      ++pos_;
  }
  char next() { return pos_ < text_.size() ? text_[pos_++] : (fail("end of text"), '\0'); }
  void expect(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) fail("expected " + std::string(word));
    pos_ += word.size();
  }
  Json read() {
    space();
    Json out;
    char c = pos_ < text_.size() ? text_[pos_] : '\0';
    if (c == '{' || c == '[') {
      ++pos_;
      out.kind = c == '{' ? Json::Kind::kObject : Json::Kind::kArray;
      const char close = c == '{' ? '}' : ']';
      space();
      if (pos_ < text_.size() && text_[pos_] == close) {
        ++pos_;
        return out;
      }
      while (true) {
        if (out.kind == Json::Kind::kObject) {
          space();
          if (next() != '"') fail("key expected");
          out.keys.push_back(string_body());
          space();
          if (next() != ':') fail("':' expected");
        }
        out.items.push_back(read());
        space();
        char sep = next();
        if (sep == close) return out;
        if (sep != ',') fail("',' expected");
      }
    }
    if (c == '"') {
      ++pos_;
      out.kind = Json::Kind::kString;
      out.string = string_body();
    } else if (c == 't' || c == 'f') {
      out.kind = Json::Kind::kBool;
      out.boolean = c == 't';
      expect(c == 't' ? "true" : "false");
    } else if (c == 'n') {
      expect("null");
    } else {
      out.kind = Json::Kind::kNumber;
      out.number = number();
    }
    return out;
  }
  double number() {
    std::size_t start = pos_;
    auto digits = [&] {
      std::size_t from = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))
        ++pos_;
      if (pos_ == from) fail("digits expected");
      return pos_ - from;
    };
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    std::size_t int_start = pos_;
    if (digits() > 1 && text_[int_start] == '0') fail("leading zero");
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      digits();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      digits();
    }
    return std::strtod(std::string(text_.substr(start, pos_ - start)).c_str(), nullptr);
  }
  std::string string_body() {
    std::string out;
    while (true) {
      char c = next();
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("raw control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      char e = next();
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
        case 'u': {
          unsigned code = std::stoul(std::string(text_.substr(pos_, 4)), nullptr, 16);
          pos_ += 4;
          if (code >= 0xD800 && code <= 0xDFFF) fail("surrogates are not written by report_json");
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default:
          fail("bad escape");
      }
    }
  }
  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace shiftcast
