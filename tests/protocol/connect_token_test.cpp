#include "protocol/connect_token.hpp"

#include <gtest/gtest.h>

#include <random>

#include "protocol/envelope.hpp"
#include "protocol/wire_constants.hpp"

namespace shiftcast {
namespace {

constexpr char kServer[] = "127.0.0.1:40000";
constexpr std::uint64_t kNow = 1'700'000'000;
constexpr std::uint64_t kExpiry = kNow + 30;

Key filled_key(std::uint8_t value) {
  Key key;
  key.fill(value);
  return key;
}

// The server's view of a request datagram: verified, then the ConnectionRequest.
struct Received {
  std::vector<std::uint8_t> bytes;
  const wire::ConnectionRequest* request = nullptr;
};

Received receive(std::vector<std::uint8_t> datagram) {
  Received r{std::move(datagram)};
  const EnvelopeView view = verify_envelope(r.bytes, kMaxDatagramBytes);
  EXPECT_EQ(view.error, wire::ErrorCode::Ok);
  if (view.envelope) r.request = view.envelope->message_as_ConnectionRequest();
  EXPECT_NE(r.request, nullptr);
  return r;
}

// A request with arbitrary fields, for tokens the library would never build.
Received raw_request(std::uint32_t match_id, std::uint64_t client_id, std::uint64_t expires_at,
                     const std::vector<std::uint8_t>& nonce, const std::vector<std::uint8_t>& sealed) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto body =
      wire::CreateConnectionRequestDirect(fbb, match_id, client_id, expires_at, &nonce, &sealed);
  finish_envelope(fbb, wire::Message::ConnectionRequest, body.Union());
  return receive({fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()});
}

class ConnectTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(crypto_init());
    token_key_ = random_key();
    token_ = issue_connect_token(token_key_, kServer, 7, 1001, kExpiry);
  }
  Key token_key_;
  ConnectToken token_;
};

TEST_F(ConnectTokenTest, AssociatedDataLayout) {
  const auto ad = token_associated_data(0x04030201, 0x0c0b0a0908070605, 0x14131211100f0e0d);
  // Hand-written: "SHC1", version 6 (u16 LE), then the three fields little-endian.
  const std::vector<std::uint8_t> expected{'S',  'H',  'C',  '1',  0x06, 0x00, 0x01, 0x02, 0x03,
                                           0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
                                           0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14};
  EXPECT_EQ(ad, expected);
  EXPECT_EQ(ad.size(), 26u);
}

TEST_F(ConnectTokenTest, IssuedTokenOpensWithEverything) {
  const auto r = receive(build_connection_request(token_));
  const OpenedToken opened = open_connect_token(token_key_, *r.request, kServer, kNow);
  ASSERT_EQ(opened.error, wire::ErrorCode::Ok);
  EXPECT_EQ(opened.match_id, 7u);
  EXPECT_EQ(opened.client_id, 1001u);
  EXPECT_EQ(opened.expires_at, kExpiry);
  EXPECT_EQ(opened.client_to_server, token_.client_to_server);
  EXPECT_EQ(opened.server_to_client, token_.server_to_client);
  EXPECT_NE(opened.client_to_server, opened.server_to_client);
  EXPECT_TRUE(std::equal(opened.mac.begin(), opened.mac.end(), token_.sealed.end() - kMacBytes));
}

TEST_F(ConnectTokenTest, RequestIsPaddedAndDeterministic) {
  const auto datagram = build_connection_request(token_);
  EXPECT_GE(datagram.size(), kMinRequestBytes);
  EXPECT_LE(datagram.size(), kMaxDatagramBytes);
  EXPECT_EQ(build_connection_request(token_), datagram);
  const auto r = receive(datagram);
  ASSERT_NE(r.request->padding(), nullptr);
  for (std::uint8_t b : *r.request->padding())
    EXPECT_EQ(b, 0);
  EXPECT_EQ(r.request->token_nonce()->size(), kTokenNonceBytes);
}

TEST_F(ConnectTokenTest, DeterministicIssueGivesTheSameToken) {
  const TokenNonce nonce{};
  const auto a = issue_connect_token(token_key_, kServer, 1, 2, 3, nonce, filled_key(1), filled_key(2));
  const auto b = issue_connect_token(token_key_, kServer, 1, 2, 3, nonce, filled_key(1), filled_key(2));
  EXPECT_EQ(a.sealed, b.sealed);
  EXPECT_NE(token_.sealed, issue_connect_token(token_key_, kServer, 7, 1001, kExpiry).sealed);
}

TEST_F(ConnectTokenTest, ExpiryIsInclusiveOfNow) {
  const auto r = receive(build_connection_request(token_));
  EXPECT_EQ(open_connect_token(token_key_, *r.request, kServer, kExpiry - 1).error, wire::ErrorCode::Ok);
  EXPECT_EQ(open_connect_token(token_key_, *r.request, kServer, kExpiry).error,
            wire::ErrorCode::TokenExpired);
  EXPECT_EQ(open_connect_token(token_key_, *r.request, kServer, kExpiry + 1000).error,
            wire::ErrorCode::TokenExpired);
}

TEST_F(ConnectTokenTest, WrongServer) {
  const auto r = receive(build_connection_request(token_));
  EXPECT_EQ(open_connect_token(token_key_, *r.request, "127.0.0.1:40001", kNow).error,
            wire::ErrorCode::WrongServer);
  EXPECT_EQ(open_connect_token(token_key_, *r.request, "", kNow).error, wire::ErrorCode::WrongServer);
}

// A restart draws a new server instance: every token of the previous process (spent or not) is refused,
// though its address, match and key are the same.
TEST_F(ConnectTokenTest, TokenOfAnotherServerInstanceIsWrongServer) {
  constexpr std::uint64_t kInstance = 0x0123456789abcdefull;
  const ConnectToken bound = issue_connect_token(token_key_, kServer, 7, 1001, kExpiry, kInstance);
  const auto r = receive(build_connection_request(bound));
  const OpenedToken opened = open_connect_token(token_key_, *r.request, kServer, kNow, kInstance);
  EXPECT_EQ(opened.error, wire::ErrorCode::Ok);
  EXPECT_EQ(opened.server_instance, kInstance);
  EXPECT_EQ(open_connect_token(token_key_, *r.request, kServer, kNow, kInstance + 1).error,
            wire::ErrorCode::WrongServer);
  EXPECT_EQ(open_connect_token(token_key_, *r.request, kServer, kNow, 0).error, wire::ErrorCode::WrongServer);
  // A token without an instance (as issued before instances existed) is refused by any server instance.
  const auto old = receive(build_connection_request(token_));
  EXPECT_EQ(open_connect_token(token_key_, *old.request, kServer, kNow, kInstance).error,
            wire::ErrorCode::WrongServer);
  // Expiry is still judged first: an expired token says so whatever its instance.
  EXPECT_EQ(open_connect_token(token_key_, *r.request, kServer, kExpiry, kInstance + 1).error,
            wire::ErrorCode::TokenExpired);
}

TEST_F(ConnectTokenTest, ForgedTokensAreInvalid) {
  std::mt19937 rng(3);
  for (int round = 0; round < 200; ++round) {
    ConnectToken forged = token_;
    forged.sealed.assign(token_.sealed.size() + rng() % 40 - 20, 0);
    for (auto& b : forged.sealed)
      b = static_cast<std::uint8_t>(rng());
    const auto r = receive(build_connection_request(forged));
    EXPECT_EQ(open_connect_token(token_key_, *r.request, kServer, kNow).error, wire::ErrorCode::TokenInvalid);
  }
  // A well-formed token sealed under another key.
  const auto other = issue_connect_token(random_key(), kServer, 7, 1001, kExpiry);
  const auto r = receive(build_connection_request(other));
  EXPECT_EQ(open_connect_token(token_key_, *r.request, kServer, kNow).error, wire::ErrorCode::TokenInvalid);
}

TEST_F(ConnectTokenTest, ChangedPublicFieldsAreInvalid) {
  // Even when the change would otherwise help the holder (a later expiry), or expire it (an earlier one).
  for (int field = 0; field < 4; ++field) {
    ConnectToken changed = token_;
    if (field == 0) changed.client_id += 1;
    if (field == 1) changed.expires_at += 3600;
    if (field == 2) changed.expires_at = kNow - 1;
    if (field == 3) changed.match_id += 1;
    const auto r = receive(build_connection_request(changed));
    EXPECT_EQ(open_connect_token(token_key_, *r.request, kServer, kNow).error, wire::ErrorCode::TokenInvalid)
        << field;
  }
  ConnectToken other_nonce = token_;
  other_nonce.nonce[0] ^= 1;
  const auto r = receive(build_connection_request(other_nonce));
  EXPECT_EQ(open_connect_token(token_key_, *r.request, kServer, kNow).error, wire::ErrorCode::TokenInvalid);
}

TEST_F(ConnectTokenTest, EveryFlippedByteOfTheSealedTokenIsInvalid) {
  for (std::size_t i = 0; i < token_.sealed.size(); ++i) {
    ConnectToken tampered = token_;
    tampered.sealed[i] ^= 0x10;
    const auto r = receive(build_connection_request(tampered));
    ASSERT_EQ(open_connect_token(token_key_, *r.request, kServer, kNow).error, wire::ErrorCode::TokenInvalid)
        << i;
  }
}

TEST_F(ConnectTokenTest, TruncatedFieldsAreInvalid) {
  const std::vector<std::uint8_t> nonce(token_.nonce.begin(), token_.nonce.end());
  for (std::size_t length = 0; length < token_.sealed.size(); ++length) {
    const std::vector<std::uint8_t> sealed(token_.sealed.begin(), token_.sealed.begin() + length);
    const auto r = raw_request(7, 1001, kExpiry, nonce, sealed);
    ASSERT_EQ(open_connect_token(token_key_, *r.request, kServer, kNow).error, wire::ErrorCode::TokenInvalid)
        << length;
  }
  const auto short_nonce =
      raw_request(7, 1001, kExpiry, std::vector<std::uint8_t>(nonce.begin(), nonce.end() - 1), token_.sealed);
  EXPECT_EQ(open_connect_token(token_key_, *short_nonce.request, kServer, kNow).error,
            wire::ErrorCode::TokenInvalid);
  const auto whole = raw_request(7, 1001, kExpiry, nonce, token_.sealed);
  EXPECT_EQ(open_connect_token(token_key_, *whole.request, kServer, kNow).error, wire::ErrorCode::Ok);

  // A request with neither field at all.
  flatbuffers::FlatBufferBuilder fbb;
  const auto body = wire::CreateConnectionRequest(fbb, 7, 1001, kExpiry);
  finish_envelope(fbb, wire::Message::ConnectionRequest, body.Union());
  const auto empty = receive({fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()});
  EXPECT_EQ(open_connect_token(token_key_, *empty.request, kServer, kNow).error,
            wire::ErrorCode::TokenInvalid);

  // The whole datagram cut short never reaches the token code: the envelope check refuses it.
  const auto datagram = build_connection_request(token_);
  for (std::size_t length = 0; length < datagram.size(); length += 37) {
    EXPECT_NE(verify_envelope(std::span(datagram).first(length), kMaxDatagramBytes).error,
              wire::ErrorCode::Ok);
  }
}

// Authentic under the token key but wrong inside: an issuer bug must not become a valid connection.
TEST_F(ConnectTokenTest, AuthenticButInconsistentContentIsInvalid) {
  const TokenNonce nonce = random_token_nonce();
  const std::vector<std::uint8_t> nonce_bytes(nonce.begin(), nonce.end());
  const auto ad = token_associated_data(7, 1001, kExpiry);

  // Not an envelope at all.
  const std::vector<std::uint8_t> garbage(120, 0x5a);
  auto r = raw_request(7, 1001, kExpiry, nonce_bytes, seal_xchacha(token_key_, nonce, garbage, ad));
  EXPECT_EQ(open_connect_token(token_key_, *r.request, kServer, kNow).error, wire::ErrorCode::TokenInvalid);

  // An envelope whose inner ids disagree with the authenticated public ones, or with keys of the wrong size.
  for (int variant = 0; variant < 4; ++variant) {
    flatbuffers::FlatBufferBuilder fbb;
    const std::vector<std::uint8_t> key(variant == 3 ? 31 : 32, 1);
    const auto body =
        wire::CreateConnectTokenPrivateDirect(fbb, variant == 0 ? 8 : 7, variant == 1 ? 1002 : 1001,
                                              variant == 2 ? kExpiry + 1 : kExpiry, kServer, &key, &key);
    finish_envelope(fbb, wire::Message::ConnectTokenPrivate, body.Union());
    const auto sealed = seal_xchacha(token_key_, nonce, {fbb.GetBufferPointer(), fbb.GetSize()}, ad);
    r = raw_request(7, 1001, kExpiry, nonce_bytes, sealed);
    EXPECT_EQ(open_connect_token(token_key_, *r.request, kServer, kNow).error, wire::ErrorCode::TokenInvalid)
        << variant;
  }
}

}  // namespace
}  // namespace shiftcast
