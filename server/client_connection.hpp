// ClientConnection: the server's state for one connected player, owned by its match's worker thread (no
// locks, no sockets). The match hands it every connected packet from this client's address, takes the tick's
// commands from it (every command received, in order, exactly once, as the command credit allows), queues the
// tick's contacts into it, and asks it for one ServerFrame datagram per snapshot: the delta against the
// newest snapshot the client acknowledged, the reliable events that fit, and the newest command run.
// Every datagram it builds is at most kMaxDatagramBytes.
//
//   ClientConnection c({match, a.client_id, a.client_to_server, a.server_to_client, from, entity},
//                      settings, now);                              // after open_challenge_response
//   send(c.build_keepalive(tick, now));                             // tells the client it is connected
//   auto e = c.on_packet(datagram, from, now);                      // count e when not Ok
//   c.take_commands(commands); sim.set_inputs(entity, commands);    // once per tick
//   c.queue_contact(record);                                        // the tick's contacts for it
//   send(c.build_frame(tick, world_states, focus, now));            // world ascending by id
//   if (c.timed_out(now) || c.closed()) ... drop it (after build_disconnect when it did not leave)
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collision/vec3.hpp"
#include "protocol/bit_stream.hpp"
#include "protocol/client_session.hpp"
#include "protocol/crypto.hpp"
#include "protocol/reliable_events.hpp"
#include "protocol/sequence_window.hpp"
#include "protocol/session_info.hpp"
#include "protocol/shiftcast_generated.h"
#include "protocol/snapshot_delta.hpp"
#include "server/contact_feed.hpp"
#include "world/match/entity.hpp"
#include "world/match/player_input.hpp"

namespace shiftcast {

// The command credit (anti speed-hack): one command per server tick, saved up to this many, so a client
// whose commands were held up for up to 3 ticks (scheduling, network jitter) is caught up at once, and a
// client sending faster than the tick gains nothing (its commands wait).
inline constexpr std::size_t kMaxCommandsPerTick = 4;
// Commands waiting beyond this (a quarter second at 64 Hz) lose the oldest, counted: a client that runs
// ahead must not pile up latency on the server.
inline constexpr std::size_t kMaxQueuedCommands = 16;
// Events may take at most this share of a frame when the snapshot needs the room too, so neither can
// starve the other.
inline constexpr double kEventShareOfFrame = 0.5;
// How long a client whose link lost one of our packets is treated as lossy (ClientConnection::recent_loss):
// its input acknowledgements then go every tick whatever input_ack_delay_ticks says. At 5% loss and 32
// frames a second a loss comes every 0.6 s, so such a link stays in that mode; a clean one never enters it.
inline constexpr double kRecentLossSeconds = 2.0;

struct ConnectionParams {
  std::uint32_t match_id = 0;
  std::uint64_t client_id = 0;
  Key client_to_server{};  // from AcceptedChallenge
  Key server_to_client{};
  std::string peer_address;  // "ip:port" the challenge response came from
  EntityId entity = kNoEntity;
};

struct ConnectionSettings {
  double timeout = 5.0;                   // nothing authentic from the client for this long
  double keepalive_interval = 0.1;        // keepalive_due() after this long without sending
  std::size_t max_pending_events = 4096;  // unacknowledged contact events before SlowConsumer
  int event_sends = kDefaultEventSends;   // frames an event rides back to back (ReliableEventSender)
  // A command that ran in a tick with no snapshot frame is acknowledged in a frame of its own unless a
  // snapshot frame goes within this many ticks; 0 acknowledges every tick (twice the datagrams down at
  // 64 Hz ticks and 32 Hz snapshots, for an input-to-ack p99 of about 1 tick instead of 2). A client
  // whose link recently lost a frame (recent_loss) is acknowledged every tick whatever this says.
  int input_ack_delay_ticks = 1;
};

struct ConnectionCounters {
  std::uint64_t packets_in = 0;  // accepted
  std::uint64_t packets_out = 0;
  std::uint64_t bytes_out = 0;
  std::uint64_t commands_received = 0;
  std::uint64_t commands_refused = 0;  // input_valid failed (BadArgument)
  std::uint64_t commands_dropped = 0;  // the client ran more than kMaxQueuedCommands ahead
  std::uint64_t commands_run = 0;      // handed to the match by take_commands
  std::uint64_t frames_missed = 0;     // of our packets, found missing behind a newer acknowledged one
  std::uint64_t command_waits = 0;     // commands left waiting for credit, summed over ticks
  std::uint64_t starved_ticks = 0;     // take_commands calls that had no command to run
  std::uint64_t commands_missing = 0;  // sequences that never arrived (every redundant copy lost)
  std::uint64_t snapshots_sent = 0;
  std::uint64_t snapshots_incomplete = 0;
  std::uint64_t events_sent = 0;  // counting resends
  ErrorCounters rejected{};       // by ErrorCode: the packets refused
};

class ClientConnection {
 public:
  ClientConnection(ConnectionParams params, const ConnectionSettings& settings, double now);

  // A connected packet (protocol/packet.hpp) from `from_address`. Ok, or why it was refused (also
  // counted): UnknownConnection (another address, or closed), Malformed (the header or the message),
  // DecryptFailed, DuplicatePacket, UnexpectedMessage, BadArgument (a command that fails input_valid:
  // the packet's other commands still count).
  wire::ErrorCode on_packet(std::span<const std::uint8_t> datagram, std::string_view from_address,
                            double now);

  // Once per server tick: the credit grows by one (at most kMaxCommandsPerTick), and the queued
  // commands it pays for are appended to `out` in sequence order (the tick runs each once). Returns what
  // this call ran and left waiting, and what was dropped since the previous call.
  struct CommandTake {
    std::size_t run = 0;
    std::size_t waiting = 0;
    std::uint64_t dropped = 0;
  };
  CommandTake take_commands(std::vector<PlayerInput>& out);
  double view_tick() const { return view_tick_; }         // of the newest command received
  std::uint64_t input_ack() const { return input_ack_; }  // the newest command sequence received
  // The newest command sequence run (handed out by take_commands): what ServerFrame.input_ack reports,
  // so a client compares the snapshot with its prediction after exactly that command.
  std::uint64_t run_ack() const { return run_ack_; }

  // Into the reliable stream; too many unacknowledged ones close the connection with SlowConsumer.
  void queue_contact(const ContactRecord& record);

  // `world` ascending by id; `tick` >= 1 and increasing (a repeated tick sends no snapshot, since two
  // different deltas under one tick would confuse the client's baselines). Empty once closed.
  // `own`: the player's exact state after run_ack() (the frame's own section); null before it spawned.
  std::vector<std::uint8_t> build_frame(std::uint64_t tick, std::span<const wire::EntityState> world,
                                        Vec3 focus, double now, const wire::OwnState* own = nullptr);
  // The same, with the world quantized once per tick and shared by every client's frame: a client that
  // gets every change holds exactly `world`, kept by reference rather than copied per client.
  std::vector<std::uint8_t> build_frame_shared(std::uint64_t tick,
                                               const std::shared_ptr<const SnapshotState>& world, Vec3 focus,
                                               double now, const wire::OwnState* own = nullptr);
  // `session`: the match's rates and timers (SessionInfo), for the keep-alive that accepts the connection.
  std::vector<std::uint8_t> build_keepalive(std::uint64_t tick, double now,
                                            const SessionTiming* session = nullptr);
  // Between snapshots: a ServerFrame with only `tick` and input_ack (no snapshot, no events), due when a
  // command ran since the last frame. Without it a command waits for the next snapshot tick to be
  // acknowledged, and one lost frame costs a whole snapshot period more (issue 13: at 5% loss the
  // input-to-ack p99 missed round trip + 3 ticks by that much).
  bool input_ack_due() const { return !closed_ && run_ack_ > input_ack_sent_; }
  // The client's acknowledgements showed one of our packets missing within kRecentLossSeconds: its link
  // loses frames, and a lost frame costs it a whole snapshot period unless acknowledgements go every tick.
  bool recent_loss(double now) const {
    return newest_missing_ != 0 && now - loss_seen_at_ < kRecentLossSeconds;
  }
  // With `own` (bit-packed, about 23 bytes) every acknowledgement lets the client correct its prediction
  // exactly.
  std::vector<std::uint8_t> build_input_ack(std::uint64_t tick, double now,
                                            const wire::OwnState* own = nullptr);
  // The goodbye; closes the connection with `code` if it was still open. Send it a few times: the client
  // takes the first copy that arrives and refuses the others as DuplicatePacket.
  std::vector<std::uint8_t> build_disconnect(wire::ErrorCode code, double now);
  bool keepalive_due(double now) const {
    return !closed_ && now >= last_sent_ + settings_.keepalive_interval;
  }

  // True from exactly `timeout` after the last authentic packet; closes with Timeout.
  bool timed_out(double now);
  bool closed() const { return closed_; }
  wire::ErrorCode close_reason() const { return close_reason_; }
  // The sequence of the client's goodbye (Disconnect) that closed the connection; 0 when it closed
  // otherwise. The address book remembers it for a grace period (ClientAddressBook::depart).
  std::uint64_t goodbye_sequence() const { return goodbye_sequence_; }

  std::uint64_t client_id() const { return params_.client_id; }
  EntityId entity() const { return params_.entity; }
  const std::string& peer_address() const { return params_.peer_address; }
  std::size_t events_pending() const { return sender_.pending(); }
  // Of those, the ones the next frame may carry (not in flight: ReliableEventSender::due). Builds a list:
  // for tests and diagnostics, not for every tick.
  std::size_t events_due() const {
    std::vector<wire::ContactEvent> due;
    sender_.due(newest_acked_, due);
    return due.size();
  }
  std::uint64_t acked_snapshot_tick() const { return baseline_tick_; }
  const ConnectionCounters& counters() const { return counters_; }

 private:
  struct SentSnapshot {
    std::uint64_t sequence;
    std::uint64_t tick;
    // What the client holds once it applied this packet's delta; often the tick's shared world.
    std::shared_ptr<const SnapshotState> state;
    // What that delta was encoded against (null and 0: the empty state): the A of the snapshot's
    // prediction once it becomes the baseline (protocol/entity_prediction.hpp).
    std::shared_ptr<const SnapshotState> predecessor;
    std::uint64_t predecessor_tick = 0;
  };
  struct QueuedCommand {
    std::uint64_t sequence;
    PlayerInput input;
  };

  wire::ErrorCode refuse(wire::ErrorCode code);
  void close(wire::ErrorCode reason);
  void on_acked(std::uint64_t sequence);
  wire::ErrorCode on_client_frame(std::span<const std::uint8_t> commands);
  // message_ sealed into the next packet.
  std::vector<std::uint8_t> seal(double now);
  // The frame's own-state section for `own` (none for null), in own_writer_.
  // `reference`: the own entity's position in the frame's snapshot as the client will hold it, or null.
  std::optional<std::span<const std::uint8_t>> pack_own(const wire::OwnState* own,
                                                        const wire::QuantizedVec* reference);

  ConnectionParams params_;
  ConnectionSettings settings_;
  double last_received_;
  double last_sent_;
  bool closed_ = false;
  wire::ErrorCode close_reason_ = wire::ErrorCode::Ok;

  ReceiveWindow window_;
  std::uint64_t goodbye_sequence_ = 0;
  AckTracker tracker_;
  std::uint64_t newest_acked_ = 0;           // the newest of our packets the client acknowledged
  std::deque<SentSnapshot> sent_snapshots_;  // ascending sequence, unacknowledged, newer than the baseline
  std::uint64_t baseline_tick_ = 0;          // the newest snapshot the client acknowledged (0: none)
  std::shared_ptr<const SnapshotState> baseline_;  // null until the first acknowledgement
  // What the baseline was itself encoded against (null, 0: the empty state): predicts from it.
  std::shared_ptr<const SnapshotState> baseline_predecessor_;
  std::uint64_t baseline_predecessor_tick_ = 0;
  SnapshotState predicted_;                     // scratch for build_frame: the predicted baseline
  SnapshotDelta delta_;                         // scratch for build_frame, its capacity reused
  BitWriter block_writer_;                      // scratch for build_frame: the entity block
  BitWriter own_writer_;                        // scratch: the own state, bit-packed
  BitWriter events_writer_;                     // scratch: the contact events, bit-packed
  std::vector<wire::ContactEvent> due_events_;  // scratch: the events not in flight
  std::vector<std::uint8_t> message_;           // scratch: the message a packet seals
  std::uint64_t last_snapshot_tick_ = 0;

  std::deque<QueuedCommand> commands_;
  std::uint64_t input_ack_ = 0;
  std::uint64_t run_ack_ = 0;
  std::size_t credit_ = 0;
  std::uint64_t dropped_reported_ = 0;
  std::uint64_t input_ack_sent_ = 0;  // the input_ack of the last frame sent
  std::uint64_t newest_missing_ = 0;  // the newest of our packets seen missing (AckTracker)
  double loss_seen_at_ = 0;           // when it was seen
  double view_tick_ = 0;
  ReliableEventSender sender_;
  ConnectionCounters counters_;
};

}  // namespace shiftcast
