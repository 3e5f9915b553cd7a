// The cylinder–box closed form (collision/prism_pair.hpp; spheres too, as degenerate cylinders) and its
// analytic time of impact, against
// independent oracles: GJK on the same shapes (gjk::shape_distance, no closed forms) and GJK on the box
// written as a hull of its 8 corners; for the time of impact, dense sampling of that hull oracle and the
// conservative-advancement search forced on the same pair. Fixed seeds throughout.
#include "collision/prism_pair.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <random>

#include "collision/gjk_internal.hpp"
#include "collision/time_of_impact.hpp"
#include "tests/support/seeded_random.hpp"

namespace shiftcast {
namespace {

constexpr double kSkin = 1.0 / 32;  // the world's target (kEntitySkin)
// GJK's distance is exact to kGjkTolerance; two of them plus double rounding at these scales.
constexpr double kAgree = 1e-4;
// Witnesses lie on the shapes up to double rounding of coordinates of a few hundred units.
constexpr double kOnShape = 1e-9;

Vec3 uniform_vec(std::mt19937& g, double lo, double hi) {
  return {float(uniform_double(g, lo, hi)), float(uniform_double(g, lo, hi)),
          float(uniform_double(g, lo, hi))};
}

// The box as a hull of its corners: the same set, which shape_distance answers by GJK.
struct HullBox {
  std::array<Vec3, 8> corners;
  Shape shape;
  explicit HullBox(const Shape& box) {
    for (int i = 0; i < 8; ++i) {
      const Vec3 s{i & 1 ? 1.0f : -1.0f, i & 2 ? 1.0f : -1.0f, i & 4 ? 1.0f : -1.0f};
      corners[std::size_t(i)] =
          box.offset + Vec3{s.x * box.half_extents.x, s.y * box.half_extents.y, s.z * box.half_extents.z};
    }
    shape = Shape::hull(corners);
  }
  HullBox(const HullBox&) = delete;
};

// How far x is outside the posed cylinder / box (0 inside), from the definitions.
double outside_cylinder(const Shape& c, const Pose& p, Vec3d x) {
  const Vec3d rel = x - to_world(p, to_double(c.offset));
  if (c.kind == ShapeKind::kSphere) return std::max(length(rel) - double(c.radius), 0.0);
  const double radial = std::max(std::hypot(rel.x, rel.y) - c.radius, 0.0);
  const double vertical = std::max({-rel.z, rel.z - c.height, 0.0});
  return std::hypot(radial, vertical);
}
double outside_box(const Shape& b, const Pose& p, Vec3d x) {
  const Vec3d l = to_local(p, x) - to_double(b.offset);
  const Vec3d h = to_double(b.half_extents);
  return length(Vec3d{std::max(std::abs(l.x) - h.x, 0.0), std::max(std::abs(l.y) - h.y, 0.0),
                      std::max(std::abs(l.z) - h.z, 0.0)});
}

// An upright cylinder, or (three times in ten) a sphere: the prism pair with a degenerate cylinder.
Shape random_cylinder(std::mt19937& g) {
  Vec3 offset{0, 0, float(uniform_double(g, -10, 10))};
  if (uniform_double(g, 0, 1) < 0.3) offset = uniform_vec(g, -10, 10);
  if (uniform_double(g, 0, 1) < 0.3) return Shape::sphere(float(uniform_double(g, 0.5, 24)), offset);
  return Shape::cylinder(float(uniform_double(g, 0.5, 24)), float(uniform_double(g, 1, 72)), offset);
}
Shape random_box(std::mt19937& g) {
  return Shape::box(uniform_vec(g, 0.5, 40), uniform_double(g, 0, 1) < 0.5 ? uniform_vec(g, -8, 8) : Vec3{});
}

TEST(PrismPair, ClosedFormMatchesGjkOnRandomPairs) {
  std::mt19937 g(5101);
  int apart = 0, overlapping = 0, depth_exact = 0, near_touching = 0, failures = 0;
  for (int i = 0; i < 8000 && failures < 5; ++i) {
    const Shape cyl = random_cylinder(g), box = random_box(g);
    const HullBox hull(box);
    const Pose pb{uniform_vec(g, -200, 200), float(uniform_double(g, -4, 4))};
    // The cylinder somewhere around the box, from deep inside to well clear, many near touching.
    const double scale = i % 2 == 0 ? 0.6 : 1.0;  // half the cases closer in, for more overlaps
    const double reach = scale * std::max({box.half_extents.x, box.half_extents.y, box.half_extents.z}) +
                         cyl.radius + 0.5 * cyl.height + 12;
    Pose pa{pb.position + uniform_vec(g, -reach, reach) - Vec3{0, 0, 0.5f * cyl.height},
            float(uniform_double(g, -4, 4))};
    if (i % 4 == 3) {
      // Slide the cylinder along the (apart) normal to within ±0.05 of touching: the verdict's edge.
      const ShapeDistance first = shape_distance(cyl, pa, box, pb);
      if (!first.overlapping) {
        pa.position += to_float(first.normal * (first.distance - uniform_double(g, -0.05, 0.05)));
      }
    }
    const ShapeDistance d = shape_distance(cyl, pa, box, pb);
    const ShapeDistance reverse = shape_distance(box, pb, cyl, pa);
    const ShapeDistance gjk_box = gjk::shape_distance(cyl, pa, box, pb);
    const ShapeDistance gjk_hull = shape_distance(cyl, pa, hull.shape, pb);
    const int before = ::testing::Test::HasFailure();
    ASSERT_EQ(d.status, QueryStatus::kOk);
    EXPECT_EQ(d.iterations, 0);  // closed form, no GJK
    EXPECT_GT(gjk_hull.iterations, 0);
    // Either order: the same distance, witnesses swapped, the normal reversed.
    EXPECT_EQ(reverse.distance, d.distance);
    EXPECT_EQ(reverse.point_a, d.point_b);
    EXPECT_EQ(reverse.normal, -d.normal);
    EXPECT_NEAR(length(d.normal), 1.0, 1e-12);
    EXPECT_NEAR(length(d.point_b - d.point_a - d.normal * d.distance), 0, kOnShape) << i;
    EXPECT_LE(outside_cylinder(cyl, pa, d.point_a), kOnShape) << i;
    EXPECT_LE(outside_box(box, pb, d.point_b), kOnShape) << i;
    if (std::abs(d.distance) > 1e-3) {
      EXPECT_EQ(d.overlapping, gjk_hull.overlapping) << i << " " << d.distance;
    }
    EXPECT_EQ(d.overlapping, d.distance < 0);
    near_touching += std::abs(d.distance) < 1;
    if (!d.overlapping) {
      ++apart;
      EXPECT_NEAR(d.distance, gjk_box.distance, kAgree) << i;
      EXPECT_NEAR(d.distance, gjk_hull.distance, kAgree) << i;
      if (d.distance > 1e-3) {
        EXPECT_GT(dot(d.normal, gjk_hull.normal), 0.999) << i;
      }
    } else {
      ++overlapping;
      // GJK's depth is never shallower than the truth, and exact where its EPA converges.
      EXPECT_LE(gjk_hull.distance, d.distance + kAgree) << i;
      depth_exact += std::abs(gjk_hull.distance - d.distance) <= kAgree;
    }
    failures += ::testing::Test::HasFailure() && !before;
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(apart, 2000);
  EXPECT_GT(overlapping, 700);
  EXPECT_GT(near_touching, 200);
  EXPECT_GT(depth_exact, overlapping * 9 / 10) << overlapping;
}

TEST(PrismPair, ExactTouchingAndKnownValues) {
  const Shape player = Shape::cylinder(15, 56), crate = Shape::box({16, 16, 16});
  // Side to side: x = 16 + 15. Touching is not overlapping.
  const ShapeDistance side = shape_distance(player, {{31, 3, -20}, 0}, crate, {});
  EXPECT_EQ(side.distance, 0);
  EXPECT_FALSE(side.overlapping);
  EXPECT_EQ(side.normal, (Vec3d{-1, 0, 0}));
  // Standing on top: feet at z = 16, anywhere over the top face or its rounded rim.
  const ShapeDistance stand = shape_distance(player, {{20, -25, 16}, 0}, crate, {});
  EXPECT_EQ(stand.distance, 0);
  EXPECT_FALSE(stand.overlapping);
  EXPECT_EQ(stand.normal, (Vec3d{0, 0, -1}));
  // Rim on the edge (both gaps 0): vertical, like the cylinder pair's tie.
  const ShapeDistance rim = shape_distance(crate, {}, player, {{31, 0, 16}, 0});
  EXPECT_EQ(rim.distance, 0);
  EXPECT_FALSE(rim.overlapping);
  EXPECT_EQ(rim.normal, (Vec3d{0, 0, 1}));
  // Half a unit into the side: depth 0.5 out through the side.
  const ShapeDistance in = shape_distance(player, {{30.5, 0, 0}, 0}, crate, {});
  EXPECT_TRUE(in.overlapping);
  EXPECT_EQ(in.distance, -0.5);
  EXPECT_EQ(in.normal, (Vec3d{-1, 0, 0}));
  // Centre inside the crate: out through the nearest face, the cylinder's radius added.
  const ShapeDistance deep = shape_distance(player, {{0, 10, -40}, 0}, crate, {});
  EXPECT_EQ(deep.distance, -21);
  EXPECT_EQ(deep.normal, (Vec3d{0, -1, 0}));
  // Corner: the axis 3-4-5 from a corner of the crate, the rim 3 away in xy, 2 above the top: √(3² + 2²).
  const ShapeDistance corner = shape_distance(Shape::cylinder(2, 10), {{19, 20, 18}, 0}, crate, {});
  EXPECT_NEAR(corner.distance, std::sqrt(13.0), 1e-12);
  EXPECT_NEAR(corner.normal.x, -0.6 * 3 / std::sqrt(13.0), 1e-12);
  // A yawed box with an offset: the offset turns with it (yaw π/2 takes +x to +y).
  const ShapeDistance turned = shape_distance(Shape::box({2, 1, 1}, {10, 0, 0}), {{}, kPi / 2},
                                              Shape::cylinder(1, 2), {{0, 14, -1}, 0});
  EXPECT_NEAR(turned.distance, 1, 1e-5);  // float π/2 is a quarter turn to ~4e-8
  EXPECT_NEAR(turned.normal.y, 1, 1e-9);
}

// ---- Time of impact ----

struct Case {
  Shape cyl, box;
  Motion mc, mb;
  double target = 0;
  bool box_first = false;
};

Toi run(const Case& c, ToiMethod method) {
  const ToiOptions o{.target_separation = c.target};
  return c.box_first ? time_of_impact_with(method, c.box, c.mb, c.cyl, c.mc, o)
                     : time_of_impact_with(method, c.cyl, c.mc, c.box, c.mb, o);
}

// The hull oracle at the float poses a caller builds from t.
double oracle(const Case& c, const Shape& hull, double t) {
  return shape_distance(c.cyl, lerp_pose(c.mc.start, c.mc.end, float(t)), hull,
                        lerp_pose(c.mb.start, c.mb.end, float(t)))
      .distance;
}

TEST(PrismPair, TimeOfImpactMatchesDenseSamplingAndAdvancement) {
  std::mt19937 g(5102);
  constexpr int kSamples = 300;
  int hits = 0, misses = 0, close = 0, failures = 0, max_steps = 0;
  for (int i = 0; i < 1500 && failures < 5; ++i) {
    Case c;
    c.cyl = random_cylinder(g);
    c.box = random_box(g);
    c.box_first = i % 2 == 1;
    const HullBox hull(c.box);
    const Vec3 b0 = uniform_vec(g, -100, 100), b1 = b0 + uniform_vec(g, -60, 60);
    const float yb = float(uniform_double(g, -3, 3)), yc = float(uniform_double(g, -3, 3));
    const double near = uniform_double(g, 0, 1) < 0.2 ? 30 : 120;
    const Vec3 c0 = b0 + uniform_vec(g, -near, near);
    const Vec3 aim = b1 + uniform_vec(g, -40, 40) - Vec3{0, 0, 0.5f * c.cyl.height};
    const Vec3 c1 = c0 + (aim - c0) * float(uniform_double(g, 0.3, 2.5));
    c.mb = {{b0, yb}, {b1, yb}};
    // A cylinder on its own axis may turn; one with an xy offset keeps its yaw.
    c.mc = {{c0, yc}, {c1, c.cyl.yaw_symmetric() ? yc + 1.0f : yc}};
    const double targets[] = {0.0, kSkin, 1.0};
    c.target = targets[i % 3];

    const Toi toi = c.box_first ? time_of_impact(c.box, c.mb, c.cyl, c.mc, {.target_separation = c.target})
                                : time_of_impact(c.cyl, c.mc, c.box, c.mb, {.target_separation = c.target});
    const int before = ::testing::Test::HasFailure();
    ASSERT_EQ(toi.status, QueryStatus::kOk);
    ASSERT_EQ(toi.method, ToiMethod::kAnalytic);
    max_steps = std::max(max_steps, toi.steps);
    const double d0 = oracle(c, hull.shape, 0);
    if (std::abs(d0 - c.target) > kAgree) {
      EXPECT_EQ(toi.initially_close, d0 <= c.target) << i;
    }
    // Never later: the oracle stays above the target (up to GJK's error) on every sample before t.
    const double t_end = toi.hit ? toi.t : 1.0;
    double min_before = d0;
    for (int k = 1; k <= kSamples && double(k) / kSamples < t_end; ++k)
      min_before = std::min(min_before, oracle(c, hull.shape, double(k) / kSamples));
    if (!toi.initially_close) {
      EXPECT_GE(min_before, c.target - kAgree) << i << " t " << toi.t;
    }
    if (!toi.hit && !toi.initially_close) {
      EXPECT_GE(oracle(c, hull.shape, 1), c.target - kAgree) << i;
      ++misses;
    }
    if (toi.initially_close) ++close;
    if (toi.hit && !toi.initially_close) {
      ++hits;
      // Not early: at t the pair is at the target (exactly, up to the float rounding of the poses).
      const double d = oracle(c, hull.shape, toi.t);
      EXPECT_GE(d, c.target - kAgree) << i;
      EXPECT_LE(d, c.target + 2e-3) << i << " t " << toi.t;
      EXPECT_NEAR(toi.separation, d, kAgree) << i;
      EXPECT_NEAR(length(toi.normal), 1, 1e-9);
    }
    // The search forced on the same pair: the same verdict up to its tolerance, never after the
    // analytic time by more than a float step, and at most its tolerance (in distance) before it.
    const Toi ca = run(c, ToiMethod::kConservativeAdvancement);
    ASSERT_EQ(ca.status, QueryStatus::kOk);
    EXPECT_EQ(ca.initially_close, toi.initially_close) << i;
    if (toi.hit) {
      EXPECT_TRUE(ca.hit) << i;
      EXPECT_LE(ca.t, toi.t + 0x1p-21) << i;
      if (ca.hit && !ca.initially_close) {
        EXPECT_LE(oracle(c, hull.shape, ca.t), c.target + 0.011) << i;
      }
    } else if (ca.hit && !toi.initially_close) {
      // A near pass the search cannot tell from a touch (sampled finely: a sphere's pass is sharp).
      constexpr int kFineSamples = 20 * kSamples;
      double min_all = d0;
      for (int k = 1; k <= kFineSamples; ++k)
        min_all = std::min(min_all, oracle(c, hull.shape, double(k) / kFineSamples));
      EXPECT_LE(min_all, c.target + kToiDistanceTolerance + 2e-3) << i;
    }
    failures += ::testing::Test::HasFailure() && !before;
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(hits, 300) << misses << " " << close;
  EXPECT_GT(misses, 300) << hits << " " << close;
  EXPECT_GT(close, 20) << hits << " " << misses;
  EXPECT_LT(max_steps, 64) << "Newton should converge, not run out";
}

// A player standing on a (yawed) crate or against its side, sliding or lifting off: not a hit; pressing
// into it is. Exactly at the target, just inside it, just above it.
TEST(PrismPair, RestingContactsAreNotHits) {
  const Shape player = Shape::cylinder(15, 56), crate = Shape::box({16, 24, 16}, {0, 0, 16});
  std::mt19937 g(5103);
  int slides = 0;
  for (float yaw : {0.0f, 0.3f, 2.0f}) {
    const Pose crate_pose{{40, -30, 0}, yaw};
    const Motion still{crate_pose, crate_pose};
    for (double offset : {kSkin, kSkin - 0.004, kSkin + 0.004}) {
      // On top (the crate's top face at z = 32), feet anywhere over it.
      for (int i = 0; i < 40; ++i) {
        const Vec3 at = to_world(crate_pose, Vec3{float(uniform_double(g, -20, 20)),
                                                  float(uniform_double(g, -30, 30)), 0}) +
                        Vec3{0, 0, float(32 + offset)};
        const double angle = uniform_double(g, 0, 2 * std::numbers::pi), speed = uniform_double(g, 1, 500);
        const float lift = i % 2 == 0 ? 0.0f : float(uniform_double(g, 0, 50));
        const Vec3 to = at + Vec3{float(speed * std::cos(angle)), float(speed * std::sin(angle)), lift};
        const Toi toi =
            time_of_impact(player, {{at, 0}, {to, 0}}, crate, still, {.target_separation = kSkin});
        EXPECT_EQ(toi.method, ToiMethod::kAnalytic);
        EXPECT_FALSE(toi.hit) << yaw << " " << offset << " " << i << " t " << toi.t;
        EXPECT_EQ(toi.initially_close, offset <= kSkin);
        ++slides;
      }
      const Vec3 top = to_world(crate_pose, Vec3{3, -5, float(32 + offset)});
      const Toi press = time_of_impact(crate, still, player, {{top, 0}, {top - Vec3{3, 0, 10}, 0}},
                                       {.target_separation = kSkin});
      EXPECT_TRUE(press.hit) << offset;
      EXPECT_LE(press.t, std::max(0.0, (offset - kSkin) / 10));
      EXPECT_NEAR(press.normal.z, 1, 1e-9);  // crate (a) to player (b): up
      // Against the +x side face (x = 16 + 15 + offset in the crate's frame), sliding within its plane.
      for (int i = 0; i < 40; ++i) {
        const Vec3 at = to_world(crate_pose, Vec3{float(31 + offset), float(uniform_double(g, -20, 20)), 0});
        const double angle = uniform_double(g, 0, 2 * std::numbers::pi), speed = uniform_double(g, 1, 500);
        const Vec3 along =
            to_world(Pose{{}, yaw}, Vec3{0, float(speed * std::cos(angle)), float(speed * std::sin(angle))});
        const Toi toi =
            time_of_impact(player, {{at, 0}, {at + along, 0}}, crate, still, {.target_separation = kSkin});
        EXPECT_FALSE(toi.hit) << yaw << " " << offset << " " << i;
        ++slides;
      }
      // Diving into the side at 0.01 rad: a hit, at once when within the target.
      const Vec3 at = to_world(crate_pose, Vec3{float(31 + offset), 0, 0});
      const Vec3 dive = to_world(Pose{{}, yaw}, Vec3{-2, 200, 0});
      const Toi hit =
          time_of_impact(player, {{at, 0}, {at + dive, 0}}, crate, still, {.target_separation = kSkin});
      EXPECT_TRUE(hit.hit) << yaw << " " << offset;
      EXPECT_LE(hit.t, std::max(0.0, (offset - kSkin) / 2) + 1e-6);
      if (offset <= kSkin) {
        EXPECT_EQ(hit.t, 0.0);
      }
    }
  }
  EXPECT_EQ(slides, 3 * 3 * 80);
}

TEST(PrismPair, AnalyticIsChosenOnlyWithoutTurning) {
  const Shape player = Shape::cylinder(15, 56), crate = Shape::box({16, 16, 16});
  const Motion run{{{100, 0, 0}, 0}, {{0, 0, 0}, 0}}, still{{}, {}};
  EXPECT_EQ(time_of_impact(player, run, crate, still, {}).method, ToiMethod::kAnalytic);
  EXPECT_EQ(time_of_impact(crate, still, player, run, {}).method, ToiMethod::kAnalytic);
  const Motion turn{{}, {{}, 1}};
  EXPECT_EQ(time_of_impact(player, run, crate, turn, {}).method, ToiMethod::kBisection);
  EXPECT_EQ(time_of_impact_with(ToiMethod::kAnalytic, player, run, crate, turn, {}).status,
            QueryStatus::kInvalidShape);
  // Head-on into the face: exact, first step lands (the distance is linear in t on a face).
  const Toi head = time_of_impact(player, run, crate, still, {});
  EXPECT_TRUE(head.hit);
  EXPECT_NEAR(head.t, (100 - 31) / 100.0, 1e-6);
  EXPECT_LE(head.t, (100 - 31) / 100.0);
  EXPECT_LE(head.steps, 2);
}

}  // namespace
}  // namespace shiftcast
