// End to end against the real shiftcast-server on loopback: what docs/protocol.md promises a client
// about the connection's edges, where a client written from the document alone found the server and the
// document disagreeing (issue 15): the keep-alive that accepts a connection tells the client the match's
// rates and the server's timers; a late copy of the connection request is not answered once its client
// is connected; a goodbye's later copies are counted as DuplicatePacket, before and after the server
// dropped the connection. Oracles: the rates and timers the server was started with, the datagrams the
// client received, and the server's own rejection counters.
#include <gtest/gtest.h>

#include <chrono>

#include "protocol/envelope.hpp"
#include "protocol/session_info.hpp"
#include "tests/support/server_fixture.hpp"

namespace shiftcast {
namespace {

constexpr auto kMetricWait = std::chrono::seconds(20);

class ConnectionContractTest : public ServerTest {
 protected:
  double udp_rejected(const char* reason) { return metric(rejected("udp", reason)); }
  // Polls the metrics until `done` holds or the wait ends: no sleeps, the server's counters are the event.
  bool metrics_until(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + kMetricWait;
    while (!done()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
    }
    return true;
  }
};

TEST_F(ConnectionContractTest, TheAcceptingKeepAliveCarriesTheRatesAndTimers) {
  // Values unlike every default, so a hard-coded answer cannot pass.
  start(test_server_config(),
        "--tick-rate 50 --snapshot-rate 25 --keepalive-interval-s 0.3 --connection-timeout-s 4");
  UdpTestClient c(server_.ports().udp, token(42));
  ASSERT_TRUE(c.connect()) << to_string(c.session().state()) << " " << to_string(c.session().code());
  const std::optional<SessionTiming>& info = c.session().session_info();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->tick_rate, 50);
  EXPECT_EQ(info->snapshot_rate, 25);
  EXPECT_DOUBLE_EQ(info->keepalive_interval, 0.3);
  EXPECT_DOUBLE_EQ(info->timeout, 4.0);
  c.disconnect();
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(ConnectionContractTest, ALateRequestCopyIsCountedButNotAnsweredOnceItsClientIsConnected) {
  start();
  const ConnectToken t = token(42);
  UdpTestClient c(server_.ports().udp, t);
  ASSERT_TRUE(c.connect());
  const double replayed_before = udp_rejected("token_replayed");

  // The late copy, then a marker from the same socket that the server must answer (a response whose
  // blob does not open: ConnectionDenied{ChallengeInvalid}). One socket is one worker, in order: a
  // denial of the late copy would arrive before the marker's.
  c.send_raw(build_connection_request(t));
  {
    flatbuffers::FlatBufferBuilder fbb;
    const std::vector<std::uint8_t> blob(kTokenNonceBytes + kMacBytes + 8, 0x5a);
    const std::vector<std::uint8_t> padding(kMinRequestBytes, 0);
    const auto body = wire::CreateChallengeResponseDirect(fbb, t.match_id, t.client_id, &blob, &padding);
    finish_envelope(fbb, wire::Message::ChallengeResponse, body.Union());
    c.send_raw({fbb.GetBufferPointer(), fbb.GetSize()});
  }
  ASSERT_TRUE(c.pump_until([&] { return !c.denials().empty(); }));
  EXPECT_EQ(c.denials(), std::vector<wire::ErrorCode>{wire::ErrorCode::ChallengeInvalid});
  EXPECT_EQ(udp_rejected("token_replayed"), replayed_before + 1);  // counted all the same
  EXPECT_EQ(c.session().state(), ClientState::kConnected);

  // The same token from another address is a replay, and is told so.
  UdpTestClient thief(server_.ports().udp, t);
  EXPECT_FALSE(thief.connect());
  EXPECT_EQ(thief.session().state(), ClientState::kDenied);
  EXPECT_EQ(thief.session().code(), wire::ErrorCode::TokenReplayed);
  EXPECT_EQ(udp_rejected("token_replayed"), replayed_before + 2);
  c.disconnect();
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(ConnectionContractTest, GoodbyeCopiesAreDuplicatePacketsWhileHeldAndAfterTheDrop) {
  start();
  const std::string players = "shiftcast_players{match=\"1\"}";
  const double duplicates = udp_rejected("duplicate_packet");
  const double unknown = udp_rejected("unknown_connection");

  // All copies at once: the first closes the connection, the others meet it closed or already dropped.
  {
    UdpTestClient c(server_.ports().udp, token(42));
    ASSERT_TRUE(c.connect());
    c.disconnect();
  }
  ASSERT_TRUE(
      metrics_until([&] { return udp_rejected("duplicate_packet") >= duplicates + kGoodbyeCopies - 1; }));
  ASSERT_TRUE(metrics_until([&] { return metric(players) == 0; }));
  EXPECT_EQ(udp_rejected("duplicate_packet"), duplicates + kGoodbyeCopies - 1);
  EXPECT_EQ(udp_rejected("unknown_connection"), unknown);

  // One copy, then the rest only once the server has dropped the connection: within the grace.
  UdpTestClient c(server_.ports().udp, token(43));
  ASSERT_TRUE(c.connect());
  ASSERT_TRUE(metrics_until([&] { return metric(players) == 1; }));
  const std::vector<std::uint8_t> bye = c.session().disconnect(c.now());
  c.send_raw(bye);
  ASSERT_TRUE(metrics_until([&] { return metric(players) == 0; }));
  for (int copy = 1; copy < kGoodbyeCopies; ++copy)
    c.send_raw(bye);
  ASSERT_TRUE(metrics_until(
      [&] { return udp_rejected("duplicate_packet") >= duplicates + 2 * (kGoodbyeCopies - 1); }));
  EXPECT_EQ(udp_rejected("duplicate_packet"), duplicates + 2 * (kGoodbyeCopies - 1));
  EXPECT_EQ(udp_rejected("unknown_connection"), unknown);
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
