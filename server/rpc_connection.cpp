#include "server/rpc_connection.hpp"

#include <sodium.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <utility>

#include "protocol/crypto.hpp"
#include "protocol/envelope.hpp"

namespace shiftcast {

namespace asio = boost::asio;

const char* to_string(RpcKind kind) {
  switch (kind) {
    case RpcKind::kRaycast:
      return "raycast";
    case RpcKind::kSweep:
      return "sweep";
    case RpcKind::kOverlap:
      return "overlap";
    case RpcKind::kBatch:
      return "batch";
    case RpcKind::kSubscribe:
      return "subscribe_contacts";
    case RpcKind::kUnsubscribe:
      return "unsubscribe_contacts";
    case RpcKind::kListMatches:
      return "list_matches";
    case RpcKind::kMatchStatus:
      return "match_status";
    case RpcKind::kCreateMatch:
      return "create_match";
    case RpcKind::kEndMatch:
      return "end_match";
    case RpcKind::kIssueConnectToken:
      return "issue_connect_token";
    case RpcKind::kCount:
      break;
  }
  return "unknown";
}

RpcMetrics::RpcMetrics(MetricsRegistry& registry) {
  for (std::size_t i = 0; i < kRpcKinds; ++i) {
    const Labels kind{{"kind", to_string(static_cast<RpcKind>(i))}};
    requests[i] = &registry.counter("shiftcast_rpc_requests_total", "RPC requests answered, by kind", kind);
    seconds[i] =
        &registry.histogram("shiftcast_rpc_seconds", "Time to answer an RPC request", kind, kLatencyBuckets);
  }
  connections = &registry.gauge("shiftcast_rpc_connections", "Open RPC connections");
  contact_events =
      &registry.counter("shiftcast_rpc_contact_events_total", "Contact events pushed to subscribers");
}

namespace {

using Hash = std::array<std::uint8_t, 32>;

Hash hash_key(std::string_view key) {
  Hash h{};
  crypto_generichash(h.data(), h.size(), reinterpret_cast<const unsigned char*>(key.data()), key.size(),
                     nullptr, 0);
  return h;
}

}  // namespace

RpcShared::RpcShared(MatchDirectory& directory_in, RpcSettings settings_in, MetricsRegistry& registry,
                     Rejections& rejections_in)
    : directory(directory_in),
      settings(std::move(settings_in)),
      rejections(rejections_in),
      metrics(registry) {
  crypto_init();
  admin_key_hash = hash_key(settings.admin_key);
}

double RpcShared::now() const {
  if (settings.now) return settings.now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::uint64_t RpcShared::unix_now() const {
  if (settings.unix_now) return settings.unix_now();
  return std::uint64_t(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

bool RpcShared::admin_key_matches(const flatbuffers::String* given) const {
  if (settings.admin_key.empty() || given == nullptr) return false;
  const Hash h = hash_key(given->string_view());
  return sodium_memcmp(h.data(), admin_key_hash.data(), h.size()) == 0;
}

RpcConnection::RpcConnection(Socket socket, std::shared_ptr<RpcShared> shared, std::uint64_t id)
    : socket_(std::move(socket)),
      shared_(std::move(shared)),
      id_(id),
      bucket_(shared_->settings.rate, shared_->settings.burst, shared_->now()),
      reader_(shared_->settings.max_frame_bytes),
      read_buffer_(kRpcReadChunkBytes) {
  boost::system::error_code ec;
  const auto remote = socket_.remote_endpoint(ec);
  peer_ = ec ? "unknown" : fmt::format("{}:{}", remote.address().to_string(), remote.port());
  if (shared_->settings.socket_send_buffer_bytes > 0) {
    socket_.set_option(asio::socket_base::send_buffer_size(shared_->settings.socket_send_buffer_bytes), ec);
  }
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  shared_->metrics.connections->add(1);
}

RpcConnection::~RpcConnection() {
  // Normally close() ran already; this covers a connection destroyed with its io_context.
  drop_subscriptions();
  if (!closed_) {
    shared_->open.fetch_sub(1);
    shared_->metrics.connections->add(-1);
  }
}

void RpcConnection::start() {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
    if (self->shared_->stopping.load()) {
      self->closing_ = true;
      self->close();
      return;
    }
    self->read();
  });
}

void RpcConnection::shutdown() {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
    self->closing_ = true;
    if (!self->write_active_) self->close();
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
    if (!write_active_) close();
    return;
  }
  reader_.feed({read_buffer_.data(), bytes});
  while (!closing_) {
    const std::optional<std::span<const std::uint8_t>> frame = reader_.next();
    if (!frame) break;
    handle_frame(*frame);
  }
  if (!closing_ && reader_.error() != wire::ErrorCode::Ok) {
    refuse(reader_.error(), 0,
           reader_.error() == wire::ErrorCode::TooLarge
               ? fmt::format("a frame length over the limit of {} bytes: closing",
                             shared_->settings.max_frame_bytes)
               : std::string("a frame length of zero: closing"));
    closing_ = true;
  }
  if (closing_) {
    if (!write_active_) close();
    return;
  }
  if (pending_bytes() > kMaxReplyBacklogBytes) {
    read_paused_ = true;  // resumed by on_write once the backlog is written
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

struct Route {
  RpcKind kind = RpcKind::kCount;  // kCount: not a request
  double cost = 0;
};

Route route(const wire::Envelope& e) {
  switch (e.message_type()) {
    case wire::Message::RaycastRequest:
      return {RpcKind::kRaycast, kRaycastCost};
    case wire::Message::SweepRequest:
      return {RpcKind::kSweep, kSweepCost};
    case wire::Message::OverlapRequest:
      return {RpcKind::kOverlap, kOverlapCost};
    case wire::Message::BatchRequest:
      return {RpcKind::kBatch, batch_cost(*e.message_as_BatchRequest())};
    case wire::Message::SubscribeContacts:
      return {RpcKind::kSubscribe, kControlCost};
    case wire::Message::UnsubscribeContacts:
      return {RpcKind::kUnsubscribe, kControlCost};
    case wire::Message::ListMatches:
      return {RpcKind::kListMatches, kControlCost};
    case wire::Message::MatchStatus:
      return {RpcKind::kMatchStatus, kControlCost};
    case wire::Message::CreateMatch:
      return {RpcKind::kCreateMatch, kControlCost};
    case wire::Message::EndMatch:
      return {RpcKind::kEndMatch, kControlCost};
    case wire::Message::IssueConnectToken:
      return {RpcKind::kIssueConnectToken, kControlCost};
    default:
      return {};
  }
}

const char* message_name(wire::Message type) {
  const char* name = wire::EnumNameMessage(type);
  return name != nullptr && name[0] != '\0' ? name : "an unknown message type";
}

}  // namespace

void RpcConnection::handle_frame(std::span<const std::uint8_t> frame) {
  // FlatBuffers reads scalars in place: an aligned copy keeps every read aligned, wherever the frame
  // started in the read buffer.
  frame_.assign(frame.begin(), frame.end());
  const EnvelopeView v = verify_envelope(frame_, shared_->settings.max_frame_bytes);
  if (v.error != wire::ErrorCode::Ok) {
    refuse(v.error, readable_request_id(frame_), "envelope refused");
    return;
  }
  const wire::Envelope& envelope = *v.envelope;
  const std::uint64_t request_id = envelope.request_id();
  const Route r = route(envelope);
  if (r.kind == RpcKind::kCount) {
    refuse(wire::ErrorCode::UnexpectedMessage, request_id,
           fmt::format("{} is not a request", message_name(envelope.message_type())));
    return;
  }
  std::uint32_t retry_after_ms = 0;
  if (!bucket_.take(r.cost, shared_->now(), &retry_after_ms)) {
    refuse(wire::ErrorCode::RateLimited, request_id,
           fmt::format("{} costs {}, retry after {} ms", to_string(r.kind), r.cost, retry_after_ms),
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
  finish_envelope(fbb_, type, message, request_id);
  append_frame(queued_, {fbb_.GetBufferPointer(), fbb_.GetSize()});
  fbb_.Clear();
  if (!write_active_) write();
}

void RpcConnection::write() {
  if (closed_ || write_active_ || queued_.empty()) return;
  std::swap(writing_, queued_);
  queued_.clear();
  write_active_ = true;
  asio::async_write(socket_, asio::buffer(writing_),
                    [self = shared_from_this()](const boost::system::error_code& error, std::size_t) {
                      self->on_write(error);
                    });
}

void RpcConnection::on_write(const boost::system::error_code& error) {
  write_active_ = false;
  writing_.clear();
  if (closed_) return;
  if (error) {
    close();
    return;
  }
  if (!queued_.empty()) {
    write();
    return;
  }
  if (closing_) {
    close();
    return;
  }
  if (read_paused_) {
    read_paused_ = false;
    read();
  }
}

void RpcConnection::close() {
  if (closed_) return;
  closed_ = true;
  closing_ = true;
  drop_subscriptions();
  boost::system::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  shared_->open.fetch_sub(1);
  shared_->metrics.connections->add(-1);
  std::lock_guard lock(shared_->mutex);
  shared_->connections.erase(id_);
}

}  // namespace shiftcast
