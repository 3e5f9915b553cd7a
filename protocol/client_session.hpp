// ClientSession: the client end of the UDP match channel, without sockets. It runs the handshake
// (ConnectionRequest until a challenge, ChallengeResponse until the first connected packet), then seals
// ClientFrames and keep-alives, and opens the server's packets: snapshots rebuilt against the baselines
// it holds, contact events delivered once and in order, the newest command the server received.
// Time is a parameter: `now` is any clock in seconds (unix time plus settings.unix_time_offset).
//
//   ClientSession s(token, settings);
//   for (auto& d : s.poll(now)) socket.send(d);                 // often: resends, keep-alives, timeouts
//   s.on_datagram(received, now);                               // every datagram from the server
//   if (s.state() == ClientState::kConnected) socket.send(s.send_command(input, view_tick, now));
//   for (const auto& e : s.take_events()) ...;   s.world_state();   s.take_command_acks();
//
// Everything inbound is verified; what is malformed or does not authenticate is counted by ErrorCode
// and ignored, never fatal. A snapshot is acknowledged to the server only once it was applied, so the
// server never encodes against a state this client does not hold.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "protocol/connect_token.hpp"
#include "protocol/connected_message.hpp"
#include "protocol/envelope.hpp"
#include "protocol/player_input.hpp"
#include "protocol/reliable_events.hpp"
#include "protocol/sequence_window.hpp"
#include "protocol/session_info.hpp"
#include "protocol/shiftcast_generated.h"
#include "protocol/snapshot_delta.hpp"
#include "protocol/wire_constants.hpp"

namespace shiftcast {

enum class ClientState : std::uint8_t {
  kSendingRequest,
  kSendingResponse,
  kConnected,
  kDenied,        // code(): the server's ConnectionDenied reason
  kDisconnected,  // code(): ClientDisconnected (we left) or the server's Disconnect reason
  kTimedOut,      // code(): Timeout, or TokenExpired when the token ran out during the handshake
};
const char* to_string(ClientState state);

struct ClientSessionSettings {
  double timeout = 5.0;  // connected: nothing authentic from the server for this long
  double handshake_timeout = kHandshakeTimeoutSeconds;  // from the first poll to the first connected packet
  double keepalive_interval = 0.1;         // connected: a keep-alive after this long without sending
  double unix_time_offset = 0;             // unix seconds = now + offset (token expiry)
  std::size_t max_buffered_events = 1024;  // contact events held ahead of a gap
};

struct ClientCounters {
  std::uint64_t datagrams_in = 0;
  std::uint64_t packets_accepted = 0;  // authentic, new, and well formed
  std::uint64_t datagrams_out = 0;
  std::uint64_t snapshots_received = 0;
  std::uint64_t snapshots_skipped = 0;  // baseline no longer (or never) held
  // An own state relative to a snapshot that was not applied (or held no own entity): not used.
  std::uint64_t own_states_unresolved = 0;
  std::uint64_t snapshots_incomplete = 0;  // applied, but the server had more changes than room
  ErrorCounters rejected{};                // by ErrorCode: why a datagram was ignored
};

// When the server first reported (ServerFrame.input_ack) a command: the round trip of player input.
struct CommandAck {
  std::uint64_t sequence = 0;
  double sent_at = 0;
  double acked_at = 0;
};

class ClientSession {
 public:
  ClientSession(ConnectToken token, const ClientSessionSettings& settings);

  // Handshake resends, keep-alives, and the timeouts (which change state() and return nothing).
  std::vector<std::vector<std::uint8_t>> poll(double now);
  // Ok, or why the datagram was ignored (also counted in counters().rejected).
  wire::ErrorCode on_datagram(std::span<const std::uint8_t> datagram, double now);
  // One command per client tick (sequence from 1): the ClientFrame with it and the two before it, and
  // the contact events acknowledgement. Empty unless connected.
  std::vector<std::uint8_t> send_command(const PlayerInput& input, double view_tick, double now);
  // The size of the last ClientFrame's commands bit stream (the commands and the events acknowledgement).
  std::size_t last_commands_bytes() const { return last_commands_bytes_; }
  // The goodbye once a connection may exist (empty before our challenge response); the session is over
  // after. Send it a few times: the server takes the first copy and refuses the rest as DuplicatePacket.
  std::vector<std::uint8_t> disconnect(double now);

  ClientState state() const { return state_; }
  wire::ErrorCode code() const { return code_; }
  std::uint32_t own_entity() const { return own_entity_; }
  // The newest snapshot held (by tick): its state, tick (0: none yet), and whether it was complete
  // (then it equals the server's world at that tick, quantized).
  const SnapshotState& world_state() const;
  std::uint64_t latest_snapshot_tick() const { return history_.empty() ? 0 : history_.rbegin()->first; }
  bool latest_snapshot_complete() const { return !history_.empty() && history_.rbegin()->second.complete; }
  std::vector<wire::ContactEvent> take_events() { return receiver_.take(); }
  std::vector<CommandAck> take_command_acks();
  std::uint64_t input_ack() const { return input_ack_; }
  // The own player's exact state after command input_ack() (the frame's own section) when the frame that
  // brought that acknowledgement carried it; nothing otherwise (an older server, or not spawned yet).
  const std::optional<wire::OwnState>& own_state() const { return own_state_; }
  // The match's rates and the server's timers, from the keep-alive that accepted us (SessionInfo);
  // nothing before, or from a server that did not send them.
  const std::optional<SessionTiming>& session_info() const { return session_info_; }
  std::uint64_t last_command_sequence() const { return command_sequence_; }
  const ClientCounters& counters() const { return counters_; }
  // The newest authentic packet's full sequence and its opened message (protocol/connected_message.hpp):
  // what a load tester reads to split bandwidth by kind without opening the packet twice.
  std::uint64_t last_packet_sequence() const { return last_sequence_; }
  const std::vector<std::uint8_t>& last_packet_message() const { return last_message_; }
  const ReceiverCounters& event_counters() const { return receiver_.counters(); }
  const ConnectToken& token() const { return token_; }

 private:
  struct HeldSnapshot {
    std::shared_ptr<const SnapshotState> state;
    // What this snapshot was decoded against (null, 0: the empty state), kept for as long as the
    // snapshot is: a later snapshot naming this one as its baseline is predicted from it
    // (protocol/entity_prediction.hpp). Its own predecessor is not kept.
    std::shared_ptr<const SnapshotState> predecessor;
    std::uint64_t predecessor_tick = 0;
    bool complete = true;
  };
  struct SentCommand {
    std::uint64_t sequence;
    double sent_at;
  };

  wire::ErrorCode reject(wire::ErrorCode code);
  wire::ErrorCode on_packet(std::span<const std::uint8_t> datagram, double now);
  // True when the frame's snapshot (if any) is now held, so the packet may be acknowledged.
  bool on_server_frame(const ServerFrameMessage& frame, double now, wire::ErrorCode& error);
  // Applies and holds the frame's snapshot; false when it is not applied (skipped, or `error` set).
  bool on_snapshot(std::uint64_t tick, const SnapshotSection& snapshot, wire::ErrorCode& error);
  void on_input_ack(std::uint64_t input_ack, const wire::OwnState* own, double now);
  std::vector<std::uint8_t> seal(std::span<const std::uint8_t> message, double now);

  ConnectToken token_;
  ClientSessionSettings settings_;
  ClientState state_ = ClientState::kSendingRequest;
  wire::ErrorCode code_ = wire::ErrorCode::Ok;
  std::vector<std::uint8_t> request_;
  std::vector<std::uint8_t> response_;
  bool started_ = false;
  double handshake_deadline_ = 0;
  double next_handshake_send_ = 0;
  double last_received_ = 0;
  double last_sent_ = 0;

  ReceiveWindow replay_;                           // every authentic packet: refuses replays
  ReceiveWindow applied_;                          // the packets whose content was used: what we acknowledge
  AckTracker sent_;                                // our packet sequences
  std::map<std::uint64_t, HeldSnapshot> history_;  // by tick, the newest kSnapshotHistory
  std::uint32_t own_entity_ = 0;
  ReliableEventReceiver receiver_;

  std::uint64_t command_sequence_ = 0;
  std::size_t last_commands_bytes_ = 0;
  std::deque<wire::InputCommand> recent_commands_;  // newest first, kCommandsPerFrame
  std::deque<SentCommand> unacked_commands_;        // ascending, bounded
  std::vector<CommandAck> command_acks_;
  std::uint64_t input_ack_ = 0;
  std::optional<wire::OwnState> own_state_;  // from the frame that brought input_ack_
  std::optional<SessionTiming> session_info_;
  ClientCounters counters_;
  std::uint64_t last_sequence_ = 0;
  std::vector<std::uint8_t> last_message_;
};

}  // namespace shiftcast
