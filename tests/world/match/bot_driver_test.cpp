// BotDriver against closed forms: a kinematic "perfect motor" stands in for the character motor, so a
// bot's path following can be checked against the path polyline it chose; determinism per seed and index;
// aim in closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <vector>

#include "tests/world/match/arena_test.hpp"
#include "world/match/bot_driver.hpp"

namespace shiftcast {
namespace {

// ------------------------------------------------------------------------------------------ BotDriver

// The wish direction an input asks for, in world space: forward along the view yaw, right to its right.
Vec3 wish_direction(const PlayerInput& in) {
  const float c = std::cos(in.yaw);
  const float s = std::sin(in.yaw);
  return Vec3{in.forward * c + in.right * s, in.forward * s - in.right * c, 0};
}

float distance_xy(Vec3 a, Vec3 b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}

// Horizontal distance from p to the polyline.
float distance_to_polyline(Vec3 p, std::span<const Vec3> line) {
  float best = line.empty() ? INFINITY : distance_xy(p, line[0]);
  for (std::size_t i = 1; i < line.size(); ++i) {
    const Vec3 a = line[i - 1];
    const Vec3 d = line[i] - a;
    const float len2 = d.x * d.x + d.y * d.y;
    const float t = len2 > 0 ? std::clamp(((p.x - a.x) * d.x + (p.y - a.y) * d.y) / len2, 0.0f, 1.0f) : 0;
    best = std::min(best, distance_xy(p, a + d * t));
  }
  return best;
}

// Moves feet the way an ideal motor would: the wish direction at run speed in xy (nothing blocks it), the
// height taken from the navmesh within a step up or down, so the feet climb ramps and stairs.
constexpr Vec3 kSnapHalfExtents{4, 4, 24};
Vec3 perfect_motor(NavQuery& nav, Vec3 feet, const PlayerInput& in) {
  Vec3 next = feet + normalize(wish_direction(in)) * (kRunSpeed / kTickRate);
  if (const std::optional<Vec3> on = nav.nearest_point(next, kSnapHalfExtents)) next.z = on->z;
  return next;
}

TEST_F(ArenaTest, BotsAreDeterministicPerSeedAndIndex) {
  NavQuery nav(*navmesh_);
  const BotConfig config{.tick_rate = kTickRate};
  BotDriver a(config, 5, 3), b(config, 5, 3), other_index(config, 5, 4), other_seed(config, 6, 3);
  Vec3 fa{0, 0, 0}, fo{0, 0, 0}, fs{0, 0, 0};
  int index_differs = 0, seed_differs = 0;
  for (int t = 0; t < 600; ++t) {
    const PlayerInput ia = a.think(nav, {.feet = fa});
    const PlayerInput ib = b.think(nav, {.feet = fa});
    ASSERT_EQ(ia, ib) << "tick " << t;
    ASSERT_TRUE(input_valid(ia)) << "tick " << t;
    const PlayerInput io = other_index.think(nav, {.feet = fo});
    const PlayerInput is = other_seed.think(nav, {.feet = fs});
    index_differs += io == ia ? 0 : 1;
    seed_differs += is == ia ? 0 : 1;
    fa = perfect_motor(nav, fa, ia);
    fo = perfect_motor(nav, fo, io);
    fs = perfect_motor(nav, fs, is);
  }
  EXPECT_GT(index_differs, 300);
  EXPECT_GT(seed_differs, 300);
  EXPECT_GT(a.jumps(), 0u);
  EXPECT_GT(a.fire_presses(), 0u);
  EXPECT_EQ(bot_seed(5, 3), bot_seed(5, 3));
  EXPECT_NE(bot_seed(5, 3), bot_seed(5, 4));
  EXPECT_NE(bot_seed(5, 3), bot_seed(6, 3));
}

// With nothing random but the goals, a bot on a perfect motor walks its Detour paths: it never strays
// from the polyline by more than a corner radius plus one tick's run, and every path it finishes ends
// with the bot within that distance of the path's last corner.
TEST_F(ArenaTest, BotsFollowTheirPathsToTheGoal) {
  NavQuery nav(*navmesh_);
  const BotConfig config{
      .tick_rate = kTickRate, .jump_per_second = 0, .strafe_per_second = 0, .fire_per_second = 0};
  const float slack = config.corner_radius + kRunSpeed / kTickRate;
  int finished = 0;
  for (std::uint32_t index = 0; index < 4; ++index) {
    BotDriver bot(config, 11, index);
    std::uint32_t start_rng = index;
    Vec3 feet = *nav.random_point(start_rng);
    std::vector<Vec3> path;
    std::uint64_t repaths = 0;
    for (int t = 0; t < 20 * kTickRate; ++t) {
      const PlayerInput in = bot.think(nav, {.feet = feet});
      if (bot.repaths() != repaths) {
        if (!path.empty()) {
          EXPECT_LE(distance_xy(feet, path.back()), slack) << "bot " << index << " tick " << t;
          ++finished;
        }
        repaths = bot.repaths();
        path.assign(bot.path().begin(), bot.path().end());
        ASSERT_GE(path.size(), 1u) << "bot " << index << " tick " << t;
        // The first step heads for the first corner out of reach, in closed form.
        std::size_t c = 0;
        while (c + 1 < path.size() && distance_xy(feet, path[c]) < config.corner_radius)
          ++c;
        const Vec3 want = normalize(Vec3{path[c].x - feet.x, path[c].y - feet.y, 0});
        if (distance_xy(feet, path[c]) >= config.corner_radius) {
          EXPECT_NEAR(dot(normalize(wish_direction(in)), want), 1.0f, 1e-4f)
              << "bot " << index << " tick " << t;
        }
      }
      EXPECT_LE(distance_to_polyline(feet, path), slack) << "bot " << index << " tick " << t;
      feet = perfect_motor(nav, feet, in);
    }
    EXPECT_EQ(bot.failed_paths(), 0u) << "bot " << index;
  }
  EXPECT_GE(finished, 8);  // arena paths take a few seconds: 4 bots x 20 s finish many
}

// Aim in closed form: yaw and pitch from the eye to the nearest other player's middle; the run direction
// stays the path's whatever the view; a target behind the floor is not aimed at.
TEST_F(ArenaTest, BotsAimAtTheNearestVisiblePlayer) {
  NavQuery nav(*navmesh_);
  const BotConfig config{
      .tick_rate = kTickRate, .jump_per_second = 0, .strafe_per_second = 0, .fire_per_second = 1000};
  BotDriver bot(config, 2, 0), twin(config, 2, 0);
  const Vec3 feet{-512, -256, 0.03125f};
  const std::vector<Vec3> players{{300, 200, 0}, feet, {-400, -300, 40}, {-600, -250, 0}};
  const PlayerInput in =
      bot.think(nav, {.feet = feet, .players = players, .self = 1, .level = &level_->tree});
  ASSERT_TRUE(in.buttons & kButtonFire);
  const Vec3 eye = feet + Vec3{0, 0, config.eye_height};
  const Vec3 d = players[3] + Vec3{0, 0, config.aim_height} - eye;  // |d| ≈ 88: nearer than [2] (≈ 132)
  EXPECT_NEAR(in.yaw, std::atan2(d.y, d.x), 1e-5f);
  EXPECT_NEAR(in.pitch, std::atan2(d.z, std::hypot(d.x, d.y)), 1e-5f);
  // The same bot with nobody in range runs the same way: the wish direction does not depend on the view.
  const PlayerInput alone =
      twin.think(nav, {.feet = feet, .players = std::span<const Vec3>(&feet, 1), .self = 0});
  EXPECT_NEAR(dot(normalize(wish_direction(in)), normalize(wish_direction(alone))), 1.0f, 1e-5f);
  EXPECT_EQ(alone.pitch, 0.0f);

  BotDriver blocked(config, 2, 0);
  const std::vector<Vec3> under{feet, {-500, -250, -100}};  // below the arena floor
  const PlayerInput none =
      blocked.think(nav, {.feet = feet, .players = under, .self = 0, .level = &level_->tree});
  EXPECT_EQ(none.pitch, 0.0f);
  EXPECT_NEAR(dot(normalize(wish_direction(none)), normalize(wish_direction(alone))), 1.0f, 1e-5f);
}

}  // namespace
}  // namespace shiftcast
