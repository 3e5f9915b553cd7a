// validate(): what a ServerConfig must satisfy beyond each setting's own range, every problem at once,
// one per line: settings that must agree with each other, the key files (readable, long enough, distinct,
// never the committed development keys on a listener other machines reach), the RPC listener's limits,
// and the levels and matches to load.
#include "server/config/server_config.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "protocol/crypto.hpp"
#include "server/config/config_settings.hpp"
#include "server/config/development_keys.hpp"
#include "server/config/ip_address.hpp"
#include "server/config/server_config_keys.hpp"
#include "server/config/tick_rates.hpp"

namespace shiftcast {
namespace {

namespace fs = std::filesystem;

using config_settings::check_number;
using config_settings::check_text;
using config_settings::FieldType;
using config_settings::format_double;
using config_settings::format_value;
using config_settings::in_quotes;
using config_settings::kIsInteger;
using config_settings::Setting;
using config_settings::Value;
using server_config_keys::level_settings;
using server_config_keys::match_settings;
using server_config_keys::server_settings;

template <class T>
void check_settings(const T& target, std::span<const Setting<T>> settings, const std::string& label,
                    std::vector<std::string>& errors) {
  for (const Setting<T>& setting : settings) {
    std::visit(
        [&](auto member) {
          using F = FieldType<T, decltype(member)>;
          // The accessors serve parsing too, so they take the config non-const; this only reads.
          const F& value = member(const_cast<T&>(target));
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
  std::optional<Key> token_key;
  std::optional<Key> previous_token_key;
  std::string previous_token_line;
  for (auto [key, file, out, line] :
       {std::tuple{"token_key_file", &config.token_key_file, &token_key, static_cast<std::string*>(nullptr)},
        std::tuple{"previous_token_key_file", &config.previous_token_key_file, &previous_token_key,
                   &previous_token_line}}) {
    if (file->empty()) continue;
    std::string what = "[security] " + std::string(key) + " = " + in_quotes(*file) + ": ";
    try {
      const std::string text = read_key_file_line(config, *file);
      *out = key_from_hex(text);
      if (line != nullptr) *line = text;
      if (!*out) {
        errors.push_back(what +
                         "the first line must be 64 hex digits (head -c 32 /dev/urandom | xxd -p -c 64)");
      }
    } catch (const ConfigError& e) {
      errors.push_back(what + e.what());
    }
  }
  std::string admin_key;
  std::string service_key;
  std::string spectator_key;
  for (auto [key, file, out] :
       {std::tuple{"admin_key_file", &config.admin_key_file, &admin_key},
        std::tuple{"service_key_file", &config.service_key_file, &service_key},
        std::tuple{"spectator_key_file", &config.spectator_key_file, &spectator_key}}) {
    if (file->empty()) continue;
    std::string what = "[security] " + std::string(key) + " = " + in_quotes(*file) + ": ";
    try {
      *out = read_key_file_line(config, *file);
      if (out->size() < kMinKeyChars) {
        errors.push_back(what + "the key is " + std::to_string(out->size()) + " characters, fewer than " +
                         std::to_string(kMinKeyChars) +
                         ": it could be guessed (head -c 32 /dev/urandom | base64)");
      }
    } catch (const ConfigError& e) {
      errors.push_back(what + e.what());
    }
  }
  if (!service_key.empty() && service_key == admin_key) {
    errors.push_back("[security] service_key_file = " + in_quotes(config.service_key_file) +
                     ": the same key as admin_key_file; a service must not hold the admin key");
  }
  if (!spectator_key.empty() && (spectator_key == admin_key || spectator_key == service_key)) {
    errors.push_back("[security] spectator_key_file = " + in_quotes(config.spectator_key_file) +
                     ": the same key as the admin or the service key; a spectator must not hold either");
  }
  // A rotation that keeps the current key is no rotation, and a token key that is also an API key lets
  // whoever holds that API key mint tokens (the line as text, in either case: API keys are text).
  if (previous_token_key) {
    const std::string what =
        "[security] previous_token_key_file = " + in_quotes(config.previous_token_key_file) + ": ";
    auto lower = [](std::string text) {
      std::transform(text.begin(), text.end(), text.begin(),
                     [](unsigned char c) { return char(std::tolower(c)); });
      return text;
    };
    if (token_key && *previous_token_key == *token_key) {
      errors.push_back(what + "the same key as token_key_file; the previous key must be the one before it");
    }
    for (const auto& [key, text] :
         {std::pair{"admin_key_file", &admin_key}, std::pair{"service_key_file", &service_key},
          std::pair{"spectator_key_file", &spectator_key}}) {
      if (!text->empty() && lower(*text) == lower(previous_token_line))
        errors.push_back(what + "the same key as " + key + "; a token key must be a key of its own");
    }
  }
}

// The RPC listener's limits must hang together, and reads may be open only where nobody else can connect.
void check_rpc_limits(const ServerConfig& config, std::vector<std::string>& errors) {
  if (config.read_access == "open" && !is_loopback_address(config.rpc.bind_address)) {
    errors.push_back("[security] read_access = \"open\": refused because [network] rpc_bind_address = " +
                     in_quotes(config.rpc.bind_address) +
                     ", not loopback: anyone reaching it could read every player's position; set "
                     "service_key_file and read_access = \"key\"");
  }
  if (config.rpc.max_connections > 1 &&
      config.rpc.max_connections_per_address >= config.rpc.max_connections) {
    errors.push_back(
        "[rpc] max_connections_per_address = " + std::to_string(config.rpc.max_connections_per_address) +
        ": must be less than max_connections (" + std::to_string(config.rpc.max_connections) +
        "), or one address can take every slot");
  }
  if (double(config.rpc.connection_memory_bytes) < 2.0 * double(config.rpc.max_frame_bytes)) {
    errors.push_back("[rpc] connection_memory_bytes = " + std::to_string(config.rpc.connection_memory_bytes) +
                     ": must be at least twice max_frame_bytes (" +
                     std::to_string(config.rpc.max_frame_bytes) + "), room for a frame and its reply");
  }
  if (config.rpc.memory_budget_bytes < config.rpc.connection_memory_bytes) {
    errors.push_back("[rpc] memory_budget_bytes = " + std::to_string(config.rpc.memory_budget_bytes) +
                     ": must be at least connection_memory_bytes (" +
                     std::to_string(config.rpc.connection_memory_bytes) + ")");
  }
  if (config.rpc.global_burst < config.rpc.burst) {
    errors.push_back("[rpc] global_burst = " + format_double(config.rpc.global_burst) +
                     ": must be at least burst (" + format_double(config.rpc.burst) + ")");
  }
}

// The committed development keys are public: refused whenever any listener is reachable from another
// machine. Recognised by content, so a renamed copy is refused too.
void check_development_keys(const ServerConfig& config, std::vector<std::string>& errors) {
  const std::array<std::pair<const char*, const std::string*>, 3> listeners{{
      {config.udp_bind_address.empty() ? "bind_address" : "udp_bind_address",
       &effective_udp_bind_address(config)},
      {"rpc_bind_address", &config.rpc.bind_address},
      {"http_bind_address", &config.http_bind_address},
  }};
  std::string exposed;
  for (const auto& [key, address] : listeners) {
    if (exposed.empty() && !is_loopback_address(*address))
      exposed = std::string("[network] ") + key + " = " + in_quotes(*address);
  }
  if (exposed.empty()) return;
  const std::string why = ": the committed development key (configs/keys/, public) is refused while " +
                          exposed + " is not loopback; generate a private key (configs/keys/README.md)";
  for (const auto& [key, file] : {std::pair{"token_key_file", &config.token_key_file},
                                  std::pair{"previous_token_key_file", &config.previous_token_key_file}}) {
    try {
      if (file->empty()) continue;
      const std::optional<Key> token_key = key_from_hex(read_key_file_line(config, *file));
      if (token_key && is_development_token_key(*token_key))
        errors.push_back(std::string("[security] ") + key + " = " + in_quotes(*file) + why);
    } catch (const ConfigError&) {
      // Reported by check_key_files.
    }
  }
  for (const auto& [key, file] : {std::pair{"admin_key_file", &config.admin_key_file},
                                  std::pair{"service_key_file", &config.service_key_file},
                                  std::pair{"spectator_key_file", &config.spectator_key_file}}) {
    try {
      if (!file->empty() && is_development_api_key(read_key_file_line(config, *file)))
        errors.push_back(std::string("[security] ") + key + " = " + in_quotes(*file) + why);
    } catch (const ConfigError&) {
      // Reported by check_key_files.
    }
  }
}

void check_levels(const ServerConfig& config, std::vector<std::string>& errors) {
  if (config.levels.empty()) errors.push_back("no [[level]]: at least one level is required");
  std::set<std::string> names;
  for (std::size_t i = 0; i < config.levels.size(); ++i) {
    const LevelConfig& level = config.levels[i];
    std::string label = "[[level]] #" + std::to_string(i + 1);
    check_settings(level, level_settings(), label, errors);
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
    check_settings(match, match_settings(), label, errors);
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

void validate(const ServerConfig& config) {
  std::vector<std::string> errors;
  check_settings(config, server_settings(), "", errors);
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
  if (config.http_max_connections_per_source > config.http_max_connections) {
    errors.push_back(
        "[http] max_connections_per_source = " + std::to_string(config.http_max_connections_per_source) +
        ": must be at most max_connections (" + std::to_string(config.http_max_connections) +
        "), or one source could hold every slot");
  }
  if (config.agones.stall_ms <= config.agones.health_period_ms) {
    errors.push_back("[agones] stall_ms = " + std::to_string(config.agones.stall_ms) +
                     ": must be more than health_period_ms (" +
                     std::to_string(config.agones.health_period_ms) +
                     "): an idle worker's probe answers once per period");
  }
  check_key_files(config, errors);
  check_development_keys(config, errors);
  check_rpc_limits(config, errors);
  check_levels(config, errors);
  if (errors.empty()) return;
  std::string message;
  std::string prefix = (config.config_file.empty() ? std::string("config") : config.config_file) + ": ";
  for (const std::string& e : errors)
    message += (message.empty() ? "" : "\n") + prefix + e;
  throw ConfigError(message);
}

}  // namespace shiftcast
