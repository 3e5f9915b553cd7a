#include "client-sim/prometheus_text.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace shiftcast {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
bool is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    return lower(x) == lower(y);
  });
}

// A cursor over one line; every read reports failure instead of running past the end.
class LineReader {
 public:
  explicit LineReader(std::string_view line) : line_(line) {}

  bool done() const { return pos_ >= line_.size(); }
  char peek() const { return done() ? '\0' : line_[pos_]; }
  bool skip_blanks() {
    std::size_t start = pos_;
    while (!done() && is_blank(line_[pos_]))
      ++pos_;
    return pos_ > start;
  }
  bool take(char c) {
    if (peek() != c || done()) return false;
    ++pos_;
    return true;
  }
  // Metric names may hold colons, label names may not.
  std::string_view name(bool allow_colon) {
    std::size_t start = pos_;
    while (!done()) {
      char c = line_[pos_];
      bool ok = is_letter(c) || (allow_colon && c == ':') || (pos_ > start && is_digit(c));
      if (!ok) break;
      ++pos_;
    }
    return line_.substr(start, pos_ - start);
  }
  std::string_view token() {
    std::size_t start = pos_;
    while (!done() && !is_blank(line_[pos_]))
      ++pos_;
    return line_.substr(start, pos_ - start);
  }
  std::string_view rest() {
    std::string_view out = line_.substr(std::min(pos_, line_.size()));
    pos_ = line_.size();
    return out;
  }
  // The body of a quoted label value, the opening quote already taken; nullopt on a bad escape or a
  // missing closing quote.
  std::optional<std::string> quoted() {
    std::string out;
    while (!done()) {
      char c = line_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      char escaped = peek();
      ++pos_;
      if (escaped == '\\' || escaped == '"') {
        out += escaped;
      } else if (escaped == 'n') {
        out += '\n';
      } else {
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

 private:
  std::string_view line_;
  std::size_t pos_ = 0;
};

// HELP text escapes only backslash and newline; anything else after a backslash stays as written.
std::string unescape_help(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '\\' || text[i + 1] == 'n')) {
      out += text[i + 1] == 'n' ? '\n' : '\\';
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

// A `#` line: HELP and TYPE are kept, anything else is a comment. Empty on success.
std::string parse_comment(LineReader& in, PrometheusText& out) {
  in.skip_blanks();
  std::string_view keyword = in.token();
  if (keyword != "HELP" && keyword != "TYPE") return {};
  if (!in.skip_blanks()) return fmt::format("{} without a metric name", keyword);
  std::string name(in.name(true));
  if (name.empty()) return fmt::format("{}: invalid metric name", keyword);
  if (!in.done() && !in.skip_blanks()) return fmt::format("{}: invalid metric name", keyword);
  if (keyword == "HELP") {
    out.help[name] = unescape_help(in.rest());
    return {};
  }
  std::string_view type = in.token();
  in.skip_blanks();
  if (!in.done()) return fmt::format("TYPE {}: trailing text", name);
  constexpr std::string_view kTypes[] = {"counter", "gauge", "histogram", "summary", "untyped"};
  if (std::find(std::begin(kTypes), std::end(kTypes), type) == std::end(kTypes)) {
    return fmt::format("TYPE {}: unknown type '{}'", name, type);
  }
  if (!out.types.emplace(name, std::string(type)).second) return fmt::format("TYPE {}: given twice", name);
  return {};
}

std::string parse_sample(LineReader& in, PrometheusText& out) {
  PrometheusSample sample;
  sample.name = std::string(in.name(true));
  if (sample.name.empty()) return "invalid metric name";
  in.skip_blanks();
  if (in.take('{')) {
    while (true) {
      in.skip_blanks();
      if (in.take('}')) break;
      std::string label(in.name(false));
      if (label.empty()) return fmt::format("{}: invalid label name", sample.name);
      in.skip_blanks();
      if (!in.take('=')) return fmt::format("{}: '=' expected after label {}", sample.name, label);
      in.skip_blanks();
      if (!in.take('"')) return fmt::format("{}: '\"' expected for label {}", sample.name, label);
      std::optional<std::string> value = in.quoted();
      if (!value) return fmt::format("{}: label {}: bad escape or unterminated value", sample.name, label);
      if (sample.label(label)) return fmt::format("{}: label {} given twice", sample.name, label);
      sample.labels.emplace_back(std::move(label), std::move(*value));
      in.skip_blanks();
      if (in.take('}')) break;
      if (!in.take(',')) return fmt::format("{}: ',' or '}}' expected after a label", sample.name);
    }
    in.skip_blanks();
  }
  std::string_view value_text = in.token();
  std::optional<double> value = parse_prometheus_value(value_text);
  if (!value) return fmt::format("{}: invalid value '{}'", sample.name, value_text);
  sample.value = *value;
  in.skip_blanks();
  if (!in.done()) {
    std::string_view stamp = in.token();
    std::int64_t ms = 0;
    auto [end, ec] = std::from_chars(stamp.data(), stamp.data() + stamp.size(), ms);
    if (ec != std::errc() || end != stamp.data() + stamp.size()) {
      return fmt::format("{}: invalid timestamp '{}'", sample.name, stamp);
    }
    sample.timestamp_ms = ms;
    in.skip_blanks();
    if (!in.done()) return fmt::format("{}: trailing text", sample.name);
  }
  out.samples.push_back(std::move(sample));
  return {};
}

}  // namespace

const std::string* PrometheusSample::label(std::string_view label_name) const {
  for (const auto& [name, value] : labels) {
    if (name == label_name) return &value;
  }
  return nullptr;
}

std::optional<double> parse_prometheus_value(std::string_view text) {
  bool negative = false;
  std::string_view body = text;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (equals_ignoring_case(body, "inf") || equals_ignoring_case(body, "infinity")) {
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (equals_ignoring_case(body, "nan")) return std::numeric_limits<double>::quiet_NaN();
  // Digits only from here: from_chars would also take "inf"/"nan" spellings handled above, and a
  // second sign ("+-1") must not pass.
  if (body.empty() || !(is_digit(body[0]) || body[0] == '.')) return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (ec != std::errc() || end != body.data() + body.size()) return std::nullopt;
  return negative ? -value : value;
}

PrometheusText parse_prometheus_text(std::string_view text) {
  PrometheusText out;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    LineReader in(line);
    in.skip_blanks();
    if (in.done()) continue;
    std::string error = in.take('#') ? parse_comment(in, out) : parse_sample(in, out);
    if (!error.empty()) {
      out.error = fmt::format("line {}: {}", line_number, error);
      out.samples.clear();
      return out;
    }
  }
  return out;
}

}  // namespace shiftcast
