// Rays, sweeps and overlaps against a concave prop (an L of two box brushes), judged in the prop's frame
// by the world-query oracle (tests/support/world_query_oracle.hpp) applied to each brush.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <utility>

#include "tests/support/world_query_oracle.hpp"
#include "world/match/prop_model.hpp"
#include "world/match/world_query.hpp"

namespace shiftcast::world_query_test {
namespace {

// ---- Concave props: an L of two box brushes, in the prop's frame ----

struct LProp {
  // Brush boxes in the prop's frame: the long arm and the short arm.
  static constexpr Vec3 kMin[2] = {{-32, -8, 0}, {-32, 8, 0}};
  static constexpr Vec3 kMax[2] = {{32, 8, 16}, {-16, 40, 16}};
  std::unique_ptr<PropModel> model;

  LProp() {
    PropModelResult made =
        make_brush_model("l", {brush_from_box(kMin[0], kMax[0]), brush_from_box(kMin[1], kMax[1])});
    EXPECT_TRUE(made.ok()) << made.error;
    model = std::move(made.model);
  }
  Entity at(const Pose& pose) const {
    Entity e;
    e.id = 21;
    e.kind = EntityKind::kProp;
    e.model = model.get();
    e.shape = model_shape(*model);
    e.pose = pose;
    compute_entity_bounds(e);
    return e;
  }
  static Vec3d centre(int k) { return (dvec(kMin[k]) + dvec(kMax[k])) * 0.5; }
  static Vec3d half(int k) { return (dvec(kMax[k]) - dvec(kMin[k])) * 0.5; }
  // Signed distance to brush k grown by `grow` on every axis (a box still), at world point p.
  static double brush_sdf(const Entity& e, int k, Vec3d p, double grow = 0) {
    return sdf_box(into_frame(e.pose, p) - centre(k), half(k) + Vec3d{grow, grow, grow});
  }
  // The separating-axis gap between a box (turned by yaw) at world centre c and brush k.
  static double brush_gap(const Entity& e, int k, Vec3d c, Vec3d h, double yaw) {
    const Vec3 world = to_world(e.pose, to_float(centre(k)));
    return sat_gap(c, h, yaw, dvec(world), half(k), e.pose.yaw);
  }
};

// The first entry into a union of convex parts is the earliest entry into any of them.
Entry union_entry(const std::function<double(int, double)>& part, double length, double miss_margin) {
  Entry best;
  for (int k = 0; k < 2; ++k) {
    const Entry e = first_entry([&](double s) { return part(k, s); }, length, miss_margin);
    best.ambiguous |= e.ambiguous;
    if (e.hit && (!best.hit || e.s < best.s)) {
      const bool ambiguous = best.ambiguous;
      best = e;
      best.ambiguous |= ambiguous;
    }
  }
  return best;
}

TEST(ConcaveProp, RaysSweepsAndOverlapsInThePropsFrame) {
  const LProp l;
  const BspTree level;
  std::mt19937 rng(1001);
  const Shape ball = Shape::sphere(6, {1, -2, 3});
  const Shape crate = Shape::box({6, 4, 5}, {1, 1, 0});
  int ray_hits = 0;
  int ball_hits = 0;
  int crate_hits = 0;
  int overlaps = 0;
  for (int i = 0; i < 1500; ++i) {
    const Entity e = l.at(random_pose(rng));
    const Vec3 centre = to_world(e.pose, e.local_center);
    const Vec3 from = centre + uniform_vec(rng, i % 10 == 0 ? -20 : -120, i % 10 == 0 ? 20 : 120);
    const Vec3 to = centre + uniform_vec(rng, -50, 50);
    const double travel = double(length(to - from));
    const Vec3d unit = dvec(to - from) * (1 / travel);
    const auto point = [&](double s) { return along(from, unit, s); };

    // Rays: the prop's BSP raycast is exact, so the union of the two boxes is the answer.
    const Entry ray =
        union_entry([&](int k, double s) { return LProp::brush_sdf(e, k, point(s)); }, travel, kAmbiguity);
    if (!ray.ambiguous) {
      const WorldHit h = world_raycast(level, {&e, 1}, from, to - from, float(travel), {});
      EXPECT_EQ(h.trace.hit, ray.hit) << "ray " << i;
      EXPECT_EQ(h.trace.start_solid, ray.start_inside) << "ray " << i;
      if (h.trace.hit && ray.hit && !ray.start_inside) {
        ++ray_hits;
        EXPECT_NEAR(double(h.trace.fraction) * travel, ray.s, kExactTolerance) << "ray " << i;
        const Vec3d inside = point(ray.s) - dvec(h.trace.normal) * 1e-2;
        EXPECT_LT(std::min(LProp::brush_sdf(e, 0, inside), LProp::brush_sdf(e, 1, inside)), 0.0)
            << "ray " << i;
      }
    }

    // Spheres: the prop's BSP shifts its planes by the radius, conservatively: between the round truth
    // (never late against it, never missing it) and the boxes grown by the radius on every axis (never
    // earlier than those, whose corners bevel planes cut back).
    const Vec3d lift = dvec(ball.offset);
    const Entry grown =
        union_entry([&](int k, double s) { return LProp::brush_sdf(e, k, point(s) + lift, ball.radius); },
                    travel, kAmbiguity);
    const Entry truth =
        union_entry([&](int k, double s) { return LProp::brush_sdf(e, k, point(s) + lift) - ball.radius; },
                    travel, kAmbiguity);
    if (!grown.ambiguous && !truth.ambiguous) {
      const WorldHit h = world_sweep(level, {&e, 1}, ball, from, to, {});
      if (truth.hit) {
        EXPECT_TRUE(h.trace.hit) << "ball " << i;
      }
      if (truth.start_inside) {
        EXPECT_TRUE(h.trace.start_solid) << "ball " << i;
      }
      if (h.trace.hit) {
        EXPECT_TRUE(grown.hit) << "ball " << i;
      }
      if (h.trace.start_solid) {
        EXPECT_TRUE(grown.start_inside) << "ball " << i;
      }
      if (h.trace.hit && !h.trace.start_solid && grown.hit) {
        ++ball_hits;
        const double got = double(h.trace.fraction) * travel;
        EXPECT_GE(got, grown.s - kExactTolerance) << "ball " << i;
        if (truth.hit) {
          EXPECT_LE(got, truth.s + kExactTolerance) << "ball " << i;
        }
        // Stopped short, it is clear of the prop for world_overlap (the same BSP).
        const WorldOverlap o = world_overlap(level, {&e, 1}, ball, {h.trace.end_position, 0}, {});
        EXPECT_TRUE(o.entities.empty()) << "ball " << i;
      }
    }

    // Boxes: time of impact against each brush, judged by the separating-axis gap.
    const Vec3d shift = dvec(crate.offset);
    const auto crate_gap = [&](int k, double s) {
      return LProp::brush_gap(e, k, point(s) + shift, dvec(crate.half_extents), 0);
    };
    const Entry box = union_entry(crate_gap, travel, kToiSlack + kAmbiguity);
    if (!box.ambiguous) {
      const WorldHit h = world_sweep(level, {&e, 1}, crate, from, to, {});
      EXPECT_EQ(h.trace.hit, box.hit) << "crate " << i;
      EXPECT_EQ(h.trace.start_solid, box.start_inside) << "crate " << i;
      if (h.trace.hit && box.hit && !box.start_inside) {
        ++crate_hits;
        const double got = double(h.trace.fraction) * travel;
        EXPECT_LE(got, box.s + kExactTolerance) << "crate " << i;
        EXPECT_LE(std::min(crate_gap(0, got), crate_gap(1, got)), kToiSlack) << "crate " << i;
        const Pose end{h.trace.end_position, 0};
        EXPECT_TRUE(world_overlap(level, {&e, 1}, crate, end, {}).entities.empty()) << "crate " << i;
      }
    }

    // Overlap of a turned box at `to`: any brush's separating-axis gap below zero.
    const float yaw = float(uniform_double(rng, -kPi, kPi));
    const double c = std::cos(double(yaw));
    const double s = std::sin(double(yaw));
    const Vec3d at = dvec(to) + Vec3d{c * shift.x - s * shift.y, s * shift.x + c * shift.y, shift.z};
    const double g0 = LProp::brush_gap(e, 0, at, dvec(crate.half_extents), yaw);
    const double g1 = LProp::brush_gap(e, 1, at, dvec(crate.half_extents), yaw);
    if (std::abs(g0) > kAmbiguity && std::abs(g1) > kAmbiguity) {
      const bool want = g0 < 0 || g1 < 0;
      overlaps += want;
      EXPECT_EQ(world_overlap(level, {&e, 1}, crate, {to, yaw}, {}).entities.size(), want ? 1u : 0u)
          << "overlap " << i;
    }
  }
  EXPECT_GT(ray_hits, 200);
  EXPECT_GT(ball_hits, 300);
  EXPECT_GT(crate_hits, 300);
  EXPECT_GT(overlaps, 100);
}

}  // namespace
}  // namespace shiftcast::world_query_test
