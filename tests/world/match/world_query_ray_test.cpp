// world_raycast against the world-query oracle (tests/support/world_query_oracle.hpp): rays at one
// entity of each kind, the nearest of many entities and the level, ties, filters, and the edge cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <utility>
#include <vector>

#include "tests/support/world_query_oracle.hpp"
#include "world/match/world_query.hpp"

namespace shiftcast::world_query_test {
namespace {

// ---- Rays against one entity of each kind ----

struct RayCounts {
  int hits = 0;
  int misses = 0;
  int starts_inside = 0;
  int ambiguous = 0;
  int normals = 0;
};

// Random rays at a randomly posed entity: most aimed at points around it (hits and misses), some from
// inside it. `exact`: the closed forms must match the oracle; otherwise (time of impact) the hit may be
// early by at most kToiDistanceTolerance of distance, never late.
RayCounts check_rays(const std::function<Entity(std::mt19937&)>& make, std::uint32_t seed, int count,
                     bool exact, const std::function<Vec3(const Entity&)>& hull_half = nullptr) {
  std::mt19937 rng(seed);
  const BspTree level;
  RayCounts n;
  for (int i = 0; i < count; ++i) {
    const Entity e = make(rng);
    const Vec3 half = hull_half ? hull_half(e) : Vec3{};
    const Vec3 centre = to_world(e.pose, e.local_center);
    const Vec3 target = centre + uniform_vec(rng, -1.3 * e.bound_radius, 1.3 * e.bound_radius);
    const bool from_inside = i % 10 == 0;
    const Vec3 origin = from_inside ? centre + uniform_vec(rng, -2, 2) : centre + uniform_vec(rng, -200, 200);
    const Vec3 dir = (target - origin) * float(uniform_double(rng, 0.2, 3));
    if (length(dir) < 1e-3f) continue;
    const float max_distance = float(length(target - origin) * uniform_double(rng, 0.6, 1.6) + 1);
    const WorldHit h = world_raycast(level, {&e, 1}, origin, dir, max_distance, {});
    const Vec3d unit = dvec(normalize(dir));
    const Entry want = first_entry([&](double s) { return sdf(e, along(origin, unit, s), half); },
                                   max_distance, exact ? kAmbiguity : kToiSlack + kAmbiguity);
    if (want.ambiguous) {
      ++n.ambiguous;
      continue;
    }
    EXPECT_EQ(h.trace.status, QueryStatus::kOk);
    EXPECT_EQ(h.trace.hit, want.hit) << "ray " << i;
    if (h.trace.hit != want.hit) continue;
    if (!want.hit) {
      ++n.misses;
      EXPECT_EQ(h.entity, kNoEntity);
      EXPECT_EQ(h.trace.fraction, 1.0f);
      continue;
    }
    EXPECT_EQ(h.entity, e.id);
    EXPECT_EQ(h.trace.brush, kNoBrush);
    EXPECT_EQ(h.trace.start_solid, want.start_inside) << "ray " << i;
    if (want.start_inside) {
      ++n.starts_inside;
      EXPECT_EQ(h.trace.fraction, 0.0f);
      EXPECT_EQ(h.trace.end_position, origin);
      continue;
    }
    ++n.hits;
    const double got = double(h.trace.fraction) * max_distance;
    if (exact) {
      EXPECT_NEAR(got, want.s, kExactTolerance) << "ray " << i;
    } else {
      EXPECT_LE(got, want.s + kExactTolerance) << "ray " << i;
      EXPECT_LE(sdf(e, along(origin, unit, got), half), kToiSlack) << "ray " << i;
    }
    // The normal: unit, and where the surface is smooth (away from edges) the SDF's gradient.
    const Vec3d n_got = dvec(h.trace.normal);
    EXPECT_NEAR(norm(n_got), 1.0, 1e-5);
    const Vec3d p = along(origin, unit, want.s);
    constexpr double kStep = 1e-5;
    Vec3d grad;
    for (int k = 0; k < 3; ++k) {
      Vec3d a = p;
      Vec3d b = p;
      a[k] -= kStep;
      b[k] += kStep;
      grad[k] = (sdf(e, b, half) - sdf(e, a, half)) / (2 * kStep);
    }
    if (std::abs(norm(grad) - 1.0) < 1e-3) {
      ++n.normals;
      EXPECT_GT(dot(n_got, grad), exact ? 1 - 1e-4 : 0.99) << "ray " << i;
    }
    // The end: on the ray, backed off kSurfaceBackoff in front of the contact plane, outside the solid.
    const double approach = -dot(n_got, unit);
    EXPECT_GT(approach, 0.0) << "ray " << i;
    const Vec3d end_want = along(origin, unit, std::max(0.0, got - kSurfaceBackoff / approach));
    EXPECT_LT(norm(dvec(h.trace.end_position) - end_want), 1e-3);
    EXPECT_GT(sdf(e, dvec(h.trace.end_position), half), 0.0);
  }
  return n;
}

TEST(WorldRaycast, SpheresMatchTheOracle) {
  const RayCounts n = check_rays(
      [](std::mt19937& rng) {
        return make_entity(7, Shape::sphere(float(uniform_double(rng, 1, 40)), uniform_vec(rng, -10, 10)),
                           random_pose(rng));
      },
      101, 3000, true);
  EXPECT_GT(n.hits, 700);
  EXPECT_GT(n.misses, 1200);
  EXPECT_GT(n.starts_inside, 200);
  EXPECT_GT(n.normals, 700);
  EXPECT_LT(n.ambiguous, 30);
}

TEST(WorldRaycast, CylindersMatchTheOracle) {
  const RayCounts n = check_rays(
      [](std::mt19937& rng) {
        return make_entity(8,
                           Shape::cylinder(float(uniform_double(rng, 1, 30)),
                                           float(uniform_double(rng, 1, 80)), uniform_vec(rng, -10, 10)),
                           random_pose(rng));
      },
      202, 3000, true);
  EXPECT_GT(n.hits, 300);
  EXPECT_GT(n.misses, 1500);
  EXPECT_GT(n.starts_inside, 200);
  EXPECT_GT(n.normals, 300);
  EXPECT_LT(n.ambiguous, 30);
}

TEST(WorldRaycast, TurnedBoxesMatchTheOracle) {
  const RayCounts n = check_rays(
      [](std::mt19937& rng) {
        return make_entity(9, Shape::box(uniform_vec(rng, 1, 40), uniform_vec(rng, -10, 10)),
                           random_pose(rng));
      },
      303, 3000, true);
  EXPECT_GT(n.hits, 380);
  EXPECT_GT(n.misses, 1500);
  EXPECT_GT(n.starts_inside, 200);
  EXPECT_GT(n.normals, 380);
  EXPECT_LT(n.ambiguous, 30);
}

TEST(WorldRaycast, HullsAreNeverLateAndWithinTheToiTolerance) {
  // Hulls over a box's corners: the box's SDF is the oracle, the answer comes from time_of_impact.
  std::vector<std::vector<Vec3>> storage;
  storage.reserve(800);
  const RayCounts n = check_rays(
      [&](std::mt19937& rng) {
        const Vec3 half = uniform_vec(rng, 2, 40);
        storage.push_back(box_corners(half, {}));
        return make_entity(10, Shape::hull(storage.back()), random_pose(rng));
      },
      404, 800, false,
      [&](const Entity&) {
        const std::vector<Vec3>& v = storage.back();
        return (v[7] - v[0]) * 0.5f;
      });
  EXPECT_GT(n.hits, 100);
  EXPECT_GT(n.misses, 400);
  EXPECT_GT(n.starts_inside, 50);
}

// ---- Many entities and the level: the nearest hit, ties, filters ----

TEST(WorldRaycast, TheNearestOfManyEntitiesAndTheLevelWins) {
  // A floor whose top is z = −60, and 40 entities with shuffled ids; the oracle is the minimum over the
  // per-entity oracle entries and the floor plane.
  const BspTree level = build_level({brush_from_box({-4096, -4096, -128}, {4096, 4096, -60})});
  std::mt19937 rng(505);
  std::vector<Entity> entities;
  std::vector<EntityId> ids;
  for (EntityId id = 1; id <= 40; ++id)
    ids.push_back(3 * id + 1);
  std::shuffle(ids.begin(), ids.end(), rng);
  for (EntityId id : ids)
    entities.push_back(random_convex_entity(rng, id, 200));

  int entity_hits = 0;
  int level_hits = 0;
  int misses = 0;
  int skipped = 0;
  for (int i = 0; i < 1500; ++i) {
    const Vec3 origin{float(uniform_double(rng, -300, 300)), float(uniform_double(rng, -300, 300)),
                      float(uniform_double(rng, -40, 100))};
    const Vec3 target{float(uniform_double(rng, -220, 220)), float(uniform_double(rng, -220, 220)),
                      float(uniform_double(rng, -70, 40))};
    const Vec3 dir = target - origin;
    const float max_distance = length(dir) * float(uniform_double(rng, 0.3, 1.5));
    const Vec3d unit = dvec(normalize(dir));
    double best = INFINITY;
    double second = INFINITY;
    EntityId best_id = kNoEntity;
    bool ambiguous = false;
    const auto offer = [&](double s, EntityId id) {
      if (s < best) {
        second = best;
        best = s;
        best_id = id;
      } else {
        second = std::min(second, s);
      }
    };
    for (const Entity& e : entities) {
      const Entry want = first_entry([&](double s) { return sdf(e, along(origin, unit, s)); }, max_distance);
      ambiguous |= want.ambiguous;
      if (want.hit) offer(want.s, e.id);
    }
    if (unit.z < 0 && origin.z > -60) {
      const double s = (origin.z + 60) / -unit.z;
      ambiguous |= std::abs(s - max_distance) < kAmbiguity;
      if (s < max_distance) offer(s, kNoEntity);
    }
    if (ambiguous || second - best < kAmbiguity) {
      ++skipped;
      continue;
    }
    const WorldHit h = world_raycast(level, entities, origin, dir, max_distance, {});
    ASSERT_EQ(h.trace.hit, best < INFINITY) << "ray " << i;
    if (best == INFINITY) {
      ++misses;
      EXPECT_EQ(h.trace.end_position, origin + normalize(dir) * max_distance);
      continue;
    }
    EXPECT_EQ(h.entity, best_id) << "ray " << i;
    EXPECT_NEAR(double(h.trace.fraction) * max_distance, best, kExactTolerance) << "ray " << i;
    if (best_id == kNoEntity) {
      ++level_hits;
      EXPECT_EQ(h.trace.brush, 0);
    } else {
      ++entity_hits;
      EXPECT_EQ(h.trace.brush, kNoBrush);
    }
  }
  EXPECT_GT(entity_hits, 350);
  EXPECT_GT(level_hits, 60);
  EXPECT_GT(misses, 600);
  EXPECT_LT(skipped, 100);
}

TEST(WorldRaycast, TiesGoToTheLevelThenToTheLowerId) {
  const BspTree level = build_level({brush_from_box({-512, -512, -64}, {512, 512, 0})});
  // Two identical spheres, in either order in the span.
  std::vector<Entity> twins{make_entity(5, Shape::sphere(10), {{100, 0, 50}, 0.7f}),
                            make_entity(3, Shape::sphere(10), {{100, 0, 50}, 0.7f})};
  const WorldHit h = world_raycast(level, twins, {0, 0, 50}, {1, 0, 0}, 1000, {});
  EXPECT_EQ(h.entity, 3u);
  EXPECT_FLOAT_EQ(h.trace.fraction, 0.09f);
  std::swap(twins[0], twins[1]);
  EXPECT_EQ(world_raycast(level, twins, {0, 0, 50}, {1, 0, 0}, 1000, {}).entity, 3u);
  // A box whose top is flush with the floor's top: the same fraction, and the level wins.
  const std::vector<Entity> flush{make_entity(1, Shape::box({8, 8, 8}), {{0, 0, -8}, 0})};
  const WorldHit down = world_raycast(level, flush, {0, 0, 100}, {0, 0, -1}, 200, {});
  ASSERT_TRUE(down.trace.hit);
  EXPECT_EQ(down.trace.fraction, 0.5f);
  EXPECT_EQ(down.entity, kNoEntity);
  EXPECT_EQ(down.trace.brush, 0);
  // Lift the box a little: now it is nearer than the floor.
  const std::vector<Entity> raised{make_entity(1, Shape::box({8, 8, 8}), {{0, 0, -7.5f}, 0})};
  EXPECT_EQ(world_raycast(level, raised, {0, 0, 100}, {0, 0, -1}, 200, {}).entity, 1u);
}

TEST(WorldRaycast, FiltersSelectLayersIgnoreAnIdAndSkipTheLevel) {
  // Spheres on the x axis: a player at 100, a projectile at 200, a prop at 300; a wall across x = 150.
  const BspTree level = build_level({brush_from_box({150, -64, -64}, {160, 64, 64})});
  const std::vector<Entity> row{make_entity(1, Shape::sphere(10), {{100, 0, 0}, 0}, kLayerPlayer),
                                make_entity(2, Shape::sphere(10), {{200, 0, 0}, 0}, kLayerProjectile),
                                make_entity(3, Shape::sphere(10), {{300, 0, 0}, 0}, kLayerProp)};
  const auto first = [&](const QueryFilter& f) {
    const WorldHit h = world_raycast(level, row, {0, 0, 0}, {2, 0, 0}, 1000, f);
    return h.trace.hit ? std::pair<EntityId, float>{h.entity, h.trace.fraction * 1000}
                       : std::pair<EntityId, float>{kNoEntity, -1.0f};
  };
  EXPECT_EQ(first({}), (std::pair<EntityId, float>{1, 90}));
  EXPECT_EQ(first({.ignore = 1}), (std::pair<EntityId, float>{kNoEntity, 150}));
  EXPECT_EQ(first({.ignore = 1, .level = false}), (std::pair<EntityId, float>{2, 190}));
  EXPECT_EQ(first({.mask = kLayerProp | kLayerPlayer, .level = false}), (std::pair<EntityId, float>{1, 90}));
  EXPECT_EQ(first({.mask = kLayerProp, .level = false}), (std::pair<EntityId, float>{3, 290}));
  EXPECT_EQ(first({.mask = kLayerProp}), (std::pair<EntityId, float>{kNoEntity, 150}));
  EXPECT_EQ(first({.mask = 0, .level = false}), (std::pair<EntityId, float>{kNoEntity, -1.0f}));
  const WorldHit none = world_raycast(level, row, {0, 0, 0}, {2, 0, 0}, 1000, {.mask = 0, .level = false});
  EXPECT_EQ(none.trace.fraction, 1.0f);
  EXPECT_EQ(none.trace.end_position, (Vec3{1000, 0, 0}));
}

TEST(WorldRaycast, StartsInsideZeroLengthAndRefusedInput) {
  const BspTree level;
  const std::vector<Entity> ball{make_entity(4, Shape::sphere(10), {{0, 0, 0}, 0})};
  // Inside, ending inside: all_solid; ending outside: start_solid only.
  const WorldHit in = world_raycast(level, ball, {1, 0, 0}, {1, 0, 0}, 5, {});
  EXPECT_TRUE(in.trace.hit && in.trace.start_solid && in.trace.all_solid);
  EXPECT_EQ(in.trace.normal, (Vec3{}));
  const WorldHit out = world_raycast(level, ball, {1, 0, 0}, {1, 0, 0}, 50, {});
  EXPECT_TRUE(out.trace.start_solid);
  EXPECT_FALSE(out.trace.all_solid);
  // Zero length: a point query. Zero direction: the same.
  EXPECT_TRUE(world_raycast(level, ball, {1, 0, 0}, {1, 0, 0}, 0, {}).trace.all_solid);
  EXPECT_TRUE(world_raycast(level, ball, {1, 0, 0}, {0, 0, 0}, 10, {}).trace.all_solid);
  EXPECT_FALSE(world_raycast(level, ball, {20, 0, 0}, {0, 0, 0}, 10, {}).trace.hit);
  // Starting on the surface: moving in is a hit at fraction 0 with a normal; moving out is not a hit.
  const WorldHit in_from_surface = world_raycast(level, ball, {10, 0, 0}, {-1, 0, 0}, 50, {});
  EXPECT_TRUE(in_from_surface.trace.hit);
  EXPECT_FALSE(in_from_surface.trace.start_solid);
  EXPECT_EQ(in_from_surface.trace.fraction, 0.0f);
  EXPECT_EQ(in_from_surface.trace.normal, (Vec3{1, 0, 0}));
  EXPECT_FALSE(world_raycast(level, ball, {10, 0, 0}, {1, 0, 0}, 50, {}).trace.hit);
  // Ending exactly on the surface is touching, not a hit.
  EXPECT_FALSE(world_raycast(level, ball, {30, 0, 0}, {-1, 0, 0}, 20, {}).trace.hit);
  EXPECT_TRUE(world_raycast(level, ball, {30, 0, 0}, {-1, 0, 0}, 20.001f, {}).trace.hit);

  // Rays parallel to faces: just outside a face is a miss, just inside a hit.
  const std::vector<Entity> box{make_entity(6, Shape::box({10, 10, 10}), {{0, 0, 0}, 0}),
                                make_entity(7, Shape::cylinder(10, 20), {{0, 100, -10}, 0})};
  for (const float x : {-10.0f, 10.0f}) {
    EXPECT_FALSE(world_raycast(level, box, {x, -50, 10}, {0, 1, 0}, 100, {}).trace.hit) << x;
    EXPECT_FALSE(world_raycast(level, box, {x, -50, 0}, {0, 1, 0}, 100, {}).trace.hit) << x;
    EXPECT_FALSE(world_raycast(level, box, {-50, 100, x}, {1, 0, 0}, 100, {}).trace.hit) << x;
  }
  EXPECT_EQ(world_raycast(level, box, {9.99f, -50, 9.99f}, {0, 1, 0}, 100, {}).entity, 6u);
  EXPECT_EQ(world_raycast(level, box, {-50, 100, 9.99f}, {1, 0, 0}, 100, {}).entity, 7u);
  EXPECT_EQ(world_raycast(level, box, {10, 100, 60}, {0, 0, -1}, 100, {}).trace.hit, false);  // on the side
  EXPECT_EQ(world_raycast(level, box, {9.99f, 100, 60}, {0, 0, -1}, 100, {}).entity, 7u);

  const WorldHit nan = world_raycast(level, ball, {NAN, 0, 0}, {1, 0, 0}, 50, {});
  EXPECT_EQ(nan.trace.status, QueryStatus::kNonFiniteInput);
  EXPECT_FALSE(nan.trace.hit);
  const WorldHit negative = world_raycast(level, ball, {20, 0, 0}, {1, 0, 0}, -1, {.level = false});
  EXPECT_EQ(negative.trace.status, QueryStatus::kNonFiniteInput);
  EXPECT_EQ(negative.trace.end_position, (Vec3{20, 0, 0}));
  EXPECT_EQ(negative.trace.fraction, 0.0f);
}

}  // namespace
}  // namespace shiftcast::world_query_test
