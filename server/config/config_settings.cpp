#include "server/config/config_settings.hpp"

#include <sstream>

namespace shiftcast::config_settings {
namespace {

// Typo suggestions: at most this many single-character edits away.
constexpr std::size_t kMaxSuggestionDistance = 2;

}  // namespace

std::string format_double(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}

// Appended rather than `"\"" + std::string(text) + "\""`, which gcc 12 at -O3 flags with a false
// -Wrestrict (a known gcc 12 false positive in std::string operator+).
std::string in_quotes(std::string_view text) {
  std::string quoted;
  quoted.reserve(text.size() + 2);
  quoted += '"';
  quoted += text;
  quoted += '"';
  return quoted;
}

std::string format_value(const Value& v) {
  if (auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return format_double(*d);
  return in_quotes(std::get<std::string>(v));
}

std::string describe(const Range& r) {
  if (r.max == kInf)
    return std::string(r.min_exclusive ? "must be > " : "must be >= ") + format_double(r.min);
  if (r.min_exclusive) return "must be > " + format_double(r.min) + " and <= " + format_double(r.max);
  return "must be " + format_double(r.min) + ".." + format_double(r.max);
}

std::optional<std::string> check_text(TextCheck check, const std::string& value) {
  return check ? check(value) : std::nullopt;
}

const char* node_type_name(const toml::node& node) {
  if (node.is_table()) return "a table";
  if (node.is_array()) return "an array";
  if (node.is_string()) return "a string";
  if (node.is_integer()) return "an integer";
  if (node.is_floating_point()) return "a float";
  if (node.is_boolean()) return "a boolean";
  return "a date or time";
}

std::optional<Value> value_of(const toml::node& node) {
  if (auto* i = node.as_integer()) return Value{i->get()};
  if (auto* d = node.as_floating_point()) return Value{d->get()};
  if (auto* s = node.as_string()) return Value{s->get()};
  return std::nullopt;
}

std::string location(const std::string& source, const toml::source_region& where) {
  std::ostringstream out;
  out << source << ':' << where.begin.line << ':' << where.begin.column;
  return out.str();
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// " (did you mean X?)" for the closest candidate, if it is close enough to be a typo of `name`.
std::string suggestion(std::string_view name, const std::vector<std::string>& candidates) {
  std::size_t best = kMaxSuggestionDistance + 1;
  std::string best_name;
  for (const std::string& c : candidates) {
    std::size_t d = edit_distance(name, c);
    if (d < best) best = d, best_name = c;
  }
  return best_name.empty() ? "" : " (did you mean " + best_name + "?)";
}

}  // namespace shiftcast::config_settings
