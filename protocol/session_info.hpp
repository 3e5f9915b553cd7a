// SessionInfo: the rates and timers a server tells a client in the keep-alive that accepts its
// connection, so a client written from docs/protocol.md alone can pace its commands, interpolate
// snapshots and size its own timeout without reading the server's config. One writer and one reader,
// shared by the server (server/match.cpp) and the client (protocol/client_session.cpp); the fields
// travel as 12 fixed bytes in the KeepAlive (protocol/connected_message.hpp).
//
//   keep_alive.session = to_session_info({64, 32, 0.1, 5.0});          // server
//   if (auto t = read_session_info(keep_alive.session)) use(*t);      // client: nothing if absent or bad
#pragma once

#include <cstdint>
#include <optional>

namespace shiftcast {

struct SessionTiming {
  int tick_rate = 0;              // simulation ticks per second
  int snapshot_rate = 0;          // snapshots per second, at most tick_rate
  double keepalive_interval = 0;  // seconds (on the wire in whole milliseconds)
  double timeout = 0;             // seconds (on the wire in whole milliseconds)
};

// As on the wire.
struct SessionInfoFields {
  std::uint16_t tick_rate = 0;
  std::uint16_t snapshot_rate = 0;
  std::uint32_t keepalive_interval_ms = 0;
  std::uint32_t timeout_ms = 0;
};

SessionInfoFields to_session_info(const SessionTiming& timing);

// Nothing when `info` is absent or inconsistent (a rate of 0, a snapshot rate above the tick rate, a
// keep-alive interval of 0, or a timeout not longer than the keep-alive interval): a client then keeps
// its own settings.
std::optional<SessionTiming> read_session_info(const std::optional<SessionInfoFields>& info);

}  // namespace shiftcast
