// AgonesSdk: shiftcast-server under Agones, through the SDK sidecar's REST API (no gRPC): the calls of
// sdks/swagger/sdk.swagger.json and alpha.swagger.json, made with Beast on a strand of the RPC threads
// so that no match worker ever waits for the sidecar. docs/server.md, "Running under Agones", is the
// operator's view; the sequence is:
//
//   start()   PUT /metadata/annotation shiftcast-server-instance, shiftcast-match-id (the id reserved for
//             the allocated match), then POST /ready; retried with backoff until all three succeed
//             (the sidecar may start after the server). POST /health every health_period_ms from then
//             on while HeartbeatJudge vouches for every match worker.
//   Ready     GET /watch/gameserver: on status.state "Allocated", the match the labels and annotations
//             ask for (allocation_settings.hpp) is created through MatchDirectory::create, the RPC's
//             CreateMatch path and checks; a bad setting is logged and counted and creates nothing.
//             PUT /alpha/player/capacity = its max players.
//   players   POST /alpha/player/connect and /disconnect as the allocated match's players come and go
//             (playerID: the connect token's client id, decimal), unless player_tracking = 0.
//   the end   once the allocated match ended (events flushed) and no match is left: POST /shutdown
//             (retried until it succeeds); the heartbeat and the watch stop. SIGTERM is still graceful.
//
// Every call's outcome is counted in shiftcast_agones_calls_total{call, result} (result: ok, refused =
// an HTTP error status or a false answer, unreachable = no response, dropped = the queue was full) and
// a failure is logged when a call's result changes. Calls go out one at a time, in order.
//
//   auto sdk = AgonesSdk::create(rpc_context, sidecar_endpoint, config.agones, services);
//   sdk->start();                                     // any thread, once
//   services.on_player = [sdk](...) { sdk->player_changed(...); };   // worker threads: posts only
//   sdk->stop();                                      // any thread (shutdown): nothing is sent afterwards
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "server/agones/heartbeat.hpp"
#include "server/agones/sdk_http.hpp"
#include "server/config/agones_settings.hpp"
#include "server/match_directory.hpp"
#include "server/metrics.hpp"
#include "server/worker_pulse.hpp"

namespace shiftcast {

struct GameServerView;

struct AgonesServices {
  MatchDirectory* directory = nullptr;  // creates the allocated match
  std::uint32_t match_id = 0;           // reserved for the allocated match (published before Ready)
  std::uint64_t server_instance = 0;    // the process's instance id (connect tokens name it)
  int default_max_players = 0;          // [match] max_players, when the allocation does not say
  MetricsRegistry* metrics = nullptr;
  // The match workers, to probe (an idle worker ticks nothing) and judge by their pulses.
  std::vector<boost::asio::io_context*> workers;
  std::vector<std::shared_ptr<WorkerPulse>> pulses;  // in workers' order
};

class AgonesSdk : public std::enable_shared_from_this<AgonesSdk> {
 public:
  static std::shared_ptr<AgonesSdk> create(boost::asio::io_context& context,
                                           const boost::asio::ip::tcp::endpoint& sidecar,
                                           const AgonesSettings& settings, AgonesServices services);
  AgonesSdk(boost::asio::io_context& context, const boost::asio::ip::tcp::endpoint& sidecar,
            const AgonesSettings& settings, AgonesServices services);

  void start();
  void stop();
  // Worker threads (MatchServices' callbacks): post to the SDK's strand and return.
  void player_changed(std::uint32_t match_id, std::uint64_t client_id, bool joined);
  void match_finished(std::uint32_t match_id, std::size_t matches_left);

 private:
  using Then = std::function<void(const SdkReply&)>;
  struct Pending {
    std::string call;  // the metric's call label
    SdkRequest request;
    Then then;
  };
  enum class Outcome { kOk, kRefused, kUnreachable };

  // All below run on strand_.
  void enqueue(std::string call, SdkRequest request, Then then = {});
  void pump();
  Outcome record(const std::string& call, const SdkReply& reply, bool answer_false = false);
  void count(const std::string& call, const char* result);  // registers the series (adds nothing)
  void announce();                                          // the annotations, then Ready
  void retry_later(std::function<void()> again);
  void beat();
  void schedule_beat(std::chrono::steady_clock::time_point now);  // probes the workers, arms the timer
  void open_watch();
  void on_game_server(const GameServerView& gs);
  void send_shutdown();
  void halt();  // stop the heartbeat and the watch

  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::ip::tcp::endpoint sidecar_;
  AgonesSettings settings_;
  AgonesServices services_;
  HeartbeatJudge judge_;
  boost::asio::steady_timer health_timer_;
  boost::asio::steady_timer retry_timer_;
  boost::asio::steady_timer watch_timer_;
  std::chrono::steady_clock::time_point next_beat_;
  std::chrono::milliseconds backoff_;
  std::chrono::milliseconds watch_backoff_;

  std::atomic<bool> stopping_{false};
  bool started_ = false;
  bool ready_ = false;           // Ready answered
  bool match_created_ = false;   // the allocated match exists (or existed)
  bool shutdown_sent_ = false;   // Shutdown asked for
  bool halted_ = false;          // Shutdown answered or stop(): no more pings, no watch
  bool health_pending_ = false;  // a POST /health queued or in flight
  bool withholding_ = false;     // the last judgement withheld the ping
  std::string last_refusal_;     // the last allocation's settings error (logged once)
  std::string state_;            // the GameServer's state, as the watch last said
  std::deque<Pending> queue_;
  bool in_flight_ = false;
  std::shared_ptr<SdkWatch> watch_;
  std::vector<std::shared_ptr<std::atomic<bool>>> probing_;  // per worker: a probe waits in its queue
  std::map<std::string, std::string> last_results_;          // per call: the last result, to log changes only
  Counter* allocations_created_;
  Counter* allocations_refused_;
  Counter* health_withheld_;
};

}  // namespace shiftcast
