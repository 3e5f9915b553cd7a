// RpcServer: the TCP query RPC (DESIGN.md section 5): services send size-prefixed Envelopes with raycasts,
// sweeps, overlaps, batches, contact subscriptions, match listings and admin calls, pipelined, and get
// their replies in request order (server/rpc_connection.hpp says how one connection works).
//
//   RpcServer rpc({&ctx0, &ctx1}, directory, settings, registry, rejections);
//   if (std::string e = rpc.start(); !e.empty()) fail(e);   // binds and listens; port() says where
//   ... the contexts run on their threads ...
//   rpc.stop();   // any thread: no more accepts; connections close once their queued replies are written
//
// The acceptor runs on the first context; accepted connections are spread over all of them round robin,
// each on its own strand. Beyond max_connections, or max_connections_per_address from its address, a
// newcomer gets one RpcError TooManyConnections and is closed. A failed accept (out of descriptors) is
// counted and retried after accept_retry_s, never in a loop. Every timeout_check_s each connection
// checks its idle, read and write timeouts. Queries read the matches' published history and never wait for a
// match's worker, so the RPC contexts should be threads of their own, apart from the match workers.
//
// The directory, registry and rejections must outlive the server and every connection (connections live
// until their context runs their last handler or is destroyed).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/config/rpc_settings.hpp"
#include "server/match_directory.hpp"
#include "server/metrics.hpp"
#include "server/rejections.hpp"

namespace shiftcast {

struct RpcShared;

class RpcServer {
 public:
  RpcServer(std::vector<boost::asio::io_context*> rpc_contexts, MatchDirectory& directory,
            RpcSettings settings, MetricsRegistry& registry, Rejections& rejections);
  ~RpcServer();
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  // Binds and listens; an error message (naming the address and the reason), or empty.
  std::string start();
  std::uint16_t port() const { return port_; }
  void stop();
  // Connections accepted and not yet closed.
  int connections() const;
  // Has every connection look at its timeouts now, against RpcSettings::now (the listener also does this
  // every timeout_check_s): tests that drive the clock call it after moving the clock.
  void check_timeouts();

 private:
  struct Listener;

  std::vector<boost::asio::io_context*> contexts_;
  std::shared_ptr<RpcShared> shared_;
  std::shared_ptr<Listener> listener_;
  std::uint16_t port_ = 0;
};

}  // namespace shiftcast
