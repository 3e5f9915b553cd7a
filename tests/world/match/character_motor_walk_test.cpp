// Random walks of the character motor in configs/levels/arena.map (and a real map when fetched) that
// never end in solid, checked by the BSP and by the brute-force brush oracle, and repeat bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tests/support/brush_oracle.hpp"
#include "tests/support/motor_world.hpp"
#include "tests/support/seeded_random.hpp"
#include "world/level/compiled_level.hpp"
#include "world/level/map_import.hpp"
#include "world/match/character_motor.hpp"

namespace shiftcast::character_motor_test {
namespace {

// A random walk: every 32 ticks new stick directions and yaw, and in a quarter of those stretches jump
// pressed and released every 8 ticks (bunny hops). The mapping from the generator's integers is the
// test's own, so the sequence is the same everywhere.
struct Walk {
  std::vector<Vec3> path;
  int on_ground = 0;  // ticks ending on the ground
  int jumps = 0;
  int steps = 0;  // up or down
};

Walk random_walk(const BspTree& tree, const BrushOracle& oracle, Vec3 start, std::uint32_t seed, int ticks) {
  const LevelWorld world(tree);
  std::mt19937 rng(seed);
  const auto unit = [&rng] { return unit_float(rng); };
  Walk walk;
  MotorState state;
  Vec3 feet = start;
  PlayerInput input;
  bool hopping = false;
  for (int tick = 0; tick < ticks; ++tick) {
    if (tick % 32 == 0) {
      input.forward = std::round(unit() * 2 - 1);
      input.right = std::round(unit() * 2 - 1);
      input.yaw = unit() * float(2 * kPi);
      hopping = unit() < 0.25f;
    }
    input.buttons = hopping && tick % 8 < 4 ? kButtonJump : 0;
    const MotorResult r = move_character(kConfig, world, feet, state, input, kDt);
    EXPECT_FALSE(r.stuck) << tick;
    feet = r.position;
    walk.path.push_back(feet);
    walk.on_ground += state.on_ground;
    walk.jumps += r.jumped;
    walk.steps += r.stepped_up || r.stepped_down;
    EXPECT_FALSE(tree.overlap(player_shape(kConfig), feet).overlap) << tick;
    EXPECT_EQ(oracle.cylinder_overlaps(kConfig.radius, kConfig.height, to_double(feet)), kNoBrush) << tick;
    if (state.on_ground) {  // there is solid within the probe under the feet
      const Vec3 below{feet.x, feet.y, feet.z - kConfig.ground_probe - kSurfaceBackoff};
      EXPECT_TRUE(tree.overlap(player_shape(kConfig), below).overlap) << tick;
      EXPECT_GE(state.ground_normal.z, std::cos(kConfig.max_slope_degrees * kPi / 180) - 1e-5) << tick;
    }
  }
  return walk;
}

TEST(CharacterMotor, ArenaRandomWalkNeverEndsInSolidAndRepeatsBitForBit) {
  const LevelResult level = import_map_file(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map");
  ASSERT_TRUE(level.ok()) << level.error.describe();
  const BspTree tree = build(level.level.brushes);
  const BrushOracle oracle(level.level.brushes);
  ASSERT_FALSE(level.level.spawns.empty());
  const Vec3 start = level.level.spawns[0].origin - Vec3{0, 0, 24};
  const Walk walk = random_walk(tree, oracle, start, 20240611, 1000);
  const std::vector<Vec3>& first = walk.path;
  const std::vector<Vec3> second = random_walk(tree, oracle, start, 20240611, 1000).path;
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    ASSERT_EQ(std::memcmp(&first[i], &second[i], sizeof(Vec3)), 0) << i;
  }
  // It did go places.
  float travelled = 0;
  for (std::size_t i = 1; i < first.size(); ++i)
    travelled += length(first[i] - first[i - 1]);
  EXPECT_GT(travelled, 1000.0f);
  EXPECT_GT(walk.on_ground, 300);
  EXPECT_GT(walk.jumps, 3);
}

TEST(CharacterMotor, RealMapRandomWalksNeverEndInSolid) {
  const std::filesystem::path path =
      std::filesystem::path(SHIFTCAST_SOURCE_DIR) / "data" / "openarena" / "maps" / "oa_dm1.bsp";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path.string() << " is absent";
  const LevelResult level = import_level_file(path.string());
  ASSERT_TRUE(level.ok()) << level.error.describe();
  const BspTree tree = build(level.level.brushes);
  const BrushOracle oracle(level.level.brushes);
  // Quake spawns the player's box centre at the origin, lifted 9 units, and lets it fall: one oa_dm1
  // spawn's box touches solid without the lift.
  std::uint32_t seed = 1;
  for (const SpawnPoint& spawn : level.level.spawns)
    random_walk(tree, oracle, spawn.origin - Vec3{0, 0, 24 - 9}, seed++, 500);
}

}  // namespace
}  // namespace shiftcast::character_motor_test
