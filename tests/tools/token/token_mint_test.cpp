// Minting in process: the documented inputs give the documented sealed token (the bytes the admin RPC's
// issue_connect_token gives, docs/protocol.md "connect_token_sealed"); a minted token opens on the server
// side (open_connect_token, the server's own oracle) only at its address, instance and key; every bad
// input is refused with its reason, all at once; the address and instance text forms.
#include "tools/token/token_mint.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "protocol/connect_token.hpp"
#include "protocol/envelope.hpp"
#include "tests/support/fixed_keys.hpp"
#include "tests/tools/token/doc_vectors.hpp"

namespace shiftcast {
namespace {

// The ConnectionRequest of `token`, verified, as the server receives it.
struct ReceivedRequest {
  std::vector<std::uint8_t> datagram;
  const wire::ConnectionRequest* request = nullptr;
};
ReceivedRequest receive(const ConnectToken& token) {
  ReceivedRequest r;
  r.datagram = build_connection_request(token);
  const EnvelopeView view = verify_envelope(r.datagram, kMaxDatagramBytes);
  if (view.error == wire::ErrorCode::Ok) r.request = view.envelope->message_as_ConnectionRequest();
  return r;
}

TEST(TokenMint, TheDocumentedInputsGiveTheDocumentedToken) {
  const MintRequest request = documented_mint_request();
  const MintResult minted = mint_connect_token(request, kDocNow);
  ASSERT_TRUE(minted.ok()) << minted.error;
  const std::vector<std::uint8_t> want = doc_vector_bytes("connect_token_sealed");
  ASSERT_EQ(want.size(), 208u);
  EXPECT_EQ(minted.token->sealed, want);
  EXPECT_EQ(build_connection_request(*minted.token), doc_vector_bytes("connection_request"));
  // What the admin RPC issues for the same inputs, byte for byte.
  const ConnectToken issued = issue_connect_token(
      request.token_key, request.server_address, request.match_id, request.client_id, request.expires_at,
      *request.nonce, *request.client_to_server, *request.server_to_client, request.server_instance);
  EXPECT_EQ(minted.token->sealed, issued.sealed);
}

TEST(TokenMint, AMintedTokenOpensOnlyAtItsServerInstanceAndKey) {
  MintRequest request;
  request.token_key = fixed_key(5);
  request.server_address = "10.1.2.3:40000";
  request.server_instance = 0x00000000deadbeefull;
  request.match_id = 3;
  request.client_id = 77;
  request.expires_at = kDocNow + 60;
  const MintResult minted = mint_connect_token(request, kDocNow);
  ASSERT_TRUE(minted.ok()) << minted.error;
  const ReceivedRequest received = receive(*minted.token);
  ASSERT_NE(received.request, nullptr);
  const OpenedToken opened = open_connect_token(request.token_key, *received.request, request.server_address,
                                                kDocNow, request.server_instance);
  EXPECT_EQ(opened.error, wire::ErrorCode::Ok);
  EXPECT_EQ(opened.match_id, 3u);
  EXPECT_EQ(opened.client_id, 77u);
  EXPECT_EQ(opened.client_to_server, minted.token->client_to_server);
  EXPECT_EQ(open_connect_token(request.token_key, *received.request, request.server_address, kDocNow,
                               request.server_instance + 1)
                .error,
            wire::ErrorCode::WrongServer);
  EXPECT_EQ(open_connect_token(request.token_key, *received.request, "10.1.2.3:40001", kDocNow,
                               request.server_instance)
                .error,
            wire::ErrorCode::WrongServer);
  EXPECT_EQ(open_connect_token(fixed_key(6), *received.request, request.server_address, kDocNow,
                               request.server_instance)
                .error,
            wire::ErrorCode::TokenInvalid);
  // Fresh nonce and keys each time unless fixed.
  const MintResult again = mint_connect_token(request, kDocNow);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again.token->nonce, minted.token->nonce);
  EXPECT_NE(again.token->client_to_server, minted.token->client_to_server);
  EXPECT_NE(again.token->server_to_client, minted.token->server_to_client);
}

TEST(TokenMint, EveryBadInputIsRefusedWithItsReasonAllAtOnce) {
  struct Case {
    void (*spoil)(MintRequest&);
    const char* reason;
  };
  const Case cases[] = {
      {[](MintRequest& r) { r.server_address = "127.0.0.1"; },
       "server address \"127.0.0.1\": must be ip:port"},
      {[](MintRequest& r) { r.server_instance = 0; }, "no server has instance 0"},
      {[](MintRequest& r) { r.match_id = 0; }, "match id 0"},
      {[](MintRequest& r) { r.client_id = 0; }, "client id 0"},
      {[](MintRequest& r) { r.expires_at = kDocNow; }, "expiry 1700000000: not after now (1700000000)"},
      {[](MintRequest& r) { r.expires_at = kDocNow - 1; }, "not after now"},
      {[](MintRequest& r) { r.expires_at = kDocNow + kMaxTokenValidSeconds + 1; }, "more than 3600 s"},
  };
  for (const Case& c : cases) {
    MintRequest r = documented_mint_request();
    c.spoil(r);
    const MintResult m = mint_connect_token(r, kDocNow);
    EXPECT_FALSE(m.ok()) << c.reason;
    EXPECT_NE(m.error.find(c.reason), std::string::npos) << m.error;
  }
  // The whole window is accepted: one second ahead, and kMaxTokenValidSeconds ahead.
  for (const std::uint64_t ahead : {std::uint64_t(1), std::uint64_t(kMaxTokenValidSeconds)}) {
    MintRequest r = documented_mint_request();
    r.expires_at = kDocNow + ahead;
    EXPECT_TRUE(mint_connect_token(r, kDocNow).ok()) << ahead;
  }
  MintRequest all;
  const MintResult m = mint_connect_token(all, kDocNow);
  EXPECT_FALSE(m.ok());
  EXPECT_EQ(std::count(m.error.begin(), m.error.end(), '\n'), 4) << m.error;  // five problems, one per line
}

TEST(TokenMint, ServerAddressesInTheFormsTheServerWrites) {
  for (const char* good : {"127.0.0.1:40000", "203.0.113.7:1", "10.0.0.1:65535", "[::1]:40000",
                           "[2001:db8::7]:5000", "[::ffff:10.0.0.1]:7"}) {
    EXPECT_TRUE(is_server_address(good)) << good;
  }
  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:040000",
                          "127.0.0.1:+4", "127.0.0.1:40000 ", "localhost:40000", "::1:40000", "[::1]",
                          "[::1:40000", "1.2.3:40000", "1.2.3.256:40000", "[127.0.0.1]:40000", ":40000"}) {
    EXPECT_FALSE(is_server_address(bad)) << bad;
  }
}

TEST(TokenMint, ServerInstancesAreSixteenHexDigits) {
  EXPECT_EQ(parse_server_instance("0123456789abcdef"), 0x0123456789abcdefull);
  EXPECT_EQ(parse_server_instance("0123456789ABCDEF"), 0x0123456789abcdefull);
  EXPECT_EQ(parse_server_instance("ffffffffffffffff"), ~std::uint64_t(0));
  EXPECT_EQ(parse_server_instance("0000000000000000"), 0u);  // parses; minting refuses it
  for (const char* bad :
       {"", "123", "0x23456789abcdef", "0123456789abcdeg", "0123456789abcdef0", " 123456789abcdef"})
    EXPECT_FALSE(parse_server_instance(bad).has_value()) << bad;
  EXPECT_EQ(server_instance_hex(0x0123456789abcdefull), "0123456789abcdef");
  EXPECT_EQ(server_instance_hex(1), "0000000000000001");
  EXPECT_EQ(to_hex(std::vector<std::uint8_t>{0x00, 0xab, 0xff}), "00abff");
  EXPECT_EQ(from_hex("00ABff", 3), (std::vector<std::uint8_t>{0x00, 0xab, 0xff}));
  EXPECT_FALSE(from_hex("00abf", 3).has_value());
  EXPECT_FALSE(from_hex("00abfg", 3).has_value());
}

}  // namespace
}  // namespace shiftcast
