// Reading a ServerConfig: the TOML file (parse_server_config, load_server_config) and the command-line
// overrides (apply_override), both through the rows of server_config_keys.hpp. Syntax, unknown keys and
// wrong types are refused here, every problem at once in document order; checks across settings wait
// for validate() (server_config_validation.cpp).
#include "server/config/server_config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "server/config/config_settings.hpp"
#include "server/config/server_config_keys.hpp"

namespace shiftcast {
namespace {

namespace fs = std::filesystem;

using config_settings::accepts_type;
using config_settings::assign;
using config_settings::expected_type;
using config_settings::format_value;
using config_settings::keys_of;
using config_settings::location;
using config_settings::node_type_name;
using config_settings::Setting;
using config_settings::suggestion;
using config_settings::Value;
using config_settings::value_of;
using config_settings::value_of_text;
using server_config_keys::kLevelArray;
using server_config_keys::kMatchArray;
using server_config_keys::level_settings;
using server_config_keys::match_settings;
using server_config_keys::section_names;
using server_config_keys::server_settings;

// Problems found while reading the file, reported together in document order (toml++ iterates tables
// in key order, not file order).
class ParseErrors {
 public:
  explicit ParseErrors(const std::string& source) : source_(source) {}

  void add(const toml::source_region& where, std::string message) {
    errors_.push_back(
        {where.begin.line, where.begin.column, location(source_, where) + ": " + std::move(message)});
  }

  void throw_if_any() {
    if (errors_.empty()) return;
    std::stable_sort(errors_.begin(), errors_.end(), [](const Error& a, const Error& b) {
      return std::tie(a.line, a.column) < std::tie(b.line, b.column);
    });
    std::string message;
    for (const Error& e : errors_)
      message += (message.empty() ? "" : "\n") + e.message;
    throw ConfigError(message);
  }

 private:
  struct Error {
    toml::source_index line;
    toml::source_index column;
    std::string message;
  };
  const std::string& source_;
  std::vector<Error> errors_;
};

// Sets every key of `table` (a [section] or one [[array]] element) from the rows of `section`.
template <class T>
void parse_table(T& target, std::span<const Setting<T>> settings, std::string_view section,
                 const std::string& label, const toml::table& table, ParseErrors& errors) {
  for (auto&& [key, node] : table) {
    const Setting<T>* setting = nullptr;
    for (const Setting<T>& s : settings) {
      if (s.section == section && s.key == key.str()) setting = &s;
    }
    if (!setting) {
      errors.add(key.source(), "unknown key " + std::string(key.str()) + " in " + label +
                                   suggestion(key.str(), keys_of(settings, section)));
      continue;
    }
    std::optional<Value> value = value_of(*setting, node);
    std::string what = label + " " + std::string(key.str());
    if (!value || !accepts_type(*setting, *value)) {
      errors.add(node.source(),
                 what + ": expected " + expected_type(*setting) + ", got " + node_type_name(node));
    } else if (std::optional<std::string> error = assign(target, *setting, *value)) {
      errors.add(node.source(), what + " = " + format_value(*value) + ": " + *error);
    }
  }
}

const toml::table* as_section(const toml::node& node, const std::string& label, ParseErrors& errors) {
  if (!node.is_table()) errors.add(node.source(), label + " must be a table, got " + node_type_name(node));
  return node.as_table();
}

template <class T>
std::vector<T> parse_array(const toml::node& node, std::span<const Setting<T>> settings,
                           std::string_view name, ParseErrors& errors) {
  std::string label = "[[" + std::string(name) + "]]";
  std::vector<T> out;
  if (!node.is_array()) {
    errors.add(node.source(), std::string(name) + " must be an array of tables (" + label + "), got " +
                                  node_type_name(node));
    return out;
  }
  for (const toml::node& element : *node.as_array()) {
    std::string element_label = label + " #" + std::to_string(out.size() + 1);
    T item;
    if (const toml::table* table = as_section(element, element_label, errors)) {
      parse_table(item, settings, name, element_label, *table, errors);
    }
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace

ServerConfig parse_server_config(std::string_view toml_text, const std::string& config_dir,
                                 const std::string& source_name) {
  ServerConfig config;
  config.config_dir = config_dir;
  config.config_file = source_name;
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    std::string description(e.description());
    // The section a reader is most likely to write: TOML cannot have [match] and [[match]] both.
    if (description.find("'match' as array-of-tables") != std::string::npos) {
      description += " (matches created at startup are [[initial_match]])";
    }
    throw ConfigError(location(source_name, e.source()) + ": " + description);
  }
  ParseErrors errors(source_name);
  for (auto&& [key, node] : root) {
    std::string_view name = key.str();
    if (name == kLevelArray) {
      config.levels = parse_array(node, level_settings(), kLevelArray, errors);
    } else if (name == kMatchArray) {
      config.matches = parse_array(node, match_settings(), kMatchArray, errors);
    } else if (std::any_of(server_settings().begin(), server_settings().end(),
                           [&](const auto& s) { return s.section == name; })) {
      std::string label = "[" + std::string(name) + "]";
      if (const toml::table* table = as_section(node, label, errors)) {
        parse_table(config, server_settings(), name, label, *table, errors);
      }
    } else if (!node.is_table() && !node.is_array()) {
      errors.add(key.source(), "unknown top-level key " + std::string(name));
    } else {
      std::string shown = node.is_array() ? "[[" + std::string(name) + "]]" : "[" + std::string(name) + "]";
      errors.add(key.source(), "unknown section " + shown + suggestion(shown, section_names()));
    }
  }
  errors.throw_if_any();
  return config;
}

ServerConfig load_server_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  std::string dir = fs::path(path).parent_path().string();
  return parse_server_config(text.str(), dir.empty() ? "." : dir, path);
}

void apply_override(ServerConfig& config, std::string_view key, std::string_view value) {
  std::string flag(key.substr(std::min(key.find_first_not_of('-'), key.size())));
  std::replace(flag.begin(), flag.end(), '_', '-');
  for (const auto& setting : server_settings()) {
    if (setting.flag != flag) continue;
    std::string shown = "--" + flag + " " + std::string(value);
    std::optional<Value> parsed = value_of_text(setting, value);
    if (!parsed) throw ConfigError(shown + ": expected " + expected_type(setting));
    if (auto error = assign(config, setting, *parsed)) throw ConfigError(shown + ": " + *error);
    return;
  }
  std::vector<std::string> flags = override_names();
  for (std::string& f : flags)
    f.insert(0, "--");
  throw ConfigError("unknown option --" + flag + suggestion("--" + flag, flags));
}

std::vector<std::string> override_names() {
  std::vector<std::string> out;
  for (const auto& s : server_settings()) {
    if (!s.flag.empty()) out.emplace_back(s.flag);
  }
  return out;
}

}  // namespace shiftcast
