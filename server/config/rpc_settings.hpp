// RpcSettings: everything the TCP query RPC (server/rpc_server.hpp) is configured with. ServerConfig
// embeds it (ServerConfig::rpc: the config's [rpc] section with [network] rpc_bind_address and rpc_port
// and [security] token_valid_seconds set its fields); shiftcast-server adds the keys and the public
// address at startup. Tests fill it directly and set the two clocks, so rate limits, timeouts and token
// expiry are driven by the test, never by waiting.
//
// The defaults here are the safe ones a hostile network needs (docs/server.md, "Under abuse: the RPC
// listener"): reads need a key, every connection and the whole listener have time, memory and CPU bounds.
#pragma once

#include <cstddef>
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
  // Connections one source address may hold at once (IPv4 address, or IPv6 address), so that one peer
  // cannot take every slot of max_connections.
  int max_connections_per_address = 32;
  std::uint32_t max_frame_bytes = kMaxRpcFrameBytes;
  int max_batch = 4096;  // queries in one BatchRequest
  // Query cost units (server/query_cost.hpp: a short raycast costs 1) per second per connection, and the
  // connection's token bucket size. A connection's rate is also at most global_rate / open connections.
  double rate = 100000;
  double burst = 20000;
  // The whole listener's budget, shared by every connection: no set of connections can take more.
  double global_rate = 400000;
  double global_burst = 40000;
  // A connection that completes no frame for idle_timeout_s (and holds no contact subscription), or
  // leaves a frame unfinished for read_timeout_s, or whose reader takes more than write_timeout_s to
  // accept one write, is closed (RpcError Timeout when it can still be told).
  double idle_timeout_s = 30;
  double read_timeout_s = 10;
  double write_timeout_s = 10;
  // Bytes of unfinished request frames and unwritten replies, over all connections and per connection.
  // A connection stops reading while its replies wait beyond half of its share; a frame or a push that
  // would pass either limit closes its connection (RpcError TooLarge), a reply that would is replaced by
  // an RpcError TooLarge.
  std::size_t memory_budget_bytes = std::size_t(64) << 20;
  std::size_t connection_memory_bytes = std::size_t(8) << 20;
  // Failed key checks one address may make in a burst, and regain per second; and the same for the
  // whole listener. Beyond them, keyed requests from an address with failures on record are refused
  // RateLimited without looking at the key.
  double auth_failure_burst = 8;
  double auth_failure_rate = 1;
  double global_auth_failure_burst = 64;
  double global_auth_failure_rate = 16;
  // A persistent accept failure (out of descriptors) is retried after this long instead of at once.
  double accept_retry_s = 0.1;
  // How often the listener looks for connections past their timeouts.
  double timeout_check_s = 0.25;
  // A contact subscription is cut (RpcError SlowConsumer) when a push finds more than this many reply
  // bytes still waiting to be written on its connection.
  std::uint32_t subscriber_max_pending_bytes = 4u << 20;
  std::string admin_key;  // CreateMatch, EndMatch, IssueConnectToken; empty: admin calls always refused
  // Reads (queries, subscriptions, match listings and status) need this key or the admin key; empty:
  // the admin key only. open_reads: reads need no key (the server config allows it on loopback only).
  std::string service_key;
  bool open_reads = false;
  // Contact subscriptions one connection may hold (the per-match bound is the match's own).
  int max_subscriptions_per_connection = 64;
  ServerKeys keys;             // keys.token_key seals the connect tokens IssueConnectToken hands out
  std::string public_address;  // "ip:port" of the UDP endpoint, written into every token
  // IssueConnectToken without valid_seconds (FlatBuffers leaves out a field equal to the schema default of
  // 30, so a request for exactly 30 also gets this) is valid this long.
  std::uint32_t token_valid_seconds = 30;
  // Kernel send buffer of each accepted socket, 0: the system's (autotuned). A small one makes a slow
  // consumer visible after a few pushes instead of megabytes (tests); servers leave it at 0.
  int socket_send_buffer_bytes = 0;
  std::function<double()> now;              // seconds, steady (rate limits, timeouts); null: steady_clock
  std::function<std::uint64_t()> unix_now;  // unix seconds (token expiry); null: system_clock
};

}  // namespace shiftcast
