// The table-driven settings machinery of the server's config (its rows are in server_config_keys.cpp): a
// Setting row names a TOML key, a flag and the struct field it sets with the values it accepts; assign()
// checks and stores a Value (what a TOML node or a flag's text became) into that field, and the messages
// (format_value, describe, suggestion) say what was wrong. Internal to the server's config code: nothing
// here is ServerConfig-specific.
//
//   const std::array kRows{Setting<MyConfig>{"section", "key", "flag", field<&MyConfig::x>, Range{1, 10}}};
//   if (auto v = value_of(node); v && accepts_type(kRows[0], *v)) error = assign(config, kRows[0], *v);
#pragma once

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace shiftcast::config_settings {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// A setting's accepted values; NaN is outside every range.
struct Range {
  double min = -kInf;
  double max = kInf;
  bool min_exclusive = false;

  bool contains(double v) const { return (min_exclusive ? v > min : v >= min) && v <= max; }
};

// A setting's field: a function from the config to the field (a pointer to member cannot reach into a
// struct the config embeds, such as ServerConfig::rpc). field<&T::x> and field<&T::sub, &Sub::x> make one.
template <class T, class F>
using Accessor = F& (*)(T&);
template <class T>
using Member = std::variant<Accessor<T, int>, Accessor<T, std::uint16_t>, Accessor<T, std::uint32_t>,
                            Accessor<T, std::size_t>, Accessor<T, double>, Accessor<T, std::string>>;

template <class M>
struct MemberOf;
template <class C, class F>
struct MemberOf<F C::*> {
  using Class = C;
  using Field = F;
};

template <auto M, auto... Inner>
struct FieldOf {
  static auto& get(typename MemberOf<decltype(M)>::Class& target) { return target.*M; }
};
template <auto M, auto Inner>
struct FieldOf<M, Inner> {
  static auto& get(typename MemberOf<decltype(M)>::Class& target) { return target.*M.*Inner; }
};

template <auto M, auto... Inner>
inline constexpr auto field = &FieldOf<M, Inner...>::get;

// The field's value type, from its accessor.
template <class T, class A>
using FieldType = std::remove_reference_t<decltype(std::declval<A>()(std::declval<T&>()))>;

using TextCheck = std::optional<std::string> (*)(std::string_view);

// One row per setting: where it lives in the TOML file, its command-line flag ("" for none), the field
// it sets and what it accepts. Parsing, overrides and validate() all read the same rows.
template <class T>
struct Setting {
  std::string_view section;
  std::string_view key;
  std::string_view flag;
  Member<T> member;
  Range range{};               // numbers
  TextCheck check = nullptr;   // strings
  bool takes_boolean = false;  // strings: a TOML true/false is read as the text "true"/"false"
};

// What a TOML node or a flag's text turned into, before it is checked and stored.
using Value = std::variant<std::int64_t, double, std::string>;

std::string format_double(double v);
std::string in_quotes(std::string_view text);
std::string format_value(const Value& v);

template <class F>
constexpr bool kIsInteger = std::is_integral_v<F>;

// The range a numeric field really accepts: its setting's range within what the field's type holds.
template <class F>
Range effective_range(Range r) {
  if constexpr (kIsInteger<F>) {
    r.min = std::max(r.min, static_cast<double>(std::numeric_limits<F>::min()));
    r.max = std::min(r.max, static_cast<double>(std::numeric_limits<F>::max()));
  }
  return r;
}

std::string describe(const Range& r);

// Checks a number bound for a field of type F against the setting; nothing if it is acceptable.
template <class F, class T>
std::optional<std::string> check_number(const Setting<T>& setting, double value) {
  if (!std::isfinite(value)) return std::string("must be a finite number");
  Range r = effective_range<F>(setting.range);
  if (!r.contains(value)) return describe(r);
  return std::nullopt;
}

std::optional<std::string> check_text(TextCheck check, const std::string& value);

template <class T>
const char* expected_type(const Setting<T>& setting) {
  return std::visit(
      [](auto member) {
        using F = FieldType<T, decltype(member)>;
        if constexpr (std::is_same_v<F, std::string>) return "a string";
        if constexpr (kIsInteger<F>) return "an integer";
        return "a number";
      },
      setting.member);
}

// Integers are numbers too; nothing else converts.
template <class T>
bool accepts_type(const Setting<T>& setting, const Value& value) {
  std::string_view expected = expected_type(setting);
  if (std::holds_alternative<std::string>(value)) return expected == "a string";
  if (std::holds_alternative<double>(value)) return expected == "a number";
  return expected != "a string";
}

// Stores `value` into the setting's field, or says why not ("must be 20..128"). The value's type must
// be one accepts_type() allows.
template <class T>
std::optional<std::string> assign(T& target, const Setting<T>& setting, const Value& value) {
  return std::visit(
      [&](auto member) -> std::optional<std::string> {
        using F = FieldType<T, decltype(member)>;
        if constexpr (std::is_same_v<F, std::string>) {
          const std::string& text = std::get<std::string>(value);
          if (auto error = check_text(setting.check, text)) return error;
          member(target) = text;
        } else {
          const auto* integer = std::get_if<std::int64_t>(&value);
          double number = integer ? static_cast<double>(*integer) : std::get<double>(value);
          if (auto error = check_number<F>(setting, number)) return error;
          member(target) = static_cast<F>(number);
        }
        return std::nullopt;
      },
      setting.member);
}

const char* node_type_name(const toml::node& node);
std::optional<Value> value_of(const toml::node& node);
// value_of, except that a boolean becomes the text "true"/"false" for a setting that takes one.
template <class T>
std::optional<Value> value_of(const Setting<T>& setting, const toml::node& node) {
  if (const auto* b = node.as_boolean(); b != nullptr && setting.takes_boolean)
    return Value{std::string(b->get() ? "true" : "false")};
  return value_of(node);
}

// A flag's text read as the field's type wants it.
template <class T>
std::optional<Value> value_of_text(const Setting<T>& setting, std::string_view text) {
  return std::visit(
      [&](auto member) -> std::optional<Value> {
        using F = FieldType<T, decltype(member)>;
        const char* end = text.data() + text.size();
        if constexpr (std::is_same_v<F, std::string>) {
          return Value{std::string(text)};
        } else if constexpr (kIsInteger<F>) {
          std::int64_t v = 0;
          auto [p, ec] = std::from_chars(text.data(), end, v);
          if (text.empty() || ec != std::errc() || p != end) return std::nullopt;
          return Value{v};
        } else {
          double v = 0;
          auto [p, ec] = std::from_chars(text.data(), end, v);
          if (text.empty() || ec != std::errc() || p != end) return std::nullopt;
          return Value{v};
        }
      },
      setting.member);
}

// ---- messages -----------------------------------------------------------------------------------------

std::string location(const std::string& source, const toml::source_region& where);
std::size_t edit_distance(std::string_view a, std::string_view b);
// " (did you mean X?)" for the closest candidate, if it is close enough to be a typo of `name`.
std::string suggestion(std::string_view name, const std::vector<std::string>& candidates);

template <class T>
std::vector<std::string> keys_of(std::span<const Setting<T>> settings, std::string_view section) {
  std::vector<std::string> out;
  for (const Setting<T>& s : settings) {
    if (s.section == section) out.emplace_back(s.key);
  }
  return out;
}

}  // namespace shiftcast::config_settings
