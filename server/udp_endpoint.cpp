#include "server/udp_endpoint.hpp"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <boost/asio/post.hpp>

#include "protocol/envelope.hpp"
#include "protocol/packet.hpp"
#include "protocol/wire_constants.hpp"
#include "server/match.hpp"

namespace shiftcast {

namespace asio = boost::asio;
using asio::ip::udp;

std::string to_address(const udp::endpoint& endpoint) {
  return endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

UdpEndpoint::UdpEndpoint(asio::io_context& context, const UdpEndpointServices& services)
    : context_(context),
      services_(services),
      preauth_(services.preauth),
      socket_(context),
      inbound_(std::make_unique<InboundBatch>()) {}

std::string UdpEndpoint::open(const udp::endpoint& bind) {
  boost::system::error_code ec;
  socket_.open(bind.protocol(), ec);
  if (ec) return "udp open: " + ec.message();
  socket_.set_option(asio::socket_base::reuse_address(true), ec);
  int one = 1;
  if (::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0)
    return "udp: SO_REUSEPORT refused";
  // Bursts of snapshots to hundreds of clients leave in one tick: give the kernel room for them.
  socket_.set_option(asio::socket_base::send_buffer_size(4 << 20), ec);
  socket_.set_option(asio::socket_base::receive_buffer_size(4 << 20), ec);
  socket_.bind(bind, ec);
  if (ec) return "udp bind " + to_address(bind) + ": " + ec.message();
  socket_.non_blocking(true, ec);
  return {};
}

void UdpEndpoint::start() {
  receive();
}

void UdpEndpoint::close() {
  boost::system::error_code ec;
  socket_.close(ec);
}

std::uint16_t UdpEndpoint::port() const {
  boost::system::error_code ec;
  return socket_.local_endpoint(ec).port();
}

void UdpEndpoint::send(std::span<const std::uint8_t> datagram, const udp::endpoint& to) {
  boost::system::error_code ec;
  socket_.send_to(asio::buffer(datagram.data(), datagram.size()), to, 0, ec);
  if (ec) {
    services_.send_failures->add();
    return;
  }
  services_.packets_out->add();
  services_.bytes_out->add(datagram.size());
}

void UdpEndpoint::send_all(DatagramBatch& batch) {
  if (batch.empty()) return;
  const BatchSendResult r = send_datagrams(socket_.native_handle(), batch.items());
  batch.clear();
  if (r.failed > 0) services_.send_failures->add(r.failed);
  services_.packets_out->add(r.sent);
  services_.bytes_out->add(r.bytes_sent);
}

void UdpEndpoint::receive() {
  socket_.async_wait(udp::socket::wait_read, [this](boost::system::error_code ec) {
    if (ec == asio::error::operation_aborted || !socket_.is_open()) return;
    drain();
  });
}

void UdpEndpoint::drain() {
  // A few batches per turn, then the worker's other handlers (its matches' ticks) get theirs.
  constexpr int kBatchesPerTurn = 4;
  for (int i = 0; i < kBatchesPerTurn; ++i) {
    const ReceiveResult r = receive_datagrams(socket_.native_handle(), *inbound_);
    for (std::size_t k = 0; k < r.count; ++k)
      handle_one(inbound_->datagram(k), inbound_->source(k));
    post_packets();
    // Only an empty socket may wait: the reactor wakes on the next arrival, never for datagrams that
    // were already waiting.
    if (r.drained) return receive();
  }
  asio::post(context_, [this] {
    if (socket_.is_open()) drain();
  });
}

void UdpEndpoint::handle(std::span<const std::uint8_t> datagram, const udp::endpoint& from) {
  handle_one(datagram, from);
  post_packets();
}

void UdpEndpoint::post_packets() {
  for (MatchPackets& m : to_post_) {
    Match* owner = m.match.get();
    asio::post(owner->worker(), [match = std::move(m.match), packets = std::move(m.packets)]() mutable {
      for (InboundPacket& p : packets)
        match->on_packet(p.client_id, std::move(p.bytes), p.from);
    });
  }
  to_post_.clear();
}

void UdpEndpoint::handle_one(std::span<const std::uint8_t> datagram, const udp::endpoint& from) {
  services_.packets_in->add();
  services_.bytes_in->add(datagram.size());
  if (datagram.size() > kMaxDatagramBytes) {
    // Whatever it claims to be (docs/protocol.md, "Which a datagram is"): no reply, nothing charged.
    services_.rejections->reject(wire::ErrorCode::TooLarge, to_address(from),
                                 "datagram of " + std::to_string(datagram.size()) + " bytes");
    return;
  }
  switch (datagram_form(datagram)) {
    case DatagramForm::kConnectedPacket:
      return on_packet(datagram, from);
    case DatagramForm::kInvalid:
      // Refused by its first byte, as cheaply as a failed verification: nothing to charge.
      services_.rejections->reject(wire::ErrorCode::Malformed, to_address(from),
                                   "datagram of " + std::to_string(datagram.size()) + " bytes, first byte " +
                                       std::to_string(datagram[0]));
      return;
    case DatagramForm::kEnvelope:
      break;
  }
  const EnvelopeView view = verify_envelope(datagram, kMaxDatagramBytes);
  if (view.error != wire::ErrorCode::Ok) {
    // No reply: an unverifiable datagram may come from a spoofed address. A well-formed Envelope of
    // another version (verify_envelope checks the version only after the FlatBuffers verifier, so the
    // field is safe to read) is most likely an old client: say which version it spoke.
    const std::string detail = view.error == wire::ErrorCode::WrongVersion
                                   ? "datagram of protocol version " +
                                         std::to_string(wire::GetEnvelope(datagram.data())->version()) +
                                         " (this server speaks " + std::to_string(kProtocolVersion) + ")"
                                   : "datagram of " + std::to_string(datagram.size()) + " bytes";
    services_.rejections->reject(view.error, to_address(from), detail);
    return;
  }
  const wire::Message type = view.envelope->message_type();
  if (!admit_preauth(from)) return;
  switch (type) {
    case wire::Message::ConnectionRequest:
      return on_connection_request(*view.envelope->message_as_ConnectionRequest(), datagram.size(), from);
    case wire::Message::ChallengeResponse:
      return on_challenge_response(*view.envelope->message_as_ChallengeResponse(), datagram.size(), from);
    default:
      services_.rejections->reject(wire::ErrorCode::UnexpectedMessage, to_address(from),
                                   wire::EnumNameMessage(view.envelope->message_type()));
  }
}

bool UdpEndpoint::admit_preauth(const udp::endpoint& from) {
  if (preauth_.admit(from.address(), services_.steady_now())) return true;
  // No reply: a reply would be work too, and the source may be spoofed.
  services_.rejections->reject(wire::ErrorCode::RateLimited, to_address(from),
                               "pre-authentication limit of the source");
  return false;
}

void UdpEndpoint::deny(wire::ErrorCode code, std::size_t request_bytes, const udp::endpoint& to) {
  const std::vector<std::uint8_t> denied = build_denied(code);
  if (denied.size() > request_bytes) {
    services_.rejections->reject(wire::ErrorCode::AmplificationRefused, to_address(to), "denial not sent");
    return;
  }
  send(denied, to);
}

void UdpEndpoint::on_connection_request(const wire::ConnectionRequest& request, std::size_t request_bytes,
                                        const udp::endpoint& from) {
  const std::string peer = to_address(from);
  if (request_bytes < kMinRequestBytes) {
    services_.rejections->reject(wire::ErrorCode::AmplificationRefused, peer, "unpadded connection request");
    return;
  }
  const ServerOpenedToken opened =
      open_connect_token(*services_.keys, request, services_.public_address, services_.unix_now());
  Counter* opened_under = opened.key == TokenKeyUsed::kCurrent    ? services_.tokens_opened_current
                          : opened.key == TokenKeyUsed::kPrevious ? services_.tokens_opened_previous
                                                                  : nullptr;
  if (opened_under != nullptr) opened_under->add();
  const OpenedToken& token = opened.token;
  if (token.error != wire::ErrorCode::Ok) {
    services_.rejections->reject(token.error, peer,
                                 "connection request for match " + std::to_string(request.match_id()));
    return deny(token.error, request_bytes, from);
  }
  if (services_.replay_cache->spent(token.mac)) {
    // The client resends its request until a challenge arrives: a copy that arrives once that client is
    // connected is counted, not answered (docs/protocol.md, ConnectionRequest).
    if (const auto match = services_.find_match(token.match_id);
        match != nullptr && match->admits(token.client_id, from)) {
      services_.rejections->reject(wire::ErrorCode::TokenReplayed, peer,
                                   "a late copy of the connected client's request: not answered");
      return;
    }
    services_.rejections->reject(wire::ErrorCode::TokenReplayed, peer, "token already used");
    return deny(wire::ErrorCode::TokenReplayed, request_bytes, from);
  }
  if (services_.find_match(token.match_id) == nullptr) {
    services_.rejections->reject(wire::ErrorCode::UnknownMatch, peer,
                                 "match " + std::to_string(token.match_id));
    return deny(wire::ErrorCode::UnknownMatch, request_bytes, from);
  }
  const std::vector<std::uint8_t> challenge =
      make_challenge(*services_.keys, token, peer, random_token_nonce(), random_token_nonce());
  if (challenge.size() > request_bytes) {
    services_.rejections->reject(wire::ErrorCode::AmplificationRefused, peer,
                                 "challenge larger than request");
    return;
  }
  send(challenge, from);
}

void UdpEndpoint::on_challenge_response(const wire::ChallengeResponse& response, std::size_t response_bytes,
                                        const udp::endpoint& from) {
  const std::string peer = to_address(from);
  if (response_bytes < kMinRequestBytes) {
    services_.rejections->reject(wire::ErrorCode::AmplificationRefused, peer, "unpadded challenge response");
    return;
  }
  const AcceptedChallenge accepted =
      open_challenge_response(*services_.keys, response, peer, services_.unix_now());
  if (accepted.error != wire::ErrorCode::Ok) {
    services_.rejections->reject(accepted.error, peer, "challenge response");
    return deny(accepted.error, response_bytes, from);
  }
  std::shared_ptr<Match> match = services_.find_match(accepted.match_id);
  if (match == nullptr) {
    services_.rejections->reject(wire::ErrorCode::UnknownMatch, peer,
                                 "match " + std::to_string(accepted.match_id));
    return deny(wire::ErrorCode::UnknownMatch, response_bytes, from);
  }
  // A token is spent by its first connection. A second response with it is either that same client
  // repeating itself (the first keep-alive was lost) or a replay: only the match can tell them apart.
  // Marking it here refuses a concurrent replay on another worker; a refused connection (match full,
  // ending) releases it again so its holder can retry with the same token.
  const bool fresh =
      services_.replay_cache->spend(accepted.token_mac, accepted.expires_at, services_.unix_now());
  post_packets();  // packets taken before this response reach the match before the connection does
  Match* owner = match.get();
  asio::post(owner->worker(),
             [match = std::move(match), accepted, from, fresh, cache = services_.replay_cache] {
               const wire::ErrorCode result = match->on_connect(accepted, from, fresh);
               if (fresh && (result == wire::ErrorCode::MatchFull || result == wire::ErrorCode::ShuttingDown))
                 cache->release(accepted.token_mac);
             });
}

void UdpEndpoint::on_packet(std::span<const std::uint8_t> datagram, const udp::endpoint& from) {
  // A connected client's packets are authenticated by its match: only a refusal is pre-auth work.
  const std::optional<AddressRoute> route = services_.addresses->find(from);
  std::shared_ptr<Match> match = route ? services_.find_match(route->match_id) : nullptr;
  if (match == nullptr) {
    if (!admit_preauth(from)) return;
    const auto low_bits = peek_sequence_low_bits(datagram);
    if (low_bits && services_.addresses->goodbye_copy(from, *low_bits, services_.steady_now())) {
      services_.rejections->reject(wire::ErrorCode::DuplicatePacket, to_address(from),
                                   "a copy of a goodbye, after its connection closed");
      return;
    }
    services_.rejections->reject(wire::ErrorCode::UnknownConnection, to_address(from),
                                 route ? "packet for match " + std::to_string(route->match_id)
                                       : std::string("packet from an address with no connection"));
    return;
  }
  // Queued for one post per match and batch: a post may wake the owner's worker, a system call.
  std::vector<std::uint8_t> bytes(datagram.begin(), datagram.end());
  for (MatchPackets& m : to_post_) {
    if (m.match == match) {
      m.packets.push_back({route->client_id, std::move(bytes), from});
      return;
    }
  }
  to_post_.push_back({std::move(match), {}});
  to_post_.back().packets.push_back({route->client_id, std::move(bytes), from});
}

}  // namespace shiftcast
