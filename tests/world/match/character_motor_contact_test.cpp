// The character motor against closed forms of contact geometry: a wall at 45° slid along at v·cos 45°,
// a crease that stops, a steep trough slid down at g·sin(incline), another player (an analytic cylinder
// sum in the test's own MotorWorld) that blocks and can be stood on, and invalid input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <vector>

#include "collision/brush.hpp"
#include "tests/support/motor_world.hpp"
#include "world/match/character_motor.hpp"

namespace shiftcast::character_motor_test {
namespace {

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

}  // namespace
}  // namespace shiftcast::character_motor_test
