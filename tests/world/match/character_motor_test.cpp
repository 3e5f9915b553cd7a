// The character motor against closed forms of kinematics and geometry: Quake's acceleration and friction
// recurrence on a flat floor, the jump parabola and its apex v²/2g, a fall landing at √(2gh), stairs of
// 16 climbed and a 24 ledge not, sticking to stairs and ramps going down, a 30° ramp walked at
// run_speed·sin 30° upward and a 60° one slid down at g·sin 60°. Walls, creases and other players are in
// character_motor_contact_test.cpp; random walks in the arena and a real map in
// character_motor_walk_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "collision/brush.hpp"
#include "tests/support/motor_world.hpp"
#include "world/match/character_motor.hpp"

namespace shiftcast::character_motor_test {
namespace {

// A ramp rising along +x at `degrees` from x0 (z = 0) to x1, between y = ±w, and a platform beyond.
std::vector<Brush> ramp_level(double degrees, float x0, float x1, float w) {
  const double a = degrees * kPi / 180.0;
  const float top = float((x1 - x0) * std::tan(a));
  Brush ramp;
  ramp.planes = {{{float(-std::sin(a)), 0, float(std::cos(a))}, float(-x0 * std::sin(a))},
                 {{0, 0, -1}, 0},
                 {{1, 0, 0}, x1},
                 {{0, 1, 0}, w},
                 {{0, -1, 0}, w}};
  return {kFloor, ramp, brush_from_box({x1, -w, -64}, {x1 + 512, w, top})};
}

// The closed forms hold at every tick rate the server runs at (DESIGN.md §4: 20–128 Hz).
class AtTickRate : public ::testing::TestWithParam<int> {
 protected:
  int rate() const { return GetParam(); }
  float tick() const { return 1.0f / float(GetParam()); }
};

// ---------------------------------------------------------------------------------------------------------

TEST_P(AtTickRate, FlatFloorSpeedFollowsQuakesAccelerationAndFrictionRecurrence) {
  const BspTree tree = build({kFloor});
  const LevelWorld world(tree);
  const double dt = tick(), wish = kConfig.run_speed;
  // Quake's PM_Friction and PM_Accelerate for a velocity along the wish direction, in closed form.
  const auto friction = [&](double s) {
    if (s < 1.0) return 0.0;  // Quake zeroes speeds below 1 u/s
    return std::max(0.0, s - std::max(s, double(kConfig.stop_speed)) * kConfig.friction * dt);
  };
  const auto accelerate = [&](double s, double w) {
    return w - s <= 0.0 ? s : s + std::min(w - s, kConfig.ground_accelerate * dt * w);
  };
  const float yaw = 0.7f;
  const Vec3d dir{std::cos(yaw), std::sin(yaw), 0};
  MotorState state;
  Vec3 feet = kOnFloor;
  double speed = 0, along = 0;
  for (int tick = 0; tick < 2 * rate(); ++tick) {
    const bool pushing = tick < rate();  // a second to run_speed, then friction stops the player
    speed = pushing ? accelerate(friction(speed), wish) : friction(speed);
    along += speed * dt;
    const MotorResult r =
        move_character(kConfig, world, feet, state, run(pushing ? 1.0f : 0.0f, yaw), this->tick());
    feet = r.position;
    ASSERT_NEAR(dot(to_double(state.velocity), dir), speed, kSpeedTolerance) << tick;
    ASSERT_NEAR(length(to_double(state.velocity)), speed, kSpeedTolerance) << tick;
    ASSERT_NEAR(dot(to_double(feet - kOnFloor), dir), along, kPositionTolerance) << tick;
    ASSERT_EQ(feet.z, kOnFloor.z);
    ASSERT_TRUE(state.on_ground);
    ASSERT_EQ(state.ground_normal, (Vec3{0, 0, 1}));
    ASSERT_EQ(state.ground_brush, 0);
  }
  EXPECT_GT(along, 300.0);
  EXPECT_EQ(speed, 0.0);
}

TEST(CharacterMotor, DiagonalInputIsClampedToRunSpeedAlongForwardPlusRight) {
  const BspTree tree = build({kFloor});
  const LevelWorld world(tree);
  MotorState state;
  Vec3 feet = kOnFloor;
  const float yaw = 1.2f;
  for (int tick = 0; tick < 300; ++tick)
    feet = move_character(kConfig, world, feet, state, run(1, yaw, 1), kDt).position;
  // right = (sin yaw, −cos yaw): forward + right points at yaw − 45°.
  EXPECT_NEAR(state.velocity.x, kConfig.run_speed * std::cos(yaw - kPi / 4), kSpeedTolerance);
  EXPECT_NEAR(state.velocity.y, kConfig.run_speed * std::sin(yaw - kPi / 4), kSpeedTolerance);
}

TEST_P(AtTickRate, JumpFollowsTheParabolaPeaksAtVSquaredOverTwoGAndLands) {
  const BspTree tree = build({kFloor});
  const LevelWorld world(tree);
  MotorState state;
  Vec3 feet = kOnFloor;
  const float kDt = tick();
  const double v = kConfig.jump_speed, g = kConfig.gravity, dt = kDt;
  double apex = 0;
  int tick = 1;
  for (; tick < 4 * rate(); ++tick) {
    const MotorResult r = move_character(kConfig, world, feet, state, run(0, 0, 0, kButtonJump), kDt);
    feet = r.position;
    EXPECT_EQ(r.jumped, tick == 1);
    const double t = tick * dt, exact = v * t - 0.5 * g * t * t;
    if (exact <= 0.0) break;
    ASSERT_FALSE(state.on_ground) << tick;
    ASSERT_NEAR(feet.z - kOnFloor.z, exact, kPositionTolerance) << tick;
    apex = std::max(apex, double(feet.z - kOnFloor.z));
  }
  // Positions sample the parabola at tick boundaries: the sampled apex is at most g·dt²/8 below v²/2g.
  const double peak = v * v / (2 * g);
  EXPECT_LE(apex, peak + kPositionTolerance);
  EXPECT_GE(apex, peak - g * dt * dt / 8 - kPositionTolerance);
  // Landed in the first tick the parabola passes below the floor, resting kSurfaceBackoff above it.
  EXPECT_TRUE(state.on_ground);
  EXPECT_NEAR(feet.z, kOnFloor.z, 1e-5f);
  // Still holding jump: no second jump until the button is released.
  for (int i = 0; i < 10; ++i) {
    const MotorResult r = move_character(kConfig, world, feet, state, run(0, 0, 0, kButtonJump), kDt);
    feet = r.position;
    EXPECT_FALSE(r.jumped);
    EXPECT_TRUE(state.on_ground);
    EXPECT_NEAR(feet.z, kOnFloor.z, 1e-5f);
  }
  feet = move_character(kConfig, world, feet, state, run(0), kDt).position;
  EXPECT_TRUE(move_character(kConfig, world, feet, state, run(0, 0, 0, kButtonJump), kDt).jumped);
}

TEST(CharacterMotor, AnUpwardLaunchLeavesTheGroundOnAParabola) {
  // A jump pad (the simulation setting the velocity) is not eaten by the ground the player stands on.
  const BspTree tree = build({kFloor});
  const LevelWorld world(tree);
  const double launch = 400, g = kConfig.gravity;
  MotorState state;
  state.on_ground = true;
  state.velocity = {0, 0, float(launch)};
  Vec3 feet = kOnFloor;
  for (int tick = 1; tick <= 32; ++tick) {
    feet = move_character(kConfig, world, feet, state, run(0), kDt).position;
    const double t = tick * double(kDt);
    ASSERT_FALSE(state.on_ground) << tick;
    ASSERT_NEAR(feet.z - kOnFloor.z, launch * t - 0.5 * g * t * t, kPositionTolerance) << tick;
  }
}

TEST_P(AtTickRate, FallLandsExactlyOnTheFloorAtTheSpeedOfTheDrop) {
  const BspTree tree = build({kFloor});
  const LevelWorld world(tree);
  const float kDt = tick();
  const double g = kConfig.gravity, dt = kDt, height = 100.5;
  // Inside a tick the player moves in a straight line, which sags at most g·dt²/8 from the parabola, so
  // the touch comes that much early or late: in time by sag / √(2gh), in speed by g times that.
  const double impact_speed = std::sqrt(2 * g * height), late = g * dt * dt / 8 / impact_speed;
  MotorState state;
  Vec3 feet{3, -7, float(height)};
  for (int tick = 1; tick < 4 * rate(); ++tick) {
    const MotorResult r = move_character(kConfig, world, feet, state, run(0), kDt);
    feet = r.position;
    const double t = tick * dt, exact = height - 0.5 * g * t * t;
    if (exact > 0.0) {
      ASSERT_NEAR(feet.z, exact, kPositionTolerance) << tick;
      ASSERT_EQ(r.touch_count, 0);
      continue;
    }
    // The landing: the floor touched at √(2gh) at the time the parabola reaches it.
    ASSERT_GE(r.touch_count, 2);
    EXPECT_EQ(r.touches[0].normal, (Vec3{0, 0, 1}));
    EXPECT_NEAR(r.touches[0].speed_into, impact_speed, g * late + kSpeedTolerance * 10);
    EXPECT_NEAR((tick - 1 + r.touches[0].time) * dt, std::sqrt(2 * height / g), late + 1e-5);
    EXPECT_EQ(r.touches[r.touch_count - 1].normal, (Vec3{0, 0, 1}));  // then the ground
    EXPECT_NEAR(feet.z, kOnFloor.z, 1e-5f);
    EXPECT_EQ(feet.x, 3.0f);
    EXPECT_EQ(feet.y, -7.0f);
    EXPECT_TRUE(state.on_ground);
    EXPECT_LT(std::abs(state.velocity.z), 1.0f);
    return;
  }
  FAIL() << "never landed";
}

// Steps of `rise` and 32 deep from x = 64 up to a landing, walked up then down.
struct StairWalk {
  std::vector<float> heights;  // feet z per tick
  int stepped_up = 0;
  int stepped_down = 0;
  bool always_on_ground = true;
  bool overlapped = false;
};

StairWalk walk_stairs(float rise, int steps, float yaw, int rate, Vec3 start) {
  std::vector<Brush> brushes{kFloor};
  for (int k = 0; k < steps; ++k)
    brushes.push_back(
        brush_from_box({64.0f + 32 * k, -128, -8}, {64.0f + 32 * steps + 256, 128, rise * (k + 1)}));
  const BspTree tree = build(brushes);
  const LevelWorld world(tree);
  StairWalk walk;
  MotorState state;
  Vec3 feet = start;
  // 1.5 s: the 8 steps and some of the landing at run_speed, not off its far end.
  for (int tick = 0; tick < rate * 3 / 2; ++tick) {
    const MotorResult r = move_character(kConfig, world, feet, state, run(1, yaw), 1.0f / float(rate));
    feet = r.position;
    walk.heights.push_back(feet.z);
    walk.stepped_up += r.stepped_up;
    walk.stepped_down += r.stepped_down;
    walk.always_on_ground = walk.always_on_ground && state.on_ground;
    walk.overlapped = walk.overlapped || tree.overlap(player_shape(kConfig), feet).overlap;
  }
  return walk;
}

TEST_P(AtTickRate, ClimbsStairsOfSixteenAndStandsOnEveryTread) {
  const StairWalk up = walk_stairs(16, 8, 0, rate(), kOnFloor);
  EXPECT_EQ(up.stepped_up, 8);
  EXPECT_TRUE(up.always_on_ground);
  EXPECT_FALSE(up.overlapped);
  // Every tick the feet rest on a tread: a multiple of 16 above the floor, plus the backoff.
  for (const float z : up.heights) {
    const float tread = std::round((z - kSurfaceBackoff) / 16) * 16;
    ASSERT_NEAR(z, tread + kSurfaceBackoff, 1e-4f);
  }
  EXPECT_NEAR(up.heights.back(), 128 + kSurfaceBackoff, 1e-4f);
}

TEST_P(AtTickRate, WalkingDownStairsStaysOnTheGround) {
  const StairWalk down = walk_stairs(16, 8, float(kPi), rate(), {64 + 32 * 8 + 40, 0, 128 + kSurfaceBackoff});
  EXPECT_EQ(down.stepped_down, 8);
  EXPECT_TRUE(down.always_on_ground);
  EXPECT_FALSE(down.overlapped);
  for (const float z : down.heights) {
    const float tread = std::round((z - kSurfaceBackoff) / 16) * 16;
    ASSERT_NEAR(z, tread + kSurfaceBackoff, 1e-4f);
  }
  EXPECT_NEAR(down.heights.back(), kSurfaceBackoff, 1e-4f);
}

TEST(CharacterMotor, DoesNotClimbATwentyFourUnitLedge) {
  const StairWalk walk = walk_stairs(24, 1, 0, 128, kOnFloor);
  EXPECT_EQ(walk.stepped_up, 0);
  EXPECT_FALSE(walk.overlapped);
  for (const float z : walk.heights)
    ASSERT_EQ(z, kOnFloor.z);
}

// The distance along the ramp normal from the surface to the cylinder's lowest rim point.
double ramp_gap(double degrees, float x0, Vec3 feet) {
  const double a = degrees * kPi / 180.0;
  return -std::sin(a) * feet.x + std::cos(a) * feet.z + x0 * std::sin(a) - kConfig.radius * std::sin(a);
}

TEST(CharacterMotor, ThirtyDegreeRampIsWalkedUpAtFullSpeedAndDownWithoutLeavingIt) {
  const double a = 30 * kPi / 180;
  const float x0 = 128, x1 = 528, top = float(400 * std::tan(a));
  const BspTree tree = build(ramp_level(30, x0, x1, 256));
  const LevelWorld world(tree);
  MotorState state;
  Vec3 feet = kOnFloor;
  int on_ramp = 0;
  for (int tick = 0; tick < 300; ++tick) {
    const Vec3 before = feet;
    feet = move_character(kConfig, world, feet, state, run(1), kDt).position;
    ASSERT_TRUE(state.on_ground) << tick;
    ASSERT_FALSE(tree.overlap(player_shape(kConfig), feet).overlap) << tick;
    if (feet.z > 20 && feet.z < top - 20) {  // well inside the ramp, at full speed by then
      ++on_ramp;
      ASSERT_NEAR(state.ground_normal.z, std::cos(a), 1e-6);
      ASSERT_GE(ramp_gap(30, x0, feet), 0.0) << tick;
      ASSERT_LE(ramp_gap(30, x0, feet), kConfig.ground_probe) << tick;
      // Speed is kept along the slope: climbing at run_speed·sin 30°.
      ASSERT_NEAR((feet.z - before.z) / kDt, kConfig.run_speed * std::sin(a), 0.01) << tick;
    }
  }
  EXPECT_GT(on_ramp, 50);
  EXPECT_NEAR(feet.z, top + kSurfaceBackoff, 1e-3f);
  // Back down: stuck to the ramp every tick.
  for (int tick = 0; tick < 300; ++tick) {
    feet = move_character(kConfig, world, feet, state, run(1, float(kPi)), kDt).position;
    ASSERT_TRUE(state.on_ground) << tick;
    if (feet.x > x0 + 20 && feet.x < x1 - 40) {
      ASSERT_GE(ramp_gap(30, x0, feet), 0.0) << tick;
      ASSERT_LE(ramp_gap(30, x0, feet), kConfig.ground_probe) << tick;
    }
  }
  // Back on the floor, resting within kSurfaceBackoff of it (the last stop was backed off along a
  // slanting motion, so by less than the full distance).
  EXPECT_GT(feet.z, 0.0f);
  EXPECT_LE(feet.z, kOnFloor.z + 1e-3f);
}

TEST(CharacterMotor, SixtyDegreeRampIsNotGroundThePlayerSlidesDownAtGSinSixty) {
  const double a = 60 * kPi / 180, g = kConfig.gravity;
  const float x0 = 128, x1 = 328;
  const BspTree tree = build(ramp_level(60, x0, x1, 256));
  const LevelWorld world(tree);
  // Resting 0.1 above the slope (along its normal), two thirds of the way up, trying to walk up it.
  const double feet_x = x0 + 130, gap = 0.1;
  const double feet_z =
      (gap + kConfig.radius * std::sin(a) + std::sin(a) * feet_x - x0 * std::sin(a)) / std::cos(a);
  const Vec3 start{float(feet_x), 0, float(feet_z)};
  ASSERT_NEAR(ramp_gap(60, x0, start), gap, 1e-4);
  const Vec3d down_slope{-std::cos(a), 0, -std::sin(a)};
  MotorState state;
  Vec3 feet = start;
  int ticks = 0;
  for (int tick = 1; feet.z > 10; ++tick) {
    feet = move_character(kConfig, world, feet, state, run(0), kDt).position;
    ASSERT_FALSE(state.on_ground) << tick;
    ASSERT_FALSE(tree.overlap(player_shape(kConfig), feet).overlap) << tick;
    const double t = tick * double(kDt);
    ASSERT_NEAR(dot(to_double(feet - start), down_slope), 0.5 * g * std::sin(a) * t * t, 0.01) << tick;
    ASSERT_LE(std::abs(ramp_gap(60, x0, feet)), kConfig.ground_probe) << tick;
    ticks = tick;
    ASSERT_LT(tick, 1000);
  }
  EXPECT_GT(ticks, 20);
  // Pushing uphill with air control does not hold the player on it either.
  state = {};
  feet = start;
  for (int tick = 0; tick < 64; ++tick)
    feet = move_character(kConfig, world, feet, state, run(1), kDt).position;
  EXPECT_LT(feet.z, start.z - 10);
}

INSTANTIATE_TEST_SUITE_P(CharacterMotor, AtTickRate, ::testing::Values(20, 60, 128));

}  // namespace
}  // namespace shiftcast::character_motor_test
