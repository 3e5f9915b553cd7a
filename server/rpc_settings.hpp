// RpcSettings: everything the TCP query RPC (server/rpc_server.hpp) is configured with. shiftcast-server
// fills it from ServerConfig's [network], [rpc] and [security] sections; tests fill it directly and set
// the two clocks, so rate limits and token expiry are driven by the test, never by waiting.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "protocol/handshake.hpp"
#include "protocol/wire_constants.hpp"

namespace shiftcast {

struct RpcSettings {
  std::string bind_address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: any free port (RpcServer::port() says which)
  int max_connections = 256;
  std::uint32_t max_frame_bytes = kMaxRpcFrameBytes;
  int max_batch = 4096;  // queries in one BatchRequest
  double rate = 100000;  // cost units per second per connection (a raycast costs 1)
  double burst = 20000;  // the token bucket's size
  // A contact subscription is cut (RpcError SlowConsumer) when a push finds more than this many reply
  // bytes still waiting to be written on its connection.
  std::uint32_t subscriber_max_pending_bytes = 4u << 20;
  // Contact subscriptions one connection may hold (the per-match bound is the match's own).
  int max_subscriptions_per_connection = 64;
  std::string admin_key;       // CreateMatch, EndMatch, IssueConnectToken; empty: admin calls always refused
  ServerKeys keys;             // keys.token_key seals the connect tokens IssueConnectToken hands out
  std::string public_address;  // "ip:port" of the UDP endpoint, written into every token
  // IssueConnectToken without valid_seconds (FlatBuffers leaves out a field equal to the schema default of
  // 30, so a request for exactly 30 also gets this) is valid this long.
  std::uint32_t token_valid_seconds = 30;
  // Kernel send buffer of each accepted socket, 0: the system's (autotuned). A small one makes a slow
  // consumer visible after a few pushes instead of megabytes (tests); servers leave it at 0.
  int socket_send_buffer_bytes = 0;
  std::function<double()> now;              // seconds, steady (rate limits); null: steady_clock
  std::function<std::uint64_t()> unix_now;  // unix seconds (token expiry); null: system_clock
};

}  // namespace shiftcast
