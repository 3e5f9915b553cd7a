// Tests of the oracle's boxes and hulls (box_oracle.cpp), so the exactness tests rest on something
// checked: closed forms (a box against a box brush is a point against the bigger box, a yawed box meets
// a wall with its corners, an edge on an edge stops with their cross product as normal); the obstacle's
// supporting planes against the Minkowski hull built by brute force from the vertices, for overlaps,
// sweeps and gaps; sweeps against sampling and conservative advancement; grown and shrunk shapes; the
// support function the normal checks use. All random inputs come from fixed seeds.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "collision/turned_shape.hpp"
#include "tests/support/brush_oracle.hpp"
#include "tests/support/brush_oracle_internal.hpp"
#include "tests/support/oracle_test_brushes.hpp"

namespace shiftcast {
namespace {

using oracle_test::box;
using oracle_test::dense_level;
using oracle_test::random_brush;
using oracle_test::Uniform;

// Closed-form answers from exact inputs.
constexpr double kExact = 1e-9;
// Answers for shapes turned in float (TurnedShape rounds the corners to float: ~4e-7 at 4 units).
constexpr double kFloatCorners = 1e-5;
// A contact is touching: its gap is below this.
constexpr double kTouching = 1e-6;

std::vector<Vec3d> corners(Vec3d half, Vec3d centre = {}) {
  std::vector<Vec3d> out;
  for (int i = 0; i < 8; ++i)
    out.push_back(centre +
                  Vec3d{i & 1 ? half.x : -half.x, i & 2 ? half.y : -half.y, i & 4 ? half.z : -half.z});
  return out;
}

std::vector<Vec3> to_float(const std::vector<Vec3d>& v) {
  std::vector<Vec3> out;
  for (Vec3d p : v)
    out.push_back(shiftcast::to_float(p));
  return out;
}

TEST(BoxOracle, BoxAgainstABoxBrushIsAPointAgainstTheBiggerBox) {
  // Brush [-10, 10]^3 and a box of half extents (2, 3, 4): the obstacle is [-12, 12] x [-13, 13] x [-14, 14].
  const BrushOracle oracle(std::vector<Brush>{box({-10, -10, -10}, {10, 10, 10})});
  const Shape shape = Shape::box({2, 3, 4});
  OracleHit hit = oracle.sweep(shape, {-40, 1, 2}, {40, 1, 2});
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, 28.0 / 80, kExact);
  EXPECT_EQ(hit.normal, (Vec3d{-1, 0, 0}));
  EXPECT_EQ(hit.brush, 0);
  hit = oracle.sweep(shape, {3, -2, 50}, {3, -2, 0});
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, 36.0 / 50, kExact);
  EXPECT_EQ(hit.normal, (Vec3d{0, 0, 1}));

  EXPECT_EQ(oracle.overlaps(shape, {11.9, 0, 0}), 0);
  EXPECT_EQ(oracle.overlaps(shape, {12, 0, 0}), -1);  // touching
  EXPECT_EQ(oracle.overlaps(shape, {0, -12.99, 0}), 0);
  EXPECT_EQ(oracle.overlaps(shape, {0, 0, 14.01}), -1);
  EXPECT_NEAR(oracle.gap(shape, {20, 0, 0}), 8, kExact);
  EXPECT_NEAR(oracle.gap(shape, {-20, -20, -20}), std::sqrt(64.0 + 49 + 36), kExact);
  EXPECT_EQ(oracle.gap(shape, {12, 5, 5}), 0);
  EXPECT_EQ(oracle.gap(shape, {0, 0, 0}), 0);

  // Sliding along the face, touching only at the end, and starting on the face moving in.
  EXPECT_FALSE(oracle.sweep(shape, {12, -50, 0}, {12, 50, 0}).hit);
  EXPECT_FALSE(oracle.sweep(shape, {-40, 0, 0}, {-12, 0, 0}).hit);
  hit = oracle.sweep(shape, {-12, 0, 0}, {0, 0, 0});
  EXPECT_TRUE(hit.hit && !hit.start_solid);
  EXPECT_EQ(hit.fraction, 0);
  EXPECT_TRUE(oracle.sweep(shape, {0, 0, 0}, {40, 0, 0}).start_solid);
  // The same box as a hull of its corners.
  EXPECT_NEAR(oracle.sweep_hull(corners({2, 3, 4}), {-40, 1, 2}, {40, 1, 2}).fraction, 28.0 / 80, kExact);
  EXPECT_EQ(oracle.hull_overlaps(corners({2, 3, 4}), {11.9, 0, 0}), 0);
}

TEST(BoxOracle, YawedBoxMeetsAWallWithItsCorner) {
  // The wall x in [0, 10]; a cube of half extent 4 reaches 4 (cos a + sin a) along x when yawed by a.
  const BrushOracle oracle(std::vector<Brush>{box({0, -100, -100}, {10, 100, 100})});
  for (const double yaw : {std::numbers::pi / 4, std::numbers::pi / 6, 2.0}) {
    const TurnedShape turned(Shape::box({4, 4, 4}), yaw);
    const double reach = 4 * (std::abs(std::cos(yaw)) + std::abs(std::sin(yaw)));
    const OracleHit hit = oracle.sweep(turned.shape(), {-50, 1, 0}, {0, 1, 0});
    ASSERT_TRUE(hit.hit) << yaw;
    EXPECT_NEAR(hit.fraction, (50 - reach) / 50, kFloatCorners);
    EXPECT_NEAR(hit.normal.x, -1, kExact);
    EXPECT_NEAR(oracle.gap(turned.shape(), {-10, 0, 0}), 10 - reach, kFloatCorners);
    EXPECT_EQ(oracle.overlaps(turned.shape(), {float(-reach + 0.01), 0, 0}), 0);
    EXPECT_EQ(oracle.overlaps(turned.shape(), {float(-reach - 0.01), 0, 0}), -1);
  }
}

TEST(BoxOracle, EdgeOnEdgeContactHasTheCrossProductNormal) {
  // A roof whose ridge runs along y at z = 0, and a cube of half extent 5 rolled 45 degrees about x, so
  // its lowest edge runs along x, 5√2 below its centre: falling, the edge lands across the ridge.
  const float s = float(std::sqrt(0.5));
  Brush roof;
  roof.planes = {{{s, 0, s}, 0}, {{-s, 0, s}, 0}, {{0, 0, -1}, 20}, {{0, 1, 0}, 50}, {{0, -1, 0}, 50}};
  const BrushOracle oracle(std::vector<Brush>{roof});
  std::vector<Vec3d> rolled;
  const double c = std::sqrt(0.5);
  for (Vec3d v : corners({5, 5, 5}))
    rolled.push_back({v.x, c * v.y - c * v.z, c * v.y + c * v.z});
  const OracleHit hit = oracle.sweep_hull(rolled, {0.5, 0.3, 50}, {0.5, 0.3, 0});
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, (50 - 5 * std::sqrt(2.0)) / 50, kExact);
  EXPECT_NEAR(hit.normal.z, 1, kExact);
  EXPECT_NEAR(oracle.hull_gap(rolled, {0.5, 0.3, 10}), 10 - 5 * std::sqrt(2.0), kExact);
}

// Brute force: the obstacle as the hull of every brush vertex minus every shape vertex (O(n^4)).
OraclePolytope minkowski_hull(const OraclePolytope& brush, const std::vector<Vec3d>& shape) {
  std::vector<Vec3d> points;
  for (Vec3d b : brush.vertices) {
    for (Vec3d k : shape)
      points.push_back(b - k);
  }
  return make_oracle_hull(points);
}

// Random shapes: a randomly turned box, or the hull of random points on a sphere.
std::vector<Vec3d> random_hull_shape(Uniform& u, int i) {
  std::vector<Vec3d> out;
  if (i % 2 == 0) {
    const Vec3d a = u.direction();
    const Vec3d b = normalize(cross(a, u.direction()));
    const Vec3d c = cross(a, b);
    const Vec3d h{u(1, 20), u(1, 20), u(1, 20)};
    for (Vec3d k : corners(h))
      out.push_back(a * k.x + b * k.y + c * k.z);
  } else {
    const double r = u(2, 15);
    for (int k = 0; k < 7; ++k)
      out.push_back(u.direction() * r);
  }
  return out;
}

TEST(BoxOracle, ObstaclePlanesCutOutTheMinkowskiHullOfTheVertices) {
  Uniform u(51);
  int inside = 0;
  int hits = 0;
  for (int i = 0; i < 24; ++i) {
    const Brush b = random_brush(u, {0, 0, 0}, u(10, 60));
    const BrushOracle oracle(std::vector<Brush>{b});
    const std::vector<Vec3d> shape = random_hull_shape(u, i);
    const OraclePolytope m = minkowski_hull(oracle.polytope(0), shape);
    const auto max_face_distance = [&](Vec3d p) {
      double d = -1e300;
      for (const auto& f : m.faces)
        d = std::max(d, f.plane.distance(p));
      return d;
    };
    for (int k = 0; k < 300; ++k) {
      const Vec3d p = u.in_box(m.bounds.min - Vec3d{5, 5, 5}, m.bounds.max + Vec3d{5, 5, 5});
      const double d = max_face_distance(p);
      if (std::abs(d) < 1e-7) continue;
      inside += d < 0;
      ASSERT_EQ(oracle.hull_overlaps(shape, p) == 0, d < 0) << "case " << i << " point " << k;
      // The gap is the distance from the reference point to the obstacle.
      const double want = d < 0 ? 0.0 : oracle_internal::outside_distance(m, p);
      ASSERT_NEAR(oracle.hull_gap(shape, p), want, kExact) << "case " << i << " point " << k;
    }
    // Sweeps: Cyrus-Beck on the hull's faces.
    for (int k = 0; k < 60; ++k) {
      const Vec3d from = u.in_box(m.bounds.min - Vec3d{40, 40, 40}, m.bounds.max + Vec3d{40, 40, 40});
      if (max_face_distance(from) > -1e-7 && max_face_distance(from) < 1e-7) continue;
      const Vec3d to = u.in_box(m.bounds.min, m.bounds.max) * 2.0 - from;
      std::vector<Planed> planes;
      for (const auto& f : m.faces)
        planes.push_back(f.plane);
      const oracle_internal::PlaneClip clip = oracle_internal::clip_by_planes(planes, from, to - from, 0);
      const OracleHit hit = oracle.sweep_hull(shape, from, to);
      if (max_face_distance(from) < 0) {
        ASSERT_TRUE(hit.start_solid);
        continue;
      }
      const bool want = !clip.miss && clip.entering && std::max(clip.t_in, 0.0) < clip.t_out;
      ASSERT_EQ(hit.hit, want) << "case " << i << " sweep " << k;
      if (!want) continue;
      ++hits;
      EXPECT_NEAR(hit.fraction * length(to - from), clip.t_in * length(to - from), 1e-7);
      EXPECT_GT(dot(hit.normal, clip.entering->normal), 1 - 1e-9) << "case " << i << " sweep " << k;
    }
  }
  EXPECT_GT(inside, 1000);
  EXPECT_GT(hits, 300);
}

TEST(BoxOracle, AnUnturnedHullIsItsBox) {
  const ProceduralLevel level = dense_level();
  const BrushOracle oracle(level.brushes);
  Uniform u(52);
  int hits = 0;
  for (int i = 0; i < 400; ++i) {
    const Vec3 half{float(u(1, 40)), float(u(1, 40)), float(u(1, 40))};
    const Vec3 offset{0, 0, half.z};
    const Shape as_box = Shape::box(half, offset);
    const std::vector<Vec3> vertices = to_float(corners(to_double(half), to_double(offset)));
    const Shape as_hull = Shape::hull(vertices);
    const Vec3d from = u.in_box({-640, -640, 0}, {640, 640, 320});
    const Vec3d to = from + u.direction() * u(1, 400);
    const OracleHit a = oracle.sweep(as_box, from, to);
    const OracleHit b = oracle.sweep(as_hull, from, to);
    ASSERT_EQ(a.hit, b.hit);
    ASSERT_EQ(a.start_solid, b.start_solid);
    ASSERT_EQ(oracle.overlaps(as_box, to), oracle.overlaps(as_hull, to));
    EXPECT_NEAR(oracle.gap(as_box, to), oracle.gap(as_hull, to), kExact);
    if (!a.hit || a.start_solid) continue;
    ++hits;
    EXPECT_NEAR(a.fraction, b.fraction, kExact);
    EXPECT_EQ(a.brush, b.brush);
    EXPECT_GT(dot(a.normal, b.normal), 1 - 1e-9);
  }
  EXPECT_GT(hits, 50);
}

// The sampling and advancement checks of brush_oracle_test.cpp, for boxes: an axis-aligned crate, a
// yawed one and a tall thin one.
struct BoxUnderTest {
  const char* name;
  Vec3 half;
  double yaw;
};
constexpr BoxUnderTest kBoxes[] = {
    {"crate", {16, 16, 16}, 0}, {"yawed", {24, 8, 12}, 0.7}, {"post", {2, 3, 40}, 2.5}};

class BoxOracleSampling : public ::testing::TestWithParam<BoxUnderTest> {};

TEST_P(BoxOracleSampling, EntryTimeMatchesSamplingAndConservativeAdvancement) {
  const ProceduralLevel level = dense_level();
  const BrushOracle oracle(level.brushes);
  const TurnedShape turned(Shape::box(GetParam().half), GetParam().yaw);
  const Shape& shape = turned.shape();
  Uniform u(53);
  constexpr int kSamples = 1000;
  int hits = 0;
  int advanced = 0;
  for (int i = 0; i < 150; ++i) {
    const Vec3d from = u.in_box({-640, -640, 0}, {640, 640, 320});
    const Vec3d to = from + u.direction() * u(16, 400);
    const OracleHit hit = oracle.sweep(shape, from, to);
    if (hit.start_solid) {
      EXPECT_GE(oracle.overlaps(shape, from), 0);
      continue;
    }
    const auto at = [&](double t) { return lerp(from, to, t); };
    int first = -1;
    for (int k = 1; k <= kSamples && first < 0; ++k) {
      if (oracle.overlaps(shape, at(double(k) / kSamples)) >= 0) first = k;
    }
    if (first >= 0) {
      ASSERT_TRUE(hit.hit) << "sample " << first << " overlaps but the oracle reports no hit";
      EXPECT_LE(hit.fraction, double(first) / kSamples);
    }
    if (!hit.hit) continue;
    ++hits;
    EXPECT_LE(oracle.gap(shape, at(hit.fraction)), kTouching);
    EXPECT_LT(oracle.overlaps(shape, at(hit.fraction * (1 - kExact))), 0);
    // Conservative advancement: the gap is 1-Lipschitz under translation, so stepping by it never
    // passes the first contact.
    const double speed = length(to - from);
    double t = 0;
    int steps = 0;
    for (; steps < 2000; ++steps) {
      const double g = oracle.gap(shape, at(t));
      if (g < 1e-9) break;
      t += g / speed;
    }
    if (steps == 2000) continue;  // grazing approach: too slow to converge
    ++advanced;
    EXPECT_NEAR(t * speed, hit.fraction * speed, 1e-5);
  }
  EXPECT_GT(hits, 30);
  EXPECT_GT(advanced, hits / 2);
}

INSTANTIATE_TEST_SUITE_P(Boxes, BoxOracleSampling, ::testing::ValuesIn(kBoxes),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(BoxOracle, GrownAndShrunkBoxesBracketTheGap) {
  // A box shrunk by d, grown back by a ball of radius d, fits in the box, which in turn fits in the shrunk
  // box grown by a ball of radius d√3: so gap(shrunk) < d means overlap, and overlap means gap(shrunk)
  // < d√3. Growing by `grow` is the same as the bigger box, turned or not.
  const ProceduralLevel level = dense_level();
  const BrushOracle oracle(level.brushes);
  Uniform u(54);
  constexpr double kShrink = 0.5;
  int overlapping = 0;
  for (int i = 0; i < 2000; ++i) {
    const Vec3 half{float(u(1, 30)), float(u(1, 30)), float(u(1, 30))};
    const double yaw = u(0, 6.3);
    const Vec3d p = u.in_box({-640, -640, -40}, {640, 640, 320});
    const TurnedShape turned(Shape::box(half), yaw);
    const TurnedShape shrunk(Shape::box(half - Vec3{0.5f, 0.5f, 0.5f}), yaw);
    const bool overlap = oracle.overlaps(turned.shape(), p) >= 0;
    overlapping += overlap;
    const double g = oracle.gap(shrunk.shape(), p);
    EXPECT_TRUE(overlap || g >= kShrink - kTouching) << i;
    EXPECT_TRUE(!overlap || g < kShrink * std::sqrt(3.0) + kTouching) << i;
    // Shrinking a hull moves its faces in: the smaller box, up to the float rounding of its corners.
    const bool by_grow = oracle.overlaps(turned.shape(), p, -kShrink) >= 0;
    EXPECT_TRUE(!by_grow || g <= kFloatCorners) << i;
    const TurnedShape smaller(Shape::box(half - Vec3{0.5001f, 0.5001f, 0.5001f}), yaw);
    EXPECT_TRUE(by_grow || oracle.overlaps(smaller.shape(), p) < 0) << i;
    EXPECT_EQ(oracle.overlaps(Shape::box(half), p, kShrink) >= 0,
              oracle.overlaps(Shape::box(half + Vec3{0.5f, 0.5f, 0.5f}), p) >= 0);
  }
  EXPECT_GT(overlapping, 200);
}

TEST(BoxOracle, ObstacleSupportIsTheBrushsPlusTheMirroredShapes) {
  const BrushOracle oracle(std::vector<Brush>{box({-10, -10, -10}, {10, 10, 10})});
  const Vec3d x{1, 0, 0};
  const Vec3d up{0, 0, 1};
  const Vec3d diagonal = normalize(Vec3d{1, 1, 0});
  EXPECT_NEAR(oracle.obstacle_support(0, Shape::point(), x), 10, kExact);
  EXPECT_NEAR(oracle.obstacle_support(0, Shape::sphere(5), diagonal), 20 / std::sqrt(2.0) + 5, kExact);
  EXPECT_NEAR(oracle.obstacle_support(0, Shape::sphere(5, {0, 0, 3}), up), 10 + 5 - 3, kExact);
  // The cylinder stands on its reference point: the obstacle reaches the brush's top, and its height
  // below the bottom.
  EXPECT_NEAR(oracle.obstacle_support(0, Shape::cylinder(15, 56), up), 10, kExact);
  EXPECT_NEAR(oracle.obstacle_support(0, Shape::cylinder(15, 56), -up), 10 + 56, kExact);
  EXPECT_NEAR(oracle.obstacle_support(0, Shape::cylinder(15, 56), diagonal), 20 / std::sqrt(2.0) + 15,
              kExact);
  EXPECT_NEAR(oracle.obstacle_support(0, Shape::box({2, 3, 4}), diagonal), (20 + 5) / std::sqrt(2.0), kExact);
  const std::vector<Vec3> hull = to_float(corners({2, 3, 4}, {0, 0, 4}));
  EXPECT_NEAR(oracle.obstacle_support(0, Shape::hull(hull), -up), 10 + 8, kExact);
}

}  // namespace
}  // namespace shiftcast
