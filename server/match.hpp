// Match: one hosted game, owned by one worker thread. Its tick runs from a drift-free steady timer
// (each deadline is the previous one plus the period, never "now plus the period"), catching up by whole
// ticks when the worker was late; a tick applies the players' inputs, steps the simulation, hands the
// contacts to their players (reliable events) and to RPC subscribers (ContactFeed), and every
// snapshot period sends each client a delta snapshot. The simulation publishes the tick's WorldView
// to its TickHistory, which RPC threads read without ever waiting for this worker.
//
//   auto m = Match::create(settings, worker_context, endpoint, services);   // any thread
//   m->start();                                                            // first tick is scheduled
//   // worker thread only, posted by the UDP endpoint:
//   m->on_connect(accepted_challenge, from, now);
//   m->on_packet(client_id, std::move(datagram), from);
//   m->end(wire::ErrorCode::MatchEnded, on_done);   // any thread: flush, say goodbye, stop
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "protocol/handshake.hpp"
#include "server/client_address_book.hpp"
#include "server/client_connection.hpp"
#include "server/datagram_batch.hpp"
#include "server/hosted_level.hpp"
#include "server/interest_filter.hpp"
#include "server/match_directory.hpp"
#include "server/match_recorder.hpp"
#include "server/metrics.hpp"
#include "server/rejections.hpp"
#include "server/spectator/shot_log.hpp"
#include "server/worker_pulse.hpp"
#include "world/match/match_defaults.hpp"
#include "world/match/match_setup.hpp"

namespace shiftcast {

class UdpEndpoint;

struct MatchSettings {
  std::uint32_t id = 0;
  std::shared_ptr<const HostedLevel> level;
  int tick_rate = kDefaultTickRate;
  int snapshot_rate = kDefaultSnapshotRate;
  int max_players = kDefaultMaxPlayers;
  int props = 0;
  std::uint32_t seed = 1;
  ConnectionSettings connection;
  double shutdown_flush_s = 1;
  std::size_t max_subscriptions = 0;  // contact subscriptions on this match, 0: no bound
  std::string recording_directory;    // non-empty: record the match there (server/match_recorder.hpp)
  InterestSettings interest;          // who is sent which entities and contacts (server/interest_filter.hpp)
};

struct MatchServices {
  MetricsRegistry* metrics = nullptr;
  Rejections* rejections = nullptr;  // the "udp" channel
  Counter* packets_out = nullptr;
  Counter* bytes_out = nullptr;
  // Where contact subscriptions are filtered (the RPC threads; a match picks one by its id). Empty: on
  // the match's worker, inline (tests only).
  std::vector<boost::asio::io_context*> fanout;
  // The server's address book (connected packets are routed by source address). Empty: one of the
  // match's own (tests only).
  std::shared_ptr<ClientAddressBook> addresses;
  // The match's worker's sign of life, stamped every tick (server/worker_pulse.hpp); null: none. The
  // registry sets it per match from the worker it picks.
  std::shared_ptr<WorkerPulse> pulse;
  // Told on the worker's thread when a player joins (true) or leaves (false), those still connected
  // when the match ends included: the Agones player tracking. Must not block. Empty: nobody is told.
  std::function<void(std::uint32_t match_id, std::uint64_t client_id, bool joined)> on_player;
  // Told on the worker's thread once a match ended for good (its events flushed) and left the registry,
  // with the number of matches still registered: the Agones Shutdown. Must not block. Empty: nobody.
  std::function<void(std::uint32_t match_id, std::size_t matches_left)> on_match_finished;
};

// Ticks started later than this many periods behind are skipped (counted) instead of run back to back:
// a worker stalled for seconds must not then burn seconds of catch-up ticks.
inline constexpr int kMaxCatchUpTicks = 8;
// Random walkable points tried for a joining player when every spawn point is occupied.
inline constexpr int kRandomSpawnAttempts = 32;

class Match final : public MatchHandle, public std::enable_shared_from_this<Match> {
 public:
  using Clock = std::chrono::steady_clock;

  // Builds the world (the level's props, settled); an error string when the level cannot host a match.
  static std::shared_ptr<Match> create(const MatchSettings& settings, boost::asio::io_context& worker,
                                       UdpEndpoint& endpoint, const MatchServices& services,
                                       std::string* error);
  ~Match() override;

  void start();
  // Any thread, any number of times: each call's `on_done` runs once, on the worker, after the match
  // stopped (at once when it already had).
  void end(wire::ErrorCode reason, std::function<void()> on_done);

  // Worker thread only.
  // `fresh_token`: the token was not spent before this response (else only the same client at the same
  // address, whose first keep-alive was lost, is answered again; anyone else is a replay). Returns Ok when
  // connected (or answered again), else the refusal sent (MatchFull, ShuttingDown, TokenReplayed).
  wire::ErrorCode on_connect(const AcceptedChallenge& accepted, const boost::asio::ip::udp::endpoint& from,
                             bool fresh_token);
  // A connected packet the endpoint routed to `client_id` by its source address.
  void on_packet(std::uint64_t client_id, std::vector<std::uint8_t> datagram,
                 const boost::asio::ip::udp::endpoint& from);
  boost::asio::io_context& worker() { return worker_; }

  // MatchHandle: any thread.
  std::uint32_t id() const override { return settings_.id; }
  const BspTree& level_tree() const override { return settings_.level->compiled.tree; }
  const TickHistory& history() const override;
  int tick_rate() const override { return settings_.tick_rate; }
  std::optional<double> client_view_tick(std::uint64_t client_id) const override;
  ContactFeed& contact_feed() override { return *feed_; }
  MatchHealth health() const override;
  bool ended() const override { return ended_.load(); }
  bool records_queries() const override { return recorder_ != nullptr || shots_.watched(); }
  void record_query(const RecordedQuery& query) const override;
  const HostedLevel* hosted_level() const override { return settings_.level.get(); }
  ShotLog* shot_log() const override { return &shots_; }
  bool ending() const { return end_requested_.load(); }  // end() was called (it may still be flushing)
  // Any thread: `client_id` is connected here from `from` (a packet from anyone else is refused unposted).
  bool admits(std::uint64_t client_id, const boost::asio::ip::udp::endpoint& from) const {
    return addresses_->admits({settings_.id, client_id}, from);
  }

 private:
  Match(const MatchSettings& settings, boost::asio::io_context& worker, UdpEndpoint& endpoint,
        const MatchServices& services);
  double now() const;
  void schedule_next();
  void on_timer();
  void run_tick();
  void apply_inputs();
  void dispatch_contacts();
  void send_frames();
  void send_keepalives();  // and, between snapshots, input acknowledgements
  void say_goodbye(ClientConnection& connection, const boost::asio::ip::udp::endpoint& to,
                   wire::ErrorCode reason, double now);
  void drop_closed_connections();
  void flush_and_close(wire::ErrorCode reason, Clock::time_point deadline);
  void finish(wire::ErrorCode reason);
  bool spot_is_free(Vec3 feet) const;
  EntityId spawn_player();

  struct Client {
    std::unique_ptr<ClientConnection> connection;
    boost::asio::ip::udp::endpoint endpoint;
    EntityId entity = kNoEntity;
    // Interest management: the world this client was last sent (its snapshot's, filtered), from buffers
    // of its own that its connection no longer holds.
    FilteredWorlds worlds;
    std::shared_ptr<const SnapshotState> world;
    SightMemory sight;  // the players this client saw lately (line of sight, interest_filter.hpp)
  };

  MatchSettings settings_;
  boost::asio::io_context& worker_;
  UdpEndpoint& endpoint_;
  MatchServices services_;
  std::unique_ptr<MatchSetup> scene_;
  boost::asio::steady_timer timer_;
  Clock::time_point start_time_;
  Clock::time_point deadline_;
  Clock::duration period_;
  int snapshot_every_ = 1;
  bool ending_ = false;
  std::vector<std::function<void()>> completions_;  // worker thread only: every end()'s on_done
  std::atomic<bool> ended_{false};
  std::atomic<bool> end_requested_{false};

  std::map<std::uint64_t, Client> clients_;       // by client id, worker thread only
  std::shared_ptr<ClientAddressBook> addresses_;  // clients_' endpoints, for any thread
  int spawns_used_ = 0;
  std::unique_ptr<NavQuery> nav_;  // worker thread only: spawn spots when every spawn point is taken
  std::uint32_t spawn_rng_ = 1;
  std::vector<Vec3> spawn_path_;  // scratch for the reachability check
  // The world quantized once per snapshot tick, shared by every client's frame (and kept by those whose
  // snapshot carried every change, as their baseline).
  std::shared_ptr<const SnapshotState> world_ = std::make_shared<const SnapshotState>();
  DatagramBatch outbox_;  // the tick's frames and acknowledgements, sent together at the end of the tick
  std::vector<ContactRecord> records_;
  // Interest management (server/interest_filter.hpp): scratch reused every snapshot and every tick.
  InterestFilter interest_;
  std::vector<std::uint32_t> kept_;            // one client's entity indices
  std::vector<InterestViewer> viewers_;        // every client, in clients_ order
  std::vector<Client*> viewer_clients_;        // the same order
  std::vector<std::uint32_t> contact_routes_;  // one contact's viewer indices
  std::shared_ptr<Counter> culled_counter_;
  std::shared_ptr<Counter> sight_culled_counter_;
  std::shared_ptr<Counter> sight_segments_counter_;
  std::shared_ptr<Counter> events_routed_counter_;
  std::shared_ptr<Counter> events_suppressed_counter_;
  void find_viewers();

  // Published for other threads.
  mutable std::mutex view_ticks_mutex_;
  std::map<std::uint64_t, double> view_ticks_;
  std::atomic<std::uint64_t> tick_{0};
  std::atomic<int> players_{0};
  std::atomic<std::uint32_t> entities_{0};
  std::atomic<std::uint64_t> contacts_{0};
  std::atomic<std::uint64_t> violations_{0};
  std::atomic<std::uint64_t> replacements_{0};
  mutable ShotLog shots_;  // raycasts answered, while a spectator watches
  std::atomic<std::uint64_t> late_ticks_{0};
  std::unique_ptr<ContactFeed> feed_;

  // Metrics (labelled by match), owned with the registry: the registry drops them from /metrics when the
  // match is forgotten, while a handle taken before (MatchStatus, ListMatches) may still read them.
  std::shared_ptr<Histogram> tick_seconds_;
  std::shared_ptr<Counter> late_counter_;
  std::shared_ptr<Counter> skipped_counter_;
  std::shared_ptr<Counter> contacts_counter_;
  std::shared_ptr<Counter> violations_counter_;
  std::shared_ptr<Gauge> players_gauge_;
  std::array<std::shared_ptr<Counter>, kFilterStageCount> filter_tests_{};
  // Exactly-once commands (apply_inputs): the tick's commands of one player, and their counters.
  std::vector<PlayerInput> tick_commands_;
  std::shared_ptr<Counter> commands_run_counter_;
  std::shared_ptr<Counter> commands_dropped_counter_;
  std::shared_ptr<Counter> command_waits_counter_;
  std::shared_ptr<Counter> command_starved_counter_;
  SimulationCounters last_counters_{};

  // Recording (docs/replay.md): null unless MatchSettings::recording_directory was set. The worker owns
  // it; RPC threads only post queries to it, and it lives until the match object does.
  std::unique_ptr<MatchRecorder> recorder_;
  void open_recording();
};

}  // namespace shiftcast
