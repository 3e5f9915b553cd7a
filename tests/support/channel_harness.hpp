// The in-memory harness of the UDP channel tests: fixed keys and tokens, the server's side of the
// handshake as a match does it, a lossless handshake, packet forgery, and a link that loses, duplicates
// and reorders datagrams with a fixed seed while logging what arrived in which order.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "protocol/client_session.hpp"
#include "protocol/connected_message.hpp"
#include "protocol/envelope.hpp"
#include "protocol/handshake.hpp"
#include "protocol/packet.hpp"
#include "server/client_connection.hpp"
#include "tests/support/fixed_keys.hpp"
#include "tests/support/seeded_random.hpp"

namespace shiftcast::channel_test {

inline constexpr double kStart = 1'700'000'000.0;  // both ends run on unix seconds here
inline constexpr char kServerAddress[] = "127.0.0.1:40000";
inline constexpr char kClientAddress[] = "10.0.0.7:5000";
inline constexpr std::uint32_t kMatch = 7;
inline constexpr std::uint64_t kClient = 42;
inline constexpr EntityId kOwnEntity = 1;
inline constexpr double kTickSeconds = 1.0 / 30.0;
inline constexpr double kYawPerCommand = 0.001;  // commands carry their sequence in the yaw, to check order

inline ConnectToken make_token(double valid_seconds = 120) {
  return issue_connect_token(fixed_key(1), kServerAddress, kMatch, kClient,
                             static_cast<std::uint64_t>(kStart + valid_seconds), fixed_nonce(2), fixed_key(3),
                             fixed_key(4));
}

inline PlayerInput command_input(std::uint64_t sequence) {
  return {0.5f, -0.25f, static_cast<float>(sequence * kYawPerCommand), 0.1f,
          static_cast<std::uint8_t>(sequence % 2 ? kButtonJump : 0)};
}
inline std::uint64_t command_sequence(const PlayerInput& in) {
  return std::lround(in.yaw / kYawPerCommand);
}

// The server's side, as a match does it: the stateless handshake, then one ClientConnection.
struct Server {
  ServerKeys keys{fixed_key(1), fixed_key(5)};
  ConnectionSettings settings;
  std::unique_ptr<ClientConnection> connection;
  wire::ErrorCode last_result = wire::ErrorCode::Ok;
  std::uint8_t nonces = 0;

  std::vector<std::vector<std::uint8_t>> on_datagram(std::span<const std::uint8_t> bytes,
                                                     std::string_view from, double now) {
    if (datagram_form(bytes) == DatagramForm::kConnectedPacket) {
      if (connection) last_result = connection->on_packet(bytes, from, now);
      return {};
    }
    const EnvelopeView view = verify_envelope(bytes, kMaxDatagramBytes);
    if (view.error != wire::ErrorCode::Ok) return {};
    const auto now_unix = static_cast<std::uint64_t>(now);
    if (const auto* request = view.envelope->message_as_ConnectionRequest()) {
      const OpenedToken opened = open_connect_token(keys.token_key, *request, kServerAddress, now_unix);
      if (opened.error != wire::ErrorCode::Ok) return {build_denied(opened.error)};
      nonces += 2;
      return {make_challenge(keys, opened, from, fixed_nonce(nonces), fixed_nonce(nonces + 1))};
    }
    if (const auto* response = view.envelope->message_as_ChallengeResponse()) {
      const AcceptedChallenge a = open_challenge_response(keys, *response, from, now_unix);
      if (a.error != wire::ErrorCode::Ok) return {build_denied(a.error)};
      if (!connection) {
        connection = std::make_unique<ClientConnection>(
            ConnectionParams{a.match_id, a.client_id, a.client_to_server, a.server_to_client,
                             std::string(from), kOwnEntity},
            settings, now);
      }
      return {connection->build_keepalive(0, now)};  // again for a resent response: ours was lost
    }
    return {};
  }
};

inline void handshake_lossless(ClientSession& client, Server& server, double now) {
  for (int i = 0; i < 4 && client.state() != ClientState::kConnected; ++i) {
    for (const auto& d : client.poll(now)) {
      for (const auto& r : server.on_datagram(d, kClientAddress, now))
        client.on_datagram(r, now);
    }
  }
  ASSERT_EQ(client.state(), ClientState::kConnected);
}

// A session and a connection after a lossless handshake at kStart.
struct Connected {
  ClientSession client;
  Server server;
  Connected(const ConnectionSettings& server_settings = {}, const ClientSessionSettings& client_settings = {})
      : client(make_token(), client_settings) {
    server.settings = server_settings;
    handshake_lossless(client, server, kStart);
  }
  ClientConnection& connection() { return *server.connection; }
};

// What a peer early in a connection reconstructs short sequences and acks against: every sequence below
// 2^16 comes out exactly (tests stay far below it).
inline constexpr SequenceContext kEarlyConnection{0, 0xFFFF};

// A packet of this connection opened as its receiver would early on: what a test reads of what was sent.
inline OpenedPacket open_test_packet(std::span<const std::uint8_t> datagram, Direction direction,
                                     const Key& key) {
  return open_packet(datagram, direction, key, {kMatch, kClient}, kEarlyConnection);
}

// A server-to-client packet opened, and its message read: frame() points into `message`.
struct OpenedMessage {
  OpenedPacket packet;
  wire::ErrorCode error() const {
    return packet.error != wire::ErrorCode::Ok ? packet.error : read_connected_message(packet.message).error;
  }
  ConnectedMessage message() const { return read_connected_message(packet.message).message; }
  ServerFrameMessage frame() const { return message().server_frame; }
};
inline OpenedMessage open_test_message(std::span<const std::uint8_t> datagram, const Key& key,
                                       Direction direction = Direction::kServerToClient) {
  return {open_test_packet(datagram, direction, key)};
}

// The same packet with one bit of the ciphertext flipped, or with its header's ack bits changed (a byte
// of them sent where it was 0xFF: still well formed, no longer authentic).
inline std::vector<std::uint8_t> tamper(std::span<const std::uint8_t> datagram, bool header) {
  std::vector<std::uint8_t> out(datagram.begin(), datagram.end());
  if (!header) {
    out[out.size() - kMacBytes - 1] ^= 0x10;  // the last ciphertext byte
    return out;
  }
  // Prefix bit 2: ack present (the handshake's keep-alive made sure); bit 3: ack_bits byte 0 is sent.
  EXPECT_NE(out[0] & 0x04, 0) << "tamper(header) needs a packet that carries an ack";
  if ((out[0] & 0x08) != 0) {
    out[5] ^= 0x01;
  } else {
    out[0] |= 0x08;
    out.insert(out.begin() + 5, std::uint8_t{0xFE});
  }
  return out;
}

// Loses, duplicates and delays (so reorders) datagrams; logs which sent datagram arrived in what order.
class Link {
 public:
  Link(std::uint32_t seed, double loss, double duplicate) : rng_(seed), loss_(loss), duplicate_(duplicate) {}
  std::size_t send(std::vector<std::uint8_t> d, double now) {
    const std::size_t id = sent_++;
    UniformReal<double> u(0, 1), delay(0.01, 0.09);
    if (u(rng_) < loss_) {
      lost_.insert(id);
      return id;
    }
    const int copies = u(rng_) < duplicate_ ? 2 : 1;
    for (int i = 0; i < copies; ++i)
      flight_.push_back({now + delay(rng_), id, d});
    return id;
  }
  std::vector<std::vector<std::uint8_t>> receive(double now) {
    std::sort(flight_.begin(), flight_.end(),
              [](const auto& a, const auto& b) { return a.arrival > b.arrival; });
    std::vector<std::vector<std::uint8_t>> out;
    while (!flight_.empty() && flight_.back().arrival <= now) {
      arrivals_.push_back(flight_.back().id);
      out.push_back(std::move(flight_.back().bytes));
      flight_.pop_back();
    }
    return out;
  }
  const std::vector<std::size_t>& arrivals() const { return arrivals_; }
  bool lost(std::size_t id) const { return lost_.contains(id); }

 private:
  struct Flight {
    double arrival;
    std::size_t id;
    std::vector<std::uint8_t> bytes;
  };
  std::mt19937 rng_;
  double loss_, duplicate_;
  std::size_t sent_ = 0;
  std::vector<Flight> flight_;
  std::vector<std::size_t> arrivals_;
  std::set<std::size_t> lost_;
};

inline ContactRecord make_contact(std::uint64_t tick, std::uint32_t a, std::mt19937& rng) {
  UniformReal<float> u(0, 1);
  Contact c;
  c.tick = tick;
  c.time = u(rng);
  c.phase = static_cast<ContactPhase>(rng() % 3);
  c.a = a;
  c.brush = static_cast<std::int32_t>(rng() % 500);
  c.point = {u(rng) * 100, u(rng) * 100, u(rng) * 100};
  c.normal = {0, 0, 1};
  c.relative_speed = u(rng) * 300;
  return {c, 0, kKindLevel};
}

}  // namespace shiftcast::channel_test
