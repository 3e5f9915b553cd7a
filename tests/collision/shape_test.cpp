// Shape offsets against an independent oracle: the support function by brute force over points sampled on
// the shape's surface, for reference points away from the shape's centre, and the digest's correction of
// RTR eq. 25.8 pinned with the case the printed form gets wrong.
#include "collision/shape.hpp"
#include "collision/plane.hpp"
#include "tests/support/seeded_random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

namespace shiftcast {
namespace {

// Dense samples of the shape's boundary, relative to its reference point. The support of a convex shape
// is reached on its boundary, so max over these samples approaches support(u) from below.
std::vector<Vec3d> boundary_samples(const Shape& s) {
  std::vector<Vec3d> out;
  const Vec3d o = to_double(s.offset);
  constexpr int kRing = 2048;
  switch (s.kind) {
    case ShapeKind::kPoint:
      out.push_back({});
      break;
    case ShapeKind::kSphere:
      for (int i = 0; i <= 256; ++i) {
        const double theta = std::numbers::pi * i / 256;
        for (int j = 0; j < 512; ++j) {
          const double phi = 2 * std::numbers::pi * j / 512;
          out.push_back(
              o + Vec3d{std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi), std::cos(theta)} *
                      double(s.radius));
        }
      }
      break;
    case ShapeKind::kCylinder:
      for (int i = 0; i < kRing; ++i) {
        const double phi = 2 * std::numbers::pi * i / kRing;
        const Vec3d rim{s.radius * std::cos(phi), s.radius * std::sin(phi), 0};
        out.push_back(o + rim);
        out.push_back(o + rim + Vec3d{0, 0, s.height});
      }
      break;
    case ShapeKind::kBox:
      for (int c = 0; c < 8; ++c) {
        const Vec3d h = to_double(s.half_extents);
        out.push_back(o + Vec3d{c & 1 ? h.x : -h.x, c & 2 ? h.y : -h.y, c & 4 ? h.z : -h.z});
      }
      break;
    case ShapeKind::kHull:
      for (Vec3 v : s.hull_vertices)
        out.push_back(to_double(v));
      break;
  }
  return out;
}

double sampled_support(const std::vector<Vec3d>& samples, Vec3d u) {
  double best = -1e300;
  for (Vec3d s : samples)
    best = std::max(best, dot(u, s));
  return best;
}

Vec3d random_unit(std::mt19937& rng) {
  // Uniform on the sphere: a uniform point of the unit ball (rejection from the cube), away from the
  // centre so its direction is well defined, then normalised.
  for (;;) {
    const Vec3d p{uniform_double(rng, -1, 1), uniform_double(rng, -1, 1), uniform_double(rng, -1, 1)};
    const double r2 = dot(p, p);
    if (r2 <= 1 && r2 > 1e-6) return normalize(p);
  }
}

const std::vector<Vec3> kHullVertices = {
    // A wedge-shaped character hull whose reference point (the origin) is at its feet, off-centre.
    {-10, -8, 0}, {14, -8, 0}, {-10, 8, 0}, {14, 8, 0}, {-6, -4, 50}, {6, -4, 60}, {-6, 4, 50}, {6, 4, 60}};

std::vector<Shape> off_centre_shapes() {
  return {Shape::sphere(12, {3, -5, 20}), Shape::cylinder(15, 56, {2, 7, -28}),
          Shape::box({8, 4, 30}, {-3, 1, 30}), Shape::hull(kHullVertices), Shape::point()};
}

TEST(ShapeOffsets, SupportMatchesBoundarySamplesForOffCentreReferencePoints) {
  std::mt19937 rng(20261121);
  for (const Shape& shape : off_centre_shapes()) {
    const std::vector<Vec3d> samples = boundary_samples(shape);
    // Sampling a ring of 2048 points misses the true rim maximum by at most r·(1 − cos(π/2048)).
    const double tolerance = 1e-3 + double(shape.radius) * (1 - std::cos(std::numbers::pi / 2048)) * 4;
    for (int i = 0; i < 300; ++i) {
      const Vec3d u = random_unit(rng);
      EXPECT_NEAR(shape.support(u), sampled_support(samples, u), tolerance) << "kind " << int(shape.kind);
      const ShiftOffsets off = shape.shift_offsets(u);
      EXPECT_NEAR(off.back, sampled_support(samples, -u), tolerance);
      EXPECT_NEAR(off.front, sampled_support(samples, u), tolerance);
    }
  }
}

TEST(ShapeOffsets, BackOffsetIsWhereTheShapeStartsToTouchTheSolidSide) {
  // Place the shape so the plane distance of its reference point is back ± delta: it must touch the solid
  // half-space (some sample behind the plane) exactly on the near side.
  std::mt19937 rng(7);
  for (const Shape& shape : off_centre_shapes()) {
    const std::vector<Vec3d> samples = boundary_samples(shape);
    for (int i = 0; i < 100; ++i) {
      const Vec3d n = random_unit(rng);
      const Planed plane{n, 3.5};
      const double back = shape.shift_offsets(n).back;
      for (double delta : {-0.5, 0.5}) {
        const Vec3d p = n * (plane.d + back + delta);  // reference point at plane distance back + delta
        double deepest = 1e300;
        for (Vec3d s : samples)
          deepest = std::min(deepest, plane.distance(p + s));
        if (delta < 0) {
          EXPECT_LT(deepest, 0.0);
        } else {
          EXPECT_GT(deepest, 0.0);
        }
      }
    }
  }
}

TEST(ShapeOffsets, CylinderClosedFormOnFloorCeilingAndWall) {
  const Shape c = Shape::cylinder(15, 56);
  EXPECT_DOUBLE_EQ(c.shift_offsets({0, 0, 1}).back, 0.0);    // floor: feet on the plane
  EXPECT_DOUBLE_EQ(c.shift_offsets({0, 0, -1}).back, 56.0);  // ceiling: head on the plane
  EXPECT_DOUBLE_EQ(c.shift_offsets({1, 0, 0}).back, 15.0);   // wall: rim on the plane
  const double s = std::sqrt(0.5);
  EXPECT_NEAR(c.shift_offsets({-s, 0, s}).back, 15 * s, 1e-12);           // 45° ramp: the low rim point
  EXPECT_NEAR(c.shift_offsets({s, 0, -s}).back, 15 * s + 56 * s, 1e-12);  // 45° overhang: the high rim point
}

TEST(ShapeOffsets, PrintedEquation258IsWrongForFeetReferencePoint) {
  // A character hull with its reference point at the feet standing on a floor (n = +z). RTR eq. 25.8 as
  // printed adds −max n·(v − p) = −h to d, holding the feet h above the floor; the corrected shift-out
  // offset is support(−n) = −min n·(v − p) = 0: feet on the floor.
  const Shape hull = Shape::hull(kHullVertices);
  const Vec3d up{0, 0, 1};
  double printed = -1e300;
  for (Vec3 v : kHullVertices)
    printed = std::max(printed, dot(up, to_double(v)));
  EXPECT_DOUBLE_EQ(printed, 60.0);
  EXPECT_DOUBLE_EQ(hull.shift_offsets(up).back, 0.0);
  EXPECT_DOUBLE_EQ(hull.shift_offsets(up).front, 60.0);
}

TEST(ShapeOffsets, InvalidShapesAreReported) {
  EXPECT_FALSE(Shape::sphere(-1).valid());
  EXPECT_FALSE(Shape::sphere(std::nanf("")).valid());
  EXPECT_FALSE(Shape::cylinder(15, INFINITY).valid());
  EXPECT_FALSE(Shape::box({1, -1, 1}).valid());
  EXPECT_FALSE(Shape::hull({}).valid());
  EXPECT_TRUE(Shape::cylinder(15, 56).valid());
}

}  // namespace
}  // namespace shiftcast
