// The RPC's match listing and admin calls over loopback TCP: CreateMatch, MatchStatus, ListMatches,
// EndMatch and IssueConnectToken, each refused without the admin key (Unauthorized), with an unknown match
// (UnknownMatch) or bad arguments (BadArgument); tokens handed out open with the protocol's own
// open_connect_token under the server's key, bound to its public address, expiring when the reply says.
#include <gtest/gtest.h>

#include <string>

#include "protocol/connect_token.hpp"
#include "tests/support/query_requests.hpp"
#include "tests/support/rpc_harness.hpp"

namespace shiftcast::rpc_test {
namespace {

constexpr char kAdminKey[] = "rpc-test-admin-key";
constexpr char kPublicAddress[] = "127.0.0.1:40000";
constexpr std::uint64_t kUnixNow = 1'700'000'000;
constexpr std::uint32_t kDefaultValidity = 45;

RpcSettings admin_settings() {
  RpcSettings s;
  s.admin_key = kAdminKey;
  s.open_reads = true;  // reads and their keys are hostile_rpc_test.cpp's
  s.keys.token_key.fill(7);
  s.public_address = kPublicAddress;
  s.token_valid_seconds = kDefaultValidity;
  s.unix_now = [] { return kUnixNow; };
  return s;
}

class RpcAdminTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { arena_ = new query_test::ArenaMatch(4, 4, 2, 5); }
  static void TearDownTestSuite() {
    delete arena_;
    arena_ = nullptr;
  }
  void SetUp() override {
    rpc_ = std::make_unique<RpcHarness>(arena_->directory, admin_settings());
    client_ = std::make_unique<LoopbackClient>(rpc_->port());
    ASSERT_TRUE(client_->connected());
  }

  // Sends one request and returns its reply (checked to carry the request's id).
  template <typename T>
  Frame ask(flatbuffers::FlatBufferBuilder& fbb, wire::Message type, flatbuffers::Offset<T> body) {
    const std::uint64_t id = next_id_++;
    EXPECT_TRUE(client_->send(request_frame(fbb, type, body, id)));
    std::optional<Frame> f = client_->read_frame();
    EXPECT_TRUE(f.has_value());
    if (!f) return {};
    EXPECT_EQ(f->envelope()->request_id(), id);
    return *f;
  }
  void expect_error(const Frame& f, wire::ErrorCode code) {
    const wire::RpcError* e = f.envelope() ? f.envelope()->message_as_RpcError() : nullptr;
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->code(), code) << (e->detail() ? e->detail()->str() : "");
  }
  Frame create(const char* key, const char* level = "arena") {
    flatbuffers::FlatBufferBuilder fbb;
    return ask(fbb, wire::Message::CreateMatch, wire::CreateCreateMatchDirect(fbb, key, level, 4, 2, 11));
  }
  Frame end(const char* key, std::uint32_t match) {
    flatbuffers::FlatBufferBuilder fbb;
    return ask(fbb, wire::Message::EndMatch, wire::CreateEndMatchDirect(fbb, key, match));
  }
  Frame status(std::uint32_t match) {
    flatbuffers::FlatBufferBuilder fbb;
    return ask(fbb, wire::Message::MatchStatus, wire::CreateMatchStatus(fbb, match));
  }
  std::vector<std::uint32_t> listed() {
    flatbuffers::FlatBufferBuilder fbb;
    const Frame f = ask(fbb, wire::Message::ListMatches, wire::CreateListMatches(fbb));
    const wire::ListMatchesReply* r = f.envelope()->message_as_ListMatchesReply();
    EXPECT_NE(r, nullptr);
    std::vector<std::uint32_t> ids;
    if (r != nullptr && r->matches() != nullptr) {
      for (const wire::MatchInfo* m : *r->matches())
        ids.push_back(m->match_id());
    }
    return ids;
  }
  Frame token(const char* key, std::uint32_t match, std::uint64_t client,
              std::optional<std::uint32_t> valid) {
    flatbuffers::FlatBufferBuilder fbb;
    // An explicit value is always written; none leaves the field out (the schema default, 30, is omitted).
    fbb.ForceDefaults(valid.has_value());
    return ask(fbb, wire::Message::IssueConnectToken,
               wire::CreateIssueConnectTokenDirect(fbb, key, match, client, valid.value_or(30)));
  }

  static inline query_test::ArenaMatch* arena_ = nullptr;
  std::unique_ptr<RpcHarness> rpc_;
  std::unique_ptr<LoopbackClient> client_;
  std::uint64_t next_id_ = 1;
};

TEST_F(RpcAdminTest, MatchesAreCreatedListedAndEndedOnlyWithTheAdminKey) {
  expect_error(create("not the key"), wire::ErrorCode::Unauthorized);
  expect_error(create(""), wire::ErrorCode::Unauthorized);
  expect_error(create(nullptr), wire::ErrorCode::Unauthorized);
  expect_error(create(kAdminKey, "no such level"), wire::ErrorCode::UnknownLevel);
  EXPECT_EQ(rpc_->rejections.count(wire::ErrorCode::Unauthorized), 3u);

  const Frame created = create(kAdminKey);
  const wire::CreateMatchReply* c = created.envelope()->message_as_CreateMatchReply();
  ASSERT_NE(c, nullptr);
  const std::uint32_t id = c->match_id();
  EXPECT_NE(id, arena_->id);
  EXPECT_EQ(listed(), (std::vector<std::uint32_t>{arena_->id, id}));

  const Frame s = status(id);
  const wire::MatchStatusReply* st = s.envelope()->message_as_MatchStatusReply();
  ASSERT_NE(st, nullptr);
  const MatchHealth health = arena_->directory.find(id)->health();
  EXPECT_EQ(st->info()->match_id(), id);
  EXPECT_EQ(st->info()->level()->str(), "arena");
  EXPECT_EQ(st->info()->tick(), health.summary.tick);
  EXPECT_EQ(st->info()->max_players(), 4);
  EXPECT_EQ(st->info()->entities(), health.summary.entities);

  expect_error(end("wrong", id), wire::ErrorCode::Unauthorized);
  EXPECT_NE(end(kAdminKey, id).envelope()->message_as_EndMatchReply(), nullptr);
  EXPECT_EQ(listed(), (std::vector<std::uint32_t>{arena_->id}));
  expect_error(status(id), wire::ErrorCode::UnknownMatch);
  expect_error(end(kAdminKey, id), wire::ErrorCode::UnknownMatch);
}

TEST_F(RpcAdminTest, AnEmptyAdminKeyRefusesEveryAdminCall) {
  RpcSettings s = admin_settings();
  s.admin_key.clear();
  RpcHarness open(arena_->directory, s);
  LoopbackClient c(open.port());
  flatbuffers::FlatBufferBuilder fbb;
  ASSERT_TRUE(c.send(
      request_frame(fbb, wire::Message::CreateMatch, wire::CreateCreateMatchDirect(fbb, "", "arena"), 1)));
  const std::optional<Frame> f = c.read_frame();
  ASSERT_TRUE(f.has_value());
  ASSERT_NE(f->envelope()->message_as_RpcError(), nullptr);
  EXPECT_EQ(f->envelope()->message_as_RpcError()->code(), wire::ErrorCode::Unauthorized);
}

TEST_F(RpcAdminTest, ConnectTokensOpenUnderTheServerKeyAndExpireWhenTheReplySays) {
  expect_error(token("wrong", arena_->id, 5, 60), wire::ErrorCode::Unauthorized);
  expect_error(token(kAdminKey, 999, 5, 60), wire::ErrorCode::UnknownMatch);
  expect_error(token(kAdminKey, arena_->id, 0, 60), wire::ErrorCode::BadArgument);
  expect_error(token(kAdminKey, arena_->id, 5, 0), wire::ErrorCode::BadArgument);
  expect_error(token(kAdminKey, arena_->id, 5, 3601), wire::ErrorCode::BadArgument);

  for (const std::optional<std::uint32_t> valid :
       {std::optional<std::uint32_t>(60), std::optional<std::uint32_t>(1), std::optional<std::uint32_t>(3600),
        std::optional<std::uint32_t>()}) {
    const Frame f = token(kAdminKey, arena_->id, 42, valid);
    const wire::IssueConnectTokenReply* r = f.envelope()->message_as_IssueConnectTokenReply();
    ASSERT_NE(r, nullptr);
    const std::uint64_t expires = kUnixNow + valid.value_or(kDefaultValidity);
    EXPECT_EQ(r->expires_at(), expires);
    EXPECT_EQ(r->server_address()->str(), kPublicAddress);
    EXPECT_EQ(r->match_id(), arena_->id);
    EXPECT_EQ(r->client_id(), 42u);
    ASSERT_EQ(r->token_nonce()->size(), kTokenNonceBytes);
    ASSERT_EQ(r->client_to_server_key()->size(), kKeyBytes);
    ASSERT_EQ(r->server_to_client_key()->size(), kKeyBytes);

    // The client's side: the ConnectionRequest it would send, opened as the UDP endpoint opens it.
    ConnectToken t;
    t.server_address = r->server_address()->str();
    t.match_id = r->match_id();
    t.client_id = r->client_id();
    t.expires_at = r->expires_at();
    std::copy(r->token_nonce()->begin(), r->token_nonce()->end(), t.nonce.begin());
    t.sealed.assign(r->sealed_token()->begin(), r->sealed_token()->end());
    std::copy(r->client_to_server_key()->begin(), r->client_to_server_key()->end(),
              t.client_to_server.begin());
    std::copy(r->server_to_client_key()->begin(), r->server_to_client_key()->end(),
              t.server_to_client.begin());
    const std::vector<std::uint8_t> datagram = build_connection_request(t);
    const EnvelopeView v = verify_envelope(datagram, kMaxDatagramBytes);
    ASSERT_EQ(v.error, wire::ErrorCode::Ok);
    const wire::ConnectionRequest& request = *v.envelope->message_as_ConnectionRequest();
    Key key;
    key.fill(7);
    const OpenedToken opened = open_connect_token(key, request, kPublicAddress, expires - 1);
    EXPECT_EQ(opened.error, wire::ErrorCode::Ok);
    EXPECT_EQ(opened.client_id, 42u);
    EXPECT_EQ(opened.client_to_server, t.client_to_server);
    EXPECT_EQ(opened.server_to_client, t.server_to_client);
    EXPECT_EQ(open_connect_token(key, request, kPublicAddress, expires).error, wire::ErrorCode::TokenExpired);
    Key other = key;
    other[0] ^= 1;
    EXPECT_EQ(open_connect_token(other, request, kPublicAddress, expires - 1).error,
              wire::ErrorCode::TokenInvalid);
  }
}

}  // namespace
}  // namespace shiftcast::rpc_test
