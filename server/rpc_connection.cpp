#include "server/rpc_connection.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cmath>
#include <utility>

#include "protocol/envelope.hpp"

namespace shiftcast {

namespace asio = boost::asio;

RpcConnection::RpcConnection(Socket socket, std::shared_ptr<RpcShared> shared, std::uint64_t id,
                             std::string address)
    : socket_(std::move(socket)),
      shared_(std::move(shared)),
      id_(id),
      address_(std::move(address)),
      bucket_(shared_->settings.rate, shared_->settings.burst, shared_->now()),
      memory_(shared_->memory),
      reader_(shared_->settings.max_frame_bytes),
      read_buffer_(kRpcReadChunkBytes) {
  boost::system::error_code ec;
  const auto remote = socket_.remote_endpoint(ec);
  peer_ = ec ? "unknown" : fmt::format("{}:{}", remote.address().to_string(), remote.port());
  if (shared_->settings.socket_send_buffer_bytes > 0) {
    socket_.set_option(asio::socket_base::send_buffer_size(shared_->settings.socket_send_buffer_bytes), ec);
  }
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  last_frame_at_ = shared_->now();
  shared_->metrics.connections->add(1);
}

RpcConnection::~RpcConnection() {
  // Normally close() ran already; this covers a connection destroyed with its io_context.
  drop_subscriptions();
  if (!closed_) {
    shared_->open.fetch_sub(1);
    shared_->metrics.connections->add(-1);
    std::lock_guard lock(shared_->mutex);
    if (auto it = shared_->per_address.find(address_);
        it != shared_->per_address.end() && --it->second <= 0) {
      shared_->per_address.erase(it);
    }
  }
  memory_.set(0);
  shared_->update_memory_metrics();
}

void RpcConnection::start() {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
    if (self->shared_->stopping.load()) {
      self->closing_ = true;
      self->close(CloseReason::kShutdown);
      return;
    }
    self->read();
  });
}

void RpcConnection::shutdown() {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
    self->closing_ = true;
    self->closing_reason_ = CloseReason::kShutdown;
    if (!self->write_active_) self->close(CloseReason::kShutdown);
  });
}

void RpcConnection::check_timeouts() {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
    if (self->closed_) return;
    const RpcSettings& s = self->shared_->settings;
    const double now = self->shared_->now();
    // A write the client does not take: it is not reading (or is gone). Nothing else can end it.
    if (self->write_active_ && now - self->write_started_at_ > s.write_timeout_s) {
      self->shared_->rejections.reject(
          wire::ErrorCode::Timeout, self->peer_,
          fmt::format("a write not taken within {} s: closing", s.write_timeout_s));
      return self->close(CloseReason::kWriteTimeout);
    }
    if (self->closing_ || self->write_active_) return;  // waiting for the client to take our writes
    if (self->frame_started_at_ >= 0 && now - self->frame_started_at_ > s.read_timeout_s) {
      return self->close_after(
          wire::ErrorCode::Timeout,
          fmt::format("a frame left unfinished for {} s ({} bytes of it received): closing", s.read_timeout_s,
                      self->reader_.buffered()),
          CloseReason::kReadTimeout);
    }
    // A subscriber may wait quietly for pushes as long as it likes.
    if (self->subscriptions_.empty() && now - self->last_frame_at_ > s.idle_timeout_s) {
      return self->close_after(wire::ErrorCode::Timeout,
                               fmt::format("no request for {} s: closing", s.idle_timeout_s),
                               CloseReason::kIdleTimeout);
    }
    if (self->read_paused_ && self->has_room()) {
      self->read_paused_ = false;
      self->process();
    }
  });
}

void RpcConnection::read() {
  if (reading_ || closing_ || closed_) return;
  reading_ = true;
  socket_.async_read_some(asio::buffer(read_buffer_),
                          [self = shared_from_this()](const boost::system::error_code& error,
                                                      std::size_t bytes) { self->on_read(error, bytes); });
}

void RpcConnection::on_read(const boost::system::error_code& error, std::size_t bytes) {
  reading_ = false;
  if (closed_) return;
  if (error) {
    // The peer closed (or reset): what it asked for before is still answered, then the socket closes. A
    // peer that stopped sending in the middle of a frame is told so (it may still be reading).
    if (error == asio::error::eof && reader_.buffered() > 0 && reader_.error() == wire::ErrorCode::Ok) {
      refuse(wire::ErrorCode::Malformed, 0,
             fmt::format("the stream ended inside a frame ({} bytes of it received)", reader_.buffered()));
    }
    closing_ = true;
    closing_reason_ = CloseReason::kPeer;
    if (!write_active_) close(CloseReason::kPeer);
    return;
  }
  reader_.feed({read_buffer_.data(), bytes});
  process();
}

bool RpcConnection::has_room() const {
  return pending_bytes() <= shared_->settings.connection_memory_bytes / 2 &&
         memory_.fits(held_bytes() + kReplyReserveBytes);
}

void RpcConnection::process() {
  while (!closing_ && has_room()) {
    const std::optional<std::span<const std::uint8_t>> frame = reader_.next();
    if (!frame) break;
    last_frame_at_ = shared_->now();
    handle_frame(*frame);
  }
  if (!closing_ && reader_.error() != wire::ErrorCode::Ok) {
    refuse(reader_.error(), 0,
           reader_.error() == wire::ErrorCode::TooLarge
               ? fmt::format("a frame length over the limit of {} bytes: closing",
                             shared_->settings.max_frame_bytes)
               : std::string("a frame length of zero: closing"));
    closing_ = true;
    closing_reason_ = CloseReason::kBrokenStream;
  }
  if (closing_) {
    if (!write_active_) close(closing_reason_);
    return;
  }
  // What is left is the start of the next frame (or frames waiting for room): it must fit this
  // connection's cap and the listener's budget, and a frame begun must be finished within the read timeout.
  if (reader_.buffered() == 0) {
    frame_started_at_ = -1;
  } else if (frame_started_at_ < 0) {
    frame_started_at_ = shared_->now();
  }
  if (held_bytes() > shared_->settings.connection_memory_bytes || !memory_.fits(held_bytes())) {
    const std::size_t held = held_bytes();
    const std::size_t used = shared_->memory.used();
    reader_ = FrameReader(shared_->settings.max_frame_bytes);  // never held: the bytes go back at once
    return close_after(
        wire::ErrorCode::TooLarge,
        fmt::format("{} bytes held for this connection do not fit its cap of {} bytes or the "
                    "server's memory budget of {} bytes ({} in use): closing",
                    held, shared_->settings.connection_memory_bytes, shared_->memory.limit(), used),
        CloseReason::kMemory);
  }
  account();
  if (!has_room()) {
    // Backpressure: resumed by on_write once this connection's replies are written, or by the
    // listener's periodic check once the budget has room again.
    read_paused_ = true;
    return;
  }
  read();
}

namespace {

constexpr flatbuffers::uoffset_t kRequestIdVerifierDepth = 16;
constexpr std::size_t kRequestIdMinTableBytes = 4;

// The request id of a frame that failed verify_envelope, when its structure can still be read (a wrong
// version, a missing message); 0 when it cannot.
std::uint64_t readable_request_id(std::span<const std::uint8_t> bytes) {
  // verify_envelope's own bounds on the verifier's work (protocol/envelope.cpp), so a refused frame costs
  // no more to read twice than it did once.
  flatbuffers::Verifier::Options options;
  options.max_depth = kRequestIdVerifierDepth;
  options.max_tables = static_cast<flatbuffers::uoffset_t>(bytes.size() / kRequestIdMinTableBytes);
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), options);
  if (!wire::VerifyEnvelopeBuffer(verifier)) return 0;
  return wire::GetEnvelope(bytes.data())->request_id();
}

enum class Access : std::uint8_t { kNone, kRead, kAdmin };

struct Route {
  RpcKind kind = RpcKind::kCount;  // kCount: not a request
  double cost = 0;
  Access access = Access::kNone;
  const flatbuffers::String* key = nullptr;
};

Route route(const wire::Envelope& e) {
  switch (e.message_type()) {
    case wire::Message::RaycastRequest: {
      const auto* m = e.message_as_RaycastRequest();
      return {RpcKind::kRaycast, query_cost(*m), Access::kRead, m->api_key()};
    }
    case wire::Message::SweepRequest: {
      const auto* m = e.message_as_SweepRequest();
      return {RpcKind::kSweep, query_cost(*m), Access::kRead, m->api_key()};
    }
    case wire::Message::OverlapRequest: {
      const auto* m = e.message_as_OverlapRequest();
      return {RpcKind::kOverlap, query_cost(*m), Access::kRead, m->api_key()};
    }
    case wire::Message::BatchRequest: {
      const auto* m = e.message_as_BatchRequest();
      return {RpcKind::kBatch, batch_cost(*m), Access::kRead, m->api_key()};
    }
    case wire::Message::SubscribeContacts:
      return {RpcKind::kSubscribe, kControlCost, Access::kRead, e.message_as_SubscribeContacts()->api_key()};
    case wire::Message::UnsubscribeContacts:
      return {RpcKind::kUnsubscribe, kControlCost};  // only ever this connection's own subscriptions
    case wire::Message::ListMatches:
      return {RpcKind::kListMatches, kControlCost, Access::kRead, e.message_as_ListMatches()->api_key()};
    case wire::Message::MatchStatus:
      return {RpcKind::kMatchStatus, kControlCost, Access::kRead, e.message_as_MatchStatus()->api_key()};
    case wire::Message::CreateMatch:
      return {RpcKind::kCreateMatch, kControlCost, Access::kAdmin, e.message_as_CreateMatch()->api_key()};
    case wire::Message::EndMatch:
      return {RpcKind::kEndMatch, kControlCost, Access::kAdmin, e.message_as_EndMatch()->api_key()};
    case wire::Message::IssueConnectToken:
      return {RpcKind::kIssueConnectToken, kControlCost, Access::kAdmin,
              e.message_as_IssueConnectToken()->api_key()};
    default:
      return {};
  }
}

const char* message_name(wire::Message type) {
  const char* name = wire::EnumNameMessage(type);
  return name != nullptr && name[0] != '\0' ? name : "an unknown message type";
}

}  // namespace

void RpcConnection::charge_refused(std::size_t frame_bytes) {
  shared_->budget.charge(bucket_, shared_->settings.rate, shared_->settings.burst, frame_cost(frame_bytes),
                         shared_->now(), shared_->open.load());
}

void RpcConnection::handle_frame(std::span<const std::uint8_t> frame) {
  const RpcSettings& settings = shared_->settings;
  // Reading and verifying a frame is work whatever it holds. A frame over kFrameCostBytes is not even
  // verified without the tokens to pay for it; a smaller one costs at most one unit to verify, so it is
  // (its request id can then be echoed), and refused while the connection is in debt (its refused frames
  // already cost more than it had).
  const double read_cost = frame_cost(frame.size());
  const double now = shared_->now();
  shared_->budget.share(bucket_, settings.rate, settings.burst, now, shared_->open.load());
  const double available = bucket_.available(now);
  const auto retry_ms = [&](double cost) {
    const double ms = std::ceil((cost - available) / std::max(bucket_.rate(), 1e-9) * 1000.0);
    return std::uint32_t(std::clamp(ms, 0.0, 4294967295.0));
  };
  if (read_cost > kControlCost && available < read_cost) {
    return refuse(wire::ErrorCode::RateLimited, 0,
                  fmt::format("a frame of {} bytes costs {:.2f} to read: not read; retry after {} ms",
                              frame.size(), read_cost, retry_ms(read_cost)),
                  retry_ms(read_cost));
  }
  // FlatBuffers reads scalars in place: an aligned copy keeps every read aligned, wherever the frame
  // started in the read buffer.
  frame_.assign(frame.begin(), frame.end());
  const EnvelopeView v = verify_envelope(frame_, settings.max_frame_bytes);
  if (available < 0) {
    // In debt: every frame costs again, so a client flooding refused frames stays refused.
    charge_refused(frame_.size());
    const std::uint64_t id =
        v.error == wire::ErrorCode::Ok ? v.envelope->request_id() : readable_request_id(frame_);
    return refuse(wire::ErrorCode::RateLimited, id,
                  fmt::format("refused frames cost more than this connection had; retry after {} ms",
                              retry_ms(kControlCost)),
                  retry_ms(kControlCost));
  }
  if (v.error != wire::ErrorCode::Ok) {
    charge_refused(frame_.size());
    refuse(v.error, readable_request_id(frame_), "envelope refused");
    return;
  }
  const wire::Envelope& envelope = *v.envelope;
  const std::uint64_t request_id = envelope.request_id();
  const Route r = route(envelope);
  if (r.kind == RpcKind::kCount) {
    charge_refused(frame_.size());
    refuse(wire::ErrorCode::UnexpectedMessage, request_id,
           fmt::format("{} is not a request", message_name(envelope.message_type())));
    return;
  }
  if (r.access != Access::kNone && !(r.access == Access::kRead && settings.open_reads) &&
      !authorize(r.kind, r.access == Access::kAdmin, r.key, request_id)) {
    charge_refused(frame_.size());
    return;
  }
  // A batch of the wrong size is refused for what it is, and not charged its queries (they never run).
  if (r.kind == RpcKind::kBatch) {
    const auto* queries = envelope.message_as_BatchRequest()->queries();
    const std::size_t n = queries == nullptr ? 0 : queries->size();
    if (n == 0 || n > std::size_t(std::max(0, settings.max_batch))) {
      charge_refused(frame_.size());
      refuse(wire::ErrorCode::BadArgument, request_id,
             n == 0 ? std::string("empty batch")
                    : fmt::format("a batch of {} queries is over the limit of {}", n, settings.max_batch));
      return;
    }
  }
  const double cost = std::max(r.cost, read_cost);
  const double largest = std::min(settings.burst, shared_->budget.global_burst());
  if (cost > largest) {
    charge_refused(frame_.size());
    refuse(wire::ErrorCode::BadArgument, request_id,
           fmt::format("{} costs {:.0f}, more than the {:.0f} a connection may ever spend at once: split it",
                       to_string(r.kind), cost, largest));
    return;
  }
  std::uint32_t retry_after_ms = 0;
  if (!shared_->budget.take(bucket_, settings.rate, settings.burst, cost, now, shared_->open.load(),
                            &retry_after_ms)) {
    refuse(wire::ErrorCode::RateLimited, request_id,
           fmt::format("{} costs {:.2f}, retry after {} ms", to_string(r.kind), cost, retry_after_ms),
           retry_after_ms);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  dispatch(envelope, r.kind);
  const std::size_t k = static_cast<std::size_t>(r.kind);
  shared_->metrics.requests[k]->add();
  shared_->metrics.seconds[k]->observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

bool RpcConnection::authorize(RpcKind kind, bool admin, const flatbuffers::String* key,
                              std::uint64_t request_id) {
  const double now = shared_->now();
  std::uint32_t retry_after_ms = 0;
  if (!shared_->auth.may_try(address_, now, &retry_after_ms)) {
    shared_->metrics.auth_throttled->add();
    refuse(wire::ErrorCode::RateLimited, request_id,
           fmt::format("too many failed keys from {}: {} not checked, retry after {} ms", address_,
                       to_string(kind), retry_after_ms),
           retry_after_ms);
    return false;
  }
  const bool ok = admin ? shared_->admin_key_matches(key) : shared_->read_key_matches(key);
  if (ok) return true;
  shared_->auth.failed(address_, now);
  shared_->metrics.auth_failures->add();
  refuse(wire::ErrorCode::Unauthorized, request_id,
         fmt::format("{} without the {} key", to_string(kind), admin ? "admin" : "service (or admin)"));
  return false;
}

void RpcConnection::dispatch(const wire::Envelope& e, RpcKind kind) {
  const std::uint64_t id = e.request_id();
  const MatchDirectory& directory = shared_->directory;
  fbb_.Clear();
  switch (kind) {
    case RpcKind::kRaycast:
      return answer_query(answer_raycast(directory, *e.message_as_RaycastRequest(), scratch_, fbb_), id);
    case RpcKind::kSweep:
      return answer_query(answer_sweep(directory, *e.message_as_SweepRequest(), scratch_, fbb_), id);
    case RpcKind::kOverlap:
      return answer_query(answer_overlap(directory, *e.message_as_OverlapRequest(), scratch_, fbb_), id);
    case RpcKind::kBatch:
      return answer_query(
          answer_batch(directory, *e.message_as_BatchRequest(), shared_->settings.max_batch, scratch_, fbb_),
          id);
    case RpcKind::kSubscribe:
      return subscribe(*e.message_as_SubscribeContacts(), id);
    case RpcKind::kUnsubscribe:
      return unsubscribe(*e.message_as_UnsubscribeContacts(), id);
    case RpcKind::kListMatches:
      return list_matches(id);
    case RpcKind::kMatchStatus:
      return match_status(*e.message_as_MatchStatus(), id);
    case RpcKind::kCreateMatch:
      return create_match(*e.message_as_CreateMatch(), id);
    case RpcKind::kEndMatch:
      return end_match(*e.message_as_EndMatch(), id);
    case RpcKind::kIssueConnectToken:
      return issue_connect_token(*e.message_as_IssueConnectToken(), id);
    case RpcKind::kCount:
      break;
  }
}

void RpcConnection::refuse(wire::ErrorCode code, std::uint64_t request_id, std::string_view detail,
                           std::uint32_t retry_after_ms) {
  shared_->rejections.reject(code, peer_, detail);
  send_error(code, request_id, detail, retry_after_ms);
}

void RpcConnection::send_error(wire::ErrorCode code, std::uint64_t request_id, std::string_view detail,
                               std::uint32_t retry_after_ms) {
  fbb_.Clear();
  const auto text = fbb_.CreateString(detail.data(), detail.size());
  send(wire::Message::RpcError, wire::CreateRpcError(fbb_, code, text, retry_after_ms).Union(), request_id);
}

void RpcConnection::send(wire::Message type, flatbuffers::Offset<void> message, std::uint64_t request_id) {
  if (closed_) {
    fbb_.Clear();
    return;
  }
  finish_envelope(fbb_, type, message, request_id);
  // Errors are small and always go out (the budget may pass its limit by one per connection); anything
  // else must fit the connection's cap and the listener's budget.
  const std::size_t after = held_bytes() + kRpcPrefixBytes + fbb_.GetSize();
  if (type != wire::Message::RpcError &&
      (after > shared_->settings.connection_memory_bytes || !memory_.fits(after))) {
    const std::size_t reply_bytes = fbb_.GetSize();
    fbb_.Clear();
    const std::string detail = fmt::format(
        "a reply of {} bytes does not fit this connection's cap of {} bytes or the server's memory "
        "budget of {} bytes ({} in use)",
        reply_bytes, shared_->settings.connection_memory_bytes, shared_->memory.limit(),
        shared_->memory.used());
    if (type == wire::Message::ContactPush) {
      // A numbered event is never dropped: the stream ends instead.
      return close_after(wire::ErrorCode::SlowConsumer, detail + ": closing", CloseReason::kMemory);
    }
    return refuse(wire::ErrorCode::TooLarge, request_id, detail);
  }
  append_frame(queued_, {fbb_.GetBufferPointer(), fbb_.GetSize()});
  fbb_.Clear();
  account();
  if (!write_active_) write();
}

void RpcConnection::account() {
  memory_.set(held_bytes());
  shared_->update_memory_metrics();
}

void RpcConnection::write() {
  if (closed_ || write_active_ || queued_.empty()) return;
  std::swap(writing_, queued_);
  queued_.clear();
  write_active_ = true;
  write_started_at_ = shared_->now();
  asio::async_write(socket_, asio::buffer(writing_),
                    [self = shared_from_this()](const boost::system::error_code& error, std::size_t) {
                      self->on_write(error);
                    });
}

void RpcConnection::on_write(const boost::system::error_code& error) {
  write_active_ = false;
  writing_.clear();
  // A large backlog's buffer is given back rather than kept for the next reply.
  if (writing_.capacity() > kRpcReadChunkBytes) std::vector<std::uint8_t>().swap(writing_);
  account();
  if (closed_) return;
  if (error) {
    close(CloseReason::kPeer);
    return;
  }
  if (!queued_.empty()) {
    write();
    return;
  }
  if (closing_) {
    close(closing_reason_);
    return;
  }
  if (read_paused_ && has_room()) {
    read_paused_ = false;
    process();
  }
}

void RpcConnection::close_after(wire::ErrorCode code, std::string_view detail, CloseReason reason) {
  if (closed_) return;
  const bool was_closing = closing_;
  closing_ = true;
  closing_reason_ = reason;
  if (!was_closing) {
    // An idle client is told why too, but leaving quietly is normal life, not a refusal: it is counted in
    // shiftcast_rpc_closed_total{reason="idle_timeout"} alone (as HTTP's kept-alive idle close is). A
    // frame left unfinished past its timeout (a slow-loris) stays a refusal.
    if (reason == CloseReason::kIdleTimeout) {
      spdlog::debug("rpc: closing {}: {}", peer_, detail);
      send_error(code, 0, detail);
    } else {
      refuse(code, 0, detail);
    }
  }
  if (!write_active_) close(reason);
}

void RpcConnection::close(CloseReason reason) {
  if (closed_) return;
  closed_ = true;
  closing_ = true;
  shared_->metrics.closed[static_cast<std::size_t>(reason)]->add();
  drop_subscriptions();
  boost::system::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  shared_->open.fetch_sub(1);
  shared_->metrics.connections->add(-1);
  queued_.clear();
  std::vector<std::uint8_t>().swap(queued_);
  reader_ = FrameReader(shared_->settings.max_frame_bytes);  // gives the unfinished frame's bytes back
  account();
  std::lock_guard lock(shared_->mutex);
  shared_->connections.erase(id_);
  if (auto it = shared_->per_address.find(address_); it != shared_->per_address.end() && --it->second <= 0) {
    shared_->per_address.erase(it);
  }
}

}  // namespace shiftcast
