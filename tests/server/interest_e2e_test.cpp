// End to end, over loopback against the real shiftcast-server: interest management on a level whose
// potentially visible set is computed at compile time. configs/levels/divided_room.map is a room split by
// a wall with a gap at its north end; its two spawns are in the south, one each side, 1,750 units apart
// (beyond the interest radius). The player on the east side is absent from the west player's snapshots;
// once it has walked to the gap, in the west player's plain view, it is present.
#include <gtest/gtest.h>

#include <cmath>

#include "protocol/snapshot_delta.hpp"
#include "tests/support/server_fixture.hpp"

namespace shiftcast {
namespace {

constexpr double kViewTickUnknown = 0;
constexpr std::uint32_t kDividedMatch = 2;  // the config's second [[initial_match]]
// From the east spawn (600, -400) straight to the gap (0, 400): 1,000 units at Quake's 320 u/s and 64
// ticks/s, 5 units per command; the line passes the divider's end (y 256) at y 378.
constexpr int kCommandsToTheGap = 200;
const float kYawToTheGap = std::atan2(800.0f, -600.0f);

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

TEST_F(InterestEndToEnd, APlayerBehindAWallIsAbsentUntilItComesIntoView) {
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

  // The east player walks to the gap.
  for (int i = 0; i < kCommandsToTheGap; ++i) {
    PlayerInput input;
    input.forward = 1;
    input.yaw = kYawToTheGap;
    east.send_command(input, kViewTickUnknown);
    const std::uint64_t sent = east.session().last_command_sequence();
    ASSERT_TRUE(east.pump_until([&] { return east.session().input_ack() >= sent; }));
    if (i % 8 == 0) west.pump_for(std::chrono::milliseconds(0));  // keep the west client answering
  }
  ASSERT_TRUE(west.pump_until([&] { return holds(west.session().world_state(), hidden); }));

  west.disconnect();
  east.disconnect();
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
