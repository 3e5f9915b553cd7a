#include "tools/token/token_json.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <iterator>
#include <map>
#include <vector>

#include "tools/token/token_mint.hpp"

namespace shiftcast {
namespace {

// The fields in the order they are written; `text` ones are JSON strings, the others integers.
struct Field {
  const char* name;
  bool text;
};
constexpr Field kFields[] = {
    {"server_address", true},       {"match_id", false},
    {"client_id", false},           {"expires_at", false},
    {"token_nonce", true},          {"sealed_token", true},
    {"client_to_server_key", true}, {"server_to_client_key", true},
};

// A value of the flat object: a JSON string (its text) or an unsigned integer (its digits).
struct FlatValue {
  bool text = false;
  std::string value;
};
using FlatObject = std::map<std::string, FlatValue>;

// A flat JSON object of string and unsigned integer values, as connect_token_json writes it. The strings
// it writes need no escapes (addresses and hex), so one with a backslash is refused rather than decoded.
class FlatObjectReader {
 public:
  explicit FlatObjectReader(std::string_view text) : text_(text) {}

  std::optional<FlatObject> read() {
    FlatObject out;
    if (!take('{')) return std::nullopt;
    if (take('}')) return finish(out);
    do {
      std::optional<std::string> key = string();
      if (!key || !take(':')) return std::nullopt;
      skip_space();
      const bool text = peek() == '"';
      std::optional<std::string> value = text ? string() : digits();
      if (!value || !out.emplace(*key, FlatValue{text, *value}).second) return std::nullopt;
    } while (take(','));
    if (!take('}')) return std::nullopt;
    return finish(out);
  }

 private:
  std::optional<FlatObject> finish(FlatObject& out) {
    skip_space();
    if (at_ != text_.size()) return std::nullopt;
    return std::move(out);
  }
  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_])))
      ++at_;
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  bool take(char c) {
    skip_space();
    if (peek() != c) return false;
    ++at_;
    return true;
  }
  std::optional<std::string> string() {
    if (!take('"')) return std::nullopt;
    const std::size_t end = text_.find('"', at_);
    if (end == std::string_view::npos) return std::nullopt;
    std::string value(text_.substr(at_, end - at_));
    if (value.find('\\') != std::string::npos) return std::nullopt;
    at_ = end + 1;
    return value;
  }
  std::optional<std::string> digits() {
    const std::size_t begin = at_;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_])))
      ++at_;
    if (at_ == begin) return std::nullopt;
    return std::string(text_.substr(begin, at_ - begin));
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

template <class T>
bool read_number(const std::string& digits, T& out) {
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  return ec == std::errc() && end == digits.data() + digits.size() &&
         (digits.size() == 1 || digits[0] != '0');
}

template <std::size_t N>
bool read_bytes(const std::string& hex, std::array<std::uint8_t, N>& out) {
  const std::optional<std::vector<std::uint8_t>> bytes = from_hex(hex, N);
  if (!bytes) return false;
  std::copy(bytes->begin(), bytes->end(), out.begin());
  return true;
}

}  // namespace

std::string connect_token_json(const ConnectToken& token) {
  const std::string values[] = {
      token.server_address,
      std::to_string(token.match_id),
      std::to_string(token.client_id),
      std::to_string(token.expires_at),
      to_hex(token.nonce),
      to_hex(token.sealed),
      to_hex(token.client_to_server),
      to_hex(token.server_to_client),
  };
  std::string out = "{\n";
  for (std::size_t i = 0; i < std::size(kFields); ++i) {
    out += "  \"";
    out += kFields[i].name;
    out += "\": ";
    out += kFields[i].text ? "\"" + values[i] + "\"" : values[i];
    out += i + 1 < std::size(kFields) ? ",\n" : "\n";
  }
  out += "}\n";
  return out;
}

std::optional<ConnectToken> connect_token_from_json(std::string_view json) {
  const auto object = FlatObjectReader(json).read();
  if (!object || object->size() != std::size(kFields)) return std::nullopt;
  std::map<std::string, std::string> o;
  for (const Field& f : kFields) {
    const auto it = object->find(f.name);
    // A string is refused where a number belongs and the reverse.
    if (it == object->end() || it->second.text != f.text) return std::nullopt;
    o[f.name] = it->second.value;
  }
  ConnectToken t;
  t.server_address = o.at("server_address");
  if (!is_server_address(t.server_address)) return std::nullopt;
  if (!read_number(o.at("match_id"), t.match_id) || !read_number(o.at("client_id"), t.client_id) ||
      !read_number(o.at("expires_at"), t.expires_at)) {
    return std::nullopt;
  }
  if (!read_bytes(o.at("token_nonce"), t.nonce) ||
      !read_bytes(o.at("client_to_server_key"), t.client_to_server) ||
      !read_bytes(o.at("server_to_client_key"), t.server_to_client)) {
    return std::nullopt;
  }
  const std::string& sealed = o.at("sealed_token");
  if (sealed.size() % 2 != 0 || sealed.size() / 2 < kMacBytes) return std::nullopt;
  std::optional<std::vector<std::uint8_t>> bytes = from_hex(sealed, sealed.size() / 2);
  if (!bytes) return std::nullopt;
  t.sealed = std::move(*bytes);
  return t;
}

}  // namespace shiftcast
