#include "client-sim/sim_client.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cmath>
#include <utility>

#include "client-sim/own_state.hpp"
#include "protocol/connected_message.hpp"
#include "protocol/contact_event_codec.hpp"
#include "protocol/input_codec.hpp"
#include "protocol/packet.hpp"
#include "protocol/snapshot_delta.hpp"

namespace shiftcast {

namespace asio = boost::asio;

namespace {

constexpr std::uint8_t kPlayerKind = 0;     // EntityState.kind
constexpr std::uint32_t kPlayersLayer = 1;  // QueryFilter.mask bit of players
constexpr float kShotRange = 8192;          // a hitscan weapon's reach, Quake units

// Client k of the run predicts when ceil((k + 1) f) > ceil(k f): the clients that do are spread evenly over
// the run (so over its matches), ceil(n f) of n, and client 0 whenever f > 0.
bool in_prediction_sample(std::uint64_t client, double fraction) {
  return std::ceil(double(client + 1) * fraction) > std::ceil(double(client) * fraction);
}

bool failed_state(ClientState s) {
  return s == ClientState::kDenied || s == ClientState::kTimedOut || s == ClientState::kDisconnected;
}

std::string describe(ClientState state, wire::ErrorCode code) {
  return std::string(to_string(state)) + " (" + to_string(code) + ")";
}

ClientSessionSettings session_settings(const SimThreadContext& shared) {
  ClientSessionSettings s;
  s.handshake_timeout = shared.options->connect_timeout;
  s.unix_time_offset = shared.unix_time_offset;
  return s;
}

// The prediction checked against, and corrected from, the server's exact state after the session's
// input_ack (ServerFrame.own; the caller made sure the session holds one).
std::optional<float> correct_from_own_state(MovementCheck& movement, const ClientSession& session) {
  const ExactOwnState own = exact_own_state(*session.own_state());
  return movement.on_authoritative(session.input_ack(), own.feet, own.motor);
}

}  // namespace

SimClient::SimClient(asio::io_context& context, SimThreadContext& shared, ConnectToken token,
                     const asio::ip::udp::endpoint& server, const SimClientIdentity& identity)
    : shared_(shared),
      rpc_(*shared.rpcs.at(identity.server)),
      server_(server),
      socket_(context),
      session_(std::move(token), session_settings(shared)),
      bot_(shared.bot, identity.seed, identity.index),
      movement_(shared.motor, *shared.world, 1.0f / float(shared.options->tick_rate)),
      raycast_ms_(&stats_.rpc_ms["raycast"]),
      raycast_rewound_ms_(&stats_.rpc_ms["raycast_rewound"]) {
  // Samples are kept for the whole load: reserve them so the hot path never regrows a vector.
  const SimOptions& o = *shared.options;
  // A churn session lives at most its lifetime (or until a match ends): no longer than that.
  const double seconds = (o.churn.enabled ? std::min(o.duration, o.churn.lifetime_max_s) : o.duration) + 1;
  stats_.input_ack_ms.reserve(std::size_t(seconds * o.tick_rate));
  stats_.predicting = in_prediction_sample(identity.client, o.predict_fraction);
  movement_.set_predicting(stats_.predicting);
  if (stats_.predicting) stats_.movement_error.reserve(std::size_t(seconds * o.snapshot_rate));
  const double shots = seconds * std::max(0.0f, o.behaviour.fire_per_second) + 1;
  raycast_ms_->reserve(std::size_t(shots * (1 - o.behaviour.rewound_fraction)) + 1);
  raycast_rewound_ms_->reserve(std::size_t(shots * o.behaviour.rewound_fraction) + 1);
  players_.reserve(64);
  if (o.network.active()) links_ = std::make_unique<ClientLinks>(o.network, o.seed, identity.client);
}

SimClient::~SimClient() {
  // Churn destroys clients while the thread runs: the delivery timer must not wake this one later.
  if (shared_.delivery != nullptr) shared_.delivery->forget(this);
}

double SimClient::now_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - shared_.epoch).count();
}

void SimClient::start(double now) {
  boost::system::error_code ec;
  socket_.open(asio::ip::udp::v4(), ec);
  if (!ec) socket_.connect(server_, ec);
  if (!ec) socket_.non_blocking(true, ec);
  if (ec) {
    fail(now, "socket: " + ec.message());
    return;
  }
  started_ = true;
  receive();
}

void SimClient::receive() {
  // A readiness wait, then plain non-blocking reads: an async_receive would first try a read of its own
  // (Asio's speculative read, which fails when the socket was just drained), one system call per datagram
  // more than needed.
  socket_.async_wait(asio::ip::udp::socket::wait_read,
                     [this, alive = std::weak_ptr<char>(alive_)](const boost::system::error_code& ec) {
                       if (alive.expired() || stopped_ || ec == asio::error::operation_aborted) return;
                       drain();
                     });
}

void SimClient::drain() {
  const double now = now_seconds();
  // One recvmmsg takes what the socket holds, up to a batch, in one system call: fewer than a batch means
  // the socket is empty now (a plain read loop would need a second, failing read to learn that). An error
  // (would block after a spurious wakeup; an ICMP port unreachable from a server that is gone, left to
  // the session's timeout) is consumed by the call: the socket keeps listening.
  std::array<iovec, kReceiveBatch> parts{};
  std::array<mmsghdr, kReceiveBatch> messages{};
  for (std::size_t i = 0; i < kReceiveBatch; ++i) {
    parts[i] = {buffers_[i].data(), buffers_[i].size()};
    messages[i].msg_hdr.msg_iov = &parts[i];
    messages[i].msg_hdr.msg_iovlen = 1;
  }
  const int n = ::recvmmsg(socket_.native_handle(), messages.data(), static_cast<unsigned>(kReceiveBatch),
                           MSG_DONTWAIT, nullptr);
  for (int i = 0; i < n && !stopped_; ++i)
    on_received({buffers_[std::size_t(i)].data(), messages[std::size_t(i)].msg_len}, now);
  if (stopped_) return;
  if (n < int(kReceiveBatch)) {
    receive();
    return;
  }
  // A full batch: more may be waiting, and the readiness was consumed (edge-triggered), so read again
  // after the other clients' work queued meanwhile rather than wait for the next datagram.
  asio::post(socket_.get_executor(), [this, alive = std::weak_ptr<char>(alive_)] {
    if (!alive.expired() && !stopped_) drain();
  });
}

void SimClient::on_datagram(std::span<const std::uint8_t> datagram, double now) {
  ++stats_.datagrams_down;
  stats_.bytes_down += datagram.size() + kUdpIpv4HeaderBytes;
  shared_.totals->bytes_down += datagram.size() + kUdpIpv4HeaderBytes;
  const ClientCounters& c = session_.counters();
  const std::uint64_t snapshots_before = c.snapshots_received;
  const std::uint64_t skipped_before = c.snapshots_skipped;

  if (session_.on_datagram(datagram, now) == wire::ErrorCode::Ok) {
    // Ok means the session opened and read these very bytes (a connected packet, or the handshake).
    if (datagram_form(datagram) == DatagramForm::kConnectedPacket) {
      const std::uint64_t sequence = session_.last_packet_sequence();
      const bool newest = sequence > stats_.server_sequence_max;
      ++stats_.server_packets_received;
      stats_.server_sequence_max = std::max(stats_.server_sequence_max, sequence);
      // The newest packet brought a snapshot the session took (not skipped for want of its baseline), yet
      // the newest snapshot held did not advance: its tick was one we had, or older.
      if (newest && c.snapshots_received > snapshots_before && c.snapshots_skipped == skipped_before &&
          session_.latest_snapshot_tick() <= last_snapshot_tick_)
        ++stats_.snapshot_tick_regressions;
      // The bandwidth split reads what the frame carried. Events that arrived ahead of a hole are held by
      // the session, not delivered: read how far this frame went.
      const ReadMessage read = read_connected_message(session_.last_packet_message());
      const ServerFrameMessage* frame =
          read.error == wire::ErrorCode::Ok && read.message.kind == MessageKind::kServerFrame
              ? &read.message.server_frame
              : nullptr;
      if (frame != nullptr) {
        if (frame->snapshot) stats_.bytes_down_entity_block += frame->snapshot->block.size();
        if (frame->own) stats_.bytes_down_own_state += frame->own->size();
        if (frame->events) stats_.bytes_down_events += frame->events->size();
      }
      const ReceiverCounters& e = session_.event_counters();
      if (e.gaps != last_gaps_ || e.overflow != last_overflow_) {
        last_gaps_ = e.gaps;
        last_overflow_ = e.overflow;
        if (frame != nullptr && frame->events) {
          // The session accepted this frame, so its events decode.
          BitReader in(*frame->events);
          if (const auto events = read_contact_events(in, frame->tick)) {
            for (const wire::ContactEvent& event : *events)
              stats_.events_highest_seen = std::max(stats_.events_highest_seen, event.sequence());
          }
        }
      }
    }
  }
  take_events();
  take_acks();
  if (session_.latest_snapshot_tick() > last_snapshot_tick_) {
    on_new_snapshot();
  } else if (movement_.started() && session_.own_state()) {
    // An acknowledgement between snapshots with the exact state corrects too (not sampled: the samples
    // stay one per snapshot, comparable with the snapshot-only fallback).
    correct_from_own_state(movement_, session_);
  }
  check_state(now);
  // The handshake's answer to a challenge goes out now rather than at the next tick.
  if (!stopped_) send_all(session_.poll(now), now);
}

void SimClient::take_events() {
  const std::vector<wire::ContactEvent> events = session_.take_events();
  for (const wire::ContactEvent& event : events) {
    const std::uint64_t s = event.sequence();
    stats_.events_highest_seen = std::max(stats_.events_highest_seen, s);
    if (s <= events_contiguous_ || events_ahead_.contains(s)) {
      ++stats_.events_duplicated;
      continue;
    }
    if (s != last_event_ + 1) ++stats_.events_out_of_order;
    last_event_ = s;
    ++stats_.events_delivered;
    if (s == events_contiguous_ + 1) {
      ++events_contiguous_;
      while (events_ahead_.erase(events_contiguous_ + 1) != 0)
        ++events_contiguous_;
    } else {
      events_ahead_.insert(s);
    }
  }
  shared_.totals->events += events.size();
}

void SimClient::take_acks() {
  for (const CommandAck& a : session_.take_command_acks()) {
    const double ms = (a.acked_at - a.sent_at) * 1000.0;
    if (shared_.measuring) stats_.input_ack_ms.push_back(ms);
    ++shared_.totals->acks[latency_bucket(ms)];
  }
}

void SimClient::on_new_snapshot() {
  last_snapshot_tick_ = session_.latest_snapshot_tick();
  if (stats_.first_snapshot_tick == 0) stats_.first_snapshot_tick = last_snapshot_tick_;
  stats_.last_snapshot_tick = last_snapshot_tick_;
  ++shared_.totals->snapshots;

  players_.clear();
  self_index_ = -1;
  const std::uint32_t own = session_.own_entity();
  Vec3 own_feet{};
  // The prediction is blocked by the other players where this snapshot shows them, as a game client's
  // (a client outside the prediction sample needs no prediction world).
  PredictionWorld* prediction = stats_.predicting ? &movement_.world() : nullptr;
  if (prediction != nullptr) {
    prediction->set_own_id(own);
    prediction->clear_players(last_snapshot_tick_);
  }
  for (const wire::EntityState& e : session_.world_state()) {
    if (e.kind() != kPlayerKind) continue;
    const wire::Vec3f p = dequantize_position(e.position());
    const Vec3 feet{p.x(), p.y(), p.z()};
    if (e.id() == own) {
      self_index_ = int(players_.size());
      own_feet = feet;
    } else if (prediction != nullptr) {
      prediction->add_player({e.id(), feet, dequantize_yaw(e.yaw())});
    }
    players_.push_back(feet);
  }
  if (self_index_ < 0) return;  // not spawned yet, or left out of an incomplete first snapshot
  if (!movement_.started()) {
    // Only the fallback for frames without ServerFrame.own estimates velocity (MovementCheck).
    movement_.set_estimate_velocity(true);
    movement_.start(own_feet, session_.last_command_sequence());
    return;
  }
  // The session's input_ack is the newest frame's, and this snapshot came in the newest frame; its exact
  // own state (when the server sent it) is the state after that command.
  const std::optional<float> error = session_.own_state()
                                         ? correct_from_own_state(movement_, session_)
                                         : movement_.on_authoritative(session_.input_ack(), own_feet);
  if (error && shared_.measuring) stats_.movement_error.push_back(*error);
}

void SimClient::check_state(double now) {
  const ClientState state = session_.state();
  if (!stats_.connected && state == ClientState::kConnected) {
    stats_.connected = true;
    connected_at_ = now;
    last_refill_ = now;
    ++shared_.totals->connected;
  }
  if (failed_state(state) && !stopped_) fail(now, describe(state, session_.code()));
}

void SimClient::fail(double now, std::string reason) {
  if (stats_.failed) return;
  stats_.failed = true;
  stats_.failure = std::move(reason);
  if (stats_.connected) --shared_.totals->connected;
  ++shared_.totals->failed;
  finish(now);
}

void SimClient::finish(double now) {
  stopped_ = true;
  const ClientCounters& c = session_.counters();
  stats_.snapshots = c.snapshots_received;
  stats_.snapshots_skipped = c.snapshots_skipped;
  if (stats_.connected) stats_.connected_seconds = now - connected_at_;
  if (links_) {
    stats_.link_up = links_->up.counters();
    stats_.link_down = links_->down.counters();
  }
  boost::system::error_code ignored;
  socket_.close(ignored);
}

void SimClient::send(std::span<const std::uint8_t> datagram, double now) {
  if (!links_) {
    transmit(datagram);
    return;
  }
  if (datagram.empty() || !socket_.is_open()) return;
  links_->up.submit(datagram, now);
  links_->deliver(links_->up, now, [this](std::span<const std::uint8_t> d) { transmit(d); });
  register_due();
}

void SimClient::on_received(std::span<const std::uint8_t> datagram, double now) {
  if (!links_) {
    on_datagram(datagram, now);
    return;
  }
  links_->down.submit(datagram, now);
  deliver_due(now);
}

void SimClient::deliver_due(double now) {
  if (registered_due_ <= now) registered_due_ = std::numeric_limits<double>::infinity();
  if (stopped_ || !links_) return;
  links_->deliver(links_->up, now, [this](std::span<const std::uint8_t> d) { transmit(d); });
  links_->deliver(links_->down, now, [this, now](std::span<const std::uint8_t> d) {
    if (!stopped_) on_datagram(d, now);
  });
  register_due();
}

void SimClient::register_due() {
  const std::optional<double> due = links_->next_due();
  if (stopped_ || !due || !(*due < registered_due_) || shared_.delivery == nullptr) return;
  registered_due_ = *due;
  shared_.delivery->wake_at(*due, this);
}

void SimClient::transmit(std::span<const std::uint8_t> datagram) {
  if (datagram.empty() || !socket_.is_open()) return;
  boost::system::error_code ec;
  const std::size_t n = socket_.send(asio::buffer(datagram.data(), datagram.size()), 0, ec);
  if (ec) return;  // a full socket buffer drops it, as the network could
  ++stats_.datagrams_up;
  stats_.bytes_up += n + kUdpIpv4HeaderBytes;
  shared_.totals->bytes_up += n + kUdpIpv4HeaderBytes;
}

void SimClient::send_all(const std::vector<std::vector<std::uint8_t>>& datagrams, double now) {
  for (const auto& d : datagrams)
    send(d, now);
}

void SimClient::tick(double now) {
  if (!started_ || stopped_) return;
  send_all(session_.poll(now), now);
  check_state(now);
  if (stopped_) return;
  play(now);
}

void SimClient::play(double now) {
  if (session_.state() != ClientState::kConnected || !movement_.started()) return;
  BotSenses senses;
  senses.feet = movement_.feet();
  senses.motor = &movement_.motor();
  senses.players = players_;
  senses.self = self_index_;
  senses.level = &shared_.world->tree();
  // What the wire carries, so the prediction runs the server's input bit for bit.
  const PlayerInput input = quantize_input(bot_.think(*shared_.nav, senses));
  movement_.predict(session_.last_command_sequence() + 1, input);
  std::vector<std::uint8_t> frame = session_.send_command(input, double(last_snapshot_tick_), now);
  if (!frame.empty()) stats_.bytes_up_commands += session_.last_commands_bytes();
  send(frame, now);
  ++stats_.commands_sent;
  ++shared_.totals->commands;
  if ((input.buttons & kButtonFire) != 0) shoot(now, input);
}

void SimClient::shoot(double now, const PlayerInput& input) {
  const SimBehaviour& b = shared_.options->behaviour;
  const double rate = b.fire_per_second;
  if (!(rate > 0)) return;
  shot_tokens_ = std::min(std::max(1.0, rate), shot_tokens_ + (now - last_refill_) * rate);
  last_refill_ = now;
  if (shot_tokens_ < 1) return;
  shot_tokens_ -= 1;
  // Exactly rewound_fraction of the shots, spread evenly: shot k is rewound when k * fraction crosses a
  // whole number.
  const double f = std::clamp(double(b.rewound_fraction), 0.0, 1.0);
  const bool rewound = std::floor(double(shots_ + 1) * f) > std::floor(double(shots_) * f);
  ++shots_;

  const Vec3 eye = movement_.feet() + Vec3{0, 0, shared_.bot.eye_height};
  const float cp = std::cos(input.pitch);
  const wire::Vec3f origin(eye.x, eye.y, eye.z);
  const wire::Vec3f direction(cp * std::cos(input.yaw), cp * std::sin(input.yaw), std::sin(input.pitch));
  const ConnectToken& token = session_.token();

  flatbuffers::FlatBufferBuilder& fbb = *shared_.fbb;
  fbb.Clear();
  const auto filter = wire::CreateQueryFilter(fbb, kPlayersLayer, session_.own_entity(), true);
  const auto as_of = wire::CreateAsOf(fbb, rewound ? wire::AsOfKind::ClientView : wire::AsOfKind::Now, 0,
                                      rewound ? token.client_id : 0);
  // Reads need the service key or the admin key; the simulator holds the admin key already.
  const auto key = fbb.CreateString(shared_.options->admin_key);
  const auto request =
      wire::CreateRaycastRequest(fbb, token.match_id, &origin, &direction, kShotRange, filter, as_of, key);
  const std::uint64_t id = rpc_.next_request_id();
  finish_envelope(fbb, wire::Message::RaycastRequest, request.Union(), id);
  ++shared_.totals->rpc_calls;
  rpc_.call({fbb.GetBufferPointer(), fbb.GetSize()}, id,
            [this, rewound, alive = std::weak_ptr<char>(alive_)](const RpcReply& reply) {
              if (!alive.expired()) on_shot_reply(reply, rewound);
            });
}

void SimClient::on_shot_reply(const RpcReply& reply, bool rewound) {
  if (reply.ok() && reply.envelope->message_as_RaycastReply() == nullptr) {
    ++stats_.rpc_errors[to_string(wire::ErrorCode::UnexpectedMessage)];
    return;
  }
  if (!reply.ok()) {
    ++stats_.rpc_errors[std::string(reply.error_name())];
    return;
  }
  if (shared_.measuring) (rewound ? raycast_rewound_ms_ : raycast_ms_)->push_back(reply.latency_ms);
  ++shared_.totals->rpc[latency_bucket(reply.latency_ms)];
}

void SimClient::abandon(double now) {
  if (stopped_) return;
  if (!started_) {
    fail(now, "never started");
    return;
  }
  finish(now);
}

void SimClient::stop(double now) {
  if (stopped_) return;
  if (!started_) {
    fail(now, "never started");
    return;
  }
  const bool was_connected = session_.state() == ClientState::kConnected;
  const std::vector<std::uint8_t> bye = session_.disconnect(now);
  // Straight to the socket, past any network conditions: the socket closes now, and a goodbye held in a
  // link would never leave.
  for (int i = 0; i < kGoodbyeCopies; ++i)
    transmit(bye);
  if (!was_connected) {
    fail(now, stats_.connected ? describe(session_.state(), session_.code()) : "not connected at the end");
    return;
  }
  finish(now);
}

}  // namespace shiftcast
