// SimClient: one simulated player, a real UDP client of the match protocol. It owns a ClientSession
// (protocol/client_session.hpp) and a connected UDP socket on its thread's io_context, and each client
// tick lets a BotDriver choose an input from what the client predicts and sees, predicts the move
// (client-sim/movement_check), sends the command, and fires hitscan shots as raycast RPCs. Everything it
// receives is checked as it arrives: snapshot continuity, contact events in order without gaps or
// duplicates, input acknowledgement latency, own movement against the server's (SimClientStats).
// With network conditions (SimOptions::network) every datagram both ways passes through the client's two
// links (client-sim/network_conditions.hpp), and the thread's DeliveryTimer delivers them when due.
//
//   SimClient client(io, thread_context, token, server_endpoint, {.seed = 7, .index = 3});
//   client.start(now);           // socket, receive loop; the handshake starts at the first tick
//   every client tick:  client.tick(now);
//   client.stop(now);            // goodbye (three copies), socket closed
//   merge(client.stats());
//
// Not thread-safe: a client lives on one thread (its context's), and so do the SimThreadContext's parts.
#pragma once

#include <flatbuffers/flatbuffers.h>
#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "client-sim/delivery_timer.hpp"
#include "client-sim/level_motor_world.hpp"
#include "client-sim/movement_check.hpp"
#include "client-sim/network_conditions.hpp"
#include "client-sim/rpc_channel.hpp"
#include "client-sim/sim_options.hpp"
#include "client-sim/sim_stats.hpp"
#include "protocol/client_session.hpp"
#include "protocol/wire_constants.hpp"
#include "world/level/navmesh.hpp"
#include "world/match/bot_driver.hpp"

namespace shiftcast {

// Input-to-acknowledgement and RPC latency, bucketed for the live progress line and the report's
// timeline (exact samples go to the stats).
inline constexpr double kAckBucketMs = 0.5;
inline constexpr std::size_t kAckBuckets = 400;  // the last bucket also holds everything beyond 200 ms
using AckHistogram = std::array<std::uint64_t, kAckBuckets>;
// The bucket a latency of `ms` counts in.
inline std::size_t latency_bucket(double ms) {
  return std::min(kAckBuckets - 1, static_cast<std::size_t>(std::max(0.0, ms) / kAckBucketMs));
}
// Datagrams one read takes from a client's socket (recvmmsg) before the client lets its thread's other
// work run: a burst of snapshots costs one system call per batch, and the turn stays bounded.
inline constexpr std::size_t kReceiveBatch = 4;

// Running totals of one thread's clients, for the progress line (published by the thread each tick).
struct SimThreadTotals {
  int connected = 0;
  int failed = 0;
  std::uint64_t snapshots = 0;
  std::uint64_t commands = 0;
  std::uint64_t events = 0;
  std::uint64_t rpc_calls = 0;
  std::uint64_t bytes_up = 0;  // datagrams and their IP/UDP headers, as SimClientStats counts them
  std::uint64_t bytes_down = 0;
  AckHistogram acks{};
  AckHistogram rpc{};  // RPC shot latency (raycasts, rewound or not)
};

// What a thread's clients share: all of it used from that thread only.
struct SimThreadContext {
  const SimOptions* options = nullptr;
  const LevelMotorWorld* world = nullptr;
  NavQuery* nav = nullptr;
  std::vector<RpcChannel*> rpcs;  // one per server, in sim_servers order: shots go to the client's own
  flatbuffers::FlatBufferBuilder* fbb = nullptr;  // reused for every shot
  SimThreadTotals* totals = nullptr;
  MotorConfig motor;
  BotConfig bot;
  std::chrono::steady_clock::time_point epoch;  // the clients' `now` is seconds since this
  double unix_time_offset = 0;                  // unix seconds = the clients' `now` + this
  bool measuring = false;                       // the load phase: latency and movement samples are kept
  DeliveryTimer* delivery = nullptr;            // with network conditions only: wakes held datagrams
};

struct SimClientIdentity {
  std::uint32_t seed = 1;    // the match's seed: bots of one match draw unrelated streams from it
  std::uint32_t index = 0;   // the bot's index in its match
  std::uint64_t client = 0;  // the client's index in the run: seeds its network-condition links
  std::uint32_t server = 0;  // the server hosting its match (an index into SimThreadContext::rpcs)
};

class SimClient final : public DeliveryTarget {
 public:
  // `server`: where the token's address points (the address datagrams are sent to and accepted from).
  SimClient(boost::asio::io_context& context, SimThreadContext& shared, ConnectToken token,
            const boost::asio::ip::udp::endpoint& server, const SimClientIdentity& identity);
  ~SimClient();
  SimClient(const SimClient&) = delete;
  SimClient& operator=(const SimClient&) = delete;

  void start(double now);
  void tick(double now);
  // Says goodbye (if a connection may exist) and closes the socket; the stats are final after.
  void stop(double now);

  const SimClientStats& stats() const { return stats_; }
  SimClientStats take_stats() { return std::move(stats_); }
  // With network conditions: sends and receives what its links hold that is due (the thread's timer).
  void deliver_due(double now) override;

  // Churn (client-sim/churn_runner): a player who vanishes. Closes the socket without a goodbye, so the
  // server must time the connection out; not a failure. The client may be destroyed at once after any
  // of stop, abandon or a failure: its pending receive and shots hold only a weak reference to it.
  void abandon(double now);
  bool finished() const { return stopped_; }  // stopped, abandoned or failed: the stats are final
  // An event it has seen waits behind an older one not yet delivered (a lost frame's, to be resent).
  bool events_held() const { return stats_.events_highest_seen > stats_.events_delivered; }
  ClientState state() const { return session_.state(); }
  wire::ErrorCode code() const { return session_.code(); }

 private:
  void receive();  // waits for the socket to be readable, then drain()
  void drain();    // reads what the socket holds (a bounded batch), then waits again
  void on_datagram(std::span<const std::uint8_t> datagram, double now);
  void take_events();
  void take_acks();
  void on_new_snapshot();
  void check_state(double now);
  void fail(double now, std::string reason);
  void finish(double now);  // final counters; the socket closed
  // Every datagram to the server goes through send; every one from it through on_received. Without
  // network conditions they are transmit and on_datagram themselves; with them, the links hold each
  // datagram until it is due (client-sim/network_conditions.hpp).
  void send(std::span<const std::uint8_t> datagram, double now);
  void send_all(const std::vector<std::vector<std::uint8_t>>& datagrams, double now);
  void transmit(std::span<const std::uint8_t> datagram);
  void on_received(std::span<const std::uint8_t> datagram, double now);
  void register_due();
  void play(double now);
  void shoot(double now, const PlayerInput& input);
  void on_shot_reply(const RpcReply& reply, bool rewound);
  double now_seconds() const;

  SimThreadContext& shared_;
  RpcChannel& rpc_;  // the shots' channel to the server hosting this client's match
  boost::asio::ip::udp::endpoint server_;
  boost::asio::ip::udp::socket socket_;
  ClientSession session_;
  BotDriver bot_;
  MovementCheck movement_;
  SimClientStats stats_;
  std::vector<double>* raycast_ms_;
  std::vector<double>* raycast_rewound_ms_;

  bool started_ = false;
  bool stopped_ = false;
  double connected_at_ = 0;
  std::array<DatagramBuffer, kReceiveBatch> buffers_{};  // aligned: frames are read in place

  std::uint64_t last_snapshot_tick_ = 0;
  std::vector<Vec3> players_;  // feet of every player in the newest snapshot, reused
  int self_index_ = -1;

  // Contact events: sequences delivered, checked against the previous one.
  std::uint64_t last_event_ = 0;
  std::uint64_t events_contiguous_ = 0;   // 1..this all delivered
  std::set<std::uint64_t> events_ahead_;  // delivered beyond a hole (empty unless something is wrong)
  std::uint64_t last_gaps_ = 0;           // the receiver's counters at the previous datagram
  std::uint64_t last_overflow_ = 0;

  // Shots: a token bucket at the behaviour's fire rate, and which of them are rewound.
  double shot_tokens_ = 1;
  double last_refill_ = 0;
  std::uint64_t shots_ = 0;

  std::unique_ptr<ClientLinks> links_;  // null without network conditions
  double registered_due_ = std::numeric_limits<double>::infinity();
  // Completions queued on the context after this client is gone check this first (churn destroys clients).
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace shiftcast
