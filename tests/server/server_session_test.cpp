// End to end, over loopback against the real shiftcast-server: a player connects with a token from the
// admin RPC, moves, receives delta snapshots and its contact events exactly once and in order; it leaves
// and comes back with a fresh token; the server shuts down gracefully with the player still connected.
#include <gtest/gtest.h>

#include <cmath>

#include "collision/vec3.hpp"
#include "protocol/snapshot_delta.hpp"
#include "tests/support/server_fixture.hpp"
#include "world/match/character_motor.hpp"

namespace shiftcast {
namespace {

constexpr double kViewTickUnknown = 0;

const wire::EntityState* find_state(const SnapshotState& state, std::uint32_t id) {
  for (const wire::EntityState& e : state)
    if (e.id() == id) return &e;
  return nullptr;
}

Vec3 position_of(const wire::EntityState& e) {
  const wire::Vec3f p = dequantize_position(e.position());
  return {p.x(), p.y(), p.z()};
}

// Sends one forward command per server acknowledgement: the server applies one per tick.
void walk(UdpTestClient& c, int commands, float yaw) {
  for (int i = 0; i < commands; ++i) {
    PlayerInput input;
    input.forward = 1;
    input.yaw = yaw;
    c.send_command(input, kViewTickUnknown);
    const std::uint64_t sent = c.session().last_command_sequence();
    ASSERT_TRUE(c.pump_until([&] { return c.session().input_ack() >= sent; })) << "command " << sent;
  }
}

class ServerSessionTest : public ServerTest {};

TEST_F(ServerSessionTest, PlayerConnectsMovesAndGetsSnapshotsAndContactsInOrder) {
  start();
  UdpTestClient c(server_.ports().udp, token(42));
  ASSERT_TRUE(c.connect()) << to_string(c.session().state()) << " " << to_string(c.session().code());
  ASSERT_TRUE(c.pump_until([&] {
    return c.session().own_entity() != 0 && find_state(c.session().world_state(), c.session().own_entity());
  }));
  const std::uint32_t me = c.session().own_entity();
  const Vec3 start_position = position_of(*find_state(c.session().world_state(), me));
  const std::uint64_t start_tick = c.session().latest_snapshot_tick();

  // The first spawn of arena.map faces +x (angle 0): running forward carries the player along +x, never
  // faster than run speed over the ticks that passed (plus a quantum each way), and not sideways.
  walk(c, 64, 0);
  const std::uint64_t acked_tick = c.session().latest_snapshot_tick();
  ASSERT_TRUE(c.pump_until([&] { return c.session().latest_snapshot_tick() > acked_tick + 4; }));
  const Vec3 end_position = position_of(*find_state(c.session().world_state(), me));
  const std::uint64_t end_tick = c.session().latest_snapshot_tick();
  const float moved_x = end_position.x - start_position.x;
  const MotorConfig motor;
  EXPECT_GT(moved_x, 100.0f);
  EXPECT_LE(moved_x, motor.run_speed * float(end_tick - start_tick) / 64.0f + kPositionQuantum);
  EXPECT_LT(std::abs(end_position.y - start_position.y), 1.0f);

  // Standing on and walking over the floor touches the level: those contacts arrive reliably,
  // numbered from 1 without a gap or a repeat, and each names this player.
  ASSERT_TRUE(c.pump_until([&] { return !c.events().empty(); }));
  for (std::size_t i = 0; i < c.events().size(); ++i) {
    EXPECT_EQ(c.events()[i].sequence(), i + 1);
    EXPECT_TRUE(c.events()[i].a() == me || c.events()[i].b() == me);
  }
  EXPECT_GT(c.session().counters().snapshots_received, 10u);

  c.disconnect();
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(ServerSessionTest, ReconnectNeedsAFreshTokenAndTheOldOneIsRefusedAsReplayed) {
  start();
  const ConnectToken first = token(7);
  {
    UdpTestClient c(server_.ports().udp, first);
    ASSERT_TRUE(c.connect());
    c.disconnect();
  }
  {
    UdpTestClient again(server_.ports().udp, first);
    EXPECT_FALSE(again.connect());
    EXPECT_EQ(again.session().state(), ClientState::kDenied);
    EXPECT_EQ(again.session().code(), wire::ErrorCode::TokenReplayed);
  }
  UdpTestClient fresh(server_.ports().udp, token(7));
  ASSERT_TRUE(fresh.connect());
  ASSERT_TRUE(fresh.pump_until([&] { return fresh.session().latest_snapshot_tick() > 0; }));
  EXPECT_GE(metric(rejected("udp", "token_replayed")), 1);
  EXPECT_EQ(server_.stop(), 0);
}

// Connected packets carry no ids: the server knows a client by its address. A client whose address
// changed (a NAT rebinding, here a new socket) connects again with a fresh token and takes over its
// player; what its old address still sends is refused on the receiving thread as from no connection.
TEST_F(ServerSessionTest, AClientFromANewAddressReconnectsAndItsOldAddressRoutesNowhere) {
  start();
  UdpTestClient before(server_.ports().udp, token(11));
  ASSERT_TRUE(before.connect());
  ASSERT_TRUE(before.pump_until([&] { return before.session().latest_snapshot_tick() > 0; }));
  const std::uint32_t entity = before.session().own_entity();
  UdpTestClient after(server_.ports().udp, token(11));  // another socket: another source port
  ASSERT_TRUE(after.connect());
  ASSERT_TRUE(after.pump_until([&] { return after.session().latest_snapshot_tick() > 0; }));
  EXPECT_EQ(after.session().own_entity(), entity);  // the same player, taken over
  const double unknown_before = metric(rejected("udp", "unknown_connection"));
  for (int i = 0; i < 3; ++i)
    before.send_raw(before.session().send_command(PlayerInput{}, 0, before.now()));
  // Counted by whichever worker received them: scrape until all three are, playing on meanwhile.
  EXPECT_TRUE(
      after.pump_until([&] { return metric(rejected("udp", "unknown_connection")) >= unknown_before + 3; }));
  EXPECT_EQ(metric_value(metrics(), "shiftcast_players{match=\"1\"}"), 1);
  const std::uint64_t tick = after.session().latest_snapshot_tick();
  EXPECT_TRUE(after.pump_until([&] { return after.session().latest_snapshot_tick() > tick + 4; }));
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(ServerSessionTest, GracefulShutdownSaysGoodbyeToConnectedPlayers) {
  start();
  UdpTestClient c(server_.ports().udp, token(9));
  ASSERT_TRUE(c.connect());
  walk(c, 16, 0);
  ASSERT_EQ(::kill(server_.pid(), SIGTERM), 0);
  ASSERT_TRUE(c.pump_until([&] { return c.session().state() == ClientState::kDisconnected; }));
  EXPECT_EQ(c.session().code(), wire::ErrorCode::ShuttingDown);
  for (std::size_t i = 0; i < c.events().size(); ++i)
    EXPECT_EQ(c.events()[i].sequence(), i + 1);
  EXPECT_EQ(server_.stop(), 0);
  EXPECT_NE(server_.stdout_text().find("shiftcast-server stopped"), std::string::npos);
}

TEST_F(ServerSessionTest, HealthReadinessAndMetricsAreServed) {
  start();
  int status = 0;
  EXPECT_EQ(http_get(server_.ports().http, "/healthz", &status), "ok\n");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(http_get(server_.ports().http, "/readyz", &status), "ready\n");
  EXPECT_EQ(status, 200);
  http_get(server_.ports().http, "/nope", &status);
  EXPECT_EQ(status, 404);
  UdpTestClient c(server_.ports().udp, token(5));
  ASSERT_TRUE(c.connect());
  ASSERT_TRUE(c.pump_until([&] { return c.session().latest_snapshot_tick() > 8; }));
  const std::string text = metrics();
  EXPECT_NE(text.find("shiftcast_tick_seconds_bucket{match=\"1\""), std::string::npos);
  EXPECT_EQ(metric_value(text, "shiftcast_players{match=\"1\"}"), 1);
  EXPECT_GT(metric_value(text, "shiftcast_udp_packets_total{direction=\"in\"}"), 0);
  EXPECT_GT(metric_value(text, "shiftcast_udp_bytes_total{direction=\"out\"}"), 0);
  EXPECT_NE(text.find("shiftcast_filter_tests_total"), std::string::npos);
  EXPECT_NE(text.find("shiftcast_invariant_violations_total{match=\"1\"}"), std::string::npos);
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
