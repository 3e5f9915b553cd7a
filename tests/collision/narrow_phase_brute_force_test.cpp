// The narrow phase against brute force (tests/support/polytope_oracle.hpp):
//   - polytope pairs (boxes, hulls, and points/spheres as a centre plus a radius): the exact distance over
//     every vertex–triangle and segment–segment pair, certified by a separating plane, and the exact depth
//     from the supporting planes of the Minkowski difference's point set, degenerate hulls included;
//   - every pair: a duality certificate from the reported result itself (the witnesses lie in their
//     shapes by closed-form membership tests, and Shape::support shows the normal separates them by the
//     reported distance), and for overlaps a sampled point deep inside both shapes.
#include "collision/narrow_phase.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include "tests/support/polytope_oracle.hpp"

namespace shiftcast::narrow_phase_test {
namespace {

// Certificates (a separating gap, a common interior point) must beat rounding by this much to count.
constexpr double kCertifyMargin = 1e-3;

TEST(NarrowPhase, PolytopePairsMatchBruteForce) {
  Rng rng(20240601);
  const int kinds[] = {0, 1, 3, 4};
  Sample s;
  int apart = 0, overlapping = 0;
  for (int ka : kinds)
    for (int kb : kinds)
      for (int i = 0; i < 60; ++i) {
        random_pair(rng, ka, kb, s, 18);
        const ShapeDistance d = shape_distance(s.a, s.pa, s.b, s.pb);
        ASSERT_EQ(d.status, QueryStatus::kOk);
        const std::vector<Vec3d> P = core_points(s.a, s.pa), Q = core_points(s.b, s.pb);
        const double margins = core_margin(s.a) + core_margin(s.b);
        const Pair c = brute_closest(P, Q);
        SCOPED_TRACE(testing::Message() << kKindName[ka] << " vs " << kKindName[kb] << " #" << i);
        if (separated_by_pair(P, Q, c)) {
          // Cores apart: exact distance, or a sphere's exact depth.
          const double truth = c.distance() - margins;
          if (std::abs(truth) > kDistanceSlack) {
            EXPECT_EQ(d.overlapping, truth < 0);
          }
          EXPECT_NEAR(d.distance, truth, kDistanceSlack);
          ++(truth < 0 ? overlapping : apart);
          continue;
        }
        std::vector<Vec3d> diff;
        for (Vec3d p : P)
          for (Vec3d q : Q)
            diff.push_back(q - p);
        const double depth = depth_of_origin(diff) + margins;
        if (depth > kDistanceSlack) {
          EXPECT_TRUE(d.overlapping);
        }
        if (!d.overlapping) continue;
        ++overlapping;
        // The depth is an upper bound: exact for boxes, points and spheres (their axes are probed), within
        // EPA's tolerance with hulls.
        EXPECT_GE(-d.distance, depth - kRounding);
        EXPECT_NEAR(-d.distance, depth, ka != 4 && kb != 4 ? kRounding : kDistanceSlack);
      }
  EXPECT_GT(apart, 300);
  EXPECT_GT(overlapping, 300);
}

// Unit directions spread over the sphere (Fibonacci lattice) for the separating-plane certificate.
std::vector<Vec3d> sphere_directions(int n) {
  std::vector<Vec3d> out;
  const double golden = std::numbers::pi * (3 - std::sqrt(5.0));
  for (int i = 0; i < n; ++i) {
    const double z = 1 - (i + 0.5) * 2 / n, r = std::sqrt(1 - z * z);
    out.push_back({r * std::cos(golden * i), r * std::sin(golden * i), z});
  }
  return out;
}

struct Certified {
  double gap = -kInf;    // a proven lower bound on the distance (from a separating plane)
  double depth = -kInf;  // a proven lower bound on the depth (two balls around one point)
};

Certified certify(const Sample& s, const ShapeDistance& d, const std::vector<Vec3d>& dirs) {
  Certified c;
  std::vector<Vec3d> axes = dirs;
  axes.push_back(d.normal);
  for (Vec3d n : axes)
    if (length(n) > 0) c.gap = std::max(c.gap, -overlap_along(s.a, s.pa, s.b, s.pb, normalize(n)));
  if (c.gap > 0) return c;
  // Common interior points: a grid over the intersection of the bounding boxes, and the witnesses' middle.
  Vec3d lo, hi;
  for (int i = 0; i < 3; ++i) {
    Vec3d e{};
    e[i] = 1;
    lo[i] = std::max(-support_posed(s.a, s.pa, -e), -support_posed(s.b, s.pb, -e));
    hi[i] = std::min(support_posed(s.a, s.pa, e), support_posed(s.b, s.pb, e));
  }
  const auto consider = [&](Vec3d x) {
    const double ma = inside_margin(s.world, s.a, s.pa, x), mb = inside_margin(s.world, s.b, s.pb, x);
    // A point (margin 0) in the other's interior is an overlap too: a closed ball of radius 0.
    if (ma >= 0 && mb >= 0) c.depth = std::max(c.depth, ma + mb);
  };
  for (int i = 0; i <= 8; ++i)
    consider(lerp(d.point_a, d.point_b, i / 8.0));
  consider(to_world(s.pa, to_double(s.a.offset)));
  consider(to_world(s.pb, to_double(s.b.offset)));
  constexpr int kGrid = 9;
  for (int i = 0; i < kGrid; ++i)
    for (int j = 0; j < kGrid; ++j)
      for (int k = 0; k < kGrid; ++k)
        consider(lo + Vec3d{(hi.x - lo.x) * (i + 0.5) / kGrid, (hi.y - lo.y) * (j + 0.5) / kGrid,
                            (hi.z - lo.z) * (k + 0.5) / kGrid});
  return c;
}

TEST(NarrowPhase, EveryKindPairIsCertified) {
  Rng rng(4242);
  const std::vector<Vec3d> dirs = sphere_directions(400);
  Sample s;
  int ambiguous = 0, total = 0;
  for (int ka = 0; ka < 5; ++ka)
    for (int kb = 0; kb < 5; ++kb)
      for (int i = 0; i < 200; ++i, ++total) {
        random_pair(rng, ka, kb, s);
        SCOPED_TRACE(testing::Message() << kKindName[ka] << " vs " << kKindName[kb] << " #" << i);
        const ShapeDistance d = shape_distance(s.a, s.pa, s.b, s.pb);
        ASSERT_EQ(d.status, QueryStatus::kOk);
        ASSERT_NEAR(length(d.normal), 1, kRounding);
        if (!d.overlapping) {
          // Duality: witnesses in the shapes bound the distance above, the normal's plane below.
          EXPECT_LT(outside_distance(s.world, s.a, s.pa, d.point_a), kWitnessSlack);
          EXPECT_LT(outside_distance(s.world, s.b, s.pb, d.point_b), kWitnessSlack);
          EXPECT_NEAR(length(d.point_b - d.point_a), d.distance, kWitnessSlack);
          EXPECT_GE(-overlap_along(s.a, s.pa, s.b, s.pb, d.normal), d.distance - kDistanceSlack);
        } else {
          // Moving b by the reported depth along the normal leaves them at most touching (up to the
          // float rounding of the moved position, ~4e-6 at these coordinates).
          Pose moved = s.pb;
          moved.position = to_float(to_double(s.pb.position) + d.normal * (-d.distance));
          EXPECT_LE(overlap_along(s.a, s.pa, s.b, moved, d.normal), 1e-5);
        }
        const Certified c = certify(s, d, dirs);
        if (c.gap > kCertifyMargin) {
          EXPECT_FALSE(d.overlapping);
          EXPECT_GE(d.distance, c.gap - kDistanceSlack);
        } else if (c.depth > kCertifyMargin) {
          EXPECT_TRUE(d.overlapping);
          EXPECT_GE(-d.distance, c.depth - kRounding);
        } else {
          ++ambiguous;  // shallow overlaps the grid missed, or grazing pairs
        }
      }
  std::printf("certified %d of %d random pairs\n", total - ambiguous, total);
  EXPECT_LT(ambiguous, total / 50);
}

TEST(NarrowPhase, DegenerateHullsMatchBruteForce) {
  World world;
  const Shape hulls[] = {
      world.add_hull({{-8, -8, 0}, {8, -8, 0}, {8, 8, 0}, {-8, 8, 0}}),  // flat square
      world.add_hull({{-8, -8, 0}, {-8, -8, 0}, {8, -8, 0}, {8, 8, 0}, {8, 8, 0}, {-8, 8, 0}, {0, 0, 0}}),
      world.add_hull({{-10, 0, 0}, {0, 0, 0}, {10, 0, 0}}),  // collinear: a segment
      world.add_hull({{3, 1, 2}, {3, 1, 2}, {3, 1, 2}}),     // one point, three times
      world.add_hull({{0, 0, 0}, {10, 0, 0}, {0, 10, 0}, {0, 0, 10}, {0, 0, 0}, {10, 0, 0}, {0, 10, 0}}),
      world.add_hull({{-8, -8, 0}, {8, -8, 0}, {8, 8, 0}, {-8, 8, 0}, {0, 0, 1e-4f}}),  // almost flat
  };
  const Shape others[] = {
      Shape::box({6, 4, 5}), Shape::box({6, 4, 0}), Shape::sphere(3), Shape::point(), hulls[0], hulls[2]};
  Rng rng(555);
  for (const Shape& h : hulls)
    for (const Shape& o : others)
      for (int i = 0; i < 40; ++i) {
        const Pose ph = random_pose(rng, 3), po = random_pose(rng, 16);
        SCOPED_TRACE(testing::Message()
                     << "hull " << (&h - hulls) << " other " << (&o - others) << " #" << i);
        const ShapeDistance d = shape_distance(h, ph, o, po);
        ASSERT_EQ(d.status, QueryStatus::kOk);
        EXPECT_LT(d.iterations, kGjkMaxIterations);
        const std::vector<Vec3d> P = core_points(h, ph), Q = core_points(o, po);
        const Pair c = brute_closest(P, Q);
        if (separated_by_pair(P, Q, c)) {
          EXPECT_NEAR(d.distance, c.distance() - core_margin(o), kDistanceSlack);
          continue;
        }
        std::vector<Vec3d> diff;
        for (Vec3d p : P)
          for (Vec3d q : Q)
            diff.push_back(q - p);
        const double depth = depth_of_origin(diff) + core_margin(o);
        EXPECT_EQ(d.overlapping, depth > 0);
        EXPECT_NEAR(d.distance, -depth, depth > 0 ? kInf : kDistanceSlack);
      }
  // Coplanar flat shapes overlapping in their plane share no interior: touching at distance 0.
  for (const Shape& o : {hulls[0], hulls[1], Shape::box({6, 4, 0})}) {
    const ShapeDistance d = shape_distance(hulls[0], {{0, 0, 5}, 0.3f}, o, {{2, 3, 5}, -1.1f});
    EXPECT_FALSE(d.overlapping);
    EXPECT_NEAR(d.distance, 0, 1e-12);
  }
  const ShapeDistance discs =
      shape_distance(Shape::cylinder(5, 0), {}, Shape::cylinder(5, 0), {{3, 0, 0}, 0});
  EXPECT_FALSE(discs.overlapping);
  EXPECT_EQ(discs.distance, 0);
}

}  // namespace
}  // namespace shiftcast::narrow_phase_test
