// The settings tables (server_config_keys.hpp): every key with its flag, range and text check, and the
// bounds past which a value is a typo rather than a deployment.
#include "server/config/server_config_keys.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "protocol/reliable_events.hpp"
#include "protocol/wire_constants.hpp"
#include "server/config/ip_address.hpp"
#include "server/config/log_level.hpp"
#include "server/config/tick_rates.hpp"

namespace shiftcast::server_config_keys {
namespace {

using config_settings::field;
using config_settings::kInf;
using config_settings::Range;
using config_settings::Setting;

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

}  // namespace

std::span<const Setting<ServerConfig>> server_settings() {
  return kServerSettings;
}

std::span<const Setting<LevelConfig>> level_settings() {
  return kLevelSettings;
}

std::span<const Setting<InitialMatchConfig>> match_settings() {
  return kMatchSettings;
}

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

}  // namespace shiftcast::server_config_keys
