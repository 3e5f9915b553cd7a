// The narrow phase's closed forms for round pairs (points, spheres, upright cylinders): known values,
// agreement with GJK on the same shapes, and dense sampling of the shapes' surfaces, against the polytope
// oracle's closed-form distances (tests/support/polytope_oracle.hpp).
#include "collision/narrow_phase.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "collision/gjk_internal.hpp"
#include "tests/support/polytope_oracle.hpp"

namespace shiftcast::narrow_phase_test {
namespace {

TEST(NarrowPhase, ClosedFormsKnownValues) {
  const ShapeDistance ss =
      shape_distance(Shape::sphere(2), {{0, 0, 0}, 0}, Shape::sphere(3), {{10, 0, 0}, 0});
  EXPECT_DOUBLE_EQ(ss.distance, 5);
  EXPECT_EQ(ss.normal, (Vec3d{1, 0, 0}));
  EXPECT_EQ(ss.point_a, (Vec3d{2, 0, 0}));
  EXPECT_EQ(ss.point_b, (Vec3d{7, 0, 0}));
  // Coincident centres: a fixed normal (+z), full depth.
  const ShapeDistance co = shape_distance(Shape::sphere(2), {}, Shape::sphere(3), {});
  EXPECT_TRUE(co.overlapping);
  EXPECT_DOUBLE_EQ(co.distance, -5);
  EXPECT_EQ(co.normal, (Vec3d{0, 0, 1}));
  // Sphere centre inside a player cylinder near its top: out through the top cap.
  const ShapeDistance sc = shape_distance(Shape::sphere(4), {{3, 0, 50}, 0}, Shape::cylinder(15, 56), {});
  EXPECT_DOUBLE_EQ(sc.distance, -10);
  EXPECT_EQ(sc.normal, (Vec3d{0, 0, -1}));  // from the sphere towards the cylinder: b moves down
  // Cylinder offsets rotate with yaw: offset (10,0,0) at yaw pi/2 puts the cylinder at y = 10.
  const ShapeDistance cc = shape_distance(Shape::cylinder(2, 10, {10, 0, 0}), {{0, 0, 0}, kPi / 2},
                                          Shape::cylinder(3, 10), {{0, 20, 0}, 0});
  EXPECT_NEAR(cc.distance, 5, 1e-5);  // float pi/2 is a quarter turn only to ~4e-8
  EXPECT_NEAR(cc.normal.y, 1, 1e-9);
  // Rim to rim: both gaps positive.
  const ShapeDistance rim = shape_distance(Shape::cylinder(1, 1), {}, Shape::cylinder(1, 1), {{5, 0, 5}, 0});
  EXPECT_DOUBLE_EQ(rim.distance, 5);
  EXPECT_NEAR(rim.normal.x, 0.6, 1e-15);
  EXPECT_NEAR(rim.normal.z, 0.8, 1e-15);
}

TEST(NarrowPhase, ClosedFormsAgreeWithGjk) {
  Rng rng(77);
  Sample s;
  for (int ka = 0; ka < 3; ++ka)
    for (int kb = 0; kb < 3; ++kb)
      for (int i = 0; i < 300; ++i) {
        random_pair(rng, ka, kb, s);
        SCOPED_TRACE(testing::Message() << kKindName[ka] << " vs " << kKindName[kb] << " #" << i);
        const ShapeDistance c = shape_distance(s.a, s.pa, s.b, s.pb);
        EXPECT_EQ(c.iterations, 0);
        EXPECT_NEAR(length(c.normal), 1, kRounding);
        // Witnesses differ by exactly distance · normal, apart or overlapping.
        const Vec3d gap = c.point_b - c.point_a - c.normal * c.distance;
        EXPECT_LT(length(gap), kRounding);
        for (gjk::Margins m : {gjk::Margins::kSphereAsMargin, gjk::Margins::kFullSupport}) {
          const ShapeDistance g = gjk::shape_distance(s.a, s.pa, s.b, s.pb, m);
          if (std::abs(c.distance) > kDistanceSlack) {
            EXPECT_EQ(g.overlapping, c.overlapping);
          }
          if (c.distance >= 0) {
            EXPECT_NEAR(g.distance, c.distance, kDistanceSlack);
          } else if (m == gjk::Margins::kSphereAsMargin) {
            EXPECT_NEAR(g.distance, c.distance, kRounding);  // the probe holds every round pair's axis
          } else {
            EXPECT_LE(g.distance, c.distance + kRounding);  // an upper bound on the depth
          }
        }
      }
}

TEST(NarrowPhase, AgreesWithDenseSurfaceSampling) {
  // Samples on a's surface; the least exact distance from them to b approaches the distance from above.
  const auto samples = [](const Shape& s, const Pose& p) {
    std::vector<Vec3d> out;
    const Vec3d o = to_double(s.offset);
    for (int i = 0; i < 720; ++i) {
      const double phi = 2 * std::numbers::pi * i / 720;
      const Vec3d u{std::cos(phi), std::sin(phi), 0};
      if (s.kind == ShapeKind::kSphere) {
        for (int j = 0; j <= 360; ++j) {
          const double theta = std::numbers::pi * j / 360;
          out.push_back(
              to_world(p, o + (u * std::sin(theta) + Vec3d{0, 0, std::cos(theta)}) * double(s.radius)));
        }
        continue;
      }
      for (int j = 0; j <= 240; ++j)
        out.push_back(to_world(p, o + u * double(s.radius) + Vec3d{0, 0, s.height * j / 240.0}));
      for (int j = 0; j < 60; ++j)
        for (double z : {0.0, double(s.height)})
          out.push_back(to_world(p, o + u * (s.radius * j / 60.0) + Vec3d{0, 0, z}));
    }
    return out;
  };
  Rng rng(31337);
  World world;
  const int pairs[][2] = {{2, 2}, {1, 2}, {2, 1}, {2, 3}, {1, 3}};
  double worst = 0;
  for (const auto& k : pairs)
    for (int n = 0; n < 8;) {
      const Shape a = random_shape(rng, world, k[0]), b = random_shape(rng, world, k[1]);
      const Pose pa = random_pose(rng, 5), pb = random_pose(rng, 40);
      const ShapeDistance d = shape_distance(a, pa, b, pb);
      if (d.overlapping || d.distance < 0.5) continue;
      ++n;
      double sampled = kInf;
      for (Vec3d x : samples(a, pa))
        sampled = std::min(sampled, outside_distance(world, b, pb, x));
      EXPECT_LE(d.distance, sampled + kDistanceSlack) << k[0] << " " << k[1];
      worst = std::max(worst, sampled - d.distance);
    }
  // Spacing is ~0.17 units on a radius-20 rim and 0.25 in height; the minimum is smooth, so the error
  // is second order in it.
  EXPECT_LT(worst, 0.01);
  std::printf("dense sampling: worst sampled - reported = %.2e\n", worst);
}

}  // namespace
}  // namespace shiftcast::narrow_phase_test
