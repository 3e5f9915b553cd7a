// The address players reach a GameServer at, read from the Agones SDK sidecar when the server starts with
// `[network] public_address = "agones"`: the node's address (status.address) and the host port Agones
// mapped to the container's port named "game" (status.ports). Connect tokens are bound to it, and it is
// what a matchmaker reads from the allocation, so the two agree without anyone configuring a port.
//
// Startup only (a program edge): it blocks, asking GET /gameserver again with backoff (the sidecar may start
// after the server, and the status is filled once the pod is scheduled) until both are there or `wait`
// has passed.
//
//   AgonesAddress a = wait_for_agones_address(sdk_port, config.agones, std::chrono::seconds(60));
//   if (!a.ok()) return a.error;            // the server refuses to start, saying why
//   public_address = a.address;             // "10.0.0.7:7154", "[fd00::7]:7154"
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "server/agones/game_server.hpp"
#include "server/config/agones_settings.hpp"

namespace shiftcast {

// How long a server started with public_address = "agones" waits for the sidecar to tell it its address.
inline constexpr std::chrono::seconds kAgonesAddressWait{60};

struct AgonesAddress {
  std::string address;  // "ip:port"; "[ipv6]:port"
  std::string error;    // empty: found
  bool ok() const { return error.empty(); }
};

// The GameServer's address for players, or why there is none (no status.address, no port named "game").
AgonesAddress agones_address_of(const GameServerView& server);

AgonesAddress wait_for_agones_address(std::uint16_t sdk_port, const AgonesSettings& settings,
                                      std::chrono::milliseconds wait);

}  // namespace shiftcast
