// End to end, over loopback against the real shiftcast-server: every command a player sends runs exactly
// once. Oracles: the count of commands sent (the server's shiftcast_commands_total must equal it), and
// the player's position, which must not change while the client sends nothing (the server no longer
// re-runs the last input when no command arrived: the old server kept the player running).
#include <gtest/gtest.h>

#include <string>

#include "collision/vec3.hpp"
#include "protocol/snapshot_delta.hpp"
#include "tests/support/server_fixture.hpp"

namespace shiftcast {
namespace {

constexpr double kViewTickUnknown = 0;
constexpr int kPacedCommands = 40;
constexpr int kBurstCommands = 3;  // sent at once: caught up by the credit in one tick
constexpr std::uint64_t kIdleTicks = 24;

Vec3 own_position(UdpTestClient& c) {
  for (const wire::EntityState& e : c.session().world_state()) {
    if (e.id() != c.session().own_entity()) continue;
    const wire::Vec3f p = dequantize_position(e.position());
    return {p.x(), p.y(), p.z()};
  }
  return {};
}

class ExactlyOnceTest : public ServerTest {};

TEST_F(ExactlyOnceTest, EveryCommandRunsOnceAndAPlayerWithoutCommandsStandsStill) {
  start();
  UdpTestClient c(server_.ports().udp, token(21));
  ASSERT_TRUE(c.connect());
  ASSERT_TRUE(
      c.pump_until([&] { return c.session().own_entity() != 0 && c.session().latest_snapshot_tick() > 0; }));

  PlayerInput run;
  run.forward = 1;
  for (int i = 0; i < kPacedCommands; ++i) {
    c.send_command(run, kViewTickUnknown);
    const std::uint64_t sent = c.session().last_command_sequence();
    ASSERT_TRUE(c.pump_until([&] { return c.session().input_ack() >= sent; })) << "command " << sent;
  }
  for (int i = 0; i < kBurstCommands; ++i)
    c.send_command(run, kViewTickUnknown);
  const std::uint64_t last = c.session().last_command_sequence();
  ASSERT_TRUE(c.pump_until([&] { return c.session().input_ack() >= last; }));

  // Nothing more is sent: the player stops where its last command left it, snapshot after snapshot.
  const std::uint64_t acked_tick = c.session().latest_snapshot_tick();
  ASSERT_TRUE(c.pump_until([&] { return c.session().latest_snapshot_tick() > acked_tick + 2; }));
  const Vec3 stopped = own_position(c);
  const std::uint64_t stopped_tick = c.session().latest_snapshot_tick();
  ASSERT_TRUE(c.pump_until([&] { return c.session().latest_snapshot_tick() > stopped_tick + kIdleTicks; }));
  EXPECT_EQ(own_position(c), stopped);

  const std::string m = "{match=\"1\",outcome=";
  EXPECT_EQ(metric("shiftcast_commands_total" + m + "\"run\"}"), double(kPacedCommands + kBurstCommands));
  EXPECT_EQ(metric("shiftcast_commands_total" + m + "\"dropped\"}"), 0);
  EXPECT_GE(metric("shiftcast_command_starved_ticks_total{match=\"1\"}"), double(kIdleTicks));
  c.disconnect();
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
