#include "server/client_connection.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "protocol/connected_message.hpp"
#include "protocol/contact_event_codec.hpp"
#include "protocol/entity_block.hpp"
#include "protocol/entity_prediction.hpp"
#include "protocol/input_codec.hpp"
#include "protocol/own_state_codec.hpp"
#include "protocol/packet.hpp"

namespace shiftcast {
namespace {

// What a ServerFrame's block and events may fill: the datagram less the packet's header and tag, the
// frame's own fields, and the own state at its largest.
constexpr std::size_t kFramePayloadBytes =
    kMaxDatagramBytes - kPacketOverheadBytes - kServerFrameOverheadBytes - kMaxOwnStateBytes;

}  // namespace

ClientConnection::ClientConnection(ConnectionParams params, const ConnectionSettings& settings, double now)
    : params_(std::move(params)),
      settings_(settings),
      last_received_(now),
      last_sent_(now),
      sender_(settings.max_pending_events, settings.event_sends) {}

wire::ErrorCode ClientConnection::refuse(wire::ErrorCode code) {
  ++counters_.rejected[static_cast<std::size_t>(code)];
  return code;
}

void ClientConnection::close(wire::ErrorCode reason) {
  if (closed_) return;
  closed_ = true;
  close_reason_ = reason;
}

wire::ErrorCode ClientConnection::on_packet(std::span<const std::uint8_t> datagram,
                                            std::string_view from_address, double now) {
  // Closed by the server (timeout, slow consumer, ...): nothing of the client's is looked at any more.
  if ((closed_ && goodbye_sequence_ == 0) || from_address != params_.peer_address) {
    return refuse(wire::ErrorCode::UnknownConnection);
  }
  const OpenedPacket opened =
      open_packet(datagram, Direction::kClientToServer, params_.client_to_server,
                  {params_.match_id, params_.client_id}, {window_.ack(), tracker_.next_sequence() - 1});
  if (opened.error != wire::ErrorCode::Ok) return refuse(opened.error);
  // Authenticated is not the same as well formed: the peer holds the key and may still be hostile.
  const ReadMessage read = read_connected_message(opened.message);
  if (read.error != wire::ErrorCode::Ok) return refuse(read.error);
  // Only now, authenticated, may the sequence move the window. Closed by the client's goodbye, it still
  // runs, so the goodbye's copies (one sequence, kGoodbyeCopies times) are DuplicatePacket, as documented.
  if (!window_.accept(opened.header.sequence)) return refuse(wire::ErrorCode::DuplicatePacket);
  if (closed_) return refuse(wire::ErrorCode::UnknownConnection);
  last_received_ = now;
  ++counters_.packets_in;
  for (const std::uint64_t sequence : tracker_.on_ack(opened.header.ack, opened.header.ack_bits)) {
    newest_acked_ = std::max(newest_acked_, sequence);
    on_acked(sequence);
  }
  // A packet of ours older than one the client acknowledged and not acknowledged itself: lost (or
  // reordered, which the link's next frames pay for the same way).
  if (const std::uint64_t missing = tracker_.newest_missing_below(newest_acked_); missing > newest_missing_) {
    newest_missing_ = missing;
    loss_seen_at_ = now;
    ++counters_.frames_missed;
  }

  const ConnectedMessage& message = read.message;
  switch (message.kind) {
    case MessageKind::kClientFrame: {
      const wire::ErrorCode e = on_client_frame(message.commands);
      return e == wire::ErrorCode::Ok ? e : refuse(e);
    }
    case MessageKind::kKeepAlive: {
      // A lying acknowledgement releases nothing it should not (as in a ClientFrame).
      const std::uint64_t received = message.keep_alive.events_received;
      if (received != 0 && sender_.on_ack(received) != wire::ErrorCode::Ok)
        return refuse(wire::ErrorCode::BadArgument);
      return wire::ErrorCode::Ok;
    }
    case MessageKind::kDisconnect:
      close(wire::ErrorCode::ClientDisconnected);
      goodbye_sequence_ = opened.header.sequence;
      return wire::ErrorCode::Ok;
    default:
      return refuse(wire::ErrorCode::UnexpectedMessage);
  }
}

void ClientConnection::on_acked(std::uint64_t sequence) {
  const auto it = std::lower_bound(sent_snapshots_.begin(), sent_snapshots_.end(), sequence,
                                   [](const SentSnapshot& s, std::uint64_t q) { return s.sequence < q; });
  if (it == sent_snapshots_.end() || it->sequence != sequence || it->tick <= baseline_tick_) return;
  baseline_tick_ = it->tick;
  baseline_ = std::move(it->state);
  baseline_predecessor_ = std::move(it->predecessor);
  baseline_predecessor_tick_ = it->predecessor_tick;
  // Anything not newer than the baseline can never become one.
  std::erase_if(sent_snapshots_, [&](const SentSnapshot& s) { return s.tick <= baseline_tick_; });
}

wire::ErrorCode ClientConnection::on_client_frame(std::span<const std::uint8_t> commands) {
  wire::ErrorCode result = wire::ErrorCode::Ok;
  if (commands.empty()) return result;  // nothing to run, nothing acknowledged
  BitReader in(commands);
  std::optional<ClientCommands> decoded = read_client_commands(in);
  if (!decoded || in.finish() != BitReadError::kNone) return wire::ErrorCode::Malformed;  // nothing used
  // Newest first on the wire, consecutive sequences: apply oldest first.
  for (auto it = decoded->commands.rbegin(); it != decoded->commands.rend(); ++it) {
    const wire::InputCommand* c = &*it;
    if (c->sequence() <= input_ack_) continue;  // a redundant copy of one we have
    counters_.commands_missing += c->sequence() - input_ack_ - 1;
    input_ack_ = c->sequence();
    const PlayerInput input{c->forward(), c->right(), c->yaw(), c->pitch(), c->buttons()};
    if (!input_valid(input) || !std::isfinite(c->view_tick())) {
      ++counters_.commands_refused;
      result = wire::ErrorCode::BadArgument;
      continue;
    }
    ++counters_.commands_received;
    view_tick_ = c->view_tick();
    commands_.push_back({c->sequence(), input});
    if (commands_.size() > kMaxQueuedCommands) {
      commands_.pop_front();
      ++counters_.commands_dropped;
    }
  }
  // A lying acknowledgement releases nothing it should not; the commands above still count.
  if (sender_.on_ack(decoded->events_received) != wire::ErrorCode::Ok) result = wire::ErrorCode::BadArgument;
  return result;
}

ClientConnection::CommandTake ClientConnection::take_commands(std::vector<PlayerInput>& out) {
  credit_ = std::min(credit_ + 1, kMaxCommandsPerTick);
  CommandTake take;
  take.run = std::min(credit_, commands_.size());
  for (std::size_t k = 0; k < take.run; ++k) {
    out.push_back(commands_.front().input);
    run_ack_ = commands_.front().sequence;
    commands_.pop_front();
  }
  credit_ -= take.run;
  take.waiting = commands_.size();
  take.dropped = counters_.commands_dropped - dropped_reported_;
  dropped_reported_ = counters_.commands_dropped;
  counters_.commands_run += take.run;
  counters_.command_waits += take.waiting;
  if (take.run == 0) ++counters_.starved_ticks;
  return take;
}

void ClientConnection::queue_contact(const ContactRecord& record) {
  if (closed_) return;
  if (sender_.push(to_wire(record, sender_.next_sequence())) == wire::ErrorCode::SlowConsumer) {
    close(wire::ErrorCode::SlowConsumer);
  }
}

std::vector<std::uint8_t> ClientConnection::seal(double now) {
  const PacketHeader header{params_.match_id, params_.client_id, tracker_.take_sequence(), window_.ack(),
                            window_.ack_bits()};
  tracker_.sent(header.sequence);
  std::vector<std::uint8_t> datagram =
      seal_packet(header, Direction::kServerToClient, params_.server_to_client, message_);
  last_sent_ = now;
  ++counters_.packets_out;
  counters_.bytes_out += datagram.size();
  return datagram;
}

std::optional<std::span<const std::uint8_t>> ClientConnection::pack_own(const wire::OwnState* own,
                                                                        const wire::QuantizedVec* reference) {
  if (own == nullptr) return std::nullopt;
  own_writer_.clear();
  write_own_state(own_writer_, *own, reference);
  return std::span<const std::uint8_t>(own_writer_.bytes());
}

std::vector<std::uint8_t> ClientConnection::build_frame(std::uint64_t tick,
                                                        std::span<const wire::EntityState> world, Vec3 focus,
                                                        double now, const wire::OwnState* own) {
  return build_frame_shared(tick, std::make_shared<const SnapshotState>(world.begin(), world.end()), focus,
                            now, own);
}

std::vector<std::uint8_t> ClientConnection::build_frame_shared(
    std::uint64_t tick, const std::shared_ptr<const SnapshotState>& world, Vec3 focus, double now,
    const wire::OwnState* own) {
  if (closed_) return {};
  const bool with_snapshot = tick > last_snapshot_tick_;
  // Events first get up to their share (whole events, bit-packed), the snapshot what is left, then
  // events any room the snapshot left over.
  // The events not in flight (ReliableEventSender::due): never sent, or their last packet is settled.
  sender_.due(newest_acked_, due_events_);
  std::size_t event_reserve = kFramePayloadBytes;
  if (with_snapshot) {
    events_writer_.clear();
    const auto share_bits = static_cast<std::size_t>(kFramePayloadBytes * kEventShareOfFrame) * 8;
    write_contact_events(events_writer_, due_events_, tick, share_bits);
    event_reserve = due_events_.empty() ? 0 : events_writer_.byte_count();
  }

  ServerFrameMessage frame;
  frame.tick = tick;
  frame.input_ack = run_ack_;
  std::size_t snapshot_bytes = 0;
  SnapshotDelta& delta = delta_;
  // Only a baseline the client still holds (it keeps kSnapshotHistory ticks); else start from empty.
  const bool use_baseline = baseline_tick_ != 0 && tick - baseline_tick_ < kSnapshotHistory;
  if (with_snapshot) {
    static const SnapshotState kEmpty;
    const DeltaPriority priority{params_.entity, quantize_position(wire::Vec3f(focus.x, focus.y, focus.z))};
    SnapshotBaseline base;  // the empty state unless the baseline is used
    if (use_baseline) {
      base = {*baseline_, baseline_tick_, baseline_predecessor_ ? *baseline_predecessor_ : kEmpty,
              baseline_predecessor_tick_};
    }
    // Encoded against the baseline's prediction at this tick: what runs on unchanged costs nothing.
    const std::span<const wire::EntityState> predicted = predict_baseline(base, tick, predicted_);
    encode_delta_into(predicted, *world, priority, (kFramePayloadBytes - event_reserve) * 8, delta);
    block_writer_.clear();
    write_entity_block(block_writer_, predicted, delta.changed, delta.removed);
    snapshot_bytes = block_writer_.byte_count();
    frame.snapshot = SnapshotSection{use_baseline ? baseline_tick_ : 0, params_.entity, delta.complete,
                                     block_writer_.bytes()};
    ++counters_.snapshots_sent;
    if (!delta.complete) ++counters_.snapshots_incomplete;
  }
  std::size_t events_written = 0;
  if (!due_events_.empty()) {
    events_writer_.clear();
    events_written =
        write_contact_events(events_writer_, due_events_, tick, (kFramePayloadBytes - snapshot_bytes) * 8);
    counters_.events_sent += events_written;
    if (events_written != 0) frame.events = std::span<const std::uint8_t>(events_writer_.bytes());
  }
  // With a snapshot, the own position goes relative to the own entity the client holds once it applied
  // it (the first entry of the priority order, so it is there unless the player has no entity yet).
  const wire::QuantizedVec* own_reference = nullptr;
  if (with_snapshot) {
    const SnapshotState& held = delta.complete ? *world : delta.result;
    if (const wire::EntityState* e = find_entity(held, params_.entity)) own_reference = &e->position();
  }
  frame.own = pack_own(own, own_reference);
  input_ack_sent_ = run_ack_;
  message_.clear();
  write_server_frame(message_, frame);

  const std::uint64_t sequence = tracker_.next_sequence();
  sender_.sent(std::span(due_events_).first(events_written), sequence);
  std::vector<std::uint8_t> datagram = seal(now);
  assert(datagram.size() <= kMaxDatagramBytes);
  if (with_snapshot) {
    last_snapshot_tick_ = tick;
    // A complete delta leaves the client holding the world itself: share it, copy nothing.
    sent_snapshots_.push_back(
        {sequence, tick,
         delta.complete ? world : std::make_shared<const SnapshotState>(std::move(delta.result)),
         use_baseline ? baseline_ : nullptr, use_baseline ? baseline_tick_ : 0});
    // The ack window cannot report anything older; keep no more than it can.
    while (sent_snapshots_.size() > kSnapshotHistory)
      sent_snapshots_.pop_front();
  }
  return datagram;
}

std::vector<std::uint8_t> ClientConnection::build_keepalive(std::uint64_t tick, double now,
                                                            const SessionTiming* session) {
  if (closed_) return {};
  KeepAliveMessage keep_alive{tick, 0, std::nullopt};
  if (session != nullptr) keep_alive.session = to_session_info(*session);
  message_.clear();
  write_keep_alive(message_, keep_alive);
  return seal(now);
}

std::vector<std::uint8_t> ClientConnection::build_input_ack(std::uint64_t tick, double now,
                                                            const wire::OwnState* own) {
  if (closed_) return {};
  ServerFrameMessage frame;
  frame.tick = tick;
  frame.input_ack = run_ack_;
  frame.own = pack_own(own, nullptr);
  input_ack_sent_ = run_ack_;
  message_.clear();
  write_server_frame(message_, frame);
  return seal(now);
}

std::vector<std::uint8_t> ClientConnection::build_disconnect(wire::ErrorCode code, double now) {
  message_.clear();
  write_disconnect(message_, code);
  std::vector<std::uint8_t> datagram = seal(now);
  close(code);
  return datagram;
}

bool ClientConnection::timed_out(double now) {
  if (now < last_received_ + settings_.timeout) return false;
  close(wire::ErrorCode::Timeout);
  return true;
}

}  // namespace shiftcast
