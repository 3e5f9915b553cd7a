#include "server/config/server_config.hpp"

#include <toml++/toml.h>

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
#include "protocol/reliable_events.hpp"
#include "protocol/wire_constants.hpp"
#include "server/config/config_settings.hpp"
#include "server/config/development_keys.hpp"
#include "server/config/ip_address.hpp"
#include "server/config/log_level.hpp"
#include "server/config/tick_rates.hpp"

namespace shiftcast {
namespace {

namespace fs = std::filesystem;

using config_settings::accepts_type;
using config_settings::assign;
using config_settings::check_number;
using config_settings::check_text;
using config_settings::expected_type;
using config_settings::field;
using config_settings::FieldType;
using config_settings::format_double;
using config_settings::format_value;
using config_settings::in_quotes;
using config_settings::keys_of;
using config_settings::kInf;
using config_settings::kIsInteger;
using config_settings::location;
using config_settings::node_type_name;
using config_settings::Range;
using config_settings::Setting;
using config_settings::suggestion;
using config_settings::TextCheck;
using config_settings::Value;
using config_settings::value_of;
using config_settings::value_of_text;

// Past these a value is a typo (an extra digit), not a deployment.
constexpr double kMaxThreads = 1024;
constexpr double kMaxTimeoutSeconds = 3600;
constexpr double kMaxHttpTimeoutSeconds = 60;
// A frame limit below this could not carry a Batch of a few queries.
constexpr double kMinRpcFrameBytes = 1024;
constexpr double kMaxWirePlayers = std::numeric_limits<std::uint16_t>::max();  // MatchStatus is a ushort

std::optional<std::string> check_log_level(std::string_view text) {
  if (parse_log_level(text)) return std::nullopt;
  return "must be one of " + log_level_names_joined();
}

std::optional<std::string> check_ip(std::string_view text) {
  if (!is_ip_address(text)) return std::string("not an IP address");
  return std::nullopt;
}

std::optional<std::string> check_optional_ip(std::string_view text) {
  if (text.empty()) return std::nullopt;
  return check_ip(text);
}

std::optional<std::string> check_public_address(std::string_view text) {
  if (text.empty()) return std::nullopt;                      // bind_address:udp_port
  if (text == kPublicAddressFromAgones) return std::nullopt;  // the GameServer's status, at startup
  constexpr char kExpected[] = "must be empty, \"agones\" or ip:port (port 1..65535), [ipv6]:port for IPv6";
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

std::optional<std::string> check_read_access(std::string_view text) {
  if (text == "key" || text == "open") return std::nullopt;
  return std::string("must be \"key\" (reads need the service or admin key) or \"open\" (loopback only)");
}

std::optional<std::string> check_agones_enabled(std::string_view text) {
  if (text == "true" || text == "false" || text == "auto") return std::nullopt;
  return std::string("must be true, false or \"auto\" (on when ") + kAgonesPortVariable + " is set)";
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
constexpr Range kMemoryBytes{2 * kMinRpcFrameBytes,
                             static_cast<double>(std::numeric_limits<std::uint32_t>::max())};
// A slot held longer than a minute by one slow HTTP client is never what an operator wants.
constexpr Range kHttpWait{0, kMaxHttpTimeoutSeconds, true};
constexpr Range kSlots{1, 4096};
constexpr Range kSubscriptionsPerMatch{1, 65536};
// A spectator delay of up to ten minutes (frames are kept that long: about 20 KB each, 20 a second).
constexpr Range kSpectatorDelayMs{0, 600'000};
constexpr Range kSpectatorRate{1, 20};
constexpr Range kSpectatorBudget{64 * 1024, 64 * 1024 * 1024};
constexpr Range kAgonesPeriodMs{10, 60'000};
// Units; far beyond any level the wire's quantized positions can place.
constexpr double kMaxInterestRadius = 1 << 20;
// A margin beyond a few hundred units sends everything the set admits anyway; a hold beyond a few seconds
// keeps sending players long gone from view.
constexpr double kMaxSightMargin = 1024;
constexpr double kMaxSightHoldSeconds = 10;
// Beyond this an acknowledgement waits longer than the 3-tick input-to-ack budget of the load tester.
constexpr int kMaxInputAckDelayTicks = 8;

// The RPC listener's settings, embedded in the config as they are (ServerConfig::rpc).
template <auto M>
inline constexpr auto rpc = field<&ServerConfig::rpc, M>;

using S = Setting<ServerConfig>;
const std::array kServerSettings{
    S{"network", "bind_address", "bind-address", field<&ServerConfig::bind_address>, {}, check_ip},
    S{"network",
      "udp_bind_address",
      "udp-bind-address",
      field<&ServerConfig::udp_bind_address>,
      {},
      check_optional_ip},
    S{"network", "rpc_bind_address", "rpc-bind-address", rpc<&RpcSettings::bind_address>, {}, check_ip},
    S{"network",
      "http_bind_address",
      "http-bind-address",
      field<&ServerConfig::http_bind_address>,
      {},
      check_ip},
    S{"network", "udp_preauth_rate", "udp-preauth-rate", field<&ServerConfig::udp_preauth_rate>, kPositive},
    // A handshake takes two datagrams (request, response): a smaller bucket could never connect.
    S{"network",
      "udp_preauth_burst",
      "udp-preauth-burst",
      field<&ServerConfig::udp_preauth_burst>,
      {2, kInf}},
    S{"network", "udp_preauth_sources", "udp-preauth-sources", field<&ServerConfig::udp_preauth_sources>,
      kAtLeastOne},
    S{"network",
      "udp_preauth_limit_loopback",
      "udp-preauth-limit-loopback",
      field<&ServerConfig::udp_preauth_limit_loopback>,
      {0, 1}},
    S{"network",
      "public_address",
      "public-address",
      field<&ServerConfig::public_address>,
      {},
      check_public_address},
    S{"network", "udp_port", "udp-port", field<&ServerConfig::udp_port>, kPort},
    S{"network", "rpc_port", "rpc-port", rpc<&RpcSettings::port>, kPort},
    S{"network", "http_port", "http-port", field<&ServerConfig::http_port>, kPort},
    S{"network", "threads", "threads", field<&ServerConfig::threads>, kThreads},
    S{"network", "rpc_threads", "rpc-threads", field<&ServerConfig::rpc_threads>, kThreads},
    S{"match", "tick_rate", "tick-rate", field<&ServerConfig::tick_rate>, {kMinTickRate, kMaxTickRate}},
    S{"match", "snapshot_rate", "snapshot-rate", field<&ServerConfig::snapshot_rate>, {1, kMaxTickRate}},
    S{"match", "max_matches", "max-matches", field<&ServerConfig::max_matches>, kAtLeastOne},
    S{"match", "max_players", "max-players", field<&ServerConfig::max_players>, {1, kMaxWirePlayers}},
    S{"match", "connection_timeout_s", "connection-timeout-s", field<&ServerConfig::connection_timeout_s>,
      kSeconds},
    S{"match", "keepalive_interval_s", "keepalive-interval-s", field<&ServerConfig::keepalive_interval_s>,
      kSeconds},
    S{"match", "max_pending_events", "max-pending-events", field<&ServerConfig::max_pending_events>,
      kAtLeastOne},
    S{"match", "event_sends", "event-sends", field<&ServerConfig::event_sends>, {1, kMaxEventSends}},
    S{"match",
      "input_ack_delay_ticks",
      "input-ack-delay-ticks",
      field<&ServerConfig::input_ack_delay_ticks>,
      {0, kMaxInputAckDelayTicks}},
    S{"interest",
      "enabled",
      "interest-enabled",
      field<&ServerConfig::interest, &InterestSettings::enabled>,
      {0, 1}},
    S{"interest",
      "radius",
      "interest-radius",
      field<&ServerConfig::interest, &InterestSettings::radius>,
      {0, kMaxInterestRadius}},
    S{"interest",
      "no_set_radius",
      "interest-no-set-radius",
      field<&ServerConfig::interest, &InterestSettings::no_set_radius>,
      {0, kMaxInterestRadius}},
    S{"interest",
      "persist_events",
      "interest-persist-events",
      field<&ServerConfig::interest, &InterestSettings::persist_events>,
      {0, 1}},
    S{"interest",
      "line_of_sight",
      "interest-line-of-sight",
      field<&ServerConfig::interest, &InterestSettings::line_of_sight>,
      {0, 1}},
    S{"interest",
      "sight_margin",
      "interest-sight-margin",
      field<&ServerConfig::interest, &InterestSettings::sight_margin>,
      {0, kMaxSightMargin}},
    S{"interest",
      "sight_hold_s",
      "interest-sight-hold-s",
      field<&ServerConfig::interest, &InterestSettings::sight_hold_s>,
      {0, kMaxSightHoldSeconds}},
    S{"rpc", "max_connections", "rpc-max-connections", rpc<&RpcSettings::max_connections>, kAtLeastOne},
    S{"rpc", "max_frame_bytes", "rpc-max-frame-bytes", rpc<&RpcSettings::max_frame_bytes>, kFrameBytes},
    S{"rpc", "max_batch", "rpc-max-batch", rpc<&RpcSettings::max_batch>, kAtLeastOne},
    S{"rpc", "rate", "rpc-rate", rpc<&RpcSettings::rate>, kPositive},
    // A raycast costs 1: a smaller bucket could never pass one.
    S{"rpc", "burst", "rpc-burst", rpc<&RpcSettings::burst>, kAtLeastOne},
    S{"rpc", "subscriber_max_pending_bytes", "subscriber-max-pending-bytes",
      rpc<&RpcSettings::subscriber_max_pending_bytes>, kAtLeastOne},
    S{"rpc", "max_connections_per_address", "rpc-max-connections-per-address",
      rpc<&RpcSettings::max_connections_per_address>, kAtLeastOne},
    S{"rpc", "global_rate", "rpc-global-rate", rpc<&RpcSettings::global_rate>, kPositive},
    S{"rpc", "global_burst", "rpc-global-burst", rpc<&RpcSettings::global_burst>, kAtLeastOne},
    S{"rpc", "idle_timeout_s", "rpc-idle-timeout-s", rpc<&RpcSettings::idle_timeout_s>, kSeconds},
    S{"rpc", "read_timeout_s", "rpc-read-timeout-s", rpc<&RpcSettings::read_timeout_s>, kSeconds},
    S{"rpc", "write_timeout_s", "rpc-write-timeout-s", rpc<&RpcSettings::write_timeout_s>, kSeconds},
    S{"rpc", "memory_budget_bytes", "rpc-memory-budget-bytes", rpc<&RpcSettings::memory_budget_bytes>,
      kMemoryBytes},
    S{"rpc", "connection_memory_bytes", "rpc-connection-memory-bytes",
      rpc<&RpcSettings::connection_memory_bytes>, kMemoryBytes},
    S{"rpc", "auth_failure_burst", "rpc-auth-failure-burst", rpc<&RpcSettings::auth_failure_burst>,
      kAtLeastOne},
    S{"rpc", "auth_failure_rate", "rpc-auth-failure-rate", rpc<&RpcSettings::auth_failure_rate>, kPositive},
    S{"rpc", "global_auth_failure_burst", "rpc-global-auth-failure-burst",
      rpc<&RpcSettings::global_auth_failure_burst>, kAtLeastOne},
    S{"rpc", "global_auth_failure_rate", "rpc-global-auth-failure-rate",
      rpc<&RpcSettings::global_auth_failure_rate>, kPositive},
    S{"rpc", "accept_retry_s", "rpc-accept-retry-s", rpc<&RpcSettings::accept_retry_s>, kSeconds},
    S{"security",
      "token_key_file",
      "token-key-file",
      field<&ServerConfig::token_key_file>,
      {},
      check_required},
    S{"security", "previous_token_key_file", "previous-token-key-file",
      field<&ServerConfig::previous_token_key_file>},
    S{"security",
      "admin_key_file",
      "admin-key-file",
      field<&ServerConfig::admin_key_file>,
      {},
      check_required},
    S{"security", "service_key_file", "service-key-file", field<&ServerConfig::service_key_file>},
    S{"security", "spectator_key_file", "spectator-key-file", field<&ServerConfig::spectator_key_file>},
    S{"security", "read_access", "read-access", field<&ServerConfig::read_access>, {}, check_read_access},
    S{"security", "token_valid_seconds", "token-valid-seconds", rpc<&RpcSettings::token_valid_seconds>,
      kWholeSeconds},
    S{"log", "level", "log-level", field<&ServerConfig::log_level>, {}, check_log_level},
    S{"shutdown",
      "flush_s",
      "shutdown-flush-s",
      field<&ServerConfig::shutdown_flush_s>,
      {0, kMaxTimeoutSeconds}},
    S{"recording", "directory", "recording-directory", field<&ServerConfig::recording_directory>},
    // The HTTP listener and contact subscriptions under abuse.
    S{"http", "max_connections", "http-max-connections", field<&ServerConfig::http_max_connections>, kSlots},
    S{"http", "max_connections_per_source", "http-max-connections-per-source",
      field<&ServerConfig::http_max_connections_per_source>, kSlots},
    S{"http", "request_timeout_s", "http-request-timeout-s", field<&ServerConfig::http_request_timeout_s>,
      kHttpWait},
    S{"http", "idle_timeout_s", "http-idle-timeout-s", field<&ServerConfig::http_idle_timeout_s>, kHttpWait},
    S{"http", "spectator_delay_ms", "spectator-delay-ms", field<&ServerConfig::spectator_delay_ms>,
      kSpectatorDelayMs},
    S{"http", "spectator_rate", "spectator-rate", field<&ServerConfig::spectator_rate>, kSpectatorRate},
    S{"http", "spectator_byte_budget", "spectator-byte-budget", field<&ServerConfig::spectator_byte_budget>,
      kSpectatorBudget},
    S{"http", "max_viewers", "max-viewers", field<&ServerConfig::max_viewers>, kSlots},
    S{"rpc", "max_subscriptions_per_connection", "rpc-max-subscriptions-per-connection",
      rpc<&RpcSettings::max_subscriptions_per_connection>, kSlots},
    S{"rpc", "max_subscriptions_per_match", "rpc-max-subscriptions-per-match",
      field<&ServerConfig::rpc_max_subscriptions_per_match>, kSubscriptionsPerMatch},
    // Running under Agones (server/config/agones_settings.hpp).
    S{"agones",
      "enabled",
      "agones-enabled",
      field<&ServerConfig::agones, &AgonesSettings::enabled>,
      {},
      check_agones_enabled,
      true},
    S{"agones", "sdk_port", "agones-sdk-port", field<&ServerConfig::agones, &AgonesSettings::sdk_port>,
      kPort},
    S{"agones", "health_period_ms", "agones-health-period-ms",
      field<&ServerConfig::agones, &AgonesSettings::health_period_ms>, kAgonesPeriodMs},
    S{"agones", "stall_ms", "agones-stall-ms", field<&ServerConfig::agones, &AgonesSettings::stall_ms>,
      kAgonesPeriodMs},
    S{"agones", "retry_ms", "agones-retry-ms", field<&ServerConfig::agones, &AgonesSettings::retry_ms>,
      kAgonesPeriodMs},
    S{"agones", "call_timeout_ms", "agones-call-timeout-ms",
      field<&ServerConfig::agones, &AgonesSettings::call_timeout_ms>, kAgonesPeriodMs},
    S{"agones",
      "player_tracking",
      "agones-player-tracking",
      field<&ServerConfig::agones, &AgonesSettings::player_tracking>,
      {0, 1}},
};

using L = Setting<LevelConfig>;
const std::array kLevelSettings{
    L{"level", "name", "", field<&LevelConfig::name>, {}, check_required},
    L{"level", "path", "", field<&LevelConfig::path>},
    L{"level", "fallback", "", field<&LevelConfig::fallback>},
};

using M = Setting<InitialMatchConfig>;
const std::array kMatchSettings{
    M{"initial_match", "level", "", field<&InitialMatchConfig::level>, {}, check_required},
    M{"initial_match", "count", "", field<&InitialMatchConfig::count>, kAtLeastOne},
    M{"initial_match", "max_players", "", field<&InitialMatchConfig::max_players>, {1, kMaxWirePlayers}},
    M{"initial_match", "props", "", field<&InitialMatchConfig::props>, kNonNegative},
    M{"initial_match", "seed", "", field<&InitialMatchConfig::seed>, kNonNegative},
};

constexpr std::string_view kLevelArray = "level";
constexpr std::string_view kMatchArray = "initial_match";

std::vector<std::string> section_names() {
  std::vector<std::string> out;
  for (const S& s : kServerSettings) {
    // Built by appends: `"[" + std::string(...)` draws a false -Wrestrict from gcc 12 at -O3.
    std::string name = "[";
    name += s.section;
    name += ']';
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
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

const std::string& effective_udp_bind_address(const ServerConfig& config) {
  return config.udp_bind_address.empty() ? config.bind_address : config.udp_bind_address;
}

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

std::string level_source(const ServerConfig& config, const LevelConfig& level) {
  std::string source = resolve_path(config, level.path);
  std::error_code ec;
  if (!fs::exists(source, ec) && !level.fallback.empty()) source = resolve_path(config, level.fallback);
  return source;
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
