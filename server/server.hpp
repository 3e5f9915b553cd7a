// Server: one shiftcast-server process. Owns the worker threads (each with its own io_context, its own
// UDP socket on the shared port, and the matches it ticks), the RPC threads (TCP queries and the HTTP
// metrics endpoint, apart from the workers so no query ever delays a tick), the hosted levels, the
// match registry and the metrics.
//
//   Server server(config);                   // a validated ServerConfig
//   if (std::string e = server.start(); !e.empty()) fail(e);
//   server.ports();                          // the bound ports (config port 0 = any free port)
//   server.shutdown();                       // any thread, e.g. a signal handler's: graceful
//   server.wait();                           // returns once everything is closed
//
// Under Agones ([agones] enabled), the SDK client (server/agones/agones_sdk.hpp) starts once everything
// is bound and stops first on shutdown.
//
// Shutdown: stop accepting (readiness goes false, the RPC acceptor closes), every match finishes its tick,
// resends unacknowledged contact events until acknowledged or shutdown_flush_s passed, says goodbye to
// its clients; then sockets close and the threads end.
#pragma once

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protocol/handshake.hpp"
#include "server/client_address_book.hpp"
#include "server/config/server_config.hpp"
#include "server/hosted_level.hpp"
#include "server/metrics.hpp"
#include "server/rejections.hpp"
#include "server/token_replay_cache.hpp"
#include "server/worker_pulse.hpp"

namespace shiftcast {

class UdpEndpoint;
class MatchRegistry;
class RpcServer;
class HttpServer;
class SpectatorFeed;
class SpectatorPages;
class AgonesSdk;

struct ServerPorts {
  std::uint16_t udp = 0;
  std::uint16_t rpc = 0;
  std::uint16_t http = 0;
};

class Server {
 public:
  explicit Server(ServerConfig config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  std::string start();
  ServerPorts ports() const { return ports_; }
  const std::string& public_address() const { return public_address_; }
  // This process's random id, bound into every connect token it issues (see ServerKeys).
  std::uint64_t instance() const { return keys_.server_instance; }
  void shutdown();
  void wait();
  MetricsRegistry& metrics() { return metrics_; }
  MatchRegistry& matches() { return *registry_; }

 private:
  using WorkGuard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  struct Pool {
    std::vector<std::unique_ptr<boost::asio::io_context>> contexts;
    std::vector<WorkGuard> guards;
    std::vector<std::thread> threads;
    void create(int count);
    void run();
    void stop();
    void join();
  };

  std::string load_levels();
  std::string load_keys();
  std::string start_agones();

  ServerConfig config_;
  MetricsRegistry metrics_;
  Rejections udp_rejections_;
  Rejections rpc_rejections_;
  ServerKeys keys_;
  std::string admin_key_;
  std::string service_key_;    // empty: RPC reads need the admin key
  std::string spectator_key_;  // empty: the live match views are off
  std::string public_address_;
  TokenReplayCache replay_cache_;
  // Connected packets carry no ids: every endpoint routes them by source address through this book.
  std::shared_ptr<ClientAddressBook> addresses_ = std::make_shared<ClientAddressBook>();
  std::map<std::string, std::shared_ptr<const HostedLevel>> levels_;
  Pool workers_;
  Pool rpc_pool_;
  std::vector<std::unique_ptr<UdpEndpoint>> endpoints_;
  std::unique_ptr<MatchRegistry> registry_;
  std::unique_ptr<RpcServer> rpc_;
  std::unique_ptr<SpectatorFeed> spectator_feed_;
  std::unique_ptr<SpectatorPages> spectator_pages_;
  std::unique_ptr<HttpServer> http_;  // after the spectator parts: destroyed first, it calls them
  std::vector<std::shared_ptr<WorkerPulse>> pulses_;  // one per worker: its last tick (or probe)
  std::shared_ptr<AgonesSdk> agones_;                 // null unless [agones] is enabled
  ServerPorts ports_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> shutting_down_{false};
  std::mutex done_mutex_;
  std::condition_variable done_cv_;
  bool matches_ended_ = false;  // every match flushed and said goodbye
  bool stopped_ = false;        // threads joined
};

}  // namespace shiftcast
