// UdpEndpoint: one worker's UDP socket. Every worker binds the same port (SO_REUSEPORT), so the kernel
// spreads clients over the workers; each datagram is verified here, the stateless handshake (request,
// challenge, response) is answered here, and a connected packet is handed to the worker that owns its
// match with `post`. The owner replies through its own worker's endpoint, from the same port.
//
// Before a connection exists the server never replies with more bytes than it received, keeps no state
// for a request (the challenge carries it), and refuses each bad datagram with a counted reason.
// Pre-authentication work is bounded per source on this thread: every verified datagram that is not a
// packet of a connected client is charged to its source's bucket (SourceLimiter) before any crypto, and
// a connected packet (protocol version 4: no ids, routed by its source address through the server's
// ClientAddressBook) from an address with no connection is refused here, never copied or posted to a
// match's worker.
#pragma once

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "protocol/handshake.hpp"
#include "protocol/wire_constants.hpp"
#include "server/client_address_book.hpp"
#include "server/datagram_batch.hpp"
#include "server/metrics.hpp"
#include "server/rejections.hpp"
#include "server/source_limiter.hpp"
#include "server/token_replay_cache.hpp"

namespace shiftcast {

class Match;

// A connected client's datagram, verified by the endpoint, on its way to the match's worker.
struct InboundPacket {
  std::uint64_t client_id = 0;  // the connection its source address routes to
  std::vector<std::uint8_t> bytes;
  boost::asio::ip::udp::endpoint from;
};

struct UdpEndpointServices {
  const ServerKeys* keys = nullptr;
  std::string public_address;  // what tokens must be bound to
  TokenReplayCache* replay_cache = nullptr;
  Rejections* rejections = nullptr;
  // Finds a match by id (any thread), null when unknown or ended.
  std::function<std::shared_ptr<Match>(std::uint32_t)> find_match;
  // Where connected packets are routed: source address -> (match, client). Shared by every endpoint.
  std::shared_ptr<ClientAddressBook> addresses;
  std::function<std::uint64_t()> unix_now;
  std::function<double()> steady_now;  // seconds, for the per-source buckets
  SourceLimits preauth;                // per source address, on this endpoint
  Counter* packets_in = nullptr;
  Counter* bytes_in = nullptr;
  Counter* packets_out = nullptr;
  Counter* bytes_out = nullptr;
  Counter* send_failures = nullptr;
  // Connect tokens that opened, by the key that opened them (ServerKeys: current, or previous during a
  // rotation); may be null.
  Counter* tokens_opened_current = nullptr;
  Counter* tokens_opened_previous = nullptr;
};

class UdpEndpoint {
 public:
  UdpEndpoint(boost::asio::io_context& context, const UdpEndpointServices& services);
  // Binds (with SO_REUSEPORT so every worker can bind the same port); an error string on failure.
  std::string open(const boost::asio::ip::udp::endpoint& bind);
  // Tokens must name this address; known once the first endpoint bound (config port 0).
  void set_public_address(std::string address) { services_.public_address = std::move(address); }
  void start();
  void close();
  std::uint16_t port() const;
  // Worker thread only. A full socket buffer drops the datagram and counts it (UDP may lose it anyway).
  void send(std::span<const std::uint8_t> datagram, const boost::asio::ip::udp::endpoint& to);
  // Worker thread only: every datagram of `batch` in order, as send() would (few system calls), then
  // clears the batch.
  void send_all(DatagramBatch& batch);

  // Handles one datagram as if it had just arrived (the receive loop's body).
  void handle(std::span<const std::uint8_t> datagram, const boost::asio::ip::udp::endpoint& from);

 private:
  void receive();
  void drain();  // takes what is waiting (a few batches at most), then waits or comes back
  void handle_one(std::span<const std::uint8_t> datagram, const boost::asio::ip::udp::endpoint& from);
  void post_packets();  // hands the datagrams queued for each match to its worker, one post per match
  void on_connection_request(const wire::ConnectionRequest& request, std::size_t request_bytes,
                             const boost::asio::ip::udp::endpoint& from);
  void on_challenge_response(const wire::ChallengeResponse& response, std::size_t response_bytes,
                             const boost::asio::ip::udp::endpoint& from);
  void on_packet(std::span<const std::uint8_t> datagram, const boost::asio::ip::udp::endpoint& from);
  void deny(wire::ErrorCode code, std::size_t request_bytes, const boost::asio::ip::udp::endpoint& to);
  // Charges one unit of pre-authentication work to `from`; false (refused, counted) when over its limit.
  bool admit_preauth(const boost::asio::ip::udp::endpoint& from);

  boost::asio::io_context& context_;
  UdpEndpointServices services_;
  SourceLimiter preauth_;
  boost::asio::ip::udp::socket socket_;
  std::unique_ptr<InboundBatch> inbound_;
  // Connected packets taken in this batch, by match, in arrival order; posted at the batch's end.
  struct MatchPackets {
    std::shared_ptr<Match> match;
    std::vector<InboundPacket> packets;
  };
  std::vector<MatchPackets> to_post_;
};

std::string to_address(const boost::asio::ip::udp::endpoint& endpoint);  // "ip:port"

}  // namespace shiftcast
