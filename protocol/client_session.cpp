#include "protocol/client_session.hpp"

#include <algorithm>

#include "protocol/connected_message.hpp"
#include "protocol/contact_event_codec.hpp"
#include "protocol/entity_prediction.hpp"
#include "protocol/envelope.hpp"
#include "protocol/handshake.hpp"
#include "protocol/input_codec.hpp"
#include "protocol/own_state_codec.hpp"
#include "protocol/packet.hpp"

namespace shiftcast {
namespace {

// Send times kept for commands the server has not acknowledged yet; older ones are forgotten (their
// latency is beyond anything worth measuring, and the deque must not grow while the server is silent).
constexpr std::size_t kMaxUnackedCommands = 256;

bool handshaking(ClientState s) {
  return s == ClientState::kSendingRequest || s == ClientState::kSendingResponse;
}

}  // namespace

const char* to_string(ClientState state) {
  switch (state) {
    case ClientState::kSendingRequest:
      return "sending_request";
    case ClientState::kSendingResponse:
      return "sending_response";
    case ClientState::kConnected:
      return "connected";
    case ClientState::kDenied:
      return "denied";
    case ClientState::kDisconnected:
      return "disconnected";
    case ClientState::kTimedOut:
      return "timed_out";
  }
  return "unknown";
}

ClientSession::ClientSession(ConnectToken token, const ClientSessionSettings& settings)
    : token_(std::move(token)),
      settings_(settings),
      request_(build_connection_request(token_)),
      receiver_(settings.max_buffered_events) {}

const SnapshotState& ClientSession::world_state() const {
  static const SnapshotState kEmpty;
  return history_.empty() ? kEmpty : *history_.rbegin()->second.state;
}

std::vector<std::vector<std::uint8_t>> ClientSession::poll(double now) {
  std::vector<std::vector<std::uint8_t>> out;
  if (handshaking(state_)) {
    if (!started_) {
      started_ = true;
      handshake_deadline_ = now + settings_.handshake_timeout;
      next_handshake_send_ = now;
    }
    if (now + settings_.unix_time_offset >= static_cast<double>(token_.expires_at)) {
      state_ = ClientState::kTimedOut;
      code_ = wire::ErrorCode::TokenExpired;
      return out;
    }
    if (now >= handshake_deadline_) {
      state_ = ClientState::kTimedOut;
      code_ = wire::ErrorCode::Timeout;
      return out;
    }
    if (now >= next_handshake_send_) {
      out.push_back(state_ == ClientState::kSendingRequest ? request_ : response_);
      next_handshake_send_ = now + kHandshakeResendInterval;
      ++counters_.datagrams_out;
    }
    return out;
  }
  if (state_ != ClientState::kConnected) return out;
  if (now >= last_received_ + settings_.timeout) {
    state_ = ClientState::kTimedOut;
    code_ = wire::ErrorCode::Timeout;
    return out;
  }
  if (now >= last_sent_ + settings_.keepalive_interval) {
    std::vector<std::uint8_t> message;
    write_keep_alive(message, {latest_snapshot_tick(), receiver_.events_received(), std::nullopt});
    out.push_back(seal(message, now));
  }
  return out;
}

wire::ErrorCode ClientSession::reject(wire::ErrorCode code) {
  ++counters_.rejected[static_cast<std::size_t>(code)];
  return code;
}

wire::ErrorCode ClientSession::on_datagram(std::span<const std::uint8_t> datagram, double now) {
  ++counters_.datagrams_in;
  if (datagram.size() > kMaxDatagramBytes) return reject(wire::ErrorCode::TooLarge);
  switch (datagram_form(datagram)) {
    case DatagramForm::kConnectedPacket:
      if (state_ != ClientState::kSendingResponse && state_ != ClientState::kConnected) {
        return reject(wire::ErrorCode::UnexpectedMessage);
      }
      return on_packet(datagram, now);
    case DatagramForm::kInvalid:
      return reject(wire::ErrorCode::Malformed);
    case DatagramForm::kEnvelope:
      break;
  }
  const EnvelopeView view = verify_envelope(datagram, kMaxDatagramBytes);
  if (view.error != wire::ErrorCode::Ok) return reject(view.error);
  const wire::Envelope& envelope = *view.envelope;
  switch (envelope.message_type()) {
    case wire::Message::ConnectionChallenge: {
      // A late challenge for an earlier request changes nothing once we answer one.
      if (state_ == ClientState::kSendingResponse) return wire::ErrorCode::Ok;
      if (state_ != ClientState::kSendingRequest) return reject(wire::ErrorCode::UnexpectedMessage);
      auto response = build_challenge_response(token_, *envelope.message_as_ConnectionChallenge());
      if (!response) return reject(wire::ErrorCode::ChallengeInvalid);
      response_ = std::move(*response);
      state_ = ClientState::kSendingResponse;
      next_handshake_send_ = now;  // answer at the next poll, not a resend interval later
      return wire::ErrorCode::Ok;
    }
    case wire::Message::ConnectionDenied:
      // Unauthenticated by design (the server has no key to sign it with yet); only honoured while
      // nothing authentic has come, so a spoofed one cannot end a connection.
      if (!handshaking(state_)) return reject(wire::ErrorCode::UnexpectedMessage);
      state_ = ClientState::kDenied;
      code_ = envelope.message_as_ConnectionDenied()->code();
      return wire::ErrorCode::Ok;
    default:
      return reject(wire::ErrorCode::UnexpectedMessage);
  }
}

wire::ErrorCode ClientSession::on_packet(std::span<const std::uint8_t> datagram, double now) {
  OpenedPacket opened =
      open_packet(datagram, Direction::kServerToClient, token_.server_to_client,
                  {token_.match_id, token_.client_id}, {replay_.ack(), sent_.next_sequence() - 1});
  if (opened.error != wire::ErrorCode::Ok) return reject(opened.error);
  const ReadMessage read = read_connected_message(opened.message);
  if (read.error != wire::ErrorCode::Ok) return reject(read.error);
  const std::uint64_t sequence = opened.header.sequence;
  if (!replay_.accept(sequence)) return reject(wire::ErrorCode::DuplicatePacket);
  sent_.on_ack(opened.header.ack, opened.header.ack_bits);
  last_received_ = now;
  if (state_ == ClientState::kSendingResponse) {
    state_ = ClientState::kConnected;
    last_sent_ = now;  // the handshake just spoke for us; the first keep-alive is due an interval later
  }

  const ConnectedMessage& message = read.message;
  wire::ErrorCode error = wire::ErrorCode::Ok;
  bool use = true;
  switch (message.kind) {
    case MessageKind::kServerFrame:
      use = on_server_frame(message.server_frame, now, error);
      break;
    case MessageKind::kKeepAlive:
      if (auto info = read_session_info(message.keep_alive.session)) session_info_ = info;
      break;
    case MessageKind::kDisconnect:
      state_ = ClientState::kDisconnected;
      code_ = message.disconnect_code;
      break;
    default:
      use = false;
      error = wire::ErrorCode::UnexpectedMessage;
      break;
  }
  if (use) {
    applied_.accept(sequence);
    ++counters_.packets_accepted;
  }
  last_sequence_ = sequence;
  last_message_ = std::move(opened.message);  // `read` pointed into it; the bytes stay where they are
  return error == wire::ErrorCode::Ok ? error : reject(error);
}

bool ClientSession::on_server_frame(const ServerFrameMessage& frame, double now, wire::ErrorCode& error) {
  std::optional<OwnStateBits> own_bits;
  if (frame.own) {
    BitReader in(*frame.own);
    own_bits = read_own_state(in);
    if (!own_bits || in.finish() != BitReadError::kNone) {
      error = wire::ErrorCode::Malformed;  // nothing of the frame is used
      return false;
    }
  }
  std::optional<std::vector<wire::ContactEvent>> events;
  if (frame.events) {
    BitReader in(*frame.events);
    events = read_contact_events(in, frame.tick);
    if (!events || in.finish() != BitReadError::kNone) {
      error = wire::ErrorCode::Malformed;
      return false;
    }
  }
  const bool used = frame.snapshot ? on_snapshot(frame.tick, *frame.snapshot, error) : true;
  // A relative own position needs the frame's snapshot as held; without it the state waits for a frame.
  std::optional<wire::OwnState> own;
  if (own_bits) {
    const wire::QuantizedVec* reference = nullptr;
    const auto held = frame.snapshot ? history_.find(frame.tick) : history_.end();
    if (held != history_.end()) {
      if (const wire::EntityState* e = find_entity(*held->second.state, frame.snapshot->own_entity))
        reference = &e->position();
    }
    ResolvedOwnState resolved = resolve_own_state(*own_bits, reference);
    if (resolved.error != wire::ErrorCode::Ok) {
      error = resolved.error;  // the snapshot and events stand; this state is not used
    } else if (!resolved.state) {
      ++counters_.own_states_unresolved;
    }
    own = std::move(resolved.state);
  }
  on_input_ack(frame.input_ack, own ? &*own : nullptr, now);
  if (events) receiver_.receive(*events);
  return used;
}

bool ClientSession::on_snapshot(std::uint64_t tick, const SnapshotSection& snapshot, wire::ErrorCode& error) {
  ++counters_.snapshots_received;
  const std::uint64_t baseline_tick = snapshot.baseline_tick;
  if (history_.contains(tick)) return true;  // the same snapshot again: already held

  static const SnapshotState kEmpty;
  SnapshotBaseline base;  // the empty state when baseline_tick is 0
  std::shared_ptr<const SnapshotState> baseline;
  if (baseline_tick != 0) {
    const auto it = history_.find(baseline_tick);
    if (it == history_.end()) {
      // Not acknowledged either, so the server moves on to a baseline we hold.
      ++counters_.snapshots_skipped;
      return false;
    }
    const HeldSnapshot& held = it->second;
    baseline = held.state;
    base = {*held.state, baseline_tick, held.predecessor ? *held.predecessor : kEmpty, held.predecessor_tick};
  }
  AppliedDelta applied = apply_delta(base, tick, snapshot.block);
  if (applied.error != wire::ErrorCode::Ok) {
    error = applied.error;
    return false;
  }
  if (!snapshot.complete) ++counters_.snapshots_incomplete;
  if (tick > latest_snapshot_tick()) own_entity_ = snapshot.own_entity;
  history_[tick] = HeldSnapshot{std::make_shared<const SnapshotState>(std::move(applied.state)),
                                std::move(baseline), baseline_tick, snapshot.complete};
  while (history_.size() > kSnapshotHistory)
    history_.erase(history_.begin());
  return true;
}

void ClientSession::on_input_ack(std::uint64_t input_ack, const wire::OwnState* own, double now) {
  // Never beyond what we sent: a confused server must not make us report latencies for the future.
  const std::uint64_t ack = std::min(input_ack, command_sequence_);
  if (ack <= input_ack_) return;
  input_ack_ = ack;
  // The state belongs to the frame's acknowledgement; a clamped one is not the state after `ack`.
  own_state_ = own != nullptr && ack == input_ack ? std::optional<wire::OwnState>(*own) : std::nullopt;
  while (!unacked_commands_.empty() && unacked_commands_.front().sequence <= ack) {
    const SentCommand& c = unacked_commands_.front();
    command_acks_.push_back({c.sequence, c.sent_at, now});
    unacked_commands_.pop_front();
  }
}

std::vector<CommandAck> ClientSession::take_command_acks() {
  std::vector<CommandAck> out;
  out.swap(command_acks_);
  return out;
}

std::vector<std::uint8_t> ClientSession::seal(std::span<const std::uint8_t> message, double now) {
  PacketHeader header{token_.match_id, token_.client_id, sent_.take_sequence(), applied_.ack(),
                      applied_.ack_bits()};
  sent_.sent(header.sequence);
  last_sent_ = now;
  ++counters_.datagrams_out;
  return seal_packet(header, Direction::kClientToServer, token_.client_to_server, message);
}

std::vector<std::uint8_t> ClientSession::send_command(const PlayerInput& input, double view_tick,
                                                      double now) {
  if (state_ != ClientState::kConnected) return {};
  const std::uint64_t sequence = ++command_sequence_;
  // The server runs exactly what the wire carries: a client predicts with quantize_input(input).
  const PlayerInput q = quantize_input(input);
  recent_commands_.push_front(wire::InputCommand(sequence, quantize_view_tick(view_tick), q.forward, q.right,
                                                 q.yaw, q.pitch, q.buttons));
  while (recent_commands_.size() > static_cast<std::size_t>(kCommandsPerFrame))
    recent_commands_.pop_back();
  unacked_commands_.push_back({sequence, now});
  while (unacked_commands_.size() > kMaxUnackedCommands)
    unacked_commands_.pop_front();

  BitWriter packed;
  write_client_commands(packed,
                        {{recent_commands_.begin(), recent_commands_.end()}, receiver_.events_received()});
  last_commands_bytes_ = packed.byte_count();
  std::vector<std::uint8_t> message;
  write_client_frame(message, packed.bytes());
  return seal(message, now);
}

std::vector<std::uint8_t> ClientSession::disconnect(double now) {
  std::vector<std::uint8_t> out;
  // After our response the server may already hold a connection: tell it too.
  if (state_ == ClientState::kConnected || state_ == ClientState::kSendingResponse) {
    std::vector<std::uint8_t> message;
    write_disconnect(message, wire::ErrorCode::ClientDisconnected);
    out = seal(message, now);
  }
  if (handshaking(state_) || state_ == ClientState::kConnected) {
    state_ = ClientState::kDisconnected;
    code_ = wire::ErrorCode::ClientDisconnected;
  }
  return out;
}

}  // namespace shiftcast
