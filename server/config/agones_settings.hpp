// AgonesSettings: the config's [agones] section, how shiftcast-server talks to the Agones SDK sidecar
// over its REST API (server/agones/agones_sdk.hpp; docs/server.md, "Running under Agones"). Plain data:
// the server reads it once at startup; tests shorten the periods so nothing in them waits for seconds.
//
//   const bool on = agones_enabled(config.agones, std::getenv("AGONES_SDK_HTTP_PORT"));
//   const std::optional<std::uint16_t> port = agones_sdk_port(config.agones, std::getenv(...));
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shiftcast {

// [network] public_address = "agones": connect tokens are bound to the node's address and the host port of
// the GameServer's port named kAgonesGamePortName, read from the sidecar before anything else
// (Agones' Dynamic port policy picks the host port, so no config can name it in advance).
inline constexpr char kPublicAddressFromAgones[] = "agones";
inline constexpr char kAgonesGamePortName[] = "game";

// Agones sets this for the game server's container: the sidecar's REST port on localhost.
inline constexpr char kAgonesPortVariable[] = "AGONES_SDK_HTTP_PORT";

struct AgonesSettings {
  // "true", "false" or "auto" (on when AGONES_SDK_HTTP_PORT is set). TOML takes true/false unquoted too.
  std::string enabled = "false";
  std::uint16_t sdk_port = 0;   // 0: AGONES_SDK_HTTP_PORT; else this port (tests, local runs)
  int health_period_ms = 2000;  // a POST /health this often while every match worker ticks
  int stall_ms = 5000;          // a worker silent this long (no tick, no probe) withholds the pings
  int retry_ms = 250;           // the first retry of a failed Ready (or watch); doubles up to 5 s
  int call_timeout_ms = 2000;   // one SDK call, connect to last byte
  int player_tracking = 1;      // 1: the alpha player tracking calls as players come and go; 0: none
};

// Whether the [agones] section is on, given the environment variable's value (null when unset).
inline bool agones_enabled(const AgonesSettings& s, const char* port_variable) {
  if (s.enabled == "auto") return port_variable != nullptr && *port_variable != '\0';
  return s.enabled == "true";
}

// The sidecar's port: the config's when set, else the environment variable's; nothing when neither is a
// port (1..65535).
inline std::optional<std::uint16_t> agones_sdk_port(const AgonesSettings& s, const char* port_variable) {
  if (s.sdk_port != 0) return s.sdk_port;
  if (port_variable == nullptr) return std::nullopt;
  const std::string_view text(port_variable);
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > 65535)
    return std::nullopt;
  return std::uint16_t(value);
}

}  // namespace shiftcast
