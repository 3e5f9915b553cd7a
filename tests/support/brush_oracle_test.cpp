// Tests of the test oracle itself, so that the BSP tests rest on something checked: polytopes against
// their definition, every query against closed forms on boxes and a 45-degree ramp, sweeps against dense
// sampling of the static overlap test and against conservative advancement on the gap functions, the
// cylinder's static test against an independent slicing formulation. Then the procedural level: its
// determinism and the features it promises. All random inputs come from fixed seeds.
#include "tests/support/brush_oracle.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/oracle_test_brushes.hpp"
#include "world/level/procedural_level.hpp"

namespace shiftcast {
namespace {

using oracle_test::box;
using oracle_test::dense_level;
using oracle_test::random_brush;
using oracle_test::Uniform;

// Closed-form answers are computed in double from exact inputs; the oracle must match them this closely.
constexpr double kExact = 1e-9;
// A reported contact is touching: its gap is below this.
constexpr double kTouching = 1e-6;
// Answers that depend on a float-rounded normal (sqrt(1/2) to 24 bits: relative error 3e-8).
constexpr double kFloatNormal = 1e-7;
// Geometry computed from float planes, in units: vertices, bounds, widths of level brushes.
constexpr double kFloatGeometry = 1e-4;

// The 45-degree ramp z <= x for x in [0, 200], |y| <= 100, z >= 0: the slope rises towards +x.
Brush ramp45() {
  const float s = float(std::sqrt(0.5));
  Brush b;
  b.planes = {{{-s, 0, s}, 0}, {{0, 0, -1}, 0}, {{1, 0, 0}, 200}, {{0, 1, 0}, 100}, {{0, -1, 0}, 100}};
  return b;
}

int euler_characteristic(const OraclePolytope& p) {
  return int(p.vertices.size()) - int(p.edges.size()) + int(p.faces.size());
}

// ---------------------------------------------------------------------------------------------------
// Polytopes

TEST(OraclePolytope, BoxHasItsCornersFacesAndEdges) {
  const BrushOracle oracle(std::vector<Brush>{box({-10, -20, -30}, {10, 20, 30})});
  const OraclePolytope& p = oracle.polytope(0);
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p.vertices.size(), 8u);
  EXPECT_EQ(p.faces.size(), 6u);
  EXPECT_EQ(p.edges.size(), 12u);
  EXPECT_NEAR(p.volume, 20.0 * 40 * 60, kExact);
  EXPECT_EQ(p.bounds.min, (Vec3d{-10, -20, -30}));
  EXPECT_EQ(p.bounds.max, (Vec3d{10, 20, 30}));
  for (const auto& face : p.faces) {
    ASSERT_EQ(face.loop.size(), 4u);
    // Counter-clockwise seen from outside: consecutive edges turn about the outward normal.
    const Vec3d a = p.vertices[face.loop[0]];
    const Vec3d b = p.vertices[face.loop[1]];
    const Vec3d c = p.vertices[face.loop[2]];
    EXPECT_GT(dot(cross(b - a, c - b), face.plane.normal), 0);
  }
}

TEST(OraclePolytope, RedundantDuplicateAndTouchingPlanesAddNoFaces) {
  Brush b = box({0, 0, 0}, {10, 10, 10});
  b.planes.push_back({{1, 0, 0}, 10});  // duplicate
  b.planes.push_back({{0, 0, 1}, 50});  // redundant, far away
  const float s = float(std::sqrt(0.5));
  b.planes.push_back({{s, s, 0}, 20 * s});  // touches the box only along the edge x = y = 10
  const BrushOracle oracle(std::vector<Brush>{b});
  const OraclePolytope& p = oracle.polytope(0);
  EXPECT_EQ(p.vertices.size(), 8u);
  EXPECT_EQ(p.faces.size(), 6u);
  EXPECT_EQ(p.edges.size(), 12u);
  EXPECT_NEAR(p.volume, 1000, kExact);
}

TEST(OraclePolytope, UnboundedAndEmptyPlaneSetsAreEmpty) {
  Brush open = box({0, 0, 0}, {10, 10, 10});
  open.planes.pop_back();  // no bottom
  Brush contradictory = box({0, 0, 0}, {10, 10, 10});
  contradictory.planes.push_back({{-1, 0, 0}, -20});  // x >= 20 and x <= 10
  Brush flat = box({0, 0, 0}, {10, 10, 0});
  const BrushOracle oracle(std::vector<Brush>{open, contradictory, flat});
  EXPECT_FALSE(oracle.polytope(0).bounded);
  EXPECT_TRUE(oracle.polytope(0).empty());
  EXPECT_TRUE(oracle.polytope(1).empty());
  EXPECT_TRUE(oracle.polytope(2).empty());
  EXPECT_EQ(oracle.point_brush({5, 5, 5}), -1);
  EXPECT_FALSE(oracle.sweep_sphere(1, {5, 5, 50}, {5, 5, -50}).hit);
}

TEST(OraclePolytope, RandomPolyhedraAreClosedAndAgreeWithTheirHull) {
  Uniform u(11);
  for (int i = 0; i < 200; ++i) {
    const Brush b = random_brush(u, u.in_box({-500, -500, -500}, {500, 500, 500}), u(2, 100));
    const BrushOracle oracle(std::vector<Brush>{b});
    const OraclePolytope& p = oracle.polytope(0);
    ASSERT_FALSE(p.empty());
    EXPECT_EQ(euler_characteristic(p), 2);
    // Every edge borders exactly two faces.
    for (const auto& e : p.edges) {
      int faces = 0;
      for (const auto& f : p.faces) {
        for (std::size_t k = 0; k < f.loop.size(); ++k) {
          const int a = f.loop[k];
          const int c = f.loop[(k + 1) % f.loop.size()];
          faces += (std::min(a, c) == e[0] && std::max(a, c) == e[1]);
        }
      }
      EXPECT_EQ(faces, 2);
    }
    for (Vec3d v : p.vertices) {
      for (const Plane& plane : b.planes)
        EXPECT_LE(to_double(plane).distance(v), kOracleOnPlane);
    }
    // The same solid from its vertices alone.
    const OraclePolytope hull = make_oracle_hull(p.vertices);
    EXPECT_EQ(hull.vertices.size(), p.vertices.size());
    EXPECT_EQ(hull.faces.size(), p.faces.size());
    EXPECT_NEAR(hull.volume, p.volume, kExact * p.volume);
  }
}

// ---------------------------------------------------------------------------------------------------
// Points and rays

TEST(BrushOracle, PointBrushIsTheLowestIdStrictlyContainingThePoint) {
  const BrushOracle oracle(std::vector<Brush>{box({0, 0, 0}, {10, 10, 10}), box({5, 5, 5}, {20, 20, 20})});
  EXPECT_EQ(oracle.point_brush({1, 1, 1}), 0);
  EXPECT_EQ(oracle.point_brush({7, 7, 7}), 0);
  EXPECT_EQ(oracle.point_brush({15, 15, 15}), 1);
  EXPECT_EQ(oracle.point_brush({10, 15, 15}), 1);  // on brush 0's face, inside brush 1
  EXPECT_EQ(oracle.point_brush({10, 2, 2}), -1);   // on a face only
  EXPECT_EQ(oracle.point_brush({30, 0, 0}), -1);
  EXPECT_NEAR(oracle.distance_to_surface({1, 2, 3}), 1, kExact);
  EXPECT_NEAR(oracle.distance_to_surface({-3, -4, 5}), 5, kExact);
  EXPECT_NEAR(oracle.distance_to_surface({25, 20, 20}), 5, kExact);
}

TEST(BrushOracle, RaycastEntersABoxThroughTheRightFace) {
  const BrushOracle oracle(std::vector<Brush>{box({-10, -10, -10}, {10, 10, 10})});
  OracleHit hit = oracle.raycast({-50, 1, 2}, {50, 1, 2});
  ASSERT_TRUE(hit.hit);
  EXPECT_FALSE(hit.start_solid);
  EXPECT_NEAR(hit.fraction, 0.4, kExact);
  EXPECT_EQ(hit.normal, (Vec3d{-1, 0, 0}));
  EXPECT_EQ(hit.brush, 0);

  hit = oracle.raycast({3, 4, 100}, {3, 4, 0});
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, 0.9, kExact);
  EXPECT_EQ(hit.normal, (Vec3d{0, 0, 1}));

  hit = oracle.raycast({0, 0, 0}, {50, 0, 0});
  EXPECT_TRUE(hit.hit && hit.start_solid);
  EXPECT_EQ(hit.fraction, 0);

  hit = oracle.raycast({10, 0, 0}, {0, 0, 0});  // starts on the face, moving in
  EXPECT_TRUE(hit.hit && !hit.start_solid);
  EXPECT_EQ(hit.fraction, 0);

  EXPECT_FALSE(oracle.raycast({-50, 20, 0}, {50, 20, 0}).hit);    // passes beside
  EXPECT_FALSE(oracle.raycast({-50, 10, 0}, {50, 10, 0}).hit);    // slides along a face
  EXPECT_FALSE(oracle.raycast({-50, 10, 10}, {50, 10, 10}).hit);  // along an edge
  EXPECT_FALSE(oracle.raycast({-20, 0, 0}, {-10, 0, 0}).hit);     // ends touching
  EXPECT_FALSE(oracle.raycast({-20, 0, 0}, {-20, 0, 0}).hit);     // does not move
}

TEST(BrushOracle, RaycastReportsTheFirstBrushAndTheLowestIdOnTies) {
  const BrushOracle oracle(std::vector<Brush>{box({30, -10, -10}, {40, 10, 10}),
                                              box({10, -10, -10}, {20, 10, 10}),
                                              box({10, -10, -10}, {20, 10, 10})});
  const OracleHit hit = oracle.raycast({0, 0, 0}, {100, 0, 0});
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, 0.1, kExact);
  EXPECT_EQ(hit.brush, 1);
}

// ---------------------------------------------------------------------------------------------------
// Spheres against a box [-10, 10]^3, radius 5, moving +x from x = -40 to x = 40: closed forms.

class SphereVsBox : public ::testing::Test {
 protected:
  const BrushOracle oracle{std::vector<Brush>{box({-10, -10, -10}, {10, 10, 10})}};
  static constexpr double kRadius = 5;
  OracleHit sweep_at(double y, double z) const {
    return oracle.sweep_sphere(kRadius, {-40, y, z}, {40, y, z});
  }
};

TEST_F(SphereVsBox, Face) {
  const OracleHit hit = sweep_at(3, -4);
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, 25.0 / 80, kExact);
  EXPECT_EQ(hit.normal, (Vec3d{-1, 0, 0}));
  EXPECT_EQ(hit.feature, OracleFeature::kFace);
}

TEST_F(SphereVsBox, Edge) {
  // The path passes 2 above the top face: it meets the edge x = -10, z = 10 when (x + 10)^2 + 2^2 = 5^2.
  const OracleHit hit = sweep_at(0, 12);
  const double x = -10 - std::sqrt(21.0);
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, (x + 40) / 80, kExact);
  EXPECT_EQ(hit.feature, OracleFeature::kEdge);
  EXPECT_NEAR(hit.normal.x, (x + 10) / 5, kExact);
  EXPECT_NEAR(hit.normal.z, 2.0 / 5, kExact);
}

TEST_F(SphereVsBox, Corner) {
  // 2 beside and 3 above: only the corner (-10, 10, 10) is reached, when (x + 10)^2 + 4 + 9 = 25.
  const OracleHit hit = sweep_at(12, 13);
  const double x = -10 - std::sqrt(12.0);
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, (x + 40) / 80, kExact);
  EXPECT_EQ(hit.feature, OracleFeature::kVertex);
  EXPECT_NEAR(hit.normal.x, (x + 10) / 5, kExact);
  EXPECT_NEAR(hit.normal.y, 2.0 / 5, kExact);
  EXPECT_NEAR(hit.normal.z, 3.0 / 5, kExact);
}

TEST_F(SphereVsBox, MissesStartsInsideAndSlides) {
  EXPECT_FALSE(sweep_at(14, 14).hit);  // 4^2 + 4^2 > 5^2: passes the corner
  const OracleHit inside = oracle.sweep_sphere(kRadius, {-14, 0, 0}, {-40, 0, 0});
  EXPECT_TRUE(inside.hit && inside.start_solid);
  EXPECT_EQ(inside.brush, 0);
  // Resting exactly on the top face and sliding over it and past its edges is touching, not a hit.
  EXPECT_FALSE(sweep_at(0, 15).hit);
  EXPECT_EQ(oracle.sphere_overlaps(kRadius, {0, 0, 15}), -1);
  EXPECT_EQ(oracle.sphere_overlaps(kRadius, {0, 0, 14.999}), 0);
  EXPECT_NEAR(oracle.sphere_gap(kRadius, {0, 0, 25}), 10, kExact);
  EXPECT_NEAR(oracle.sphere_gap(kRadius, {13, 14, 10}), 0, kExact);
  EXPECT_NEAR(oracle.sphere_gap(kRadius, {-20, -20, -20}), std::sqrt(300.0) - 5, kExact);
  EXPECT_EQ(oracle.sphere_gap(kRadius, {0, 0, 0}), 0);
}

TEST_F(SphereVsBox, TouchingAtTheStartIsNotStartSolid) {
  OracleHit hit = oracle.sweep_sphere(kRadius, {-15, 0, 0}, {0, 0, 0});
  EXPECT_TRUE(hit.hit && !hit.start_solid);
  EXPECT_EQ(hit.fraction, 0);
  EXPECT_EQ(hit.normal, (Vec3d{-1, 0, 0}));
  EXPECT_FALSE(oracle.sweep_sphere(kRadius, {-15, 0, 0}, {-30, 0, 0}).hit);
}

TEST(BrushOracle, SweepTiesGoToTheLowestId) {
  // Two floor tiles meeting at x = 0 and a duplicate of the second: a sphere falling onto the seam
  // touches all three at once.
  const BrushOracle oracle(std::vector<Brush>{box({0, -100, -10}, {100, 100, 0}),
                                              box({-100, -100, -10}, {0, 100, 0}),
                                              box({0, -100, -10}, {100, 100, 0})});
  const OracleHit hit = oracle.sweep_sphere(5, {0, 0, 100}, {0, 0, 0});
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, 0.95, kExact);
  EXPECT_EQ(hit.brush, 0);
  EXPECT_EQ(hit.normal, (Vec3d{0, 0, 1}));
  // Rolling across the seam while resting on the floor is touching all the way.
  EXPECT_FALSE(oracle.sweep_sphere(5, {-50, 0, 5}, {50, 0, 5}).hit);
  EXPECT_FALSE(oracle.sweep_cylinder(5, 10, {-50, 0, 0}, {50, 0, 0}).hit);
}

TEST(BrushOracle, ShapeQueriesHonourTheOffset) {
  const BrushOracle oracle(std::vector<Brush>{box({-10, -10, -10}, {10, 10, 10})});
  const Vec3d from{0, 0, 100};
  const Vec3d to{0, 0, 0};
  const OracleHit sphere = oracle.sweep(Shape::sphere(5, {0, 0, -20}), from, to);  // centre 20 below
  EXPECT_NEAR(sphere.fraction, (100 - 35) / 100.0, kExact);
  const OracleHit cylinder = oracle.sweep(Shape::cylinder(5, 30, {0, 0, 10}), from, to);  // feet 10 above
  EXPECT_NEAR(cylinder.fraction, (100 - 0) / 100.0, kExact);
  EXPECT_FALSE(cylinder.hit);
  EXPECT_NEAR(oracle.sweep(Shape::point(), from, to).fraction, 0.9, kExact);
  EXPECT_EQ(oracle.overlaps(Shape::sphere(5, {0, 0, -20}), {0, 0, 34}), 0);
  EXPECT_EQ(oracle.overlaps(Shape::sphere(5, {0, 0, -20}), {0, 0, 35}), -1);
  EXPECT_NEAR(oracle.gap(Shape::cylinder(5, 30, {0, 0, 10}), {0, 0, 20}), 20, kOracleCylinderGapPrecision);
  const OracleHit box = oracle.sweep(Shape::box({1, 2, 3}, {0, 0, -20}), from, to);  // centre 20 below
  EXPECT_NEAR(box.fraction, (100 - 33) / 100.0, kExact);
  // Shrinking a shape below zero size is refused; growing a point makes it a sphere.
  EXPECT_THROW(oracle.sweep(Shape::sphere(5), from, to, -6), std::invalid_argument);
  EXPECT_THROW(oracle.sweep(Shape::box({1, 2, 3}), from, to, -1.5), std::invalid_argument);
  EXPECT_NEAR(oracle.sweep(Shape::point(), from, to, 5).fraction, 0.85, kExact);
  // Shrinking a point moves the brushes' planes in: it must get 1 unit inside.
  EXPECT_NEAR(oracle.sweep(Shape::point(), from, to, -1).fraction, 0.91, kExact);
  EXPECT_EQ(oracle.overlaps(Shape::point(), {0, 0, 9.5}, -1), -1);
  EXPECT_EQ(oracle.overlaps(Shape::point(), {0, 0, 8.5}, -1), 0);
  // Growing a cylinder moves its feet down and its head up.
  EXPECT_FALSE(oracle.overlaps_brush(0, Shape::cylinder(5, 30), {0, 0, 10.5}));
  EXPECT_TRUE(oracle.overlaps_brush(0, Shape::cylinder(5, 30), {0, 0, 10.5}, 1));
}

// ---------------------------------------------------------------------------------------------------
// Cylinders (the player: radius 15, height 56, reference point at the feet).

constexpr double kPlayerRadius = 15;
constexpr double kPlayerHeight = 56;

class CylinderVsBox : public ::testing::Test {
 protected:
  // A pillar [-10, 10]^2 x [0, 100] and a floating slab [-10, 10]^2 x [300, 320].
  const BrushOracle oracle{
      std::vector<Brush>{box({-10, -10, 0}, {10, 10, 100}), box({-10, -10, 300}, {10, 10, 320})}};
  OracleHit sweep(Vec3d from, Vec3d to) const {
    return oracle.sweep_cylinder(kPlayerRadius, kPlayerHeight, from, to);
  }
};

TEST_F(CylinderVsBox, SideFace) {
  const OracleHit hit = sweep({-100, 5, 20}, {100, 5, 20});
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, 75.0 / 200, kExact);
  EXPECT_EQ(hit.normal, (Vec3d{-1, 0, 0}));
  EXPECT_EQ(hit.feature, OracleFeature::kFace);
}

TEST_F(CylinderVsBox, VerticalEdge) {
  // 10 beside the edge x = -10, y = 10: the rim reaches it when (x + 10)^2 + 10^2 = 15^2.
  const OracleHit hit = sweep({-100, 20, 20}, {100, 20, 20});
  const double x = -10 - std::sqrt(125.0);
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, (x + 100) / 200, kExact);
  EXPECT_EQ(hit.feature, OracleFeature::kEdge);
  EXPECT_NEAR(hit.normal.x, (x + 10) / 15, kExact);
  EXPECT_NEAR(hit.normal.y, 10.0 / 15, kExact);
  EXPECT_NEAR(hit.normal.z, 0, kExact);
}

TEST_F(CylinderVsBox, FeetOnTheTopAndHeadUnderTheSlab) {
  OracleHit hit = sweep({20, 0, 200}, {20, 0, 0});  // the disk overhangs the top by 10 of its 15
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, 0.5, kExact);
  EXPECT_EQ(hit.normal, (Vec3d{0, 0, 1}));
  EXPECT_EQ(hit.feature, OracleFeature::kCap);

  hit = sweep({0, 0, 150}, {0, 0, 250});  // the head reaches z = 300 when the feet are at 244
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, 0.94, kExact);
  EXPECT_EQ(hit.normal, (Vec3d{0, 0, -1}));
  EXPECT_EQ(hit.brush, 1);
}

TEST_F(CylinderVsBox, StandingOnTheTopAndSteppingDownIsAHitAtZero) {
  const OracleHit hit = sweep({0, 0, 100}, {0, 0, 50});
  EXPECT_TRUE(hit.hit && !hit.start_solid);
  EXPECT_EQ(hit.fraction, 0);
  EXPECT_EQ(hit.normal, (Vec3d{0, 0, 1}));
}

TEST_F(CylinderVsBox, MissesSlidesAndStartsInside) {
  EXPECT_FALSE(sweep({26, 0, 200}, {26, 0, 0}).hit);  // 16 from the pillar
  // Touching the wall and sliding down it, or standing on the top and walking off: not hits.
  EXPECT_FALSE(sweep({25, 0, 200}, {25, 0, 110}).hit);
  EXPECT_FALSE(sweep({0, 0, 100}, {100, 0, 100}).hit);
  EXPECT_EQ(oracle.cylinder_overlaps(kPlayerRadius, kPlayerHeight, {25, 0, 50}), -1);
  EXPECT_EQ(oracle.cylinder_overlaps(kPlayerRadius, kPlayerHeight, {24.99, 0, 50}), 0);
  EXPECT_EQ(oracle.cylinder_overlaps(kPlayerRadius, kPlayerHeight, {0, 0, 100}), -1);
  EXPECT_EQ(oracle.cylinder_overlaps(kPlayerRadius, kPlayerHeight, {0, 0, 99.99}), 0);
  EXPECT_EQ(oracle.cylinder_overlaps(kPlayerRadius, kPlayerHeight, {0, 0, 244}), -1);
  EXPECT_EQ(oracle.cylinder_overlaps(kPlayerRadius, kPlayerHeight, {0, 0, 244.01}), 1);
  const OracleHit inside = sweep({20, 0, 90}, {100, 0, 90});
  EXPECT_TRUE(inside.hit && inside.start_solid);
}

TEST_F(CylinderVsBox, GapIsTheDistanceTheCylinderMustGrow) {
  EXPECT_NEAR(oracle.cylinder_gap(kPlayerRadius, kPlayerHeight, {40, 0, 20}), 15,
              kOracleCylinderGapPrecision);
  EXPECT_NEAR(oracle.cylinder_gap(kPlayerRadius, kPlayerHeight, {0, 0, 110}), 10,
              kOracleCylinderGapPrecision);
  EXPECT_NEAR(oracle.cylinder_gap(kPlayerRadius, kPlayerHeight, {30, 30, 20}), std::sqrt(800.0) - 15,
              kOracleCylinderGapPrecision);
  EXPECT_NEAR(oracle.cylinder_gap(kPlayerRadius, kPlayerHeight, {40, 0, 112}), 15,
              kOracleCylinderGapPrecision);  // max(15, 12)
  EXPECT_NEAR(oracle.cylinder_gap(kPlayerRadius, kPlayerHeight, {0, 0, 234}), 10,
              kOracleCylinderGapPrecision);  // 300 - (234 + 56)
  EXPECT_EQ(oracle.cylinder_gap(kPlayerRadius, kPlayerHeight, {24, 0, 50}), 0);
}

TEST(CylinderVsRamp, RimTouchesTheSlope) {
  const BrushOracle oracle(std::vector<Brush>{ramp45()});
  // Walking +x at height 50: the rim's front point (x + 15, 50) reaches the slope z = x when x = 35.
  OracleHit hit = oracle.sweep_cylinder(kPlayerRadius, kPlayerHeight, {-100, 0, 50}, {100, 0, 50});
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, 135.0 / 200, kFloatNormal);
  EXPECT_EQ(hit.feature, OracleFeature::kFace);
  EXPECT_NEAR(hit.normal.x, -std::sqrt(0.5), kFloatNormal);
  EXPECT_NEAR(hit.normal.z, std::sqrt(0.5), kFloatNormal);
  // Falling at x = 50: the disk's highest point over the slope is its rim at x = 65.
  hit = oracle.sweep_cylinder(kPlayerRadius, kPlayerHeight, {50, 0, 300}, {50, 0, 0});
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, (300.0 - 65) / 300, kFloatNormal);
  // A sphere falls until its centre is r / cos 45 above the slope.
  hit = oracle.sweep_sphere(kPlayerRadius, {50, 0, 300}, {50, 0, 0});
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, (250.0 - 15 * std::sqrt(2.0)) / 300, kFloatNormal);
}

TEST(BrushOracle, ZeroSizeShapesAgreeWithTheRaycast) {
  const ProceduralLevel level = make_procedural_level({.seed = 3, .target_brushes = 120, .half_extent = 768});
  const BrushOracle oracle(level.brushes);
  Uniform u(5);
  int hits = 0;
  for (int i = 0; i < 2000; ++i) {
    const Vec3d a = u.in_box({-768, -768, -16}, {768, 768, 400});
    const Vec3d b = a + u.direction() * u(1, 600);
    const OracleHit ray = oracle.raycast(a, b);
    const OracleHit sphere = oracle.sweep_sphere(0, a, b);
    const OracleHit cylinder = oracle.sweep_cylinder(0, 0, a, b);
    ASSERT_EQ(ray.hit, sphere.hit) << i;
    ASSERT_EQ(ray.hit, cylinder.hit) << i;
    ASSERT_EQ(ray.start_solid, sphere.start_solid);
    ASSERT_EQ(ray.start_solid, cylinder.start_solid);
    if (!ray.hit) continue;
    ++hits;
    EXPECT_EQ(ray.brush, sphere.brush);
    EXPECT_EQ(ray.brush, cylinder.brush);
    EXPECT_NEAR(ray.fraction, sphere.fraction, kExact);
    EXPECT_NEAR(ray.fraction, cylinder.fraction, kExact);
  }
  EXPECT_GT(hits, 400);
}

// ---------------------------------------------------------------------------------------------------
// Sweeps against sampling and against conservative advancement, on a dense small level.

struct SweepCase {
  Vec3d from;
  Vec3d to;
};

std::vector<SweepCase> random_sweeps(std::uint32_t seed, int count, double half_extent) {
  Uniform u(seed);
  std::vector<SweepCase> out;
  for (int i = 0; i < count; ++i) {
    const Vec3d a = u.in_box({-half_extent, -half_extent, 0}, {half_extent, half_extent, 320});
    out.push_back({a, a + u.direction() * u(16, 400)});
  }
  return out;
}

struct ShapeUnderTest {
  const char* name;
  double radius;
  double height;  // < 0 for a sphere
};

constexpr ShapeUnderTest kShapes[] = {
    {"sphere", 15, -1}, {"small sphere", 2.5, -1}, {"player", 15, 56}, {"crate", 24, 24}};

class OracleSweepSampling : public ::testing::TestWithParam<ShapeUnderTest> {
 protected:
  OracleHit sweep(const BrushOracle& o, Vec3d a, Vec3d b) const {
    const auto s = GetParam();
    return s.height < 0 ? o.sweep_sphere(s.radius, a, b) : o.sweep_cylinder(s.radius, s.height, a, b);
  }
  bool overlaps(const BrushOracle& o, Vec3d p) const {
    const auto s = GetParam();
    return (s.height < 0 ? o.sphere_overlaps(s.radius, p) : o.cylinder_overlaps(s.radius, s.height, p)) >= 0;
  }
  double gap(const BrushOracle& o, Vec3d p) const {
    const auto s = GetParam();
    return s.height < 0 ? o.sphere_gap(s.radius, p) : o.cylinder_gap(s.radius, s.height, p);
  }
};

// The entry time lies between the last free sample and the first overlapping one; a hit with no
// overlapping sample is a clip shorter than one sample step, which a denser resampling must find.
TEST_P(OracleSweepSampling, EntryTimeMatchesFirstOverlappingSample) {
  const ProceduralLevel level = dense_level();
  const BrushOracle oracle(level.brushes);
  constexpr int kSamples = 2000;
  int hits = 0;
  int clips = 0;
  for (const SweepCase& c : random_sweeps(31, 300, 640)) {
    const OracleHit hit = sweep(oracle, c.from, c.to);
    const auto at = [&](double t) { return lerp(c.from, c.to, t); };
    if (hit.start_solid) {
      EXPECT_TRUE(overlaps(oracle, c.from));
      continue;
    }
    EXPECT_FALSE(overlaps(oracle, c.from));
    int first = -1;
    for (int k = 1; k <= kSamples && first < 0; ++k) {
      if (overlaps(oracle, at(double(k) / kSamples))) first = k;
    }
    if (first >= 0) {
      ASSERT_TRUE(hit.hit) << "sample " << first << " overlaps but the oracle reports no hit";
      EXPECT_LE(hit.fraction, double(first) / kSamples);
    }
    if (!hit.hit) continue;
    ++hits;
    EXPECT_LE(gap(oracle, at(hit.fraction)), kTouching);
    EXPECT_FALSE(overlaps(oracle, at(hit.fraction * (1 - kExact))));
    if (first < 0 || hit.fraction < double(first - 1) / kSamples) {
      // Entered and left between two samples: resample that step finely.
      ++clips;
      bool found = false;
      for (int k = 1; k <= 1000 && !found; ++k) {
        found = overlaps(oracle, at(hit.fraction + k * (1.0 / kSamples) / 1000));
      }
      EXPECT_TRUE(found) << "hit at " << hit.fraction << " with no overlap after it";
    }
  }
  EXPECT_GT(hits, 60);
  EXPECT_LT(clips, hits / 10);
}

// Conservative advancement: step by gap / speed (the gap is 1-Lipschitz in the Euclidean norm for the
// sphere and in max(|xy|, |z|) for the cylinder) until touching. It never passes the first contact.
// It stops when the gap is below kAdvancedTouching, and must then agree with the oracle to
// kAdvancementAgreement units along the motion (slow convergence at shallow angles leaves it short).
constexpr double kAdvancedTouching = 1e-9;
constexpr double kAdvancementAgreement = 1e-5;
constexpr int kAdvancementSteps = 2000;

TEST_P(OracleSweepSampling, EntryTimeMatchesConservativeAdvancement) {
  const ProceduralLevel level = dense_level();
  const BrushOracle oracle(level.brushes);
  const bool sphere = GetParam().height < 0;
  int compared = 0;
  const int sweeps = sphere ? 300 : 80;
  for (const SweepCase& c : random_sweeps(32, sweeps, 640)) {
    const OracleHit hit = sweep(oracle, c.from, c.to);
    if (hit.start_solid) continue;
    const Vec3d w = c.to - c.from;
    const double speed = sphere ? length(w) : std::max(std::hypot(w.x, w.y), std::abs(w.z));
    double t = 0;
    bool touched = false;
    int steps = 0;
    for (; steps < kAdvancementSteps && t <= 1; ++steps) {
      const double g = gap(oracle, lerp(c.from, c.to, t));
      if (g < kAdvancedTouching) {
        touched = true;
        break;
      }
      t += g / speed;
    }
    if (steps == kAdvancementSteps) continue;  // grazing approach: too slow to converge, proves nothing
    ++compared;
    EXPECT_EQ(touched, hit.hit) << "advancement " << t << " oracle " << hit.fraction;
    // Touching without entering (a graze) stops advancement but is not a hit; random paths do not graze.
    if (touched && hit.hit) {
      EXPECT_NEAR(t * speed, hit.fraction * speed, kAdvancementAgreement);
    }
  }
  EXPECT_GT(compared, sweeps / 2);  // the rest start in solid
}

INSTANTIATE_TEST_SUITE_P(Shapes, OracleSweepSampling, ::testing::ValuesIn(kShapes), [](const auto& info) {
  std::string name = info.param.name;
  std::replace(name.begin(), name.end(), ' ', '_');
  return name;
});

// The cylinder's static test (slices of the swept hull E) against the gap (slices of the brush itself,
// minimised over height): a cylinder overlaps exactly when the cylinder shrunk by d has a gap below d.
TEST(BrushOracle, CylinderOverlapAgreesWithTheShrunkCylindersGap) {
  const ProceduralLevel level = dense_level();
  const BrushOracle oracle(level.brushes);
  Uniform u(41);
  constexpr double kShrink = 0.5;
  constexpr double kTooCloseToCall = 1e-6;  // gaps this close to kShrink are touching: either answer
  int overlapping = 0;
  int checked = 0;
  for (int i = 0; i < 3000; ++i) {
    const Vec3d p = u.in_box({-640, -640, -40}, {640, 640, 320});
    const double r = u(1, 30);
    const double h = u(2, 80);
    const double g = oracle.cylinder_gap(r - kShrink, h - 2 * kShrink, p + Vec3d{0, 0, kShrink});
    if (std::abs(g - kShrink) < kTooCloseToCall) continue;
    ++checked;
    const bool overlap = oracle.cylinder_overlaps(r, h, p) >= 0;
    overlapping += overlap;
    EXPECT_EQ(overlap, g < kShrink) << "r " << r << " h " << h << " gap " << g;
  }
  EXPECT_GT(overlapping, 300);
  EXPECT_GT(checked - overlapping, 300);
}

// ---------------------------------------------------------------------------------------------------
// The procedural level.

bool same_planes(const ProceduralLevel& a, const ProceduralLevel& b) {
  if (a.brushes.size() != b.brushes.size() || a.features != b.features) return false;
  for (std::size_t i = 0; i < a.brushes.size(); ++i) {
    if (a.brushes[i].planes != b.brushes[i].planes) return false;
  }
  return true;
}

TEST(ProceduralLevel, SameSeedGivesTheSameBrushesBitForBit) {
  const ProceduralLevel a = make_procedural_level({.seed = 9, .target_brushes = 240});
  const ProceduralLevel b = make_procedural_level({.seed = 9, .target_brushes = 240});
  const ProceduralLevel c = make_procedural_level({.seed = 10, .target_brushes = 240});
  EXPECT_TRUE(same_planes(a, b));
  EXPECT_FALSE(same_planes(a, c));
}

// FNV-1a over the planes' float bits, little-endian.
std::uint64_t plane_hash(const ProceduralLevel& level) {
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&](float f) {
    const auto bits = std::bit_cast<std::uint32_t>(f);
    for (int i = 0; i < 4; ++i) {
      h ^= (bits >> (8 * i)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  for (const Brush& b : level.brushes) {
    for (const Plane& p : b.planes) {
      mix(p.normal.x);
      mix(p.normal.y);
      mix(p.normal.z);
      mix(p.d);
    }
  }
  return h;
}

// Benchmarks and documented figures use these levels: a change to the generator must be deliberate, and
// then updates this hash. (The generator avoids libm trigonometry and the standard distributions, so the
// hash is the same across compilers and optimisation levels.)
TEST(ProceduralLevel, PinnedHashCatchesAccidentalChanges) {
  const ProceduralLevel level = make_procedural_level({.seed = 7, .target_brushes = 240});
  EXPECT_EQ(level.brushes.size(), 240u);
  EXPECT_EQ(plane_hash(level), 0x95cb5e4e1acedbe5ull);
}

class ProceduralLevelOfSize : public ::testing::TestWithParam<std::int32_t> {};

TEST_P(ProceduralLevelOfSize, HasEveryFeatureAndOnlyWellFormedBrushes) {
  const ProceduralLevelOptions options{.seed = 4, .target_brushes = GetParam()};
  const ProceduralLevel level = make_procedural_level(options);
  ASSERT_GE(std::int32_t(level.brushes.size()), options.target_brushes);
  ASSERT_EQ(level.features.size(), level.brushes.size());
  std::set<BrushFeature> kinds(level.features.begin(), level.features.end());
  EXPECT_EQ(kinds.size(), 8u);

  const BrushOracle oracle(level.brushes);
  const double h = options.half_extent;
  Aabbd all;
  for (std::int32_t i = 0; i < oracle.brush_count(); ++i) {
    SCOPED_TRACE(testing::Message() << "brush " << i << " (" << to_string(level.features[i]) << ")");
    const OraclePolytope& p = oracle.polytope(i);
    ASSERT_TRUE(p.bounded);
    ASSERT_FALSE(p.empty());
    EXPECT_EQ(euler_characteristic(p), 2);
    EXPECT_GT(p.volume, 1.0);
    for (const Plane& plane : level.brushes[i].planes) {
      EXPECT_NEAR(length(to_double(plane.normal)), 1.0, 1e-6);  // float rounding of a unit vector: < 1e-7
    }
    EXPECT_GE(p.bounds.min.x, -h);
    EXPECT_GE(p.bounds.min.y, -h);
    EXPECT_LE(p.bounds.max.x, h);
    EXPECT_LE(p.bounds.max.y, h);
    EXPECT_GE(p.bounds.min.z, -64.0 - kFloatGeometry);
    EXPECT_LE(p.bounds.max.z, 1024.0 + kFloatGeometry);
    const Vec3d size = p.bounds.size();
    const double largest = std::max({size.x, size.y, size.z});
    const double smallest = std::min({size.x, size.y, size.z});
    EXPECT_GE(smallest, options.wall_thickness - kFloatGeometry);
    const bool arena =
        level.features[i] == BrushFeature::kFloor || level.features[i] == BrushFeature::kBoundary;
    EXPECT_LE(largest, arena ? 2 * h : 600.0);
    all.grow(p.bounds);
  }
  EXPECT_NEAR(level.bounds.min.x, all.min.x, kFloatGeometry);
  EXPECT_NEAR(level.bounds.min.z, all.min.z, kFloatGeometry);
  EXPECT_NEAR(level.bounds.max.y, all.max.y, kFloatGeometry);
  EXPECT_NEAR(level.bounds.max.z, all.max.z, kFloatGeometry);
}

INSTANTIATE_TEST_SUITE_P(Targets, ProceduralLevelOfSize, ::testing::Values(1, 240, 1200));

TEST(ProceduralLevel, ThinWallsAreExactlyWallThicknessAtRandomYaw) {
  for (float thickness : {1.0f, 2.0f}) {
    const ProceduralLevel level =
        make_procedural_level({.seed = 5, .target_brushes = 240, .wall_thickness = thickness});
    const BrushOracle oracle(level.brushes);
    int walls = 0;
    int oblique = 0;
    for (std::size_t i = 0; i < level.brushes.size(); ++i) {
      if (level.features[i] != BrushFeature::kThinWall) continue;
      ++walls;
      // The thickness planes: the opposite horizontal pair closest together.
      const auto& planes = level.brushes[i].planes;
      const Plane* thin = nullptr;
      double width = 1e300;
      for (const Plane& a : planes) {
        for (const Plane& b : planes) {
          if (b.normal == -a.normal && a.normal.z == 0 && double(a.d) + double(b.d) < width) {
            thin = &a;
            width = double(a.d) + double(b.d);
          }
        }
      }
      const bool found = thin != nullptr;
      if (found) {
        // Stored offsets are exactly `thickness` apart, and so is the solid (up to |n| - 1 ~ 6e-8).
        EXPECT_EQ(width, double(thickness));
        const Vec3d n = normalize(to_double(thin->normal));
        double lo = 1e300;
        double hi = -1e300;
        for (Vec3d v : oracle.polytope(std::int32_t(i)).vertices) {
          lo = std::min(lo, dot(n, v));
          hi = std::max(hi, dot(n, v));
        }
        EXPECT_NEAR(hi - lo, thickness, kFloatGeometry);
        oblique += std::min(std::abs(n.x), std::abs(n.y)) > 0.05;
      }
      EXPECT_TRUE(found) << "thin wall " << i;
    }
    EXPECT_GE(walls, 5);
    EXPECT_GE(oblique, 2);
  }
}

TEST(ProceduralLevel, HasTheShapesThatBreakCollisionCode) {
  const ProceduralLevel level = make_procedural_level({.seed = 4, .target_brushes = 240});
  const BrushOracle oracle(level.brushes);
  bool step_16 = false;
  bool ramp_45 = false;
  bool ramp_shallow = false;
  bool octagon = false;
  bool acute = false;
  bool overlapping_random = false;
  Uniform u(6);
  for (std::int32_t i = 0; i < oracle.brush_count(); ++i) {
    const OraclePolytope& p = oracle.polytope(i);
    switch (level.features[i]) {
      case BrushFeature::kStair:
        step_16 |= p.bounds.min.z == 0 && p.bounds.max.z == 16;
        break;
      case BrushFeature::kRamp:
        for (const auto& f : p.faces) {
          const double horizontal = std::hypot(f.plane.normal.x, f.plane.normal.y);
          if (f.plane.normal.z <= 0 || horizontal == 0) continue;
          ramp_45 |= std::abs(f.plane.normal.z - horizontal) < kFloatNormal;
          ramp_shallow |= f.plane.normal.z > horizontal + 0.1;
        }
        break;
      case BrushFeature::kPillar:
        octagon |= p.faces.size() == 10;
        break;
      case BrushFeature::kWedge:
        // Interior dihedral angle below 60 degrees: two faces sharing an edge with normals > 120 apart.
        for (const auto& e : p.edges) {
          std::vector<Vec3d> normals;
          for (const auto& f : p.faces) {
            if (std::count(f.loop.begin(), f.loop.end(), e[0]) &&
                std::count(f.loop.begin(), f.loop.end(), e[1])) {
              normals.push_back(f.plane.normal);
            }
          }
          acute |= normals.size() == 2 && dot(normals[0], normals[1]) < -0.5;
        }
        break;
      case BrushFeature::kRandom:
        for (int k = 0; k < 200 && !overlapping_random; ++k) {
          const Vec3d q = u.in_box(p.bounds.min, p.bounds.max);
          if (!oracle.contains(i, q)) continue;
          for (std::int32_t j = 0; j < oracle.brush_count(); ++j) {
            overlapping_random |=
                j != i && level.features[j] == BrushFeature::kRandom && oracle.contains(j, q);
          }
        }
        break;
      default:
        break;
    }
  }
  EXPECT_TRUE(step_16);
  EXPECT_TRUE(ramp_45);
  EXPECT_TRUE(ramp_shallow);
  EXPECT_TRUE(octagon);
  EXPECT_TRUE(acute);
  EXPECT_TRUE(overlapping_random);
}

TEST(ProceduralLevel, MostOfTheArenaIsFreeForAPlayer) {
  const ProceduralLevel level = make_procedural_level({.seed = 4, .target_brushes = 1200});
  const BrushOracle oracle(level.brushes);
  Uniform u(8);
  int free = 0;
  constexpr int kProbes = 2000;
  for (int i = 0; i < kProbes; ++i) {
    free += oracle.cylinder_overlaps(kPlayerRadius, kPlayerHeight,
                                     u.in_box({-1984, -1984, 0}, {1984, 1984, 512})) < 0;
  }
  EXPECT_GT(free, kProbes * 7 / 10);
}

}  // namespace
}  // namespace shiftcast
