// Named cases for trace, raycast and overlap, each against a closed-form answer: floor, ceiling, wall,
// stairs, 45-degree ramp, inside corner, outside corner, motion parallel to a face, grazing contact,
// start in solid, zero-length motion, and refused input.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "collision/bsp_build.hpp"

namespace shiftcast {
namespace {

constexpr float kPlayerRadius = 15.0f;
constexpr float kPlayerHeight = 56.0f;
// Fractions are computed in double from float inputs; answers are compared to this.
constexpr float kFractionTolerance = 1e-5f;

BspTree build(std::vector<Brush> brushes, bool bevels = true) {
  BspBuildResult built = build_bsp(brushes, {.add_bevels = bevels});
  EXPECT_EQ(built.error, BspBuildError::kNone);
  EXPECT_EQ(built.tree.check(), BspLoadError::kNone);
  return std::move(built.tree);
}

// A wedge whose top is the plane z = x − x0 rising to +x (a 45-degree ramp), between y = ±w.
Brush ramp45(float x0, float x1, float w) {
  const float s = std::sqrt(0.5f);
  Brush b;
  b.planes = {{{-s, 0, s}, -x0 * s}, {{0, 0, -1}, 0}, {{1, 0, 0}, x1}, {{0, 1, 0}, w}, {{0, -1, 0}, w}};
  return b;
}

const Brush kFloor = brush_from_box({-1024, -1024, -64}, {1024, 1024, 0});

void expect_backed_off(const TraceResult& r, Vec3 from, Vec3 to) {
  // The end position lies on the motion, kSurfaceBackoff in front of the contact plane's shifted copy.
  const Vec3 delta = to - from;
  const float approach = -dot(r.normal, delta);
  ASSERT_GT(approach, 0.0f);
  const float t_end = std::max(0.0f, r.fraction - kSurfaceBackoff / approach);
  EXPECT_NEAR(r.end_position.x, from.x + delta.x * t_end, 1e-3f);
  EXPECT_NEAR(r.end_position.y, from.y + delta.y * t_end, 1e-3f);
  EXPECT_NEAR(r.end_position.z, from.z + delta.z * t_end, 1e-3f);
}

TEST(BspTrace, FloorStopsAFallingCylinderWithItsFeetOnTheFloor) {
  const BspTree tree = build({kFloor});
  const Vec3 from{10, 20, 100};
  const Vec3 to{10, 20, -100};
  const TraceResult r = tree.trace(Shape::cylinder(kPlayerRadius, kPlayerHeight), from, to);
  ASSERT_TRUE(r.hit);
  EXPECT_FALSE(r.start_solid);
  EXPECT_NEAR(r.fraction, 0.5f, kFractionTolerance);
  EXPECT_EQ(r.normal, (Vec3{0, 0, 1}));
  EXPECT_EQ(r.brush, 0);
  EXPECT_NEAR(r.end_position.z, kSurfaceBackoff, 1e-5f);
  expect_backed_off(r, from, to);
}

TEST(BspTrace, CeilingStopsARisingCylinderAtItsHead) {
  const BspTree tree = build({kFloor, brush_from_box({-256, -256, 200}, {256, 256, 216})});
  const TraceResult r = tree.trace(Shape::cylinder(kPlayerRadius, kPlayerHeight), {0, 0, 0}, {0, 0, 300});
  ASSERT_TRUE(r.hit);
  EXPECT_NEAR(r.fraction, (200.0f - kPlayerHeight) / 300.0f, kFractionTolerance);
  EXPECT_EQ(r.normal, (Vec3{0, 0, -1}));
  EXPECT_EQ(r.brush, 1);
}

TEST(BspTrace, WallStopsASphereOneRadiusAway) {
  const BspTree tree = build({kFloor, brush_from_box({100, -256, 0}, {116, 256, 128})});
  const Vec3 from{0, 0, 50};
  const Vec3 to{200, 0, 50};
  const TraceResult r = tree.trace(Shape::sphere(10), from, to);
  ASSERT_TRUE(r.hit);
  EXPECT_NEAR(r.fraction, 90.0f / 200.0f, kFractionTolerance);
  EXPECT_EQ(r.normal, (Vec3{-1, 0, 0}));
  EXPECT_EQ(r.brush, 1);
  expect_backed_off(r, from, to);
}

TEST(BspTrace, StairRiserStopsAWalkingCylinderAndTheTreadHoldsItUp) {
  std::vector<Brush> level{kFloor};
  for (int step = 0; step < 6; ++step) {
    const float x = 100.0f + 24.0f * step;
    level.push_back(brush_from_box({x, -64, 0}, {x + 24, 64, 16.0f * (step + 1)}));
  }
  const BspTree tree = build(level);
  const Shape player = Shape::cylinder(kPlayerRadius, kPlayerHeight);
  const TraceResult walk = tree.trace(player, {0, 0, 0}, {200, 0, 0});
  ASSERT_TRUE(walk.hit);
  EXPECT_NEAR(walk.fraction, (100.0f - kPlayerRadius) / 200.0f, kFractionTolerance);
  EXPECT_EQ(walk.normal, (Vec3{-1, 0, 0}));
  EXPECT_EQ(walk.brush, 1);
  // Dropping at x = 160: the cylinder spans x in [145, 175], over the third tread (x < 172, top 48) and
  // the fourth (top 64); it lands on the higher one.
  const TraceResult drop = tree.trace(player, {160, 0, 120}, {160, 0, 0});
  ASSERT_TRUE(drop.hit);
  EXPECT_NEAR(drop.fraction, (120.0f - 64.0f) / 120.0f, kFractionTolerance);
  EXPECT_EQ(drop.normal, (Vec3{0, 0, 1}));
  EXPECT_EQ(drop.brush, 4);
}

TEST(BspTrace, RampHoldsACylinderByItsLowRimPoint) {
  // Ramp top z = x − 100. A cylinder of radius r above x0 first touches it with the rim point at x0 + r,
  // so the feet stop at z = x0 + r − 100 (RTR eq. 25.9–25.10).
  const BspTree tree = build({kFloor, ramp45(100, 400, 128)});
  const float x0 = 250;
  const TraceResult r = tree.trace(Shape::cylinder(kPlayerRadius, kPlayerHeight), {x0, 0, 400}, {x0, 0, 0});
  ASSERT_TRUE(r.hit);
  const float contact_z = x0 + kPlayerRadius - 100;
  EXPECT_NEAR(r.fraction, (400 - contact_z) / 400, kFractionTolerance);
  EXPECT_NEAR(r.normal.x, -std::sqrt(0.5f), 1e-6f);
  EXPECT_NEAR(r.normal.z, std::sqrt(0.5f), 1e-6f);
  EXPECT_EQ(r.brush, 1);
}

TEST(BspTrace, InsideCornerStopsAtTheFirstWallReached) {
  // Walls x >= 100 and y >= 60 meet in an inside corner; a sphere moving along (1, 1) reaches y = 50 first.
  const BspTree tree = build(
      {brush_from_box({100, -200, -100}, {120, 200, 100}), brush_from_box({-200, 60, -100}, {120, 80, 100})});
  const TraceResult r = tree.trace(Shape::sphere(10), {0, 0, 0}, {100, 100, 0});
  ASSERT_TRUE(r.hit);
  EXPECT_NEAR(r.fraction, 0.5f, kFractionTolerance);
  EXPECT_EQ(r.normal, (Vec3{0, -1, 0}));
  EXPECT_EQ(r.brush, 1);
}

TEST(BspTrace, OutsideCornersAndSharpWedgesAreHitExactlyWithOrWithoutBevels) {
  // A sphere moving diagonally at a pillar's vertical edge (100, 100). Exact contact: the centre reaches
  // distance r from the edge line. The shifted faces alone meet at (90, 90), r·(√2 − 1) before the
  // rounded edge; the exact test of the brush stops the sphere at the rounded edge either way, with the
  // edge's normal (the diagonal), not a face's or a bevel's.
  const float r = 10;
  const Brush pillar = brush_from_box({100, 100, -100}, {200, 200, 100});
  const Vec3 from{0, 0, 0};
  const Vec3 to{100, 100, 0};
  const float length = std::sqrt(2.0f) * 100;
  const float exact = (length - r) / length;
  for (bool bevels : {true, false}) {
    const TraceResult hit = build({pillar}, bevels).trace(Shape::sphere(r), from, to);
    ASSERT_TRUE(hit.hit);
    EXPECT_NEAR(hit.fraction, exact, kFractionTolerance);
    EXPECT_NEAR(hit.normal.x, -std::sqrt(0.5f), 1e-6f);
    EXPECT_NEAR(hit.normal.y, -std::sqrt(0.5f), 1e-6f);
  }
  // A sharp 45-degree wedge edge: the shifted faces meet r / cos 67.5° (2.6 r) out, in empty space; the
  // exact contact is the tip, reached when the centre is r away at x = r, normal +x.
  const float c = std::cos(67.5f * 3.14159265f / 180);
  const float sn = std::sin(67.5f * 3.14159265f / 180);
  Brush wedge;  // edge along z at the origin, opening toward −x with a 45-degree interior angle
  wedge.planes = {{{c, sn, 0}, 0}, {{c, -sn, 0}, 0}, {{-1, 0, 0}, 100}, {{0, 0, 1}, 50}, {{0, 0, -1}, 50}};
  for (bool bevels : {true, false}) {
    const TraceResult tip = build({wedge}, bevels).trace(Shape::sphere(r), {100, 0, 0}, {0, 0, 0});
    ASSERT_TRUE(tip.hit);
    EXPECT_NEAR(tip.fraction, (100 - r) / 100, kFractionTolerance);
    EXPECT_NEAR(tip.normal.x, 1.0f, 1e-6f);
    EXPECT_NEAR(tip.normal.y, 0.0f, 1e-6f);
    // Starting beside the tip, where the shifted faces overlap but the sphere does not: free.
    EXPECT_FALSE(
        build({wedge}, bevels).trace(Shape::sphere(r), {r + 0.01f, 0, 0}, {r + 1, 0, 0}).start_solid);
  }
}

TEST(BspTrace, MotionParallelToAFaceIsNotAHit) {
  const BspTree tree = build({kFloor});
  const Shape player = Shape::cylinder(kPlayerRadius, kPlayerHeight);
  // Resting exactly on the floor and sliding along it: touching is not overlapping.
  const TraceResult touching = tree.trace(player, {0, 0, 0}, {500, 300, 0});
  EXPECT_FALSE(touching.hit);
  EXPECT_EQ(touching.fraction, 1.0f);
  EXPECT_EQ(touching.end_position, (Vec3{500, 300, 0}));
  // A ray exactly in the floor's top plane.
  EXPECT_FALSE(tree.raycast({-100, 0, 0}, {1, 0, 0}, 900).hit);
  // A ray in the floor's top plane that runs into a wall standing on the floor must not slip under it.
  const BspTree walled = build({kFloor, brush_from_box({100, -50, -64}, {110, 50, 100})});
  const TraceResult ray = walled.raycast({0, 0, 0}, {1, 0, 0}, 900);
  ASSERT_TRUE(ray.hit);
  EXPECT_NEAR(ray.fraction * 900, 100.0f, 1e-3f);
  EXPECT_EQ(ray.brush, 1);
}

TEST(BspTrace, GrazingContactIsNotAHitButOneUnitCloserIs) {
  const BspTree tree = build({brush_from_box({100, -200, -100}, {120, 200, 100})});
  // Sphere centre exactly r from the wall plane, moving parallel to it: tangent all the way.
  EXPECT_FALSE(tree.trace(Shape::sphere(10), {90, -300, 0}, {90, 300, 0}).hit);
  // Passing the wall's end face at y = 200 tangentially from outside, moving along −x beyond it.
  EXPECT_FALSE(tree.trace(Shape::sphere(10), {300, 210, 0}, {0, 210, 0}).hit);
  // One unit closer it clips the wall's vertical edge (120, 200): exactly when the centre is 10 from the
  // edge, at x = 120 + √(10² − 9²), with the normal pointing from the edge to the centre. (The diagonal
  // bevel through the edge would have stopped it early, at x + y = 320 + 10·√2, with its own normal.)
  const TraceResult closer = tree.trace(Shape::sphere(10), {300, 209, 0}, {0, 209, 0});
  ASSERT_TRUE(closer.hit);
  const float exact = (300 - (120 + std::sqrt(19.0f))) / 300;
  EXPECT_NEAR(closer.fraction, exact, kFractionTolerance);
  EXPECT_NEAR(closer.normal.x, std::sqrt(19.0f) / 10, 1e-5f);
  EXPECT_NEAR(closer.normal.y, 0.9f, 1e-5f);
}

TEST(BspTrace, StartInSolidIsReportedAndAllSolidOnlyWhenTheMotionNeverLeaves) {
  const BspTree tree = build({kFloor, brush_from_box({0, 0, 0}, {100, 100, 100})});
  const TraceResult leaves = tree.trace(Shape::point(), {50, 50, 50}, {50, 50, 300});
  EXPECT_TRUE(leaves.hit);
  EXPECT_TRUE(leaves.start_solid);
  EXPECT_FALSE(leaves.all_solid);
  EXPECT_EQ(leaves.fraction, 0.0f);
  EXPECT_EQ(leaves.end_position, (Vec3{50, 50, 50}));
  EXPECT_EQ(leaves.brush, 1);
  // From the box down into the floor: two brushes, never leaving solid.
  const TraceResult stays = tree.trace(Shape::point(), {50, 50, 50}, {50, 50, -50});
  EXPECT_TRUE(stays.start_solid);
  EXPECT_TRUE(stays.all_solid);
  // A sphere whose centre is outside but whose body overlaps.
  const TraceResult sphere = tree.trace(Shape::sphere(10), {50, 50, 105}, {50, 50, 300});
  EXPECT_TRUE(sphere.start_solid);
  EXPECT_FALSE(sphere.all_solid);
}

TEST(BspTrace, ZeroLengthMotionIsAPointQuery) {
  const BspTree tree = build({kFloor});
  const Shape player = Shape::cylinder(kPlayerRadius, kPlayerHeight);
  const TraceResult free = tree.trace(player, {0, 0, 1}, {0, 0, 1});
  EXPECT_FALSE(free.hit);
  EXPECT_EQ(free.end_position, (Vec3{0, 0, 1}));
  const TraceResult stuck = tree.trace(player, {0, 0, -1}, {0, 0, -1});
  EXPECT_TRUE(stuck.start_solid);
  EXPECT_TRUE(stuck.all_solid);
  EXPECT_FALSE(tree.raycast({0, 0, 5}, {0, 0, -1}, 0).hit);
}

TEST(BspTrace, NonFiniteInputAndInvalidShapesAreRefusedWithoutMoving) {
  const BspTree tree = build({kFloor});
  const TraceResult nan = tree.trace(Shape::sphere(4), {0, 0, 10}, {NAN, 0, 0});
  EXPECT_EQ(nan.status, QueryStatus::kNonFiniteInput);
  EXPECT_FALSE(nan.hit);
  EXPECT_EQ(nan.end_position, (Vec3{0, 0, 10}));
  EXPECT_EQ(tree.trace(Shape::sphere(-4), {0, 0, 10}, {0, 0, 0}).status, QueryStatus::kInvalidShape);
  EXPECT_EQ(tree.raycast({0, 0, 10}, {0, 0, -1}, INFINITY).status, QueryStatus::kNonFiniteInput);
  EXPECT_EQ(tree.overlap(Shape::point(), {0, INFINITY, 0}).status, QueryStatus::kNonFiniteInput);
  EXPECT_EQ(tree.point_brush({NAN, 0, 0}), kNoBrush);
}

TEST(BspOverlap, ShapesOverlapWhenTheyCrossAFaceAndNotWhenTheyTouchIt) {
  const BspTree tree = build({kFloor, brush_from_box({100, -50, 0}, {200, 50, 100})});
  const Shape player = Shape::cylinder(kPlayerRadius, kPlayerHeight);
  EXPECT_FALSE(tree.overlap(player, {0, 0, 0}).overlap);  // standing on the floor
  const OverlapResult sunk = tree.overlap(player, {0, 0, -0.5f});
  EXPECT_TRUE(sunk.overlap);
  EXPECT_EQ(sunk.brush, 0);
  EXPECT_FALSE(tree.overlap(player, {85, 0, 10}).overlap);  // rim touching the box's face
  EXPECT_EQ(tree.overlap(player, {86, 0, 10}).brush, 1);
  EXPECT_EQ(tree.point_brush({150, 0, 50}), 1);
  EXPECT_EQ(tree.point_brush({150, 0, 100}), kNoBrush);  // on the top face: outside
}

TEST(BspOverlap, ExactlyOnAFloorWithBoxesStandingOnItIsOutsideWhicheverWayTheSplittersFace) {
  // Boxes stand on the floor, so the floor's top (normal +z) and the boxes' bottoms (normal −z) share the
  // plane z = 0: some splitter there faces down, with the floor in front of it. A point or a player exactly
  // on the floor is still touching, not inside; only the seams under the boxes are inside the closure.
  std::vector<Brush> level{kFloor};
  for (int i = 0; i < 8; ++i) {
    const float x = -800.0f + 200.0f * i;
    level.push_back(brush_from_box({x, -40, 0}, {x + 64, 40, 64 + 8.0f * i}));
  }
  const BspTree tree = build(level);
  const Shape player = Shape::cylinder(kPlayerRadius, kPlayerHeight);
  for (float x = -900; x <= 900; x += 10) {
    const Vec3 p{x, 200, 0};  // beside the boxes, exactly on the floor
    EXPECT_EQ(tree.point_brush(p), kNoBrush) << x;
    EXPECT_FALSE(tree.overlap(player, p).overlap) << x;
    EXPECT_FALSE(tree.overlap(Shape::sphere(0), p).overlap) << x;
    EXPECT_EQ(tree.point_brush({x, 200, -0.001f}), 0) << x;
  }
  // Rays and players sliding exactly along the floor beside the boxes never hit it.
  EXPECT_FALSE(tree.raycast({-1000, 200, 0}, {1, 0, 0}, 2000).hit);
  EXPECT_FALSE(tree.trace(player, {-1000, 200, 0}, {1000, 200, 0}).hit);
  // A player walking along the floor into a box stops at its side.
  const TraceResult walk = tree.trace(player, {-1000, 0, 0}, {-700, 0, 0});
  ASSERT_TRUE(walk.hit);
  EXPECT_NEAR(walk.fraction, (200.0f - kPlayerRadius) / 300.0f, kFractionTolerance);
  EXPECT_EQ(walk.brush, 1);
}

TEST(BspOverlap, APointInADownwardSplitterIsOnlyInsideWhereBothSidesAreSolid) {
  // Hand-built: the root splitter is z = 0 facing down (the bottom of something standing on the floor),
  // so the floor (z in (−64, 0)) is in front of it and the empty room behind. A point, and a player
  // standing exactly at z = 0, touch the floor's top face: outside.
  std::vector<BspNode> nodes = {
      {{{0, 0, -1}, 0}, {kEmptyLeaf, 1}},               // back: z > 0, empty; front: z < 0
      {{{0, 0, -1}, 64}, {solid_leaf(0), kEmptyLeaf}},  // back: z > −64: the floor
  };
  const Brush floor = brush_from_box({-1000, -1000, -64}, {1000, 1000, 0});
  const BspTree tree(std::move(nodes), {{0, 0, 0}}, {}, 0, {&floor, 1},
                     {{-1000, -1000, -64}, {1000, 1000, 0}});
  ASSERT_EQ(tree.check(), BspLoadError::kNone);
  EXPECT_EQ(tree.point_brush({5, 5, 0}), kNoBrush);
  EXPECT_EQ(tree.point_brush({5, 5, -0.5f}), 0);
  EXPECT_FALSE(tree.overlap(Shape::cylinder(kPlayerRadius, kPlayerHeight), {5, 5, 0}).overlap);
  EXPECT_TRUE(tree.overlap(Shape::cylinder(kPlayerRadius, kPlayerHeight), {5, 5, -0.5f}).overlap);
  EXPECT_FALSE(tree.trace(Shape::sphere(4), {0, 0, 4}, {100, 0, 4}).hit);  // rolling on the floor
}

}  // namespace
}  // namespace shiftcast
