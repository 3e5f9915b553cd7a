#include "server/server_config.hpp"

#include <toml++/toml.h>
#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <type_traits>
#include <variant>

#include "protocol/crypto.hpp"
#include "protocol/wire_constants.hpp"
#include "server/logging.hpp"

namespace shiftcast {
namespace {

namespace fs = std::filesystem;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kMinTickRate = 20;
constexpr int kMaxTickRate = 128;  // the design's range: beyond it a tick's work no longer fits its period
// Past these a value is a typo (an extra digit), not a deployment.
constexpr double kMaxThreads = 1024;
constexpr double kMaxTimeoutSeconds = 3600;
// A frame limit below this could not carry a Batch of a few queries.
constexpr double kMinRpcFrameBytes = 1024;
constexpr double kMaxWirePlayers = std::numeric_limits<std::uint16_t>::max();  // MatchStatus is a ushort
// Typo suggestions: at most this many single-character edits away.
constexpr std::size_t kMaxSuggestionDistance = 2;

// A setting's accepted values; NaN is outside every range.
struct Range {
  double min = -kInf;
  double max = kInf;
  bool min_exclusive = false;

  bool contains(double v) const { return (min_exclusive ? v > min : v >= min) && v <= max; }
};

template <class T>
using Member = std::variant<int T::*, std::uint16_t T::*, std::uint32_t T::*, double T::*, std::string T::*>;

using TextCheck = std::optional<std::string> (*)(std::string_view);

// One row per setting: where it lives in the TOML file, its command-line flag ("" for none), the field
// it sets and what it accepts. Parsing, overrides and validate() all read the same rows.
template <class T>
struct Setting {
  std::string_view section;
  std::string_view key;
  std::string_view flag;
  Member<T> member;
  Range range{};              // numbers
  TextCheck check = nullptr;  // strings
};

std::optional<std::string> check_log_level(std::string_view text) {
  if (parse_log_level(text)) return std::nullopt;
  return "must be one of " + log_level_names_joined();
}

std::optional<std::string> check_ip(std::string_view text) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(std::string(text), ec);
  if (ec) return std::string("not an IP address");
  return std::nullopt;
}

std::optional<std::string> check_public_address(std::string_view text) {
  if (text.empty()) return std::nullopt;  // bind_address:udp_port
  constexpr char kExpected[] = "must be empty or ip:port (port 1..65535), [ipv6]:port for IPv6";
  std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::string(kExpected);
  std::string_view host = text.substr(0, colon);
  std::string_view port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return std::string(kExpected);
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value < 1 || value > 65535 || check_ip(host)) {
    return std::string(kExpected);
  }
  return std::nullopt;
}

std::optional<std::string> check_required(std::string_view text) {
  if (text.empty()) return std::string("required");
  return std::nullopt;
}

constexpr Range kPort{0, 65535};
constexpr Range kThreads{0, kMaxThreads};
constexpr Range kAtLeastOne{1};
constexpr Range kNonNegative{0};
constexpr Range kPositive{0, kInf, true};
constexpr Range kSeconds{0, kMaxTimeoutSeconds, true};
constexpr Range kWholeSeconds{1, kMaxTimeoutSeconds};
constexpr Range kFrameBytes{kMinRpcFrameBytes, static_cast<double>(kMaxRpcFrameBytes)};

using S = Setting<ServerConfig>;
const std::array kServerSettings{
    S{"network", "bind_address", "bind-address", &ServerConfig::bind_address, {}, check_ip},
    S{"network", "public_address", "public-address", &ServerConfig::public_address, {}, check_public_address},
    S{"network", "udp_port", "udp-port", &ServerConfig::udp_port, kPort},
    S{"network", "rpc_port", "rpc-port", &ServerConfig::rpc_port, kPort},
    S{"network", "http_port", "http-port", &ServerConfig::http_port, kPort},
    S{"network", "threads", "threads", &ServerConfig::threads, kThreads},
    S{"network", "rpc_threads", "rpc-threads", &ServerConfig::rpc_threads, kThreads},
    S{"match", "tick_rate", "tick-rate", &ServerConfig::tick_rate, {kMinTickRate, kMaxTickRate}},
    S{"match", "snapshot_rate", "snapshot-rate", &ServerConfig::snapshot_rate, {1, kMaxTickRate}},
    S{"match", "max_matches", "max-matches", &ServerConfig::max_matches, kAtLeastOne},
    S{"match", "max_players", "max-players", &ServerConfig::max_players, {1, kMaxWirePlayers}},
    S{"match", "connection_timeout_s", "connection-timeout-s", &ServerConfig::connection_timeout_s, kSeconds},
    S{"match", "keepalive_interval_s", "keepalive-interval-s", &ServerConfig::keepalive_interval_s, kSeconds},
    S{"match", "max_pending_events", "max-pending-events", &ServerConfig::max_pending_events, kAtLeastOne},
    S{"rpc", "max_connections", "rpc-max-connections", &ServerConfig::rpc_max_connections, kAtLeastOne},
    S{"rpc", "max_frame_bytes", "rpc-max-frame-bytes", &ServerConfig::rpc_max_frame_bytes, kFrameBytes},
    S{"rpc", "max_batch", "rpc-max-batch", &ServerConfig::rpc_max_batch, kAtLeastOne},
    S{"rpc", "rate", "rpc-rate", &ServerConfig::rpc_rate, kPositive},
    // A raycast costs 1: a smaller bucket could never pass one.
    S{"rpc", "burst", "rpc-burst", &ServerConfig::rpc_burst, kAtLeastOne},
    S{"rpc", "subscriber_max_pending_bytes", "subscriber-max-pending-bytes",
      &ServerConfig::subscriber_max_pending_bytes, kAtLeastOne},
    S{"security", "token_key_file", "token-key-file", &ServerConfig::token_key_file, {}, check_required},
    S{"security", "admin_key_file", "admin-key-file", &ServerConfig::admin_key_file, {}, check_required},
    S{"security", "token_valid_seconds", "token-valid-seconds", &ServerConfig::token_valid_seconds,
      kWholeSeconds},
    S{"log", "level", "log-level", &ServerConfig::log_level, {}, check_log_level},
    S{"shutdown", "flush_s", "shutdown-flush-s", &ServerConfig::shutdown_flush_s, {0, kMaxTimeoutSeconds}},
};

using L = Setting<LevelConfig>;
const std::array kLevelSettings{
    L{"level", "name", "", &LevelConfig::name, {}, check_required},
    L{"level", "path", "", &LevelConfig::path},
    L{"level", "fallback", "", &LevelConfig::fallback},
};

using M = Setting<InitialMatchConfig>;
const std::array kMatchSettings{
    M{"initial_match", "level", "", &InitialMatchConfig::level, {}, check_required},
    M{"initial_match", "count", "", &InitialMatchConfig::count, kAtLeastOne},
    M{"initial_match", "max_players", "", &InitialMatchConfig::max_players, {1, kMaxWirePlayers}},
    M{"initial_match", "props", "", &InitialMatchConfig::props, kNonNegative},
    M{"initial_match", "seed", "", &InitialMatchConfig::seed, kNonNegative},
};

constexpr std::string_view kLevelArray = "level";
constexpr std::string_view kMatchArray = "initial_match";

// ---- values -------------------------------------------------------------------------------------------

// What a TOML node or a flag's text turned into, before it is checked and stored.
using Value = std::variant<std::int64_t, double, std::string>;

std::string format_double(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}

std::string in_quotes(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

std::string format_value(const Value& v) {
  if (auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return format_double(*d);
  return in_quotes(std::get<std::string>(v));
}

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

std::string describe(const Range& r) {
  if (r.max == kInf)
    return std::string(r.min_exclusive ? "must be > " : "must be >= ") + format_double(r.min);
  if (r.min_exclusive) return "must be > " + format_double(r.min) + " and <= " + format_double(r.max);
  return "must be " + format_double(r.min) + ".." + format_double(r.max);
}

// Checks a number bound for a field of type F against the setting; nothing if it is acceptable.
template <class F, class T>
std::optional<std::string> check_number(const Setting<T>& setting, double value) {
  if (!std::isfinite(value)) return std::string("must be a finite number");
  Range r = effective_range<F>(setting.range);
  if (!r.contains(value)) return describe(r);
  return std::nullopt;
}

std::optional<std::string> check_text(TextCheck check, const std::string& value) {
  return check ? check(value) : std::nullopt;
}

template <class T>
const char* expected_type(const Setting<T>& setting) {
  return std::visit(
      [](auto T::*member) {
        using F = std::remove_reference_t<decltype(std::declval<T&>().*member)>;
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
      [&](auto T::*member) -> std::optional<std::string> {
        using F = std::remove_reference_t<decltype(target.*member)>;
        if constexpr (std::is_same_v<F, std::string>) {
          const std::string& text = std::get<std::string>(value);
          if (auto error = check_text(setting.check, text)) return error;
          target.*member = text;
        } else {
          const auto* integer = std::get_if<std::int64_t>(&value);
          double number = integer ? static_cast<double>(*integer) : std::get<double>(value);
          if (auto error = check_number<F>(setting, number)) return error;
          target.*member = static_cast<F>(number);
        }
        return std::nullopt;
      },
      setting.member);
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

// A flag's text read as the field's type wants it.
template <class T>
std::optional<Value> value_of_text(const Setting<T>& setting, std::string_view text) {
  return std::visit(
      [&](auto T::*member) -> std::optional<Value> {
        using F = std::remove_reference_t<decltype(std::declval<T&>().*member)>;
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

template <class T, std::size_t N>
std::vector<std::string> keys_of(const std::array<Setting<T>, N>& settings, std::string_view section) {
  std::vector<std::string> out;
  for (const Setting<T>& s : settings) {
    if (s.section == section) out.emplace_back(s.key);
  }
  return out;
}

std::vector<std::string> section_names() {
  std::vector<std::string> out;
  for (const S& s : kServerSettings) {
    if (std::find(out.begin(), out.end(), "[" + std::string(s.section) + "]") == out.end()) {
      out.push_back("[" + std::string(s.section) + "]");
    }
  }
  out.push_back("[[" + std::string(kLevelArray) + "]]");
  out.push_back("[[" + std::string(kMatchArray) + "]]");
  return out;
}

// ---- parsing ------------------------------------------------------------------------------------------

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
template <class T, std::size_t N>
void parse_table(T& target, const std::array<Setting<T>, N>& settings, std::string_view section,
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
    std::optional<Value> value = value_of(node);
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

template <class T, std::size_t N>
std::vector<T> parse_array(const toml::node& node, const std::array<Setting<T>, N>& settings,
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

// ---- validation ---------------------------------------------------------------------------------------

template <class T, std::size_t N>
void check_settings(const T& target, const std::array<Setting<T>, N>& settings, const std::string& label,
                    std::vector<std::string>& errors) {
  for (const Setting<T>& setting : settings) {
    std::visit(
        [&](auto T::*member) {
          using F = std::remove_cvref_t<decltype(target.*member)>;
          const F& value = target.*member;
          std::optional<std::string> error;
          Value shown;
          if constexpr (std::is_same_v<F, std::string>) {
            error = check_text(setting.check, value);
            shown = value;
          } else {
            error = check_number<F>(setting, static_cast<double>(value));
            shown =
                kIsInteger<F> ? Value{static_cast<std::int64_t>(value)} : Value{static_cast<double>(value)};
          }
          if (!error) return;
          std::string where = label.empty() ? "[" + std::string(setting.section) + "]" : label;
          errors.push_back(where + " " + std::string(setting.key) + " = " + format_value(shown) + ": " +
                           *error);
        },
        setting.member);
  }
}

bool is_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool supported_level_format(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".bsp" || ext == ".map" || ext == ".obj" || ext == ".level";
}

void check_key_files(const ServerConfig& config, std::vector<std::string>& errors) {
  if (!config.token_key_file.empty()) {
    std::string what = "[security] token_key_file = " + in_quotes(config.token_key_file) + ": ";
    try {
      if (!key_from_hex(read_key_file_line(config, config.token_key_file))) {
        errors.push_back(what +
                         "the first line must be 64 hex digits (head -c 32 /dev/urandom | xxd -p -c 64)");
      }
    } catch (const ConfigError& e) {
      errors.push_back(what + e.what());
    }
  }
  if (!config.admin_key_file.empty()) {
    try {
      read_key_file_line(config, config.admin_key_file);
    } catch (const ConfigError& e) {
      errors.push_back("[security] admin_key_file = " + in_quotes(config.admin_key_file) + ": " + e.what());
    }
  }
}

void check_levels(const ServerConfig& config, std::vector<std::string>& errors) {
  if (config.levels.empty()) errors.push_back("no [[level]]: at least one level is required");
  std::set<std::string> names;
  for (std::size_t i = 0; i < config.levels.size(); ++i) {
    const LevelConfig& level = config.levels[i];
    std::string label = "[[level]] #" + std::to_string(i + 1);
    check_settings(level, kLevelSettings, label, errors);
    if (!level.name.empty() && !names.insert(level.name).second) {
      errors.push_back(label + " name = " + in_quotes(level.name) + ": another [[level]] has this name");
    }
    for (const std::string* path : {&level.path, &level.fallback}) {
      if (!path->empty() && !supported_level_format(*path)) {
        errors.push_back(label + " " + (path == &level.path ? "path" : "fallback") + " = " +
                         in_quotes(*path) + ": not a .bsp, .map, .obj or .level file");
      }
    }
    if (level.path.empty() && level.fallback.empty()) {
      errors.push_back(label + " (" + level.name + "): needs a path or a fallback");
    } else if (!(!level.path.empty() && is_file(resolve_path(config, level.path))) &&
               !(!level.fallback.empty() && is_file(resolve_path(config, level.fallback)))) {
      errors.push_back(label + " (" + level.name + "): neither path " +
                       in_quotes(resolve_path(config, level.path)) + " nor fallback " +
                       in_quotes(resolve_path(config, level.fallback)) + " is a file");
    }
  }
  long long total = 0;
  for (std::size_t i = 0; i < config.matches.size(); ++i) {
    const InitialMatchConfig& match = config.matches[i];
    std::string label = "[[initial_match]] #" + std::to_string(i + 1);
    check_settings(match, kMatchSettings, label, errors);
    if (match.max_players > config.max_players) {
      errors.push_back(label + " max_players = " + std::to_string(match.max_players) +
                       ": must be at most [match] max_players = " + std::to_string(config.max_players));
    }
    if (!match.level.empty() && !names.count(match.level)) {
      errors.push_back(label + " level = " + in_quotes(match.level) + ": no [[level]] has this name");
    }
    total += std::max(0, match.count);
  }
  if (total > config.max_matches) {
    errors.push_back("[[initial_match]]: " + std::to_string(total) + " matches at startup, more than " +
                     "[match] max_matches = " + std::to_string(config.max_matches));
  }
}

}  // namespace

std::string resolve_path(const ServerConfig& config, const std::string& path) {
  if (path.empty() || config.config_dir.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(config.config_dir) / path).lexically_normal().string();
}

std::string read_key_file_line(const ServerConfig& config, const std::string& path) {
  std::string resolved = resolve_path(config, path);
  std::ifstream in(resolved);
  if (!in) throw ConfigError("cannot read " + resolved + ": " + std::strerror(errno));
  std::string line;
  std::getline(in, line);
  constexpr char kSpace[] = " \t\r\n";
  std::size_t begin = line.find_first_not_of(kSpace);
  if (begin == std::string::npos) throw ConfigError(resolved + ": the first line is empty");
  return line.substr(begin, line.find_last_not_of(kSpace) - begin + 1);
}

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
      config.levels = parse_array(node, kLevelSettings, kLevelArray, errors);
    } else if (name == kMatchArray) {
      config.matches = parse_array(node, kMatchSettings, kMatchArray, errors);
    } else if (std::any_of(kServerSettings.begin(), kServerSettings.end(),
                           [&](const S& s) { return s.section == name; })) {
      std::string label = "[" + std::string(name) + "]";
      if (const toml::table* table = as_section(node, label, errors)) {
        parse_table(config, kServerSettings, name, label, *table, errors);
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
  for (const S& setting : kServerSettings) {
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
  for (const S& s : kServerSettings) {
    if (!s.flag.empty()) out.emplace_back(s.flag);
  }
  return out;
}

void validate(const ServerConfig& config) {
  std::vector<std::string> errors;
  check_settings(config, kServerSettings, "", errors);
  // (A snapshot rate outside its own range is reported once, above.)
  if (config.snapshot_rate > config.tick_rate && config.snapshot_rate <= kMaxTickRate) {
    errors.push_back("[match] snapshot_rate = " + std::to_string(config.snapshot_rate) +
                     ": must be 1..tick_rate (" + std::to_string(config.tick_rate) + ")");
  }
  if (config.keepalive_interval_s >= config.connection_timeout_s) {
    errors.push_back("[match] keepalive_interval_s = " + format_double(config.keepalive_interval_s) +
                     ": must be less than connection_timeout_s (" +
                     format_double(config.connection_timeout_s) + "), or idle clients time out");
  }
  check_key_files(config, errors);
  check_levels(config, errors);
  if (errors.empty()) return;
  std::string message;
  std::string prefix = (config.config_file.empty() ? std::string("config") : config.config_file) + ": ";
  for (const std::string& e : errors)
    message += (message.empty() ? "" : "\n") + prefix + e;
  throw ConfigError(message);
}

}  // namespace shiftcast
