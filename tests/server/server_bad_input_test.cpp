// End to end over loopback: every kind of bad input is refused with its counted reason (read back from
// /metrics) while a good player keeps playing: random bytes, truncated, oversized, wrong identifier or
// version, forged, expired, replayed and other-server tokens, unknown matches, NaN and absurd inputs,
// NaN queries, a wrong admin key, and a flood beyond the rate limit.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>

#include "protocol/connected_message.hpp"
#include "protocol/envelope.hpp"
#include "protocol/packet.hpp"
#include "tests/support/server_fixture.hpp"

namespace shiftcast {
namespace {

std::uint64_t unix_now() {
  return std::uint64_t(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

class ServerBadInputTest : public ServerTest {
 protected:
  // Scrapes /metrics until `series` reaches `at_least` (the datagrams may be handled by any worker).
  bool counted(const std::string& series, double at_least) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      if (metric(series) >= at_least) return true;
      // Let the good player's traffic flow meanwhile: it is the wait between two scrapes.
      good_->pump_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  std::unique_ptr<UdpTestClient> good_;
};

std::vector<std::uint8_t> connection_request_for(const ConnectToken& t) {
  return build_connection_request(t);
}

TEST_F(ServerBadInputTest, EveryBadDatagramIsRefusedWithItsReasonWhileOthersPlay) {
  start(test_server_config("", "[rpc]\nrate = 50\nburst = 20\n"));
  good_ = std::make_unique<UdpTestClient>(server_.ports().udp, token(1));
  ASSERT_TRUE(good_->connect());
  ASSERT_TRUE(good_->pump_until([&] { return good_->session().latest_snapshot_tick() > 0; }));
  const std::uint64_t tick_before = good_->session().latest_snapshot_tick();

  UdpTestClient raw(server_.ports().udp, ConnectToken{});
  std::mt19937 rng(5);
  // Random bytes: never a verifiable envelope; those whose first byte marks a connected packet (a quarter)
  // come from an address with no connection.
  for (int i = 0; i < 200; ++i) {
    std::vector<std::uint8_t> junk(1 + rng() % kMaxDatagramBytes);
    for (auto& b : junk)
      b = std::uint8_t(rng());
    raw.send_raw(junk);
  }
  const std::string address = server_.address();
  const ConnectToken valid = issue_connect_token(dev_token_key(), address, 1, 500, unix_now() + 30);
  std::vector<std::uint8_t> request = connection_request_for(valid);
  // Truncated, oversized, wrong identifier, wrong version.
  raw.send_raw(std::span(request).first(request.size() / 2));
  std::vector<std::uint8_t> oversized(kMaxDatagramBytes + 100, 0);
  std::copy(request.begin(), request.end(), oversized.begin());
  raw.send_raw(oversized);
  std::vector<std::uint8_t> wrong_id = request;
  std::copy_n("XXXX", 4, wrong_id.begin() + 4);
  raw.send_raw(wrong_id);
  // A newer version, and the previous one (an old client).
  for (const std::uint16_t version :
       {std::uint16_t(kProtocolVersion + 1), std::uint16_t(kProtocolVersion - 1)}) {
    flatbuffers::FlatBufferBuilder fbb;
    const auto body = wire::CreateKeepAlive(fbb, 1);
    fbb.Finish(wire::CreateEnvelope(fbb, version, 0, wire::Message::KeepAlive, body.Union()),
               kFileIdentifier);
    raw.send_raw({fbb.GetBufferPointer(), fbb.GetSize()});
  }
  // Tokens: forged (sealed under another key), expired, bound to another server, for no such match.
  raw.send_raw(connection_request_for(issue_connect_token(random_key(), address, 1, 501, unix_now() + 30)));
  raw.send_raw(
      connection_request_for(issue_connect_token(dev_token_key(), address, 1, 502, unix_now() - 10)));
  raw.send_raw(connection_request_for(
      issue_connect_token(dev_token_key(), "10.1.2.3:40000", 1, 503, unix_now() + 30)));
  raw.send_raw(connection_request_for(
      issue_connect_token(dev_token_key(), address, 999, 504, unix_now() + 30, server_.instance())));
  // Replayed: the good player's token, already spent.
  raw.send_raw(connection_request_for(good_->session().token()));

  EXPECT_TRUE(counted(rejected("udp", "too_large"), 1));
  EXPECT_TRUE(counted(rejected("udp", "wrong_identifier"), 1));
  EXPECT_TRUE(counted(rejected("udp", "wrong_version"), 2));
  EXPECT_TRUE(counted(rejected("udp", "token_invalid"), 1));
  EXPECT_TRUE(counted(rejected("udp", "token_expired"), 1));
  EXPECT_TRUE(counted(rejected("udp", "wrong_server"), 1));
  EXPECT_TRUE(counted(rejected("udp", "unknown_match"), 1));
  EXPECT_TRUE(counted(rejected("udp", "token_replayed"), 1));
  const std::string text = metrics();
  EXPECT_GE(metric_value(text, rejected("udp", "malformed")) +
                metric_value(text, rejected("udp", "wrong_identifier")) +
                metric_value(text, rejected("udp", "unknown_connection")) +
                metric_value(text, rejected("udp", "rate_limited")),
            201);

  // A connected player whose commands do not decode (protocol 3 carries quantized inputs: NaN or
  // absurd values cannot be spelled, so undecodable bits are what a hostile client can send): refused as
  // malformed, counted, the player stays connected.
  UdpTestClient bad(server_.ports().udp, token(2));
  ASSERT_TRUE(bad.connect());
  const double malformed_before = metric_value(metrics(), rejected("udp", "malformed"));
  for (std::uint64_t k = 0; k < 3; ++k) {
    const std::uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};  // a tier past 64 bits, then more
    std::vector<std::uint8_t> frame;
    write_client_frame(frame, garbage);
    const ConnectToken& t = bad.session().token();
    // Sequences well ahead of the session's own (it has sent a few hundred at most), within the 2^15 the
    // server reconstructs the 16 bits on the wire to.
    bad.send_raw(seal_packet({t.match_id, t.client_id, 20'000 + k, 0, 0}, Direction::kClientToServer,
                             t.client_to_server, frame));
  }
  EXPECT_TRUE(counted(rejected("udp", "malformed"), malformed_before + 3));
  // A tampered packet: refused as not authentic.
  {
    std::vector<std::uint8_t> d = bad.session().send_command(PlayerInput{}, 0, bad.now());
    d[d.size() - 20] ^= 0x55;
    bad.send_raw(d);
  }
  EXPECT_TRUE(counted(rejected("udp", "decrypt_failed"), 1) ||
              counted(rejected("udp", "malformed"), malformed_before + 4));

  // RPC: NaN coordinates, an unknown match, a wrong admin key, and a flood beyond the rate limit.
  RpcTestClient rpc(server_.ports().rpc);
  {
    flatbuffers::FlatBufferBuilder fbb;
    const wire::Vec3f o(std::nanf(""), 0, 0), d(1, 0, 0);
    finish_envelope(
        fbb, wire::Message::RaycastRequest,
        wire::CreateRaycastRequest(fbb, 1, &o, &d, 100, 0, 0, fbb.CreateString(dev_service_key())).Union(),
        1);
    ASSERT_TRUE(rpc.send(fbb));
    const auto reply = rpc.receive();
    ASSERT_TRUE(reply.has_value());
    const auto* e = verify_envelope(*reply, kMaxRpcFrameBytes).envelope->message_as_RpcError();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->code(), wire::ErrorCode::BadArgument);
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    const wire::Vec3f o(0, 0, 40), d(1, 0, 0);
    finish_envelope(
        fbb, wire::Message::RaycastRequest,
        wire::CreateRaycastRequest(fbb, 999, &o, &d, 100, 0, 0, fbb.CreateString(dev_service_key())).Union(),
        2);
    ASSERT_TRUE(rpc.send(fbb));
    const auto reply = rpc.receive();
    ASSERT_TRUE(reply.has_value());
    const auto* e = verify_envelope(*reply, kMaxRpcFrameBytes).envelope->message_as_RpcError();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->code(), wire::ErrorCode::UnknownMatch);
  }
  EXPECT_FALSE(rpc.issue_token("not the admin key", 1, 77).has_value());
  // The bucket holds 20: 40 pipelined raycasts cannot all pass.
  for (int i = 0; i < 40; ++i) {
    flatbuffers::FlatBufferBuilder fbb;
    const wire::Vec3f o(0, 0, 40), d(1, 0, 0);
    finish_envelope(
        fbb, wire::Message::RaycastRequest,
        wire::CreateRaycastRequest(fbb, 1, &o, &d, 100, 0, 0, fbb.CreateString(dev_service_key())).Union(),
        100 + i);
    ASSERT_TRUE(rpc.send(fbb));
  }
  int limited = 0;
  for (int i = 0; i < 40; ++i) {
    const auto reply = rpc.receive();
    ASSERT_TRUE(reply.has_value());
    const EnvelopeView v = verify_envelope(*reply, kMaxRpcFrameBytes);
    EXPECT_EQ(v.envelope->request_id(), std::uint64_t(100 + i));
    if (const auto* e = v.envelope->message_as_RpcError()) {
      EXPECT_EQ(e->code(), wire::ErrorCode::RateLimited);
      EXPECT_GT(e->retry_after_ms(), 0u);
      ++limited;
    }
  }
  EXPECT_GE(limited, 10);
  EXPECT_TRUE(counted(rejected("rpc", "bad_argument"), 1));
  EXPECT_TRUE(counted(rejected("rpc", "unknown_match"), 1));
  EXPECT_TRUE(counted(rejected("rpc", "unauthorized"), 1));
  EXPECT_TRUE(counted(rejected("rpc", "rate_limited"), 10));

  // Through all of it the good player kept getting snapshots and stays connected.
  ASSERT_TRUE(good_->pump_until([&] { return good_->session().latest_snapshot_tick() > tick_before + 64; }));
  EXPECT_EQ(good_->session().state(), ClientState::kConnected);
  EXPECT_EQ(bad.session().state(), ClientState::kConnected);
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(ServerBadInputTest, ABadConfigIsAClearStartupError) {
  ServerProcess bad;
  const std::string error =
      bad.start(test_server_config("", "[rpc]\nrate = -5\n"), dir_, "", std::chrono::seconds(60));
  EXPECT_NE(error.find("status 2"), std::string::npos) << error;
  EXPECT_NE(error.find("rate"), std::string::npos) << error;
}

}  // namespace
}  // namespace shiftcast
