// The narrow phase's contract, checked against the polytope oracle (tests/support/polytope_oracle.hpp):
// refused input, touching is not overlapping (witnesses on both shapes, a nudge either way decides),
// bit-for-bit determinism and mirrored answers when the arguments swap, separated_along against the
// shapes' vertex extremes, and GJK's iteration counts.
#include "collision/narrow_phase.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "tests/support/polytope_oracle.hpp"

namespace shiftcast::narrow_phase_test {
namespace {

// ---- Status, conventions, touching.

TEST(NarrowPhase, RefusesNonFinitePosesAndInvalidShapes) {
  const Shape box = Shape::box({1, 1, 1}), ball = Shape::sphere(1);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const Shape& other : {box, ball}) {
    for (Pose bad : {Pose{{nan, 0, 0}, 0}, Pose{{0, 0, inf}, 0}, Pose{{}, nan}, Pose{{}, inf}}) {
      for (const ShapeDistance& d :
           {shape_distance(other, bad, ball, {}), shape_distance(ball, {}, other, bad)}) {
        EXPECT_EQ(d.status, QueryStatus::kNonFiniteInput);
        EXPECT_FALSE(d.overlapping);
        EXPECT_EQ(d.iterations, 0);
      }
      EXPECT_FALSE(separated_along(other, bad, ball, {{100, 0, 0}, 0}, {1, 0, 0}, 0));
    }
    for (const Shape& bad : {Shape::sphere(-1), Shape::cylinder(nan, 1), Shape::box({1, -1, 1}),
                             Shape::hull({}), Shape::sphere(1, {inf, 0, 0})}) {
      EXPECT_EQ(shape_distance(bad, {}, other, {}).status, QueryStatus::kInvalidShape);
      EXPECT_EQ(shape_distance(other, {}, bad, {}).status, QueryStatus::kInvalidShape);
    }
  }
  EXPECT_TRUE(is_round(Shape::point()) && is_round(ball) && is_round(Shape::cylinder(1, 1)));
  EXPECT_FALSE(is_round(box) || is_round(Shape::hull(std::span<const Vec3>(&box.offset, 1))));
}

TEST(NarrowPhase, TouchingIsNotOverlapping) {
  struct Case {
    Shape a, b;
    Pose pb;
    Vec3d inward;  // moving b this way makes them overlap
  };
  World world;
  const Shape tetra = world.add_hull({{16, -4, -4}, {16, 4, -4}, {16, 0, 4}, {24, 0, 0}});
  const Shape player = Shape::cylinder(15, 56), crate = Shape::box({16, 16, 16});
  const Case cases[] = {
      {Shape::sphere(2), Shape::sphere(3), {{5, 0, 0}, 0}, {-1, 0, 0}},
      {Shape::point(), Shape::sphere(2), {{0, 0, 2}, 0}, {0, 0, -1}},
      {player, player, {{0, 0, 56}, 0}, {0, 0, -1}},             // stacked caps
      {player, player, {{18, 24, 10}, 0}, {-0.6, -0.8, 0}},      // sides, |dxy| = 30
      {player, Shape::sphere(5), {{3, 4, 61}, 0}, {0, 0, -1}},   // ball on the cap
      {player, Shape::sphere(5), {{20, 0, 30}, 0}, {-1, 0, 0}},  // ball on the side
      {crate, crate, {{32, 5, 3}, 0}, {-1, 0, 0}},               // box faces (GJK)
      {crate, crate, {{0, 0, 32}, 0}, {0, 0, -1}},
      {crate, Shape::sphere(5), {{21, 0, 0}, 0}, {-1, 0, 0}},  // sphere on a box face
      {crate, player, {{0, 0, 16}, 0}, {0, 0, -1}},            // player standing on a crate
      {crate, tetra, {{0, 0, 0}, 0}, {-1, 0, 0}},              // hull face on a box face
  };
  for (const Case& c : cases) {
    const ShapeDistance d = shape_distance(c.a, {}, c.b, c.pb);
    EXPECT_FALSE(d.overlapping) << int(c.a.kind) << " " << int(c.b.kind);
    EXPECT_NEAR(d.distance, 0, 1e-12);
    // The witnesses are the contact: each lies on the other shape too.
    EXPECT_LT(outside_distance(world, c.b, c.pb, d.point_a), kRounding);
    EXPECT_LT(outside_distance(world, c.a, {}, d.point_b), kRounding);
    Pose in = c.pb, out = c.pb;
    in.position = to_float(to_double(c.pb.position) + c.inward * 1e-3);
    out.position = to_float(to_double(c.pb.position) - c.inward * 1e-3);
    const ShapeDistance di = shape_distance(c.a, {}, c.b, in), dout = shape_distance(c.a, {}, c.b, out);
    EXPECT_TRUE(di.overlapping);
    EXPECT_NEAR(di.distance, -1e-3, 1e-5);
    EXPECT_FALSE(dout.overlapping);
    EXPECT_NEAR(dout.distance, 1e-3, 1e-5);
  }
}

TEST(NarrowPhase, DeterministicAndSymmetric) {
  Sample s;
  const auto same_bits = [](const ShapeDistance& x, const ShapeDistance& y) {
    const double fx[] = {x.distance,  x.point_a.x, x.point_a.y, x.point_a.z, x.point_b.x,
                         x.point_b.y, x.point_b.z, x.normal.x,  x.normal.y,  x.normal.z};
    const double fy[] = {y.distance,  y.point_a.x, y.point_a.y, y.point_a.z, y.point_b.x,
                         y.point_b.y, y.point_b.z, y.normal.x,  y.normal.y,  y.normal.z};
    return std::memcmp(fx, fy, sizeof fx) == 0 && x.overlapping == y.overlapping &&
           x.iterations == y.iterations && x.status == y.status;
  };
  std::vector<ShapeDistance> first;
  for (int pass = 0; pass < 2; ++pass) {
    Rng replay(8080);
    for (int i = 0; i < 1000; ++i) {
      random_pair(replay, i % 5, (i / 5) % 5, s);
      const ShapeDistance d = shape_distance(s.a, s.pa, s.b, s.pb);
      if (pass == 0) {
        first.push_back(d);
        // Swapping the arguments mirrors the answer.
        const ShapeDistance m = shape_distance(s.b, s.pb, s.a, s.pa);
        if (std::abs(d.distance) > kDistanceSlack) {
          EXPECT_EQ(m.overlapping, d.overlapping) << i;
        }
        if (!d.overlapping) {
          EXPECT_NEAR(m.distance, d.distance, kDistanceSlack) << i;
        }
      } else {
        EXPECT_TRUE(same_bits(first[i], d)) << i;
      }
    }
  }
}

TEST(NarrowPhase, SeparatedAlongMatchesVertexExtremes) {
  Rng rng(2718);
  Sample s;
  int checked = 0;
  for (int i = 0; i < 3000; ++i) {
    random_pair(rng, 3 + i % 2, (i / 2) % 2 == 0 ? 3 : 4, s, 40);
    const Vec3d axis{rng.uniform(-5, 5), rng.uniform(-5, 5), rng.uniform(-5, 5)};
    const double gap = rng.uniform(-3, 3);
    const Vec3d n = normalize(axis);
    double max_a = -kInf, min_b = kInf;
    for (Vec3d x : core_points(s.a, s.pa))
      max_a = std::max(max_a, dot(n, x));
    for (Vec3d x : core_points(s.b, s.pb))
      min_b = std::min(min_b, dot(n, x));
    if (std::abs(max_a + gap - min_b) < kRounding) continue;
    ++checked;
    EXPECT_EQ(separated_along(s.a, s.pa, s.b, s.pb, axis, gap), max_a + gap < min_b) << i;
    EXPECT_EQ(separated_along(s.a, s.pa, s.b, s.pb, axis * 1e6, gap), max_a + gap < min_b) << i;
  }
  EXPECT_GT(checked, 2900);
  const Shape ball = Shape::sphere(1);
  const Pose far{{10, 0, 0}, 0};
  EXPECT_TRUE(separated_along(ball, {}, ball, far, {1, 0, 0}, 7.9));
  EXPECT_FALSE(separated_along(ball, {}, ball, far, {1, 0, 0}, 8));  // exactly 8 to spare is not "more"
  EXPECT_FALSE(separated_along(ball, {}, ball, far, {-1, 0, 0}, 0));
  EXPECT_FALSE(separated_along(ball, {}, ball, far, {0, 0, 0}, -100));
  EXPECT_FALSE(separated_along(ball, {}, ball, far, {std::nan(""), 1, 0}, -100));
  EXPECT_FALSE(separated_along(ball, {}, ball, far, {kInf, 0, 0}, -100));
}

TEST(NarrowPhase, GjkIterationCounts) {
  Rng rng(1234);
  Sample s;
  std::printf("GJK iterations (mean / max over 400 random pairs, b within 30 units):\n");
  for (int ka = 0; ka < 5; ++ka)
    for (int kb = ka; kb < 5; ++kb) {
      if (ka < 3 && kb < 3) continue;  // closed forms
      int total = 0, most = 0;
      for (int i = 0; i < 400; ++i) {
        random_pair(rng, ka, kb, s);
        const int it = shape_distance(s.a, s.pa, s.b, s.pb).iterations;
        total += it, most = std::max(most, it);
      }
      std::printf("  %-8s %-8s %5.2f / %d\n", kKindName[ka], kKindName[kb], total / 400.0, most);
      EXPECT_LT(most, kGjkMaxIterations);
    }
}

}  // namespace
}  // namespace shiftcast::narrow_phase_test
