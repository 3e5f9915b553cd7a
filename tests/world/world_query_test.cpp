// World queries against oracles that share no code with them: textbook signed distance functions (SDF)
// of spheres, upright cylinders and boxes, evaluated in a frame rotated by hand. The SDF of a convex solid
// is a convex function, so along a ray (or a translation) golden-section search finds its minimum and
// bisection before the minimum finds the first entry exactly; sweeps of a sphere use SDF − r (the
// Minkowski sum with a ball), cylinder pairs the summed cylinder, box pairs the separating-axis gap (also
// convex along a translation). Cases within kAmbiguity of touching are counted and skipped.
#include "world/world_query.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "collision/brush.hpp"
#include "collision/bsp_build.hpp"
#include "collision/time_of_impact.hpp"
#include "world/prop_model.hpp"

namespace shiftcast {
namespace {

// Oracle answers closer than this (units) to touching, or to the end of the motion, are not judged:
// float inputs move a surface by ~1e-5 at these scales.
constexpr double kAmbiguity = 1e-3;
// Closed forms (spheres, cylinders, boxes) agree with the oracle to float rounding of the reported
// fraction (~6e-8 relative) over rays up to ~600 units.
constexpr double kExactTolerance = 2e-4;
// Time-of-impact answers stop at most kToiDistanceTolerance short of touching (in distance).
constexpr double kToiSlack = kToiDistanceTolerance + 1e-4;

double uniform(std::mt19937& rng, double lo, double hi) {
  return lo + (hi - lo) * (double(rng()) / 4294967296.0);
}
Vec3 uniform_vec(std::mt19937& rng, double lo, double hi) {
  return {float(uniform(rng, lo, hi)), float(uniform(rng, lo, hi)), float(uniform(rng, lo, hi))};
}

Entity make_entity(EntityId id, Shape shape, Pose pose, std::uint32_t layer = kLayerProp) {
  Entity e;
  e.id = id;
  e.kind = EntityKind::kProp;
  e.shape = shape;
  e.pose = pose;
  e.layer = layer;
  e.mask = kLayerAll;
  compute_entity_bounds(e);
  return e;
}

// The eight corners of a box as hull vertices: the same solid as Shape::box, through the hull path.
std::vector<Vec3> box_corners(Vec3 h, Vec3 c) {
  std::vector<Vec3> v;
  for (int i = 0; i < 8; ++i)
    v.push_back({c.x + (i & 1 ? h.x : -h.x), c.y + (i & 2 ? h.y : -h.y), c.z + (i & 4 ? h.z : -h.z)});
  return v;
}

// ---- The oracle ----

Vec3d dvec(Vec3 v) {
  return {v.x, v.y, v.z};
}
double norm(Vec3d v) {
  return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
}

// p in the frame of a pose, rotating by hand: x' = c·x + s·y, y' = −s·x + c·y.
Vec3d into_frame(const Pose& pose, Vec3d p) {
  const double c = std::cos(double(pose.yaw));
  const double s = std::sin(double(pose.yaw));
  const Vec3d q{p.x - pose.position.x, p.y - pose.position.y, p.z - pose.position.z};
  return {c * q.x + s * q.y, -s * q.x + c * q.y, q.z};
}

double sdf_box(Vec3d q, Vec3d h) {
  const Vec3d a{std::abs(q.x) - h.x, std::abs(q.y) - h.y, std::abs(q.z) - h.z};
  const Vec3d out{std::max(a.x, 0.0), std::max(a.y, 0.0), std::max(a.z, 0.0)};
  return norm(out) + std::min(std::max(a.x, std::max(a.y, a.z)), 0.0);
}
// Upright cylinder, bottom centre at the origin of q.
double sdf_cylinder(Vec3d q, double r, double h) {
  const double dxy = std::hypot(q.x, q.y) - r;
  const double dz = std::max(-q.z, q.z - h);
  return std::min(std::max(dxy, dz), 0.0) + std::hypot(std::max(dxy, 0.0), std::max(dz, 0.0));
}

// Signed distance from world point p to the entity's solid; a hull is only ever a box's corners here.
double sdf(const Entity& e, Vec3d p, Vec3 hull_half = {}) {
  const Vec3d q = into_frame(e.pose, p);
  const Shape& s = e.shape;
  const Vec3d o = dvec(s.offset);
  const Vec3d r{q.x - o.x, q.y - o.y, q.z - o.z};
  switch (s.kind) {
    case ShapeKind::kSphere:
      return norm(r) - s.radius;
    case ShapeKind::kCylinder:
      return sdf_cylinder(r, s.radius, s.height);
    case ShapeKind::kBox:
      return sdf_box(r, dvec(s.half_extents));
    case ShapeKind::kHull:
      return sdf_box(r, dvec(hull_half));
    case ShapeKind::kPoint:
      break;
  }
  return INFINITY;
}

struct Entry {
  bool hit = false;
  bool start_inside = false;
  bool ambiguous = false;
  double s = 0;  // where along the motion the solid is first entered, in units of `length`
};

// First s in [0, length] with f(s) < 0, for f convex. Ambiguous when the minimum, the start or the
// entry is within kAmbiguity of deciding differently, or a miss passes within `miss_margin`.
Entry first_entry(const std::function<double(double)>& f, double length, double miss_margin = kAmbiguity) {
  Entry e;
  const double f0 = f(0);
  if (f0 < 0) {
    e.hit = e.start_inside = true;
    e.ambiguous = f0 > -kAmbiguity;
    return e;
  }
  double a = 0;
  double b = length;
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 200 && b - a > 1e-12; ++i) {
    const double c = b - g * (b - a);
    const double d = a + g * (b - a);
    if (f(c) < f(d)) {
      b = d;
    } else {
      a = c;
    }
  }
  const double s_min = (a + b) / 2;
  const double f_min = std::min(f(s_min), f(length));
  const double s_low = f(s_min) <= f(length) ? s_min : length;
  if (f_min >= 0) {
    e.ambiguous = f_min < miss_margin;
    return e;
  }
  double lo = 0;
  double hi = s_low;
  for (int i = 0; i < 200 && hi - lo > 1e-13; ++i) {
    const double mid = (lo + hi) / 2;
    (f(mid) < 0 ? hi : lo) = mid;
  }
  e.hit = true;
  e.s = hi;
  e.ambiguous = f0 < kAmbiguity || f_min > -kAmbiguity || length - hi < kAmbiguity;
  return e;
}

Vec3d along(Vec3 origin, Vec3d unit, double s) {
  return {origin.x + unit.x * s, origin.y + unit.y * s, origin.z + unit.z * s};
}

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
    const Vec3 dir = (target - origin) * float(uniform(rng, 0.2, 3));
    if (length(dir) < 1e-3f) continue;
    const float max_distance = float(length(target - origin) * uniform(rng, 0.6, 1.6) + 1);
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

Pose random_pose(std::mt19937& rng) {
  return {uniform_vec(rng, -50, 50), float(uniform(rng, -kPi, kPi))};
}

TEST(WorldRaycast, SpheresMatchTheOracle) {
  const RayCounts n = check_rays(
      [](std::mt19937& rng) {
        return make_entity(7, Shape::sphere(float(uniform(rng, 1, 40)), uniform_vec(rng, -10, 10)),
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
                           Shape::cylinder(float(uniform(rng, 1, 30)), float(uniform(rng, 1, 80)),
                                           uniform_vec(rng, -10, 10)),
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

BspTree build_level(const std::vector<Brush>& brushes) {
  BspBuildResult built = build_bsp(brushes, {});
  EXPECT_EQ(built.error, BspBuildError::kNone);
  return std::move(built.tree);
}

Entity random_convex_entity(std::mt19937& rng, EntityId id, double spread) {
  const Pose pose{{float(uniform(rng, -spread, spread)), float(uniform(rng, -spread, spread)),
                   float(uniform(rng, -40, 40))},
                  float(uniform(rng, -kPi, kPi))};
  switch (rng() % 3) {
    case 0:
      return make_entity(id, Shape::sphere(float(uniform(rng, 2, 30)), uniform_vec(rng, -5, 5)), pose);
    case 1:
      return make_entity(id, Shape::cylinder(float(uniform(rng, 2, 20)), float(uniform(rng, 5, 60))), pose);
    default:
      return make_entity(id, Shape::box(uniform_vec(rng, 2, 30), uniform_vec(rng, -5, 5)), pose);
  }
}

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
    const Vec3 origin{float(uniform(rng, -300, 300)), float(uniform(rng, -300, 300)),
                      float(uniform(rng, -40, 100))};
    const Vec3 target{float(uniform(rng, -220, 220)), float(uniform(rng, -220, 220)),
                      float(uniform(rng, -70, 40))};
    const Vec3 dir = target - origin;
    const float max_distance = length(dir) * float(uniform(rng, 0.3, 1.5));
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

// ---- Sweeps ----

// World position of a shape's anchor (centre or bottom-centre) for an entity, rotating by hand.
Vec3d anchor(const Entity& e) {
  const double c = std::cos(double(e.pose.yaw));
  const double s = std::sin(double(e.pose.yaw));
  const Vec3 o = e.shape.offset;
  return {e.pose.position.x + c * o.x - s * o.y, e.pose.position.y + s * o.x + c * o.y,
          e.pose.position.z + o.z};
}

// The separating-axis gap of two boxes turned about z: the largest gap between their projections on the
// five axes that can separate them (four horizontal face normals and z); negative exactly when the
// interiors meet. Linear in a translation per axis, so convex along a motion.
double sat_gap(Vec3d ca, Vec3d ha, double yaw_a, Vec3d cb, Vec3d hb, double yaw_b) {
  const auto reach = [](Vec3d n, Vec3d h, double yaw) {
    const double c = std::cos(yaw);
    const double s = std::sin(yaw);
    return std::abs(n.x * c + n.y * s) * h.x + std::abs(-n.x * s + n.y * c) * h.y + std::abs(n.z) * h.z;
  };
  const Vec3d axes[5] = {{std::cos(yaw_a), std::sin(yaw_a), 0},
                         {-std::sin(yaw_a), std::cos(yaw_a), 0},
                         {std::cos(yaw_b), std::sin(yaw_b), 0},
                         {-std::sin(yaw_b), std::cos(yaw_b), 0},
                         {0, 0, 1}};
  double gap = -INFINITY;
  for (const Vec3d& n : axes)
    gap = std::max(gap, std::abs(dot(n, cb - ca)) - reach(n, ha, yaw_a) - reach(n, hb, yaw_b));
  return gap;
}

// Distance-like oracle between a mover shape with its reference point at p (yaw 0) and an entity:
// exact distances for the round pairs and sphere-vs-anything, the separating-axis gap for boxes.
double pair_gap(const Shape& m, Vec3d p, const Entity& e) {
  const Vec3d mo = p + dvec(m.offset);
  if (m.kind == ShapeKind::kSphere || m.kind == ShapeKind::kPoint) return sdf(e, mo) - m.radius;
  if (m.kind == ShapeKind::kCylinder && e.shape.kind == ShapeKind::kCylinder) {
    const Vec3d bottom = anchor(e) - Vec3d{0, 0, m.height};
    return sdf_cylinder(mo - bottom, m.radius + e.shape.radius, m.height + e.shape.height);
  }
  if (m.kind == ShapeKind::kCylinder && e.shape.kind == ShapeKind::kSphere) {
    return sdf_cylinder(anchor(e) - mo, m.radius, m.height) - e.shape.radius;
  }
  return sat_gap(mo, dvec(m.half_extents), 0, anchor(e), dvec(e.shape.half_extents), e.pose.yaw);
}

struct SweepCounts {
  int hits = 0;
  int misses = 0;
  int starts_inside = 0;
  int ambiguous = 0;
};

// Random sweeps of `mover` at random entities, checked against pair_gap along the motion: the same
// hit/miss and start_solid, never later than the oracle's first contact, at most kToiSlack apart there
// (pair_gap never exceeds the distance), and a backed-off end that is clear of the entity.
SweepCounts check_sweeps(const std::function<Entity(std::mt19937&)>& make, const Shape& mover,
                         std::uint32_t seed, int count) {
  std::mt19937 rng(seed);
  const BspTree level;
  SweepCounts n;
  for (int i = 0; i < count; ++i) {
    const Entity e = make(rng);
    const Vec3 centre = to_world(e.pose, e.local_center);
    const float spread = e.bound_radius + mover.reach();
    const Vec3 from =
        centre + uniform_vec(rng, i % 10 == 0 ? -3 : -2.5 * spread, i % 10 == 0 ? 3 : 2.5 * spread);
    const Vec3 aim = centre + uniform_vec(rng, -0.8 * spread, 0.8 * spread);
    const Vec3 to = from + (aim - from) * float(uniform(rng, 0.5, 2));
    const double travel = double(length(to - from));
    if (travel < 1e-3) continue;
    const Vec3d unit = dvec(to - from) * (1 / travel);
    const auto gap = [&](double s) { return pair_gap(mover, along(from, unit, s), e); };
    const Entry want = first_entry(gap, travel, kToiSlack + kAmbiguity);
    if (want.ambiguous) {
      ++n.ambiguous;
      continue;
    }
    const WorldHit h = world_sweep(level, {&e, 1}, mover, from, to, {});
    EXPECT_EQ(h.trace.status, QueryStatus::kOk);
    EXPECT_EQ(h.trace.hit, want.hit) << "sweep " << i;
    if (h.trace.hit != want.hit) continue;
    if (!want.hit) {
      ++n.misses;
      EXPECT_EQ(h.trace.end_position, to);
      continue;
    }
    EXPECT_EQ(h.entity, e.id);
    EXPECT_EQ(h.trace.start_solid, want.start_inside) << "sweep " << i;
    if (want.start_inside) {
      ++n.starts_inside;
      EXPECT_EQ(h.trace.end_position, from);
      continue;
    }
    ++n.hits;
    const double got = double(h.trace.fraction) * travel;
    EXPECT_LE(got, want.s + kExactTolerance) << "sweep " << i;
    EXPECT_LE(gap(got), kToiSlack) << "sweep " << i;
    EXPECT_GE(gap(got), -kExactTolerance) << "sweep " << i;
    EXPECT_NEAR(length(h.trace.normal), 1.0f, 1e-4f);
    const double approach = -dot(dvec(h.trace.normal), unit);
    EXPECT_GT(approach, 0.0) << "sweep " << i;
    const Vec3d end_want = along(from, unit, std::max(0.0, got - kSurfaceBackoff / approach));
    EXPECT_LT(norm(dvec(h.trace.end_position) - end_want), 1e-3) << "sweep " << i;
    EXPECT_GT(pair_gap(mover, dvec(h.trace.end_position), e), 0.0) << "sweep " << i;
  }
  return n;
}

Entity random_round_or_box(std::mt19937& rng, int kind) {
  const Pose pose = random_pose(rng);
  if (kind == 0)
    return make_entity(11, Shape::sphere(float(uniform(rng, 2, 30)), uniform_vec(rng, -5, 5)), pose);
  if (kind == 1) {
    return make_entity(
        11, Shape::cylinder(float(uniform(rng, 2, 20)), float(uniform(rng, 5, 60)), uniform_vec(rng, -5, 5)),
        pose);
  }
  return make_entity(11, Shape::box(uniform_vec(rng, 2, 30), uniform_vec(rng, -5, 5)), pose);
}

TEST(WorldSweep, SpheresAgainstSpheresCylindersAndBoxes) {
  for (int kind = 0; kind < 3; ++kind) {
    const SweepCounts n = check_sweeps([&](std::mt19937& rng) { return random_round_or_box(rng, kind); },
                                       Shape::sphere(6, {1, -2, 3}), 600 + kind, 800);
    EXPECT_GT(n.hits, 100) << kind;
    EXPECT_GT(n.misses, 150) << kind;
    EXPECT_GT(n.starts_inside, 50) << kind;
    EXPECT_LT(n.ambiguous, 20) << kind;
  }
}

TEST(WorldSweep, CylindersAgainstCylindersAndSpheres) {
  for (int kind = 0; kind < 2; ++kind) {
    const SweepCounts n = check_sweeps([&](std::mt19937& rng) { return random_round_or_box(rng, kind); },
                                       Shape::cylinder(15, 56), 700 + kind, 800);
    EXPECT_GT(n.hits, 100) << kind;
    EXPECT_GT(n.misses, 150) << kind;
    EXPECT_GT(n.starts_inside, 50) << kind;
    EXPECT_LT(n.ambiguous, 20) << kind;
  }
}

TEST(WorldSweep, BoxesAndPointsAgainstTurnedBoxes) {
  for (const Shape& mover : {Shape::box({8, 12, 20}, {2, 0, 20}), Shape::point()}) {
    const SweepCounts n = check_sweeps([](std::mt19937& rng) { return random_round_or_box(rng, 2); }, mover,
                                       800 + int(mover.kind), 800);
    EXPECT_GT(n.hits, 100);
    EXPECT_GT(n.misses, 150);
    EXPECT_GT(n.starts_inside, 50);
    EXPECT_LT(n.ambiguous, 20);
  }
}

TEST(WorldSweep, TheLevelAndTheNearerEntityWinAndFiltersApply) {
  // A wall across x = 150 and spheres at x = 100 (player) and 200 (prop); a sphere of radius 5 sweeps +x.
  const BspTree level = build_level({brush_from_box({150, -64, -64}, {160, 64, 64})});
  const std::vector<Entity> row{make_entity(1, Shape::sphere(10), {{100, 0, 0}, 0}, kLayerPlayer),
                                make_entity(2, Shape::sphere(10), {{200, 0, 0}, 0}, kLayerProp)};
  const Shape ball = Shape::sphere(5);
  const auto sweep = [&](const QueryFilter& f) {
    return world_sweep(level, row, ball, {0, 0, 0}, {400, 0, 0}, f);
  };
  const WorldHit first = sweep({});
  EXPECT_EQ(first.entity, 1u);
  EXPECT_NEAR(first.trace.fraction * 400, 85, 1e-3);
  EXPECT_EQ(first.trace.normal, (Vec3{-1, 0, 0}));
  EXPECT_NEAR(first.trace.end_position.x, 85 - kSurfaceBackoff, 1e-3);
  const WorldHit wall = sweep({.ignore = 1});
  EXPECT_EQ(wall.entity, kNoEntity);
  EXPECT_EQ(wall.trace.brush, 0);
  EXPECT_NEAR(wall.trace.fraction * 400, 145, 1e-3);
  const WorldHit prop = sweep({.mask = kLayerProp, .level = false});
  EXPECT_EQ(prop.entity, 2u);
  EXPECT_NEAR(prop.trace.fraction * 400, 185, 1e-3);
  EXPECT_FALSE(sweep({.mask = 0, .level = false}).trace.hit);
  // Refused input, as the level refuses it.
  EXPECT_EQ(world_sweep(level, row, Shape::sphere(-1), {0, 0, 0}, {1, 0, 0}, {}).trace.status,
            QueryStatus::kInvalidShape);
  EXPECT_EQ(world_sweep(level, row, ball, {0, INFINITY, 0}, {1, 0, 0}, {}).trace.status,
            QueryStatus::kNonFiniteInput);
}

// ---- Overlaps ----

TEST(WorldOverlap, ShapesAgainstManyEntitiesMatchTheOracle) {
  std::mt19937 rng(909);
  std::vector<Entity> entities;
  for (EntityId id = 40; id >= 1; --id)  // descending in the span: the answer must still ascend
    entities.push_back(random_convex_entity(rng, id, 120));
  const BspTree level = build_level({brush_from_box({-4096, -4096, -128}, {4096, 4096, -60})});
  int found = 0;
  int checked = 0;
  for (int i = 0; i < 600; ++i) {
    const bool ball = i % 2 == 0;
    const Shape shape =
        ball ? Shape::sphere(float(uniform(rng, 1, 30))) : Shape::box(uniform_vec(rng, 1, 25));
    const Pose pose{
        {float(uniform(rng, -150, 150)), float(uniform(rng, -150, 150)), float(uniform(rng, -70, 50))},
        ball ? 0.0f : float(uniform(rng, -kPi, kPi))};
    std::vector<EntityId> want;
    bool ambiguous = false;
    for (const Entity& e : entities) {
      double g;
      if (ball) {
        g = sdf(e, dvec(pose.position)) - shape.radius;
      } else if (e.shape.kind == ShapeKind::kBox) {
        g = sat_gap(dvec(pose.position), dvec(shape.half_extents), pose.yaw, anchor(e),
                    dvec(e.shape.half_extents), e.pose.yaw);
      } else {
        continue;  // box against round: no independent oracle here; only boxes are judged
      }
      ambiguous |= std::abs(g) < kAmbiguity;
      if (g < 0) want.push_back(e.id);
    }
    if (ambiguous) continue;
    const WorldOverlap got = world_overlap(level, entities, shape, pose, {.level = false});
    std::vector<EntityId> judged;
    for (EntityId id : got.entities) {
      const Entity& e =
          *std::find_if(entities.begin(), entities.end(), [&](const Entity& x) { return x.id == id; });
      if (ball || e.shape.kind == ShapeKind::kBox) judged.push_back(id);
    }
    std::sort(want.begin(), want.end());
    EXPECT_EQ(judged, want) << "query " << i;
    EXPECT_TRUE(std::is_sorted(got.entities.begin(), got.entities.end()));
    EXPECT_EQ(got.brush, kNoBrush);
    found += int(want.size());
    ++checked;
    // With the level: the floor's top is z = −60; a shape reaching below it overlaps brush 0.
    const double bottom = pose.position.z - (ball ? shape.radius : 0.0);
    if (ball && std::abs(bottom + 60) > kAmbiguity) {
      EXPECT_EQ(world_overlap(level, entities, shape, pose, {}).brush, bottom < -60 ? 0 : kNoBrush);
    }
  }
  EXPECT_GT(checked, 500);
  EXPECT_GT(found, 200);
}

TEST(WorldOverlap, TurnedBoxesMeetTheLevelAsTurnedAndFiltersApply) {
  // A wall from x = 20: a 16-unit box at the origin clears it unturned and reaches it turned 45°
  // (corner at 16·√2 ≈ 22.6).
  const BspTree level = build_level({brush_from_box({20, -64, -64}, {40, 64, 64})});
  const Shape box = Shape::box({16, 16, 16});
  EXPECT_EQ(world_overlap(level, {}, box, {{0, 0, 0}, 0}, {}).brush, kNoBrush);
  EXPECT_EQ(world_overlap(level, {}, box, {{0, 0, 0}, kPi / 4}, {}).brush, 0);
  EXPECT_EQ(world_overlap(level, {}, box, {{0, 0, 0}, kPi / 4}, {.level = false}).brush, kNoBrush);
  // A hull turned the same way.
  const std::vector<Vec3> corners = box_corners({16, 16, 16}, {});
  EXPECT_EQ(world_overlap(level, {}, Shape::hull(corners), {{0, 0, 0}, kPi / 4}, {}).brush, 0);
  EXPECT_EQ(world_overlap(level, {}, Shape::hull(corners), {{0, 0, 0}, 0}, {}).brush, kNoBrush);
  // Touching is not overlapping: a box whose face lies on the wall's face.
  EXPECT_EQ(world_overlap(level, {}, box, {{4, 0, 0}, 0}, {}).brush, kNoBrush);
  // Turning is counter-clockwise: a long box turned +30° puts its end at (26, 15), in a block at
  // x > 20, y > 10; turned −30° its end is at (26, −15), clear of it.
  const BspTree block = build_level({brush_from_box({20, 10, -64}, {40, 40, 64})});
  const Shape bar = Shape::box({30, 2, 2});
  EXPECT_EQ(world_overlap(block, {}, bar, {{0, 0, 0}, kPi / 6}, {}).brush, 0);
  EXPECT_EQ(world_overlap(block, {}, bar, {{0, 0, 0}, -kPi / 6}, {}).brush, kNoBrush);

  const std::vector<Entity> pair{make_entity(2, Shape::sphere(10), {{0, 0, 0}, 0}, kLayerPlayer),
                                 make_entity(1, Shape::sphere(10), {{5, 0, 0}, 0}, kLayerProp)};
  const Shape probe = Shape::sphere(1);
  EXPECT_EQ(world_overlap(level, pair, probe, {{2, 0, 0}, 0}, {}).entities, (std::vector<EntityId>{1, 2}));
  EXPECT_EQ(world_overlap(level, pair, probe, {{2, 0, 0}, 0}, {.ignore = 1}).entities,
            (std::vector<EntityId>{2}));
  EXPECT_EQ(world_overlap(level, pair, probe, {{2, 0, 0}, 0}, {.mask = kLayerProp}).entities,
            (std::vector<EntityId>{1}));
  // Touching a sphere from outside is not overlapping.
  EXPECT_TRUE(world_overlap(level, pair, probe, {{-11, 0, 0}, 0}, {}).entities.empty());
  EXPECT_EQ(world_overlap(level, pair, Shape::sphere(-2), {{2, 0, 0}, 0}, {}).status,
            QueryStatus::kInvalidShape);
  EXPECT_EQ(world_overlap(level, pair, probe, {{2, 0, 0}, NAN}, {}).status, QueryStatus::kNonFiniteInput);
}

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
    const float yaw = float(uniform(rng, -kPi, kPi));
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
}  // namespace shiftcast
