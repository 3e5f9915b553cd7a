#include "protocol/handshake.hpp"

#include <gtest/gtest.h>

#include "protocol/envelope.hpp"
#include "protocol/wire_constants.hpp"
#include "tests/support/fixed_keys.hpp"

namespace shiftcast {
namespace {

constexpr char kServer[] = "127.0.0.1:40000";
constexpr char kClientAddress[] = "10.0.0.7:5000";
constexpr std::uint64_t kNow = 1'700'000'000;
constexpr std::uint64_t kExpiry = kNow + 30;

TokenNonce filled_nonce(std::uint8_t value) {
  TokenNonce nonce;
  nonce.fill(value);
  return nonce;
}

// Bytes that came off the wire, verified, with the message of the expected type.
template <typename T>
struct Received {
  std::vector<std::uint8_t> bytes;
  const T* message = nullptr;
};

template <typename T>
Received<T> receive(std::vector<std::uint8_t> datagram) {
  Received<T> r{std::move(datagram)};
  const EnvelopeView view = verify_envelope(r.bytes, kMaxDatagramBytes);
  EXPECT_EQ(view.error, wire::ErrorCode::Ok);
  if (view.envelope) r.message = view.envelope->template message_as<T>();
  EXPECT_NE(r.message, nullptr);
  return r;
}

std::vector<std::uint8_t> response_with(std::uint32_t match_id, std::uint64_t client_id,
                                        const std::vector<std::uint8_t>& blob) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto body = wire::CreateChallengeResponseDirect(fbb, match_id, client_id, &blob);
  finish_envelope(fbb, wire::Message::ChallengeResponse, body.Union());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

class HandshakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(crypto_init());
    keys_.token_key = random_key();
    keys_.challenge_key = random_key();
    token_ = issue_connect_token(keys_.token_key, kServer, 7, 1001, kExpiry);
    request_ = receive<wire::ConnectionRequest>(build_connection_request(token_));
    opened_ = open_connect_token(keys_.token_key, *request_.message, kServer, kNow);
    ASSERT_EQ(opened_.error, wire::ErrorCode::Ok);
    challenge_ = receive<wire::ConnectionChallenge>(
        make_challenge(keys_, opened_, kClientAddress, random_token_nonce(), random_token_nonce()));
  }

  // The client's answer to the challenge, as the server receives it.
  Received<wire::ChallengeResponse> respond() {
    auto response = build_challenge_response(token_, *challenge_.message);
    EXPECT_TRUE(response.has_value());
    return receive<wire::ChallengeResponse>(response.value_or(std::vector<std::uint8_t>{}));
  }

  ServerKeys keys_;
  ConnectToken token_;
  Received<wire::ConnectionRequest> request_;
  OpenedToken opened_;
  Received<wire::ConnectionChallenge> challenge_;
};

TEST_F(HandshakeTest, FullRoundTrip) {
  const auto response = respond();
  EXPECT_GE(response.bytes.size(), kMinRequestBytes);
  EXPECT_LE(response.bytes.size(), kMaxDatagramBytes);
  const AcceptedChallenge accepted = open_challenge_response(keys_, *response.message, kClientAddress, kNow);
  ASSERT_EQ(accepted.error, wire::ErrorCode::Ok);
  EXPECT_EQ(accepted.match_id, 7u);
  EXPECT_EQ(accepted.client_id, 1001u);
  EXPECT_EQ(accepted.expires_at, kExpiry);
  EXPECT_EQ(accepted.client_to_server, token_.client_to_server);
  EXPECT_EQ(accepted.server_to_client, token_.server_to_client);
  EXPECT_EQ(accepted.token_mac, opened_.mac);
}

TEST_F(HandshakeTest, NoPreConnectionReplyAmplifies) {
  EXPECT_LT(challenge_.bytes.size(), kMinRequestBytes);
  EXPECT_LT(challenge_.bytes.size(), request_.bytes.size());
  // The longest address a client can have (IPv6 with brackets and port) still keeps it small.
  const auto longest = make_challenge(keys_, opened_, "[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535",
                                      filled_nonce(1), filled_nonce(2));
  EXPECT_LT(longest.size(), kMinRequestBytes);
  for (const auto code : wire::EnumValuesErrorCode()) {
    EXPECT_LT(build_denied(code).size(), kMinRequestBytes);
  }
}

TEST_F(HandshakeTest, ChallengeIsDeterministicGivenTheNonces) {
  const auto a = make_challenge(keys_, opened_, kClientAddress, filled_nonce(3), filled_nonce(4));
  EXPECT_EQ(make_challenge(keys_, opened_, kClientAddress, filled_nonce(3), filled_nonce(4)), a);
  EXPECT_NE(make_challenge(keys_, opened_, kClientAddress, filled_nonce(3), filled_nonce(5)), a);
}

TEST_F(HandshakeTest, ClientRefusesATamperedOrForeignChallenge) {
  const auto* sealed = challenge_.message->sealed();
  const std::vector<std::uint8_t> nonce(challenge_.message->nonce()->begin(),
                                        challenge_.message->nonce()->end());
  for (std::size_t i = 0; i < sealed->size(); ++i) {
    std::vector<std::uint8_t> tampered(sealed->begin(), sealed->end());
    tampered[i] ^= 0x01;
    flatbuffers::FlatBufferBuilder fbb;
    const auto body = wire::CreateConnectionChallengeDirect(fbb, 7, 1001, &nonce, &tampered);
    finish_envelope(fbb, wire::Message::ConnectionChallenge, body.Union());
    const auto r =
        receive<wire::ConnectionChallenge>({fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()});
    ASSERT_FALSE(build_challenge_response(token_, *r.message).has_value()) << i;
  }
  // Another token's holder (other keys) cannot answer it.
  const auto other = issue_connect_token(keys_.token_key, kServer, 7, 1001, kExpiry);
  EXPECT_FALSE(build_challenge_response(other, *challenge_.message).has_value());
  // A challenge naming another client or match is not for this token.
  ConnectToken renamed = token_;
  renamed.client_id = 1002;
  EXPECT_FALSE(build_challenge_response(renamed, *challenge_.message).has_value());
  renamed = token_;
  renamed.match_id = 8;
  EXPECT_FALSE(build_challenge_response(renamed, *challenge_.message).has_value());
}

TEST_F(HandshakeTest, ServerRefusesATamperedBlob) {
  const auto response = respond();
  const std::vector<std::uint8_t> blob(response.message->challenge()->begin(),
                                       response.message->challenge()->end());
  for (std::size_t i = 0; i < blob.size(); ++i) {
    auto tampered = blob;
    tampered[i] ^= 0x80;
    const auto r = receive<wire::ChallengeResponse>(response_with(7, 1001, tampered));
    ASSERT_EQ(open_challenge_response(keys_, *r.message, kClientAddress, kNow).error,
              wire::ErrorCode::ChallengeInvalid)
        << i;
  }
  for (std::size_t length = 0; length < blob.size(); length += 5) {
    const auto r = receive<wire::ChallengeResponse>(
        response_with(7, 1001, std::vector<std::uint8_t>(blob.begin(), blob.begin() + length)));
    EXPECT_EQ(open_challenge_response(keys_, *r.message, kClientAddress, kNow).error,
              wire::ErrorCode::ChallengeInvalid);
  }
  const auto untouched = receive<wire::ChallengeResponse>(response_with(7, 1001, blob));
  EXPECT_EQ(open_challenge_response(keys_, *untouched.message, kClientAddress, kNow).error,
            wire::ErrorCode::Ok);
}

TEST_F(HandshakeTest, ServerRefusesOtherIdsAddressOrKey) {
  const auto response = respond();
  const std::vector<std::uint8_t> blob(response.message->challenge()->begin(),
                                       response.message->challenge()->end());
  const auto other_client = receive<wire::ChallengeResponse>(response_with(7, 1002, blob));
  EXPECT_EQ(open_challenge_response(keys_, *other_client.message, kClientAddress, kNow).error,
            wire::ErrorCode::ChallengeInvalid);
  const auto other_match = receive<wire::ChallengeResponse>(response_with(8, 1001, blob));
  EXPECT_EQ(open_challenge_response(keys_, *other_match.message, kClientAddress, kNow).error,
            wire::ErrorCode::ChallengeInvalid);
  EXPECT_EQ(open_challenge_response(keys_, *response.message, "10.0.0.7:5001", kNow).error,
            wire::ErrorCode::ChallengeInvalid);
  ServerKeys restarted = keys_;
  restarted.challenge_key = random_key();
  EXPECT_EQ(open_challenge_response(restarted, *response.message, kClientAddress, kNow).error,
            wire::ErrorCode::ChallengeInvalid);
}

// A challenge is answerable for kChallengeLifetimeSeconds after its request was opened (the token here
// has 30 s left, more than that): then ChallengeInvalid, and TokenExpired once the token itself expired.
TEST_F(HandshakeTest, AChallengeExpiresAfterItsLifetimeAndWithItsToken) {
  static_assert(kNow + kChallengeLifetimeSeconds < kExpiry);
  const auto response = respond();
  const auto at = [&](std::uint64_t now) {
    return open_challenge_response(keys_, *response.message, kClientAddress, now).error;
  };
  EXPECT_EQ(at(kNow + kChallengeLifetimeSeconds - 1), wire::ErrorCode::Ok);
  EXPECT_EQ(at(kNow + kChallengeLifetimeSeconds), wire::ErrorCode::ChallengeInvalid);
  EXPECT_EQ(at(kExpiry - 1), wire::ErrorCode::ChallengeInvalid);
  EXPECT_EQ(at(kExpiry), wire::ErrorCode::TokenExpired);
}

// A token with less time left than a challenge's lifetime: the token's expiry bounds the challenge.
TEST_F(HandshakeTest, AChallengeNeverOutlivesItsToken) {
  const std::uint64_t expiry = kNow + kChallengeLifetimeSeconds / 2;
  const ConnectToken token = issue_connect_token(keys_.token_key, kServer, 7, 1002, expiry);
  const auto request = receive<wire::ConnectionRequest>(build_connection_request(token));
  const OpenedToken opened = open_connect_token(keys_.token_key, *request.message, kServer, kNow);
  ASSERT_EQ(opened.error, wire::ErrorCode::Ok);
  const auto challenge = receive<wire::ConnectionChallenge>(
      make_challenge(keys_, opened, kClientAddress, random_token_nonce(), random_token_nonce()));
  const auto response =
      receive<wire::ChallengeResponse>(*build_challenge_response(token, *challenge.message));
  EXPECT_EQ(open_challenge_response(keys_, *response.message, kClientAddress, expiry - 1).error,
            wire::ErrorCode::Ok);
  EXPECT_EQ(open_challenge_response(keys_, *response.message, kClientAddress, expiry).error,
            wire::ErrorCode::TokenExpired);
}

// Authentic under the challenge key but inconsistent inside: refused all the same.
TEST_F(HandshakeTest, AuthenticButInconsistentChallengeTokenIsInvalid) {
  const TokenNonce inner_nonce = filled_nonce(9);
  // Variant 3 is consistent: the control that the seal below is make_challenge's.
  for (int variant = 0; variant < 4; ++variant) {
    flatbuffers::FlatBufferBuilder fbb;
    const std::vector<std::uint8_t> mac(variant == 2 ? 15 : 16, 3);
    const std::vector<std::uint8_t> key(32, 4);
    const auto body = wire::CreateChallengeTokenDirect(fbb, 7, variant == 0 ? 1002 : 1001, kExpiry,
                                                       variant == 1 ? nullptr : kClientAddress, &mac, &key,
                                                       &key, kNow + kChallengeLifetimeSeconds);
    finish_envelope(fbb, wire::Message::ChallengeToken, body.Union());
    // Sealed the way make_challenge seals (associated data: the ids with expiry 0, docs/protocol.md).
    const auto sealed =
        seal_xchacha(keys_.challenge_key, inner_nonce, {fbb.GetBufferPointer(), fbb.GetSize()},
                     token_associated_data(7, 1001, 0));
    std::vector<std::uint8_t> blob(inner_nonce.size() + sealed.size());
    std::copy(inner_nonce.begin(), inner_nonce.end(), blob.begin());
    std::copy(sealed.begin(), sealed.end(), blob.begin() + kTokenNonceBytes);
    const auto r = receive<wire::ChallengeResponse>(response_with(7, 1001, blob));
    EXPECT_EQ(open_challenge_response(keys_, *r.message, kClientAddress, kNow).error,
              variant == 3 ? wire::ErrorCode::Ok : wire::ErrorCode::ChallengeInvalid)
        << variant;
  }
}

TEST_F(HandshakeTest, DeniedCarriesItsCode) {
  const auto denied = receive<wire::ConnectionDenied>(build_denied(wire::ErrorCode::MatchFull));
  EXPECT_EQ(denied.message->code(), wire::ErrorCode::MatchFull);
  EXPECT_LE(denied.bytes.size(), 64u);
}

// Token key rotation: the server opens under the current key, then the previous one, says which opened
// it, and still checks instance, address and expiry whichever key it was; a third key opens under
// neither, and without a previous key only the current one opens.
TEST(TokenKeyRotation, TheServerOpensUnderTheCurrentThenThePreviousKey) {
  constexpr std::uint64_t kInstance = 0x1234;
  ServerKeys keys;
  keys.token_key = fixed_key(1);
  keys.challenge_key = fixed_key(2);
  keys.server_instance = kInstance;
  keys.previous_token_key = fixed_key(3);
  auto open_under = [&](const Key& key, std::uint64_t instance, std::uint64_t now) {
    const ConnectToken token = issue_connect_token(key, kServer, 7, 1001, kExpiry, fixed_nonce(4),
                                                   fixed_key(5), fixed_key(6), instance);
    const auto request = receive<wire::ConnectionRequest>(build_connection_request(token));
    return open_connect_token(keys, *request.message, kServer, now);
  };
  ServerOpenedToken o = open_under(fixed_key(1), kInstance, kNow);
  EXPECT_EQ(o.token.error, wire::ErrorCode::Ok);
  EXPECT_EQ(o.key, TokenKeyUsed::kCurrent);
  o = open_under(fixed_key(3), kInstance, kNow);
  EXPECT_EQ(o.token.error, wire::ErrorCode::Ok);
  EXPECT_EQ(o.key, TokenKeyUsed::kPrevious);
  EXPECT_EQ(o.token.client_to_server, fixed_key(5));
  // Opened under the previous key, still bound to the instance and the expiry.
  o = open_under(fixed_key(3), kInstance + 1, kNow);
  EXPECT_EQ(o.token.error, wire::ErrorCode::WrongServer);
  EXPECT_EQ(o.key, TokenKeyUsed::kPrevious);
  o = open_under(fixed_key(3), kInstance, kExpiry);
  EXPECT_EQ(o.token.error, wire::ErrorCode::TokenExpired);
  EXPECT_EQ(o.key, TokenKeyUsed::kPrevious);
  o = open_under(fixed_key(8), kInstance, kNow);
  EXPECT_EQ(o.token.error, wire::ErrorCode::TokenInvalid);
  EXPECT_EQ(o.key, TokenKeyUsed::kNone);
  keys.previous_token_key.reset();
  o = open_under(fixed_key(3), kInstance, kNow);
  EXPECT_EQ(o.token.error, wire::ErrorCode::TokenInvalid);
  EXPECT_EQ(o.key, TokenKeyUsed::kNone);
  o = open_under(fixed_key(1), kInstance, kNow);
  EXPECT_EQ(o.key, TokenKeyUsed::kCurrent);
}

}  // namespace
}  // namespace shiftcast
