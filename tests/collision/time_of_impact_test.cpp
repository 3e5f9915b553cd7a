// Time of impact against independent oracles: distances written here from first principles (round pairs,
// boxes against round shapes) or the narrow phase, sampled densely along the motion, with the first
// crossing refined by bisection on the oracle itself. Every method must report no later than the oracle's
// first crossing, at a pose still at least the target apart; the searches at most a tolerance earlier
// (in distance), the analytic method exactly. Fixed seeds throughout.
#include "collision/time_of_impact.hpp"
#include "tests/support/seeded_random.hpp"

#include <gtest/gtest.h>

#include <array>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

namespace shiftcast {
namespace {

constexpr double kSkin = 1.0 / 32;  // the world's target (kEntitySkin)
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kHalfPi = std::numbers::pi / 2;

Vec3 uniform_vec(std::mt19937& g, double lo, double hi) {
  return {float(uniform_double(g, lo, hi)), float(uniform_double(g, lo, hi)),
          float(uniform_double(g, lo, hi))};
}

// ---- Oracle distances, from the definitions (no code shared with the library) ----

struct Ball {
  Vec3d c;
  double r;
};
struct Cyl {
  Vec3d bottom;
  double r, h;
};

double ball_ball(const Ball& a, const Ball& b) {
  return length(b.c - a.c) - a.r - b.r;
}
double ball_cyl(const Ball& s, const Cyl& c) {
  const Vec3d p = s.c - c.bottom;
  const double radial = std::hypot(p.x, p.y);
  const double dr = radial - c.r, dz = std::max(p.z - c.h, -p.z);
  if (dr > 0 || dz > 0) return std::hypot(std::max(dr, 0.0), std::max(dz, 0.0)) - s.r;
  return std::max(dr, dz) - s.r;  // inside: minus the depth to the nearest face
}
double cyl_cyl(const Cyl& a, const Cyl& b) {
  const double dr = std::hypot(b.bottom.x - a.bottom.x, b.bottom.y - a.bottom.y) - a.r - b.r;
  const double dz = std::max(b.bottom.z - (a.bottom.z + a.h), a.bottom.z - (b.bottom.z + b.h));
  if (dr > 0 || dz > 0) return std::hypot(std::max(dr, 0.0), std::max(dz, 0.0));
  return std::max(dr, dz);
}
// Box (any yaw) against a ball: clamp the centre in the box's frame.
double box_ball(const Shape& box, const Pose& p, const Ball& s) {
  const Vec3d l = to_local(p, s.c) - to_double(box.offset);
  const Vec3d h = to_double(box.half_extents);
  const Vec3d clamped{std::clamp(l.x, -h.x, h.x), std::clamp(l.y, -h.y, h.y), std::clamp(l.z, -h.z, h.z)};
  const double out = length(l - clamped);
  if (out > 0) return out - s.r;
  return -std::min({h.x - std::abs(l.x), h.y - std::abs(l.y), h.z - std::abs(l.z)}) - s.r;
}

bool is_ball(const Shape& s) {
  return s.kind == ShapeKind::kPoint || s.kind == ShapeKind::kSphere;
}
Ball ball_of(const Shape& s, const Pose& p) {
  return {to_world(p, to_double(s.offset)), s.kind == ShapeKind::kSphere ? double(s.radius) : 0.0};
}
Cyl cyl_of(const Shape& s, const Pose& p) {
  return {to_world(p, to_double(s.offset)), s.radius, s.height};
}

// Exact where a closed form is written above; the narrow phase (an independent implementation) otherwise.
double oracle_distance(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb) {
  const bool cyl_a = a.kind == ShapeKind::kCylinder, cyl_b = b.kind == ShapeKind::kCylinder;
  if (is_ball(a) && is_ball(b)) return ball_ball(ball_of(a, pa), ball_of(b, pb));
  if (is_ball(a) && cyl_b) return ball_cyl(ball_of(a, pa), cyl_of(b, pb));
  if (cyl_a && is_ball(b)) return ball_cyl(ball_of(b, pb), cyl_of(a, pa));
  if (cyl_a && cyl_b) return cyl_cyl(cyl_of(a, pa), cyl_of(b, pb));
  if (a.kind == ShapeKind::kBox && is_ball(b)) return box_ball(a, pa, ball_of(b, pb));
  if (is_ball(a) && b.kind == ShapeKind::kBox) return box_ball(b, pb, ball_of(a, pa));
  return shape_distance(a, pa, b, pb).distance;
}

struct Case {
  Shape a, b;
  Motion ma, mb;
  double target = 0;
};

double distance_at(const Case& c, double t) {
  return oracle_distance(c.a, lerp_pose(c.ma.start, c.ma.end, float(t)), c.b,
                         lerp_pose(c.mb.start, c.mb.end, float(t)));
}

// Dense samples of the oracle. `first` is a crossing (distance <= target) refined by bisection between
// the first crossing sample and the one before it: the first crossing is at or before it.
struct Sampled {
  bool initially_close = false;
  bool crosses = false;
  double first = 1;
  double min = kInf;
};

Sampled sample(const Case& c, int n) {
  Sampled s;
  s.initially_close = distance_at(c, 0) <= c.target;
  double prev = 0;
  double t_min = 0;
  for (int i = 0; i <= n; ++i) {
    const double t = double(i) / n, d = distance_at(c, t);
    if (d < s.min) t_min = t;
    s.min = std::min(s.min, d);
    if (!s.crosses && i > 0 && d <= c.target) {
      s.crosses = true;
      double lo = prev, hi = t;
      for (int k = 0; k < 60; ++k) {
        const double mid = 0.5 * (lo + hi);
        (distance_at(c, mid) <= c.target ? hi : lo) = mid;
      }
      s.first = hi;
    }
    prev = t;
  }
  // The closest approach usually lies between two samples: a grazing pass can come within the
  // tolerance between them (a hit the samples alone would call a miss). Golden-section search around the
  // best sample; every value taken is a true distance at some time, so s.min only gets more exact.
  double lo = std::max(0.0, t_min - 1.0 / n), hi = std::min(1.0, t_min + 1.0 / n);
  constexpr double kGolden = 0.6180339887498949;
  for (int k = 0; k < 40; ++k) {
    const double x1 = hi - kGolden * (hi - lo), x2 = lo + kGolden * (hi - lo);
    const double d1 = distance_at(c, x1), d2 = distance_at(c, x2);
    s.min = std::min({s.min, d1, d2});
    (d1 < d2 ? hi : lo) = d1 < d2 ? x2 : x1;
  }
  return s;
}

Toi run(const Case& c, ToiMethod method) {
  return time_of_impact_with(method, c.a, c.ma, c.b, c.mb, {.target_separation = c.target});
}
Toi run(const Case& c) {
  return time_of_impact(c.a, c.ma, c.b, c.mb, {.target_separation = c.target});
}

// How early the analytic method may stop: it is exact in double, then made earlier by the float
// rounding of the poses (a few float ulps of every coordinate: a looser bound than the library's own).
double rounding(const Case& c) {
  double sum = 0;
  for (const Motion* m : {&c.ma, &c.mb})
    for (Vec3 p : {m->start.position, m->end.position, m->end.position - m->start.position})
      sum += std::abs(p.x) + std::abs(p.y) + std::abs(p.z);
  return 0x1p-21 * sum;
}

// The contract against the oracle; returns the number of failed expectations. `exact`: the analytic
// method (distance at t equal to the target up to pose rounding); otherwise a search (distance at t
// within the tolerance above the target, and passes within the tolerance may count as hits). `slack`
// covers the oracle's own error (GJK).
int check(const Case& c, const Toi& toi, const Sampled& s, bool exact, double slack) {
  const double tol = kToiDistanceTolerance;
  const int before = ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
  EXPECT_EQ(toi.status, QueryStatus::kOk);
  EXPECT_EQ(toi.initially_close, s.initially_close);
  if (toi.hit) {
    // One float step of t: the oracle is sampled at float times, as a caller's poses are.
    EXPECT_LE(toi.t, s.first + 0x1p-23) << "later than the oracle's crossing";
    if (s.initially_close) {
      EXPECT_EQ(toi.t, 0.0);
    } else {
      const double d = distance_at(c, toi.t);
      EXPECT_GE(d, c.target - slack) << "t = " << toi.t;
      EXPECT_LE(d, c.target + (exact ? rounding(c) : tol) + slack) << "t = " << toi.t << " first " << s.first;
      EXPECT_NEAR(toi.separation, d, slack);
      // The normal runs from a to b as the narrow phase's does, and the contact point lies between the
      // shapes: within half the separation of each (plus GJK's error).
      const Pose pa = lerp_pose(c.ma.start, c.ma.end, float(toi.t));
      const Pose pb = lerp_pose(c.mb.start, c.mb.end, float(toi.t));
      EXPECT_GT(dot(toi.normal, shape_distance(c.a, pa, c.b, pb).normal), 0.999);
      EXPECT_NEAR(length(toi.normal), 1.0, 1e-6);
      const Pose at{to_float(toi.point), 0};
      EXPECT_LE(oracle_distance(Shape::point(), at, c.a, pa), 0.5 * d + 1e-3);
      EXPECT_LE(oracle_distance(Shape::point(), at, c.b, pb), 0.5 * d + 1e-3);
    }
    if (!s.crosses && !s.initially_close) {
      EXPECT_LE(s.min, c.target + (exact ? rounding(c) : tol) + slack);
    }
  } else if (!s.initially_close) {
    EXPECT_FALSE(s.crosses) << "missed a crossing at " << s.first;
  }
  return ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count() - before;
}

// ---- Random cases ----

Shape random_round(std::mt19937& g, bool xy_offset) {
  const int kind = int(uniform_double(g, 0, 3));
  Vec3 offset{0, 0, float(uniform_double(g, -10, 10))};
  if (xy_offset) offset = uniform_vec(g, -10, 10);
  if (kind == 0) return Shape::point();
  if (kind == 1) return Shape::sphere(float(uniform_double(g, 0.5, 20)), offset);
  return Shape::cylinder(float(uniform_double(g, 0.5, 20)), float(uniform_double(g, 1, 60)), offset);
}

// b starts somewhere around a and is aimed near a, so that hits, misses and grazes all occur.
void random_motions(std::mt19937& g, Case& c, double reach, bool turn_a, bool turn_b) {
  const Vec3 a0 = uniform_vec(g, -50, 50);
  const Vec3 a1 = a0 + uniform_vec(g, -60, 60);
  const double near = uniform_double(g, 0, 1) < 0.2 ? 30 : reach;  // some start close, even overlapping
  const Vec3 b0 = a0 + uniform_vec(g, -near, near);
  const Vec3 aim = a1 + uniform_vec(g, -40, 40);
  const float overshoot = float(uniform_double(g, 0.3, 2.5));
  const Vec3 b1 = b0 + (aim - b0) * overshoot;
  const float ya = float(uniform_double(g, -3, 3)), yb = float(uniform_double(g, -3, 3));
  c.ma = {{a0, ya}, {a1, turn_a ? ya + float(uniform_double(g, -kHalfPi, kHalfPi)) : ya}};
  c.mb = {{b0, yb}, {b1, turn_b ? yb + float(uniform_double(g, -kHalfPi, kHalfPi)) : yb}};
  const double targets[] = {0.0, kSkin, 1.0};
  c.target = targets[int(uniform_double(g, 0, 3))];
}

TEST(TimeOfImpact, AnalyticMatchesDenseSamplingOfClosedForms) {
  std::mt19937 g(4001);
  int hits = 0, misses = 0, close = 0, failures = 0;
  for (int i = 0; i < 3000 && failures < 5; ++i) {
    Case c;
    const bool xy = i % 3 == 0;  // an xy offset, with a constant yaw: still analytic
    c.a = random_round(g, xy);
    c.b = random_round(g, xy);
    random_motions(g, c, 120, false, false);
    const Toi toi = run(c);
    ASSERT_EQ(toi.method, ToiMethod::kAnalytic);
    const Sampled s = sample(c, 2000);
    failures += check(c, toi, s, true, 1e-9) > 0;
    hits += toi.hit && !s.initially_close;
    misses += !toi.hit && !s.initially_close;
    close += s.initially_close;
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(hits, 300) << misses << " " << close;
  EXPECT_GT(misses, 500) << hits << " " << close;
  EXPECT_GT(close, 20) << hits << " " << misses;
}

// Conservative advancement and bisection forced on round pairs: the same contract, and never after the
// analytic time.
TEST(TimeOfImpact, SearchesAgreeWithAnalyticOnRoundPairs) {
  std::mt19937 g(4002);
  int failures = 0, hits = 0;
  for (int i = 0; i < 1500 && failures < 5; ++i) {
    Case c;
    c.a = random_round(g, false);
    c.b = random_round(g, false);
    random_motions(g, c, 120, false, false);
    const Toi exact = run(c, ToiMethod::kAnalytic);
    const Sampled s = sample(c, 500);
    for (ToiMethod m : {ToiMethod::kConservativeAdvancement, ToiMethod::kBisection}) {
      if (m == ToiMethod::kBisection && i % 3 != 0) continue;  // the slow one on a third of the cases
      const Toi toi = run(c, m);
      ASSERT_EQ(toi.method, m);
      failures += check(c, toi, s, false, 1e-6) > 0;
      if (exact.hit) {
        EXPECT_TRUE(toi.hit) << "method " << int(m);
        // Poses are float: times a few float steps of t apart give the same or rounding-close poses.
        EXPECT_LE(toi.t, exact.t + 0x1p-21) << "method " << int(m);
        hits += toi.hit;
      } else if (toi.hit && !toi.initially_close) {
        // A search may call a near pass a hit, but only within its tolerance.
        EXPECT_LE(s.min, c.target + kToiDistanceTolerance + 1e-6);
      }
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(hits, 200);
}

std::vector<std::vector<Vec3>> hulls_for_tests() {
  std::vector<std::vector<Vec3>> out;
  std::mt19937 g(4003);
  for (int h = 0; h < 16; ++h) {
    std::vector<Vec3> v;
    for (int i = 0; i < 10; ++i)
      v.push_back(uniform_vec(g, -12, 12) + Vec3{float(h % 3), 0, 0});
    out.push_back(v);
  }
  return out;
}

Shape random_convex(std::mt19937& g, const std::vector<std::vector<Vec3>>& hulls) {
  const int kind = int(uniform_double(g, 0, 5));
  if (kind == 3) return Shape::box(uniform_vec(g, 0.5, 24), uniform_vec(g, -8, 8));
  if (kind == 4) return Shape::hull(hulls[std::size_t(uniform_double(g, 0, double(hulls.size())))]);
  return random_round(g, true);
}

TEST(TimeOfImpact, ConservativeAdvancementMatchesDenseSampling) {
  const auto hulls = hulls_for_tests();
  std::mt19937 g(4004);
  int failures = 0, hits = 0, misses = 0, max_steps = 0;
  for (int i = 0; i < 2000 && failures < 5; ++i) {
    Case c;
    c.a = random_convex(g, hulls);
    c.b = random_convex(g, hulls);
    if (c.a.kind != ShapeKind::kBox && c.a.kind != ShapeKind::kHull) c.a = Shape::box({20, 2, 9});
    random_motions(g, c, 120, false, false);
    // Cylinder–box and sphere–box pairs default to the analytic method (prism_pair_test.cpp): force the
    // search here.
    const bool cylinder_box =
        (c.a.kind == ShapeKind::kBox && (c.b.kind == ShapeKind::kCylinder || c.b.kind == ShapeKind::kSphere));
    const Toi toi = cylinder_box ? run(c, ToiMethod::kConservativeAdvancement) : run(c);
    ASSERT_EQ(toi.method, ToiMethod::kConservativeAdvancement);
    const Sampled s = sample(c, 400);
    failures += check(c, toi, s, false, 1e-4) > 0;
    (toi.hit ? hits : misses)++;
    max_steps = std::max(max_steps, toi.steps);
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(hits, 400);
  EXPECT_GT(misses, 400);
  EXPECT_LT(max_steps, kToiMaxAdvances) << "advancement should converge, not run out";
}

TEST(TimeOfImpact, BisectionOnTurningShapesMatchesDenseSampling) {
  const auto hulls = hulls_for_tests();
  std::mt19937 g(4005);
  int failures = 0, hits = 0, misses = 0;
  for (int i = 0; i < 800 && failures < 5; ++i) {
    Case c;
    c.a = random_convex(g, hulls);
    c.b = random_convex(g, hulls);
    if (c.a.kind != ShapeKind::kBox && c.a.kind != ShapeKind::kHull)
      c.a = Shape::box({24, 1, 30}, {24, 0, 0});
    random_motions(g, c, 80, true, i % 2 == 0);
    const Toi toi = run(c);
    ASSERT_EQ(toi.method, ToiMethod::kBisection);
    const Sampled s = sample(c, 1000);
    failures += check(c, toi, s, false, 1e-4) > 0;
    (toi.hit ? hits : misses)++;
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(hits, 150);
  EXPECT_GT(misses, 150);
}

// ---- Named cases ----

Motion still(Vec3 p, float yaw = 0) {
  return {{p, yaw}, {p, yaw}};
}
Motion line(Vec3 from, Vec3 to, float yaw = 0) {
  return {{from, yaw}, {to, yaw}};
}

const std::array<Vec3, 4> kTetrahedron{Vec3{0, 0, 0}, Vec3{8, 0, 0}, Vec3{0, 8, 0}, Vec3{0, 0, 8}};

TEST(TimeOfImpact, MethodFollowsShapesAndTurning) {
  const Shape ball = Shape::sphere(4), player = Shape::cylinder(15, 56), crate = Shape::box({16, 16, 16});
  const Motion turn{{{0, 0, 0}, 0}, {{0, 0, 0}, 1}};
  const Motion far = still({500, 0, 0});
  EXPECT_EQ(time_of_impact(ball, far, player, line({}, {10, 0, 0}), {}).method, ToiMethod::kAnalytic);
  // A cylinder or sphere turning about its own axis is the same set: still analytic.
  EXPECT_EQ(time_of_impact(player, turn, ball, far, {}).method, ToiMethod::kAnalytic);
  EXPECT_EQ(time_of_impact(Shape::sphere(4, {0, 0, 9}), turn, ball, far, {}).method, ToiMethod::kAnalytic);
  // An offset that swings with yaw is a turning shape.
  EXPECT_EQ(time_of_impact(Shape::sphere(4, {9, 0, 0}), turn, ball, far, {}).method, ToiMethod::kBisection);
  // A sphere or cylinder against a box that does not turn: the prism closed form (prism_pair.hpp).
  EXPECT_EQ(time_of_impact(crate, line({}, {5, 0, 0}), ball, far, {}).method, ToiMethod::kAnalytic);
  EXPECT_EQ(time_of_impact(crate, line({}, {5, 0, 0}), Shape::hull(kTetrahedron), far, {}).method,
            ToiMethod::kConservativeAdvancement);
  EXPECT_EQ(time_of_impact(crate, turn, ball, far, {}).method, ToiMethod::kBisection);
  // Forcing a method that cannot answer the pair is refused.
  EXPECT_EQ(time_of_impact_with(ToiMethod::kAnalytic, crate, far, Shape::hull(kTetrahedron), far, {}).status,
            QueryStatus::kInvalidShape);
  EXPECT_EQ(time_of_impact_with(ToiMethod::kConservativeAdvancement, crate, turn, ball, far, {}).status,
            QueryStatus::kInvalidShape);
}

TEST(TimeOfImpact, NonFiniteInputAndInvalidShapesAreRefused) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const Shape ball = Shape::sphere(4), crate = Shape::box({16, 16, 16});
  // Every pose field of both motions, NaN and infinite; the shapes would otherwise collide head-on.
  for (int field = 0; field < 16; ++field) {
    for (float bad : {nan, inf}) {
      Motion ma = line({-100, 0, 0}, {100, 0, 0}), mb = still({});
      Pose& pose = (field / 4 == 0 ? ma.start : field / 4 == 1 ? ma.end : field / 4 == 2 ? mb.start : mb.end);
      (field % 4 == 3 ? pose.yaw : pose.position[field % 4]) = bad;
      for (const Shape& other : {ball, crate}) {
        const Toi toi = time_of_impact(ball, ma, other, mb, {});
        EXPECT_EQ(toi.status, QueryStatus::kNonFiniteInput) << field;
        EXPECT_FALSE(toi.hit);
        EXPECT_EQ(toi.t, 0.0) << "a refused query moves nothing";
      }
    }
  }
  const Motion ma = line({-100, 0, 0}, {100, 0, 0}), mb = still({});
  EXPECT_EQ(time_of_impact(ball, ma, crate, mb, {.target_separation = std::nan("")}).status,
            QueryStatus::kNonFiniteInput);
  EXPECT_EQ(time_of_impact(ball, ma, crate, mb, {.distance_tolerance = HUGE_VAL}).status,
            QueryStatus::kNonFiniteInput);
  const Toi bad_shape = time_of_impact(Shape::sphere(-1), ma, crate, mb, {});
  EXPECT_EQ(bad_shape.status, QueryStatus::kInvalidShape);
  EXPECT_FALSE(bad_shape.hit);
  EXPECT_EQ(time_of_impact(ball, ma, Shape::hull({}), mb, {}).status, QueryStatus::kInvalidShape);
  EXPECT_EQ(time_of_impact(ball, ma, Shape::cylinder(15, nan), mb, {}).status, QueryStatus::kInvalidShape);
  // The same refusals reach the searches.
  const Motion turn{{{0, 0, 0}, 0}, {{0, 0, 0}, nan}};
  EXPECT_EQ(time_of_impact(crate, turn, ball, ma, {}).status, QueryStatus::kNonFiniteInput);
}

// A sphere head-on into a sphere, a cylinder side, a cylinder cap and a cylinder rim: closed-form times.
TEST(TimeOfImpact, AnalyticClosedFormTimes) {
  const double skin = kSkin;
  // Sphere–sphere along x: centres 20 apart at contact (+ skin); b moves 200 towards a.
  Toi toi = time_of_impact(Shape::sphere(8), still({}), Shape::sphere(12), line({100, 0, 0}, {-100, 0, 0}),
                           {.target_separation = skin});
  ASSERT_TRUE(toi.hit);
  EXPECT_NEAR(toi.t, (100 - 20 - skin) / 200, 1e-6);
  EXPECT_NEAR(toi.normal.x, 1, 1e-9);
  EXPECT_NEAR(toi.point.x, 8 + skin / 2, 1e-4);
  EXPECT_NEAR(toi.separation, skin, 1e-4);
  EXPECT_EQ(toi.steps, 0);
  // Sphere into a player's side at chest height.
  toi = time_of_impact(Shape::cylinder(15, 56), still({}), Shape::sphere(4), line({-60, 0, 30}, {40, 0, 30}),
                       {.target_separation = skin});
  ASSERT_TRUE(toi.hit);
  EXPECT_NEAR(toi.t, (60 - 19 - skin) / 100, 1e-6);
  EXPECT_NEAR(toi.normal.x, -1, 1e-9);
  // Dropping onto the cap, off the axis but inside the radius.
  toi = time_of_impact(Shape::cylinder(15, 56), still({}), Shape::sphere(4), line({10, 0, 100}, {10, 0, 0}),
                       {.target_separation = skin});
  ASSERT_TRUE(toi.hit);
  EXPECT_NEAR(toi.t, (100 - 60 - skin) / 100, 1e-6);
  EXPECT_NEAR(toi.normal.z, 1, 1e-9);
  // Dropping onto the rim: 2 units outside the radius, so the sphere meets the rim circle, and the
  // Newton iteration (steps > 0) finds the height where its distance to the circle is 4 + skin.
  const double rho = 4 + skin;
  toi = time_of_impact(Shape::cylinder(15, 56), still({}), Shape::sphere(4), line({17, 0, 100}, {17, 0, 0}),
                       {.target_separation = skin});
  ASSERT_TRUE(toi.hit);
  EXPECT_NEAR(toi.t, (100 - 56 - std::sqrt(rho * rho - 4)) / 100, 1e-6);
  EXPECT_GT(toi.steps, 0);
  EXPECT_NEAR(toi.normal.x, 2 / rho, 1e-5);
  // Two players walking into each other, one standing on a step 20 up: side contact.
  toi = time_of_impact(Shape::cylinder(15, 56), line({0, 0, 0}, {50, 0, 0}), Shape::cylinder(15, 56),
                       line({100, 0, 20}, {50, 0, 20}), {.target_separation = skin});
  ASSERT_TRUE(toi.hit);
  EXPECT_NEAR(toi.t, (100 - 30 - skin) / 100, 1e-6);
  EXPECT_NEAR(toi.point.z, 38, 1e-4) << "contact point in the middle of the shared height";
  // A player landing on another's head: caps.
  toi = time_of_impact(Shape::cylinder(15, 56), still({}), Shape::cylinder(15, 56),
                       line({20, 0, 100}, {20, 0, 0}), {.target_separation = skin});
  ASSERT_TRUE(toi.hit);
  EXPECT_NEAR(toi.t, (100 - 56 - skin) / 100, 1e-6);
}

// 10,000 units/s at 20 Hz: 500 units in one tick, against a 1-unit wall and thin cylinders.
TEST(TimeOfImpact, FastProjectilesNeverTunnel) {
  const double step = 10000.0 / 20;
  const Shape wall = Shape::box({0.5f, 64, 64});
  std::mt19937 g(4006);
  for (int i = 0; i < 200; ++i) {
    const Vec3 from{float(-uniform_double(g, 1, step - 1)), float(uniform_double(g, -60, 60)),
                    float(uniform_double(g, -60, 60))};
    const Vec3 to = from + Vec3{float(step), 0, 0};
    for (const Shape& bullet : {Shape::point(), Shape::sphere(2), Shape::box({2, 2, 2})}) {
      const double reach = bullet.kind == ShapeKind::kPoint ? 0 : 2;
      const Toi toi = time_of_impact(bullet, line(from, to), wall, still({}), {.target_separation = kSkin});
      ASSERT_TRUE(toi.hit) << i;
      // The wall face is at x = −0.5: the exact time is linear.
      const double expected = (-0.5 - reach - kSkin - from.x) / step;
      EXPECT_LE(toi.t, expected + 1e-7);
      EXPECT_GE(toi.t, expected - kToiDistanceTolerance / step - 1e-7);
    }
  }
  // A player (radius 15) and a pole (radius 0.5) crossed at full speed, by a point, a sphere and a box.
  for (float radius : {15.0f, 0.5f}) {
    const Shape target = Shape::cylinder(radius, 56);
    for (const Shape& bullet : {Shape::point(), Shape::sphere(2), Shape::box({2, 2, 2})}) {
      for (float y : {0.0f, radius * 0.9f}) {
        const Toi toi = time_of_impact(bullet, line({-250, y, 30}, {250, y, 30}), target, still({}),
                                       {.target_separation = kSkin});
        ASSERT_TRUE(toi.hit) << radius << " " << int(bullet.kind);
        EXPECT_LT(toi.t, 0.5);
        const Pose at{lerp(Vec3{-250, y, 30}, Vec3{250, y, 30}, float(toi.t)), 0};
        const double d = shape_distance(bullet, at, target, {}).distance;
        EXPECT_GE(d, kSkin - 1e-4);
        EXPECT_LE(d, kSkin + kToiDistanceTolerance + 1e-4);
      }
    }
  }
  // Both moving: the wall's thin edge sweeps into the bullet's path as it passes.
  const Toi both = time_of_impact(Shape::sphere(2), line({-250, 0, 0}, {250, 0, 0}), wall,
                                  line({0, 300, 0}, {0, -300, 0}), {.target_separation = kSkin});
  EXPECT_TRUE(both.hit);
}

TEST(TimeOfImpact, GrazingPassesAreMisses) {
  // Sphere past sphere, closest approach just above the target: the analytic method is exact.
  const double gap = 20 + kSkin;
  for (double above : {1e-3, 0.05}) {
    const float y = float(gap + above);
    const Toi toi = time_of_impact(Shape::sphere(8), still({}), Shape::sphere(12),
                                   line({-100, y, 0}, {100, y, 0}), {.target_separation = kSkin});
    EXPECT_FALSE(toi.hit) << above;
  }
  // A slightly deeper pass is a hit.
  EXPECT_TRUE(time_of_impact(Shape::sphere(8), still({}), Shape::sphere(12),
                             line({-100, float(gap - 1e-3), 0}, {100, float(gap - 1e-3), 0}),
                             {.target_separation = kSkin})
                  .hit);
  // Sphere past a box edge and past a player, a few tolerances clear: the searches call these misses.
  const float clear = float(kSkin + 5 * kToiDistanceTolerance);
  EXPECT_FALSE(time_of_impact(Shape::sphere(4), line({-100, 16 + 4 + clear, 0}, {100, 16 + 4 + clear, 0}),
                              Shape::box({16, 16, 16}), still({}), {.target_separation = kSkin})
                   .hit);
  EXPECT_FALSE(time_of_impact(Shape::box({4, 4, 4}), line({-100, 19 + clear, 30}, {100, 19 + clear, 30}),
                              Shape::cylinder(15, 56), still({}), {.target_separation = kSkin})
                   .hit);
  // A door swinging past a sphere just beyond its tip.
  const Shape door = Shape::box({32, 1, 48}, {32, 0, 48});
  const Toi swing = time_of_impact(door, {{{}, 0}, {{}, float(kHalfPi)}}, Shape::sphere(8),
                                   still({float(64 + 8 + clear) * 0.6f, float(64 + 8 + clear) * 0.8f, 30}),
                                   {.target_separation = kSkin});
  EXPECT_EQ(swing.method, ToiMethod::kBisection);
  EXPECT_FALSE(swing.hit);
}

// Resting contacts: a pair already within (or at) the target is a hit at t = 0 only when the motion
// closes it; separating or sliding along the contact is free. Every method, on flat and round contacts.
TEST(TimeOfImpact, RestingContactsThatSeparateOrSlideAreNotHits) {
  const Shape crate = Shape::box({16, 16, 16}), player = Shape::cylinder(15, 56), ball = Shape::sphere(4);
  std::vector<Vec3> tetra = {{-10, -10, 0}, {10, -10, 0}, {0, 12, 0}, {0, 0, 14}};
  const Shape hull = Shape::hull(tetra);
  // Things standing on the crate's top face (z = 16), at the target, just inside it and just above it.
  struct Rest {
    Shape shape;
    Vec3 at;  // resting on the top face when z is 16 + this z
  };
  const Rest rests[] = {{player, {3, -2, 0}}, {ball, {5, 5, 4}}, {crate, {9, -4, 16}}, {hull, {-3, 2, 0}}};
  std::mt19937 g(4007);
  int slides = 0;
  for (const Rest& r : rests) {
    for (double offset : {kSkin, kSkin - 0.004, kSkin + 0.004}) {
      const Vec3 at = r.at + Vec3{0, 0, float(16 + offset)};
      for (int i = 0; i < 50; ++i) {
        // Along the face in a random direction, sometimes lifting off, at up to 500 units per tick.
        const double angle = uniform_double(g, 0, 2 * std::numbers::pi), speed = uniform_double(g, 1, 500);
        const float lift = i % 2 == 0 ? 0.0f : float(uniform_double(g, 0, 50));
        const Vec3 to = at + Vec3{float(speed * std::cos(angle)), float(speed * std::sin(angle)), lift};
        const Toi toi = time_of_impact(crate, still({}), r.shape, line(at, to), {.target_separation = kSkin});
        EXPECT_FALSE(toi.hit) << int(r.shape.kind) << " offset " << offset << " i " << i << " t " << toi.t;
        ++slides;
      }
      // Pressing down into the face: a hit at once.
      const Toi press = time_of_impact(crate, still({}), r.shape, line(at, at - Vec3{3, 0, 10}),
                                       {.target_separation = kSkin});
      EXPECT_TRUE(press.hit) << int(r.shape.kind) << " offset " << offset;
      // The searches call a start within their tolerance a hit at once; the analytic method (the player
      // on the crate, a cylinder–box pair) is exact: it closes the remaining gap, 10 units per tick down.
      if (press.method == ToiMethod::kAnalytic && offset > kSkin) {
        EXPECT_GT(press.t, 0.0);
        EXPECT_LE(press.t, (offset - kSkin) / 10);
        EXPECT_NEAR(press.t, (offset - kSkin) / 10, 1e-5);
      } else {
        EXPECT_EQ(press.t, 0.0);
      }
      EXPECT_EQ(press.initially_close, offset <= kSkin);
      EXPECT_NEAR(press.normal.z, 1, 1e-3);
    }
  }
  EXPECT_EQ(slides, 4 * 3 * 50);
  // A player against the crate's side (x = 16), sliding in the face's plane: the cylinder's curved side
  // makes GJK's normal wobble by ~1e-7 rad, which must not turn a slide into an approach.
  for (double offset : {kSkin, kSkin - 0.004, kSkin + 0.004}) {
    for (int i = 0; i < 200; ++i) {
      const Vec3 at{float(16 + 15 + offset), float(uniform_double(g, -10, 10)), -20};
      const double angle = uniform_double(g, 0, 2 * std::numbers::pi), speed = uniform_double(g, 1, 500);
      const Vec3 to = at + Vec3{0, float(speed * std::cos(angle)), float(speed * std::sin(angle))};
      EXPECT_FALSE(time_of_impact(crate, still({}), player, line(at, to), {.target_separation = kSkin}).hit)
          << offset << " " << i;
    }
    // Diving into the face at 0.01 rad is an approach.
    const Vec3 at{float(16 + 15 + offset), 0, -20};
    const Toi dive = time_of_impact(crate, still({}), player, line(at, at + Vec3{-2, 200, 0}),
                                    {.target_separation = kSkin});
    EXPECT_TRUE(dive.hit) << offset;
    // Analytic (cylinder–box): exact, so a start above the target closes its gap at 2 units per tick.
    ASSERT_EQ(dive.method, ToiMethod::kAnalytic);
    if (offset > kSkin) {
      EXPECT_GT(dive.t, 0.0);
      EXPECT_LE(dive.t, (offset - kSkin) / 2);
      EXPECT_NEAR(dive.t, (offset - kSkin) / 2, 1e-4);
    } else {
      EXPECT_EQ(dive.t, 0.0);
    }
  }
  // A player against another's side (analytic): walking away or along is free, into it is a hit.
  const Vec3 beside{30 + float(kSkin), 0, 0};
  for (Vec3 d : {Vec3{50, 0, 0}, Vec3{0, 0, 40}, Vec3{0, 0, -40}, Vec3{20, 0, 10}}) {
    EXPECT_FALSE(
        time_of_impact(player, still({}), player, line(beside, beside + d), {.target_separation = kSkin})
            .hit);
  }
  const Toi into = time_of_impact(player, still({}), player, line(beside, beside - Vec3{5, 3, 0}),
                                  {.target_separation = kSkin});
  EXPECT_TRUE(into.hit);
  EXPECT_TRUE(into.initially_close);
  EXPECT_EQ(into.t, 0.0);
  // Round overlaps (exact depth and normal): separating is free, closing is a hit at 0.
  EXPECT_FALSE(time_of_impact(ball, still({}), ball, line({5, 0, 0}, {40, 0, 0}), {}).hit);
  EXPECT_TRUE(time_of_impact(ball, still({}), ball, line({5, 0, 0}, {-40, 0, 0}), {}).hit);
  // A crate turning about z under a ball resting on its top (bisection): nothing closes.
  const Motion turning{{{}, 0}, {{}, 1.2f}};
  for (float z : {20 + float(kSkin), 20 + float(kSkin) + 0.004f}) {
    const Toi spin = time_of_impact(crate, turning, ball, still({6, 3, z}), {.target_separation = kSkin});
    EXPECT_EQ(spin.method, ToiMethod::kBisection);
    EXPECT_FALSE(spin.hit) << z;
  }
  // A door resting against a ball: opening away from it is free, closing onto it is a hit at 0.
  const Shape door = Shape::box({32, 1, 48}, {32, 0, 48});
  const Vec3 ball_at{40, 1 + 4 + float(kSkin), 30};
  EXPECT_FALSE(
      time_of_impact(door, {{{}, 0}, {{}, -1}}, ball, still(ball_at), {.target_separation = kSkin}).hit);
  const Toi shut =
      time_of_impact(door, {{{}, 0}, {{}, 1}}, ball, still(ball_at), {.target_separation = kSkin});
  EXPECT_TRUE(shut.hit);
  EXPECT_EQ(shut.t, 0.0);
}

// A door (a long thin box hinged at its reference point) swinging 90° across a sphere: the hit is no
// later than the brute-force first contact, and the door's contact point moves at most the tolerance
// between the two; the distance at t is within the tolerance above the target.
TEST(TimeOfImpact, SwingingDoorAgainstBruteForce) {
  const Shape door = Shape::box({32, 1, 48}, {32, 0, 48});
  std::mt19937 g(4008);
  int hits = 0;
  for (int i = 0; i < 40; ++i) {
    const double angle = uniform_double(g, 0.2, 1.4), radius = uniform_double(g, 12, 60);
    const Vec3 centre{float(radius * std::cos(angle)), float(radius * std::sin(angle)),
                      float(uniform_double(g, 0, 90))};
    const float yaw0 = float(uniform_double(g, -3, 3));
    Case c{door,
           Shape::sphere(float(uniform_double(g, 2, 10))),
           {{{}, yaw0}, {{}, yaw0 + float(kHalfPi)}},
           still(to_float(rotate_z(to_double(centre), std::cos(double(yaw0)), std::sin(double(yaw0))))),
           kSkin};
    if (i % 4 == 3) c.mb.end.position = c.mb.start.position + uniform_vec(g, -20, 20);  // the ball moves too
    const Toi toi = run(c);
    ASSERT_EQ(toi.method, ToiMethod::kBisection);
    const Sampled s = sample(c, 100000);
    check(c, toi, s, false, 1e-4);
    if (!toi.hit || s.initially_close) continue;
    ++hits;
    const double contact_radius = std::hypot(toi.point.x, toi.point.y);
    EXPECT_LE(kHalfPi * contact_radius * (s.first - toi.t), kToiDistanceTolerance + 1e-4)
        << "t " << toi.t << " first " << s.first << " radius " << contact_radius;
    // About log2(speed / tolerance) = 14 levels, a sibling or two each (more when the contact is near
    // the hinge and closes slowly against the bound): a guard against a search that stops pruning.
    EXPECT_LT(toi.steps, 200) << i;
  }
  EXPECT_GT(hits, 20);
}

}  // namespace
}  // namespace shiftcast
