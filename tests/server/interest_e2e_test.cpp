// End to end, over loopback against the real shiftcast-server: interest management on a level whose
// potentially visible set is computed at compile time. configs/levels/divided_room.map is a room split by
// a wall with a gap at its north end; its two spawns are at the south end, one each side, 1,120 units
// apart (beyond the interest radius). The player on the east side is absent from the west player's
// snapshots; once it has walked north and through the gap to the west side, it is present.
#include <gtest/gtest.h>

#include <numbers>

#include "protocol/snapshot_delta.hpp"
#include "tests/support/server_fixture.hpp"

namespace shiftcast {
namespace {

constexpr double kViewTickUnknown = 0;
constexpr std::uint32_t kDividedMatch = 2;  // the config's second [[initial_match]]
// Quake speed: 320 u/s at 64 ticks/s, 5 units per command.
constexpr int kCommandsNorth = 90;  // y -300 to 150: north of the divider's end (y 64) by more than a radius
constexpr int kCommandsWest = 120;  // x 560 to -40: through the gap onto the west side

bool holds(const SnapshotState& world, std::uint32_t id) {
  for (const wire::EntityState& e : world)
    if (e.id() == id) return true;
  return false;
}

std::string divided_room_config() {
  const std::string source = SHIFTCAST_SOURCE_DIR;
  return test_server_config("", "[[level]]\nname = \"divided\"\npath = \"" + source +
                                    "/configs/levels/divided_room.map\"\n\n[[initial_match]]\nlevel = "
                                    "\"divided\"\n");
}

class InterestEndToEnd : public ServerTest {};

// DISABLED_ until CompiledLevel::visibility (s15-pvs, the computed set) is merged: without a set every
// player is sent everything and the first expectation fails.
TEST_F(InterestEndToEnd, DISABLED_APlayerBehindAWallIsAbsentUntilItComesIntoView) {
  start(divided_room_config());
  UdpTestClient west(server_.ports().udp, token(1, kDividedMatch));
  ASSERT_TRUE(west.connect());
  ASSERT_TRUE(west.pump_until([&] { return west.session().own_entity() != 0; }));
  UdpTestClient east(server_.ports().udp, token(2, kDividedMatch));
  ASSERT_TRUE(east.connect());
  ASSERT_TRUE(east.pump_until([&] { return east.session().own_entity() != 0; }));
  const std::uint32_t hidden = east.session().own_entity();

  // Twenty snapshots of the west player's after the east player joined: it is in none of them.
  const std::uint64_t joined = west.session().latest_snapshot_tick();
  std::uint64_t seen_ticks = 0;
  int snapshots = 0;
  ASSERT_TRUE(west.pump_until([&] {
    const std::uint64_t tick = west.session().latest_snapshot_tick();
    if (tick > seen_ticks) {
      seen_ticks = tick;
      ++snapshots;
      EXPECT_FALSE(holds(west.session().world_state(), hidden)) << "tick " << tick;
      EXPECT_TRUE(holds(west.session().world_state(), west.session().own_entity()));
    }
    east.pump_for(std::chrono::milliseconds(0));
    return tick > joined + 40 && snapshots >= 20;
  }));

  // The east player walks north past the divider's end, then west through the gap.
  const auto walk = [&](int commands, float yaw) {
    for (int i = 0; i < commands; ++i) {
      PlayerInput input;
      input.forward = 1;
      input.yaw = yaw;
      east.send_command(input, kViewTickUnknown);
      const std::uint64_t sent = east.session().last_command_sequence();
      ASSERT_TRUE(east.pump_until([&] { return east.session().input_ack() >= sent; }));
      if (i % 8 == 0) west.pump_for(std::chrono::milliseconds(0));  // keep the west client answering
    }
  };
  walk(kCommandsNorth, std::numbers::pi_v<float> / 2);
  walk(kCommandsWest, std::numbers::pi_v<float>);
  ASSERT_TRUE(west.pump_until([&] { return holds(west.session().world_state(), hidden); }));

  west.disconnect();
  east.disconnect();
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
