#include "world/match/mover_path.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace shiftcast {
namespace {

// Interpolated floats are compared with a bound far below anything visible and far above float rounding
// of coordinates of a few hundred units (2^-23 · 256 ≈ 3e-5).
constexpr float kPoseTolerance = 1e-4f;

void expect_pose_near(const Pose& actual, const Pose& expected, const char* where) {
  SCOPED_TRACE(where);
  EXPECT_NEAR(actual.position.x, expected.position.x, kPoseTolerance);
  EXPECT_NEAR(actual.position.y, expected.position.y, kPoseTolerance);
  EXPECT_NEAR(actual.position.z, expected.position.z, kPoseTolerance);
  EXPECT_NEAR(actual.yaw, expected.yaw, kPoseTolerance);
}

// Keys: (0,0,0) yaw 0 at 0 s; (100,0,0) yaw 1 at 2 s; (100,50,20) yaw 1.5 at 3 s; back to the start at 5 s.
std::vector<PathKey> closed_keys() {
  return {{{{0, 0, 0}, 0}, 0}, {{{100, 0, 0}, 1}, 2}, {{{100, 50, 20}, 1.5f}, 3}, {{{0, 0, 0}, 0}, 5}};
}

// The same without the return leg: an open path ending at (100,50,20) at 3 s.
std::vector<PathKey> open_keys() {
  return {{{{0, 0, 0}, 0}, 0}, {{{100, 0, 0}, 1}, 2}, {{{100, 50, 20}, 1.5f}, 3}};
}

MoverPath must_make(std::vector<PathKey> keys, PathMode mode) {
  std::string error = "not written";
  MoverPath path = MoverPath::make(std::move(keys), mode, &error);
  EXPECT_EQ(error, "");
  EXPECT_FALSE(path.empty());
  return path;
}

// The refusals: each names the key at fault, leaves the path empty, and at() then gives the identity.
TEST(MoverPath, RefusesInvalidKeysNamingTheKey) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    const char* what;
    std::vector<PathKey> keys;
    const char* must_mention;
  };
  const std::vector<Case> cases = {
      {"no keys", {}, "at least one key"},
      {"first key late", {{{{0, 0, 0}, 0}, 0.5}, {{{1, 0, 0}, 0}, 1}}, "key 0"},
      {"first key early", {{{{0, 0, 0}, 0}, -1}, {{{1, 0, 0}, 0}, 1}}, "key 0"},
      {"equal times", {{{{0, 0, 0}, 0}, 0}, {{{1, 0, 0}, 0}, 1}, {{{2, 0, 0}, 0}, 1}}, "key 2"},
      {"decreasing", {{{{0, 0, 0}, 0}, 0}, {{{1, 0, 0}, 0}, 2}, {{{2, 0, 0}, 0}, 1.5}}, "key 2"},
      {"NaN position", {{{{0, 0, 0}, 0}, 0}, {{{nan, 0, 0}, 0}, 1}}, "key 1"},
      {"infinite z", {{{{0, 0, inf}, 0}, 0}}, "key 0"},
      {"infinite yaw", {{{{0, 0, 0}, 0}, 0}, {{{0, 0, 0}, 0}, 1}, {{{0, 0, 0}, -inf}, 2}}, "key 2"},
      {"NaN time", {{{{0, 0, 0}, 0}, 0}, {{{1, 0, 0}, 0}, std::nan("")}}, "key 1"},
      {"infinite time", {{{{0, 0, 0}, 0}, 0}, {{{1, 0, 0}, 0}, HUGE_VAL}}, "key 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    for (PathMode mode : {PathMode::kLoop, PathMode::kPingPong, PathMode::kOnce}) {
      std::string error;
      const MoverPath path = MoverPath::make(c.keys, mode, &error);
      EXPECT_NE(error.find(c.must_mention), std::string::npos) << error;
      EXPECT_TRUE(path.empty());
      EXPECT_EQ(path.at(1.0), Pose{});
      EXPECT_EQ(path.period(), 0.0);
      EXPECT_EQ(path.max_point_speed(10), 0.0);
    }
  }
  std::string error;
  EXPECT_TRUE(MoverPath::make(open_keys(), static_cast<PathMode>(7), &error).empty());
  EXPECT_NE(error.find("mode"), std::string::npos) << error;
  // Without an error string the refusal is the same.
  EXPECT_TRUE(MoverPath::make({}, PathMode::kLoop).empty());
}

TEST(MoverPath, AcceptsValidKeysAndClearsTheError) {
  std::string error = "stale";
  const MoverPath path = MoverPath::make(open_keys(), PathMode::kOnce, &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(path.keys().size(), 3u);
  EXPECT_EQ(path.keys()[2].time, 3.0);
}

// At key times the pose is the key itself, bit for bit, in every mode (first pass of the path).
TEST(MoverPath, KeyTimesGiveTheKeysExactly) {
  for (PathMode mode : {PathMode::kLoop, PathMode::kPingPong, PathMode::kOnce}) {
    const std::vector<PathKey> keys = closed_keys();
    const MoverPath path = must_make(keys, mode);
    for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
      EXPECT_EQ(path.at(keys[i].time), keys[i].pose) << "key " << i;
    }
  }
}

// Midpoints and other fractions against hand-computed values (closed form of linear interpolation).
TEST(MoverPath, InterpolatesPositionAndYawLinearly) {
  const MoverPath path = must_make(closed_keys(), PathMode::kLoop);
  expect_pose_near(path.at(1.0), {{50, 0, 0}, 0.5f}, "midpoint of segment 0");
  expect_pose_near(path.at(0.5), {{25, 0, 0}, 0.25f}, "quarter of segment 0");
  expect_pose_near(path.at(2.5), {{100, 25, 10}, 1.25f}, "midpoint of segment 1");
  expect_pose_near(path.at(4.0), {{50, 25, 10}, 0.75f}, "midpoint of the return leg");
  expect_pose_near(path.at(4.5), {{25, 12.5f, 5}, 0.375f}, "three quarters of the return leg");
}

TEST(MoverPath, PeriodsPerMode) {
  EXPECT_EQ(must_make(closed_keys(), PathMode::kLoop).period(), 5.0);
  EXPECT_EQ(must_make(closed_keys(), PathMode::kPingPong).period(), 10.0);
  EXPECT_EQ(must_make(closed_keys(), PathMode::kOnce).period(), 5.0);
  EXPECT_EQ(must_make(open_keys(), PathMode::kPingPong).period(), 6.0);
}

// A loop repeats with its period: whole periods land on the first key exactly, and t + k·T matches t.
// An open loop jumps from its last key back to the first at the wrap.
TEST(MoverPath, LoopWraps) {
  const MoverPath path = must_make(closed_keys(), PathMode::kLoop);
  for (int k = 1; k <= 1000; k *= 10) {
    EXPECT_EQ(path.at(5.0 * k), (Pose{{0, 0, 0}, 0})) << k;
    expect_pose_near(path.at(5.0 * k + 1.0), {{50, 0, 0}, 0.5f}, "midpoint one or more periods later");
    expect_pose_near(path.at(5.0 * k + 2.5), {{100, 25, 10}, 1.25f}, "segment 1 one or more periods later");
  }
  const MoverPath open = must_make(open_keys(), PathMode::kLoop);
  expect_pose_near(open.at(2.999999), {{100, 50, 20}, 1.5f}, "just before the wrap");
  EXPECT_EQ(open.at(3.0), (Pose{{0, 0, 0}, 0}));
  expect_pose_near(open.at(4.0), {{50, 0, 0}, 0.5f}, "second lap");
}

// Ping-pong: the second half of the period is the first half backwards, at(T + x) = at(T − x).
TEST(MoverPath, PingPongReverses) {
  const MoverPath path = must_make(open_keys(), PathMode::kPingPong);
  EXPECT_EQ(path.at(3.0), (Pose{{100, 50, 20}, 1.5f}));
  EXPECT_EQ(path.at(6.0), (Pose{{0, 0, 0}, 0}));
  expect_pose_near(path.at(3.5), {{100, 25, 10}, 1.25f}, "half a second after the turn");
  expect_pose_near(path.at(5.0), {{50, 0, 0}, 0.5f}, "midpoint of segment 0 on the way back");
  expect_pose_near(path.at(7.0), {{50, 0, 0}, 0.5f}, "second cycle, way out");
  for (int i = 1; i < 300; ++i) {
    const double x = 0.01 * i;
    expect_pose_near(path.at(3.0 + x), path.at(3.0 - x), "mirror about the turn");
    expect_pose_near(path.at(6.0 + x), path.at(x), "next cycle");
  }
}

// Once: the last key holds forever after; infinite time is the end too.
TEST(MoverPath, OnceClampsAtTheEnd) {
  const MoverPath path = must_make(open_keys(), PathMode::kOnce);
  const Pose end{{100, 50, 20}, 1.5f};
  for (double t : {3.0, 3.0001, 4.0, 100.0, 1e9, HUGE_VAL}) {
    EXPECT_EQ(path.at(t), end) << t;
  }
  expect_pose_near(path.at(2.5), {{100, 25, 10}, 1.25f}, "still moving before the end");
}

TEST(MoverPath, TimesBeforeTheStartGiveTheStart) {
  for (PathMode mode : {PathMode::kLoop, PathMode::kPingPong, PathMode::kOnce}) {
    const MoverPath path = must_make(open_keys(), mode);
    for (double t : {-1e-9, -0.5, -3.0, -1e9, -HUGE_VAL, std::nan("")}) {
      EXPECT_EQ(path.at(t), (Pose{{0, 0, 0}, 0})) << t;
    }
  }
  // A loop or ping-pong has no phase at +infinity; it stays finite (the start).
  EXPECT_EQ(must_make(open_keys(), PathMode::kLoop).at(HUGE_VAL), (Pose{{0, 0, 0}, 0}));
  EXPECT_EQ(must_make(open_keys(), PathMode::kPingPong).at(HUGE_VAL), (Pose{{0, 0, 0}, 0}));
}

TEST(MoverPath, SingleKeyNeverMoves) {
  const Pose pose{{5, -3, 7}, 0.25f};
  for (PathMode mode : {PathMode::kLoop, PathMode::kPingPong, PathMode::kOnce}) {
    const MoverPath path = must_make({{pose, 0}}, mode);
    for (double t : {-1.0, 0.0, 0.5, 1e6})
      EXPECT_EQ(path.at(t), pose);
    EXPECT_EQ(path.period(), 0.0);
    EXPECT_EQ(path.max_point_speed(100), 0.0);
  }
}

// Hand-computed per segment: (|Δpos| + |Δyaw|·reach) / Δt.
//   segment 0: (100 + 1·r) / 2
//   segment 1: (√(50² + 20²) + 0.5·r) / 1
//   return:    (√(100² + 50² + 20²) + 1.5·r) / 2
TEST(MoverPath, MaxPointSpeedClosedForm) {
  const MoverPath path = must_make(closed_keys(), PathMode::kLoop);
  const double seg1 = std::sqrt(50.0 * 50.0 + 20.0 * 20.0);
  const double back = std::sqrt(100.0 * 100.0 + 50.0 * 50.0 + 20.0 * 20.0);
  EXPECT_NEAR(path.max_point_speed(0), back / 2, 1e-9);
  EXPECT_NEAR(path.max_point_speed(100), (back + 150) / 2, 1e-9);
  // A large reach makes the turning speed dominate: segment 1 turns 0.5 rad in 1 s, the return leg 0.75/s.
  EXPECT_NEAR(path.max_point_speed(10000), (back + 15000) / 2, 1e-6);
  // Yaw decreasing counts like yaw increasing; the open path has no return leg.
  const MoverPath open = must_make(open_keys(), PathMode::kOnce);
  EXPECT_NEAR(open.max_point_speed(0), seg1, 1e-9);
  EXPECT_NEAR(open.max_point_speed(40), std::max((100.0 + 40) / 2, seg1 + 0.5 * 40), 1e-9);
  const MoverPath turning = must_make({{{{0, 0, 0}, 2}, 0}, {{{0, 0, 0}, -1}, 0.5}}, PathMode::kOnce);
  EXPECT_NEAR(turning.max_point_speed(10), 3.0 * 10 / 0.5, 1e-5);
}

// Dense sampling oracle: points within `reach` of the reference point (a ring in xy, where turning is
// fastest, at a few heights) moved along the path by finite differences never go faster than
// max_point_speed, and the fastest of them comes close to it (the bound is attained on some segment).
TEST(MoverPath, MaxPointSpeedBoundsSampledMotion) {
  constexpr double kReach = 60;
  constexpr double kDt = 1e-4;
  for (PathMode mode : {PathMode::kLoop, PathMode::kPingPong, PathMode::kOnce}) {
    const MoverPath path = must_make(closed_keys(), mode);
    const double bound = path.max_point_speed(kReach);
    double fastest = 0;
    for (int step = 0; step < 2000; ++step) {
      const double t = path.period() * step / 2000.0;
      const Pose p0 = path.at(t);
      const Pose p1 = path.at(t + kDt);
      for (int k = 0; k < 16; ++k) {
        const double angle = 2 * std::numbers::pi * k / 16;
        const Vec3d local{kReach * std::cos(angle), kReach * std::sin(angle), 0.0};
        const double speed = length(to_world(p1, local) - to_world(p0, local)) / kDt;
        // Float poses: a finite difference over 1e-4 s carries up to ~1e-4 units of rounding error.
        ASSERT_LE(speed, bound * (1 + 1e-3) + 2.0) << "t " << t;
        fastest = std::max(fastest, speed);
      }
    }
    // The return leg's straight motion and turn are not aligned, so the attained maximum is a little
    // below the sum; it still has to come within a few percent.
    EXPECT_GT(fastest, 0.9 * bound);
  }
}

}  // namespace
}  // namespace shiftcast
