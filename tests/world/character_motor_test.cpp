// The character motor against closed forms of kinematics and geometry: Quake's acceleration and friction
// recurrence on a flat floor, the jump parabola and its apex v²/2g, a fall landing at √(2gh), stairs of
// 16 climbed and a 24 ledge not, sticking to stairs and ramps going down, a 30° ramp walked at
// run_speed·sin 30° upward and a 60° one slid down at g·sin 60°, a wall at 45° slid along at v·cos 45°, a
// crease that stops, another player (an analytic cylinder sum in the test's own MotorWorld) that blocks
// and can be stood on, and random walks in configs/levels/arena.map (and a real map when fetched) that
// never end in solid, checked by the BSP and by the brute-force brush oracle, and repeat bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numbers>
#include <optional>
#include <random>
#include <vector>

#include "collision/bsp_build.hpp"
#include "tests/support/brush_oracle.hpp"
#include "world/character_motor.hpp"
#include "world/compiled_level.hpp"
#include "world/map_import.hpp"

namespace shiftcast {
namespace {

constexpr float kDt = 1.0f / 128.0f;
constexpr double kPi = std::numbers::pi;
// Positions are float traces of float inputs: a few ulps at a few hundred units, summed over ticks.
constexpr float kPositionTolerance = 1e-3f;
// Velocities are stored as float between ticks while the oracles run in double.
constexpr double kSpeedTolerance = 1e-3;
const MotorConfig kConfig{};

BspTree build(const std::vector<Brush>& brushes) {
  BspBuildResult built = build_bsp(brushes, {});
  EXPECT_EQ(built.error, BspBuildError::kNone);
  return std::move(built.tree);
}

class LevelWorld : public MotorWorld {
 public:
  explicit LevelWorld(const BspTree& tree) : tree_(tree) {}
  MotorHit sweep(Vec3 from, Vec3 to) const override { return {tree_.trace(player_shape(kConfig), from, to)}; }

 protected:
  const BspTree& tree_;
};

// Another player: an upright cylinder standing with its feet at `feet`.
struct OtherPlayer {
  EntityId id;
  Vec3 feet;
};

// The level plus other players. The mover's feet overlap another player's cylinder exactly inside the
// open cylinder sum |p_xy − c_xy| < 2r, c_z − h < p_z < c_z + h: the motion's first entry into that set is
// solved in closed form (circle and slab intervals), independently of the BSP and the motor.
class PlayersWorld : public LevelWorld {
 public:
  PlayersWorld(const BspTree& tree, std::vector<OtherPlayer> others) : LevelWorld(tree), others_(others) {}
  MotorHit sweep(Vec3 from, Vec3 to) const override {
    MotorHit best{tree_.trace(player_shape(kConfig), from, to)};
    for (const OtherPlayer& o : others_) {
      const std::optional<MotorHit> h = sweep_cylinder_sum(o, from, to);
      if (h && (h->trace.fraction < best.trace.fraction || h->trace.start_solid)) best = *h;
    }
    return best;
  }

 private:
  static std::optional<MotorHit> sweep_cylinder_sum(const OtherPlayer& o, Vec3 from_f, Vec3 to_f) {
    const Vec3d from = to_double(from_f), d = to_double(to_f) - to_double(from_f), c = to_double(o.feet);
    const double reach = 2.0 * kConfig.radius, h = kConfig.height;
    const double ax = from.x - c.x, ay = from.y - c.y;
    double circle_in = -INFINITY, circle_out = INFINITY;
    const double bb = d.x * d.x + d.y * d.y, ab = ax * d.x + ay * d.y, aa = ax * ax + ay * ay - reach * reach;
    if (bb == 0.0) {
      if (aa >= 0.0) return std::nullopt;
    } else {
      const double disc = ab * ab - bb * aa;
      if (disc <= 0.0) return std::nullopt;
      circle_in = (-ab - std::sqrt(disc)) / bb;
      circle_out = (-ab + std::sqrt(disc)) / bb;
    }
    double slab_in = -INFINITY, slab_out = INFINITY;
    const double lo = c.z - h - from.z, hi = c.z + h - from.z;
    if (d.z == 0.0) {
      if (!(lo < 0.0 && 0.0 < hi)) return std::nullopt;
    } else {
      slab_in = std::min(lo / d.z, hi / d.z);
      slab_out = std::max(lo / d.z, hi / d.z);
    }
    const double t_in = std::max(circle_in, slab_in), t_out = std::min(circle_out, slab_out);
    if (!(t_in < t_out) || t_out <= 0.0 || t_in >= 1.0) return std::nullopt;
    MotorHit hit;
    hit.entity = o.id;
    hit.trace.hit = true;
    if (t_in < 0.0) {
      hit.trace.start_solid = true;
      hit.trace.fraction = 0.0f;
      hit.trace.end_position = from_f;
      return hit;
    }
    const Vec3d n = circle_in > slab_in ? normalize(Vec3d{ax + t_in * d.x, ay + t_in * d.y, 0.0})
                                        : Vec3d{0.0, 0.0, d.z < 0.0 ? 1.0 : -1.0};
    hit.trace.fraction = float(t_in);
    hit.trace.normal = to_float(n);
    const double backed = t_in - double(kSurfaceBackoff) / -dot(n, d);
    hit.trace.end_position = to_float(from + d * std::max(0.0, backed));
    return hit;
  }
  std::vector<OtherPlayer> others_;
};

const Brush kFloor = brush_from_box({-2048, -2048, -64}, {2048, 2048, 0});
const Vec3 kOnFloor{0, 0, kSurfaceBackoff};

PlayerInput run(float forward, float yaw = 0, float right = 0, std::uint8_t buttons = 0) {
  return {forward, right, yaw, 0, buttons};
}

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
  EXPECT_NEAR(feet.z, kOnFloor.z, 1e-3f);
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

// A wall whose inward normal points at `wall_yaw` + 180°, its face through (200, 0).
TEST(CharacterMotor, SlidesAlongAWallAtFortyFiveDegreesAtVCosFortyFiveWithoutPenetrating) {
  MotorConfig config;
  config.friction = 0;  // so the only speed change is the clip
  for (const double wall_yaw : {0.0, kPi / 4, -kPi / 2}) {
    const Vec3 n{float(-std::cos(wall_yaw)), float(-std::sin(wall_yaw)), 0};  // facing the player
    Brush wall;
    const Vec3 face{200 * float(std::cos(wall_yaw)), 200 * float(std::sin(wall_yaw)), 0};
    const Vec3 side{-n.y, n.x, 0};
    wall.planes = {plane_through(n, face),
                   plane_through(-n, face - n * 64.0f),
                   plane_through(side, face + side * 1024.0f),
                   plane_through(-side, face - side * 1024.0f),
                   {{0, 0, 1}, 512},
                   {{0, 0, -1}, 64}};
    const BspTree tree = build({kFloor, wall});
    const LevelWorld world(tree);
    const double v = 300, in = kPi / 4;  // 45° between the velocity and the wall normal
    const Vec3d dir = -to_double(n) * std::cos(in) + to_double(side) * std::sin(in);
    MotorState state;
    state.velocity = to_float(dir * v);
    Vec3 feet = kOnFloor;
    int sliding = 0;
    for (int tick = 0; tick < 200; ++tick) {
      const MotorResult r = move_character(config, world, feet, state, run(0), kDt);
      ASSERT_FALSE(tree.overlap(player_shape(config), r.position).overlap) << tick;
      const double from_wall = dot(to_double(n), to_double(r.position - face)) - config.radius;
      ASSERT_GE(from_wall, 0.0);
      if (r.clip_planes > 0) {
        EXPECT_EQ(sliding, 0);
        EXPECT_EQ(r.touches[0].normal.x, n.x);
        EXPECT_NEAR(r.touches[0].speed_into, v * std::cos(in), kSpeedTolerance);
        EXPECT_EQ(r.touches[0].brush, 1);
      }
      if (sliding > 0 || r.clip_planes > 0) {
        ++sliding;
        ASSERT_NEAR(length(to_double(state.velocity)), v * std::cos(in), 1e-3 * v) << tick;
        ASSERT_LE(from_wall, 1.0) << tick;  // the overclip drifts off at 0.1% of the approach speed
        // Along the wall at the closed-form speed, in the tick of the hit too: the time the trace's
        // backoff gives back is spent sliding.
        ASSERT_NEAR(dot(to_double(r.position - feet), to_double(side)), v * std::sin(in) * kDt, 1e-3) << tick;
      }
      feet = r.position;
    }
    EXPECT_GT(sliding, 50) << wall_yaw;
  }
}

TEST(CharacterMotor, StopsInTheCreaseOfTwoWalls) {
  const BspTree tree = build({kFloor, brush_from_box({200, -512, -8}, {264, 512, 256}),
                              brush_from_box({-512, 200, -8}, {512, 264, 256})});
  const LevelWorld world(tree);
  MotorState state;
  Vec3 feet = kOnFloor;
  for (int tick = 0; tick < 400; ++tick) {
    feet = move_character(kConfig, world, feet, state, run(1, float(kPi / 4) + 0.1f), kDt).position;
    ASSERT_FALSE(tree.overlap(player_shape(kConfig), feet).overlap) << tick;
  }
  // Wedged in the corner: resting against both walls, within a backoff or two of each (sliding along
  // one wall may creep closer to the other than a hit would stop it), no speed left along either.
  for (const float gap : {200 - kConfig.radius - feet.x, 200 - kConfig.radius - feet.y}) {
    EXPECT_GT(gap, 0.0f);
    EXPECT_LE(gap, 2 * kSurfaceBackoff);
  }
  const Vec3 before = feet;
  feet = move_character(kConfig, world, feet, state, run(1, float(kPi / 4) + 0.1f), kDt).position;
  EXPECT_LT(length(feet - before), 1e-4f);
  EXPECT_LT(std::hypot(state.velocity.x, state.velocity.y), 0.1f);
}

TEST(CharacterMotor, SlidesDownTheCreaseOfASteepTroughAtGSinIncline) {
  // Two 60° slopes meeting in a line that descends along +x at `incline`: the player rests on both, is
  // never on ground (both are steep), and slides along their crease u at g·(−u_z) = g·sin(incline).
  const double incline = 10 * kPi / 180, side = 60 * kPi / 180, g = kConfig.gravity;
  const Vec3d u{std::cos(incline), 0, -std::sin(incline)};
  const Vec3d w{std::sin(incline), 0, std::cos(incline)};  // up, across the crease
  const Vec3d slope[2] = {w * std::cos(side) + Vec3d{0, -1, 0} * std::sin(side),
                          w * std::cos(side) + Vec3d{0, 1, 0} * std::sin(side)};
  std::vector<Brush> brushes;
  for (int k = 0; k < 2; ++k) {
    const float sy = k == 0 ? 1.0f : -1.0f;
    brushes.push_back(Brush{{{to_float(slope[k]), 0},
                             {{0, sy, 0}, 256},
                             {{0, -sy, 0}, 0},
                             {{0, 0, -1}, 512},
                             {{1, 0, 0}, 1024},
                             {{-1, 0, 0}, 1024}}});
  }
  const BspTree tree = build(brushes);
  const LevelWorld world(tree);
  const auto gap = [&](int k, Vec3 p) {  // from slope k to the cylinder's nearest rim point
    const Vec3d n = to_double(to_float(slope[k]));
    return dot(n, to_double(p)) - kConfig.radius * std::hypot(n.x, n.y);
  };
  MotorState state;
  Vec3 feet{-600, 3, 200};
  for (int tick = 0; tick < 64; ++tick)  // fall in and settle
    feet = move_character(kConfig, world, feet, state, run(0), kDt).position;
  int sliding = 0;
  for (int tick = 0; tick < 128; ++tick) {
    const double speed = dot(to_double(state.velocity), u);
    const MotorResult r = move_character(kConfig, world, feet, state, run(0), kDt);
    ASSERT_FALSE(state.on_ground) << tick;
    ASSERT_FALSE(tree.overlap(player_shape(kConfig), r.position).overlap) << tick;
    for (int k = 0; k < 2; ++k) {
      ASSERT_GE(gap(k, r.position), 0.0) << tick;
      ASSERT_LE(gap(k, r.position), kConfig.ground_probe) << tick;
    }
    // Constant acceleration along the crease: per tick, speed gains g·sin(incline)·dt and the feet move
    // (speed + g·sin(incline)·dt/2)·dt along it.
    const double gain = g * std::sin(incline) * kDt;
    EXPECT_NEAR(dot(to_double(state.velocity), u) - speed, gain, 0.01) << tick;
    EXPECT_NEAR(dot(to_double(r.position - feet), u), (speed + gain / 2) * kDt, 1e-3) << tick;
    feet = r.position;
    ++sliding;
  }
  EXPECT_EQ(sliding, 128);
}

TEST(CharacterMotor, AnotherPlayerBlocksIsReportedAndCanBeStoodOn) {
  const BspTree tree = build({kFloor});
  constexpr EntityId kOther = 7;
  const PlayersWorld world(tree, {{kOther, {200, 0, 0}}});
  MotorState state;
  Vec3 feet = kOnFloor;
  bool reported = false;
  for (int tick = 0; tick < 200; ++tick) {
    const MotorResult r = move_character(kConfig, world, feet, state, run(1), kDt);
    feet = r.position;
    ASSERT_GE(std::hypot(feet.x - 200, feet.y), 2 * kConfig.radius) << tick;
    for (int i = 0; i < r.touch_count; ++i) {
      if (r.touches[std::size_t(i)].entity != kOther) continue;
      reported = true;
      EXPECT_EQ(r.touches[std::size_t(i)].normal, (Vec3{-1, 0, 0}));
      EXPECT_EQ(r.touches[std::size_t(i)].brush, kNoBrush);
    }
  }
  EXPECT_TRUE(reported);
  EXPECT_NEAR(feet.x, 200 - 2 * kConfig.radius - kSurfaceBackoff, 1e-3f);
  EXPECT_EQ(feet.y, 0.0f);
  // Dropped onto the other player's head: it is the ground.
  state = {};
  feet = {205, 3, 120};
  for (int tick = 0; tick < 100; ++tick)
    feet = move_character(kConfig, world, feet, state, run(0), kDt).position;
  EXPECT_TRUE(state.on_ground);
  EXPECT_EQ(state.ground_entity, kOther);
  EXPECT_EQ(state.ground_brush, kNoBrush);
  EXPECT_NEAR(feet.z, kConfig.height + kSurfaceBackoff, 1e-4f);
}

TEST(CharacterMotor, InvalidInputIsNoInputAndAStartInSolidDoesNotMove) {
  const BspTree tree = build({kFloor, brush_from_box({100, -64, -8}, {164, 64, 128})});
  const LevelWorld world(tree);
  MotorState a, b;
  Vec3 fa = kOnFloor, fb = kOnFloor;
  const PlayerInput bad{2.0f, 0, NAN, 0, kButtonJump};
  ASSERT_FALSE(input_valid(bad));
  for (int tick = 0; tick < 20; ++tick) {
    fa = move_character(kConfig, world, fa, a, bad, kDt).position;
    fb = move_character(kConfig, world, fb, b, PlayerInput{}, kDt).position;
  }
  EXPECT_EQ(fa, kOnFloor);
  EXPECT_EQ(fa, fb);
  EXPECT_EQ(a.velocity, Vec3{});
  // A corrupted velocity is dropped rather than spread into the position.
  a.velocity = {NAN, 0, INFINITY};
  fa = move_character(kConfig, world, fa, a, run(1), kDt).position;
  EXPECT_TRUE(is_finite(fa));
  EXPECT_TRUE(is_finite(a.velocity));
  EXPECT_GT(fa.x, kOnFloor.x);
  const Vec3 inside{110, 0, 1};
  MotorState stuck_state;
  stuck_state.velocity = {100, 0, 0};
  const MotorResult r = move_character(kConfig, world, inside, stuck_state, run(1), kDt);
  EXPECT_TRUE(r.stuck);
  EXPECT_EQ(r.position, inside);
  EXPECT_FALSE(stuck_state.on_ground);
}

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
  const auto unit = [&rng] { return float(rng() >> 8) * (1.0f / 16777216.0f); };
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

INSTANTIATE_TEST_SUITE_P(CharacterMotor, AtTickRate, ::testing::Values(20, 60, 128));

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
}  // namespace shiftcast
