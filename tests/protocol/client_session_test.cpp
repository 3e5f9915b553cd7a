// ClientSession's handshake against the server's handshake functions: the resend interval, the answer to
// a challenge at the next poll, denials, the token's expiry and the handshake timeout on the clock the
// test passes, and inbound garbage counted by reason and otherwise ignored.
#include "protocol/client_session.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/support/channel_harness.hpp"

namespace shiftcast {
namespace {

using namespace channel_test;

wire::Message message_type(std::span<const std::uint8_t> datagram) {
  const EnvelopeView v = verify_envelope(datagram, kMaxDatagramBytes);
  return v.error == wire::ErrorCode::Ok ? v.envelope->message_type() : wire::Message::NONE;
}

std::size_t rejected(const ClientSession& s, wire::ErrorCode code) {
  return s.counters().rejected[static_cast<std::size_t>(code)];
}

TEST(ClientSession, ResendsEachHandshakeStepEveryInterval) {
  ClientSession client(make_token(), ClientSessionSettings{});
  Server server;
  auto out = client.poll(kStart);
  ASSERT_EQ(out.size(), 1u);
  const std::vector<std::uint8_t> request = out[0];
  EXPECT_EQ(message_type(request), wire::Message::ConnectionRequest);
  EXPECT_GE(request.size(), kMinRequestBytes);
  EXPECT_TRUE(client.poll(kStart + kHandshakeResendInterval / 2).empty());
  EXPECT_TRUE(client.poll(std::nextafter(kStart + kHandshakeResendInterval, 0.0)).empty());
  out = client.poll(kStart + kHandshakeResendInterval);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], request);  // the same bytes: the token does not change
  EXPECT_EQ(client.state(), ClientState::kSendingRequest);

  // The challenge is answered at the very next poll, not a resend interval later.
  const double t = kStart + 0.15;
  const auto challenge = server.on_datagram(request, kClientAddress, t);
  ASSERT_EQ(challenge.size(), 1u);
  EXPECT_EQ(client.on_datagram(challenge[0], t), wire::ErrorCode::Ok);
  EXPECT_EQ(client.state(), ClientState::kSendingResponse);
  out = client.poll(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(message_type(out[0]), wire::Message::ChallengeResponse);
  EXPECT_GE(out[0].size(), kMinRequestBytes);
  EXPECT_TRUE(client.poll(t + kHandshakeResendInterval / 2).empty());
  EXPECT_EQ(client.poll(t + kHandshakeResendInterval).size(), 1u);
  // A second challenge (for a resent request) changes nothing.
  EXPECT_EQ(client.on_datagram(challenge[0], t), wire::ErrorCode::Ok);
  EXPECT_EQ(client.state(), ClientState::kSendingResponse);

  // The server's keep-alive connects it; the first client keep-alive follows one interval later.
  const auto keepalive = server.on_datagram(out[0], kClientAddress, t);
  ASSERT_EQ(keepalive.size(), 1u);
  EXPECT_EQ(client.on_datagram(keepalive[0], t + 0.01), wire::ErrorCode::Ok);
  EXPECT_EQ(client.state(), ClientState::kConnected);
  const double interval = ClientSessionSettings{}.keepalive_interval;
  EXPECT_TRUE(client.poll(std::nextafter(t + 0.01 + interval, 0.0)).empty());
  out = client.poll(t + 0.01 + interval);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(server.on_datagram(out[0], kClientAddress, t + 0.02).size(), 0u);
  EXPECT_EQ(server.last_result, wire::ErrorCode::Ok);
}

TEST(ClientSession, DeniedByTheServer) {
  ClientSession client(make_token(), ClientSessionSettings{});
  ASSERT_EQ(client.poll(kStart).size(), 1u);
  EXPECT_EQ(client.on_datagram(build_denied(wire::ErrorCode::MatchFull), kStart), wire::ErrorCode::Ok);
  EXPECT_EQ(client.state(), ClientState::kDenied);
  EXPECT_EQ(client.code(), wire::ErrorCode::MatchFull);
  EXPECT_TRUE(client.poll(kStart + 1).empty());
  EXPECT_TRUE(client.send_command(command_input(1), 0, kStart + 1).empty());
  EXPECT_TRUE(client.disconnect(kStart + 1).empty());  // no connection was ever made
}

TEST(ClientSession, ServerRefusesAnExpiredToken) {
  // Expired at the server: the denial carries the reason.
  ClientSession client(make_token(2), ClientSessionSettings{});
  Server server;
  const auto request = client.poll(kStart);
  const auto answer = server.on_datagram(request[0], kClientAddress, kStart + 2);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_EQ(client.on_datagram(answer[0], kStart + 2), wire::ErrorCode::Ok);
  EXPECT_EQ(client.state(), ClientState::kDenied);
  EXPECT_EQ(client.code(), wire::ErrorCode::TokenExpired);
}

TEST(ClientSession, HandshakeEndsAtTheTokensExpiryOrItsTimeout) {
  ClientSessionSettings settings;
  settings.handshake_timeout = 10.0;
  ClientSession expiring(make_token(3), settings);
  EXPECT_EQ(expiring.poll(kStart).size(), 1u);
  EXPECT_EQ(expiring.poll(std::nextafter(kStart + 3, 0.0)).size(), 1u);
  EXPECT_TRUE(expiring.poll(kStart + 3).empty());
  EXPECT_EQ(expiring.state(), ClientState::kTimedOut);
  EXPECT_EQ(expiring.code(), wire::ErrorCode::TokenExpired);

  // The same on a steady clock that starts at zero.
  settings.unix_time_offset = kStart;
  ClientSession steady(make_token(3), settings);
  EXPECT_EQ(steady.poll(0.0).size(), 1u);
  EXPECT_EQ(steady.poll(2.95).size(), 1u);
  EXPECT_TRUE(steady.poll(3.0).empty());
  EXPECT_EQ(steady.code(), wire::ErrorCode::TokenExpired);

  settings = {};
  settings.handshake_timeout = 1.0;
  ClientSession waiting(make_token(), settings);
  const double first = kStart + 0.5;  // the timeout runs from the first poll
  EXPECT_EQ(waiting.poll(first).size(), 1u);
  waiting.poll(std::nextafter(first + 1.0, 0.0));
  EXPECT_EQ(waiting.state(), ClientState::kSendingRequest);
  EXPECT_TRUE(waiting.poll(first + 1.0).empty());
  EXPECT_EQ(waiting.state(), ClientState::kTimedOut);
  EXPECT_EQ(waiting.code(), wire::ErrorCode::Timeout);
}

TEST(ClientSession, GarbageIsCountedByReasonAndIgnored) {
  ClientSession client(make_token(), ClientSessionSettings{});
  Server server;
  const auto request = client.poll(kStart);

  std::mt19937 rng(9);
  std::vector<std::uint8_t> noise(300);
  for (auto& b : noise)
    b = static_cast<std::uint8_t>(rng());
  EXPECT_NE(client.on_datagram(noise, kStart), wire::ErrorCode::Ok);
  EXPECT_EQ(client.on_datagram(std::vector<std::uint8_t>(kMaxDatagramBytes + 1), kStart),
            wire::ErrorCode::TooLarge);
  // A first byte that is neither an Envelope's (low bits 00) nor a connected packet's (01).
  EXPECT_EQ(client.on_datagram(std::vector<std::uint8_t>{0x02, 1, 2, 3}, kStart), wire::ErrorCode::Malformed);

  // A challenge sealed for another client's token does not open.
  ClientSession other(
      issue_connect_token(fixed_key(1), kServerAddress, kMatch, kClient, make_token().expires_at,
                          fixed_nonce(2), fixed_key(3), fixed_key(9)),
      ClientSessionSettings{});
  const auto foreign = server.on_datagram(other.poll(kStart)[0], kClientAddress, kStart);
  ASSERT_EQ(foreign.size(), 1u);
  EXPECT_EQ(client.on_datagram(foreign[0], kStart), wire::ErrorCode::ChallengeInvalid);
  // A connected packet before any challenge, and a request sent to a client.
  const auto packet = seal_packet({kMatch, kClient, 1, 0, 0}, Direction::kServerToClient,
                                  make_token().server_to_client, build_denied(wire::ErrorCode::Ok));
  EXPECT_EQ(client.on_datagram(packet, kStart), wire::ErrorCode::UnexpectedMessage);
  EXPECT_EQ(client.on_datagram(request[0], kStart), wire::ErrorCode::UnexpectedMessage);

  EXPECT_EQ(rejected(client, wire::ErrorCode::TooLarge), 1u);
  EXPECT_EQ(rejected(client, wire::ErrorCode::ChallengeInvalid), 1u);
  EXPECT_EQ(rejected(client, wire::ErrorCode::UnexpectedMessage), 2u);
  EXPECT_EQ(client.counters().datagrams_in, 6u);
  EXPECT_EQ(client.state(), ClientState::kSendingRequest);  // none of it moved the handshake

  // The real challenge still works afterwards.
  const auto challenge = server.on_datagram(request[0], kClientAddress, kStart);
  EXPECT_EQ(client.on_datagram(challenge[0], kStart), wire::ErrorCode::Ok);
  EXPECT_EQ(client.state(), ClientState::kSendingResponse);
}

}  // namespace
}  // namespace shiftcast
