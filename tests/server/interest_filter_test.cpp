// The interest filter (server/interest_filter.hpp) against its definition computed directly: a grid of
// cells built as a real PotentiallyVisibleSet (tests/server/interest_grid.hpp), and an oracle that finds
// cells by arithmetic and tests visibility against the random matrix the set was built from. Random
// viewers and entities (players, props, projectiles, some outside the grid) over two snapshots, so
// projectiles have a path from where they were to where they are.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "server/interest_filter.hpp"
#include "tests/server/interest_grid.hpp"

namespace shiftcast {
namespace {

using interest_test::GridSet;
using interest_test::make_grid_set;

constexpr float kCell = 256;
constexpr int kCellsX = 6, kCellsY = 5;
constexpr float kPeriod = 1.0f / 32;

Entity make_entity(EntityId id, EntityKind kind, Vec3 position, Vec3 velocity) {
  Entity e;
  e.id = id;
  e.kind = kind;
  e.shape = kind == EntityKind::kPlayer       ? Shape::cylinder(15, 56)
            : kind == EntityKind::kProjectile ? Shape::sphere(4)
                                              : Shape::box({32, 24, 16});
  e.pose = Pose{position, 0.3f};
  e.velocity = velocity;
  compute_entity_bounds(e);
  return e;
}

// Uniform over the grid and a margin around it (so some eyes and entities are outside every cell).
Vec3 random_point(std::mt19937& rng) {
  std::uniform_real_distribution<float> x(-200, kCellsX * kCell + 200), y(-200, kCellsY * kCell + 200),
      z(-64, 256);
  return {x(rng), y(rng), z(rng)};
}

double squared_distance(Vec3 p, const Aabb& b) {
  double s = 0;
  for (int i = 0; i < 3; ++i) {
    const double v = p[i], lo = b.min[i], hi = b.max[i];
    const double d = v < lo ? lo - v : v > hi ? v - hi : 0;
    s += d * d;
  }
  return s;
}

// The definition: own entity; within the radius of the eye; an eye the set cannot place; a box touching
// a seen cell (or no cell); a projectile whose path since the previous snapshot crosses a seen cell.
bool oracle_sends(const GridSet& g, double radius, EntityId viewer, Vec3 eye, const Entity& e, Vec3 from) {
  if (e.id == viewer) return true;
  const Aabb box = world_box(e, e.pose);
  if (squared_distance(eye, box) <= radius * radius) return true;
  const std::int32_t c = g.cell_of(eye.x, eye.y);
  if (g.sees_any(c, g.cells_of(box))) return true;
  return e.kind == EntityKind::kProjectile && g.sees_any(c, g.cells_of(from, e.pose.position));
}

struct World {
  std::vector<Entity> entities;  // ascending id
  std::map<EntityId, Vec3> previous;
};

TEST(InterestFilter, SendsWhatTheDefinitionSaysOnARandomGrid) {
  const GridSet g = make_grid_set(kCellsX, kCellsY, kCell, 0.3, 5);
  InterestSettings settings;
  settings.radius = 300;
  InterestFilter filter(settings, g.set);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> speed(-900, 900);
  std::uniform_int_distribution<int> kind(0, 2);
  std::map<EntityId, Vec3> previous;  // projectiles at the previous snapshot
  std::vector<std::uint32_t> kept;
  std::size_t sent = 0, culled = 0, by_path = 0;
  EntityId next_id = 1;
  std::vector<Entity> entities;
  for (int snapshot = 0; snapshot < 60; ++snapshot) {
    // Half the entities move on (projectiles keep their ids, so they have a path), half are new.
    std::vector<Entity> next;
    for (const Entity& e : entities)
      if (rng() % 2 == 0) {
        next.push_back(make_entity(e.id, e.kind, random_point(rng), {speed(rng), speed(rng), 0}));
      }
    while (next.size() < 40) {
      next.push_back(make_entity(next_id++, EntityKind(kind(rng)), random_point(rng),
                                 {speed(rng), speed(rng), speed(rng)}));
    }
    std::map<EntityId, Vec3> now;
    for (const Entity& e : next)
      if (e.kind == EntityKind::kProjectile) now[e.id] = e.pose.position;
    entities = std::move(next);
    filter.begin_snapshot(entities, kPeriod);
    for (int v = 0; v < 16; ++v) {
      const Entity& me = entities[rng() % entities.size()];
      if (me.kind != EntityKind::kPlayer) continue;
      const InterestViewer viewer = filter.viewer(me.id, &me);
      const Vec3 eye = me.pose.position + Vec3{0, 0, kInterestEyeHeight};
      EXPECT_EQ(viewer.cluster, g.cell_of(eye.x, eye.y));
      filter.select(viewer, kept);
      std::vector<std::uint32_t> expected;
      for (std::size_t i = 0; i < entities.size(); ++i) {
        const Entity& e = entities[i];
        const auto was = previous.find(e.id);
        const Vec3 from = was != previous.end() ? was->second : e.pose.position - e.velocity * kPeriod;
        if (oracle_sends(g, settings.radius, me.id, eye, e, from)) {
          expected.push_back(std::uint32_t(i));
          if (e.kind == EntityKind::kProjectile &&
              !g.sees_any(g.cell_of(eye.x, eye.y), g.cells_of(world_box(e, e.pose))) &&
              squared_distance(eye, world_box(e, e.pose)) > settings.radius * settings.radius)
            ++by_path;
        }
      }
      ASSERT_EQ(kept, expected) << "snapshot " << snapshot << ", viewer " << me.id;
      sent += kept.size();
      culled += entities.size() - kept.size();
    }
    previous = std::move(now);
  }
  // The case mix is what makes the comparison mean something: many entities of both outcomes, and
  // projectiles sent only for their path.
  EXPECT_GT(sent, 1000u);
  EXPECT_GT(culled, 1000u);
  EXPECT_GT(by_path, 10u);
}

TEST(InterestFilter, WithoutASetDistanceAloneDecides) {
  const PotentiallyVisibleSet none;
  std::mt19937 rng(3);
  std::vector<Entity> entities;
  for (EntityId id = 1; id <= 60; ++id)
    entities.push_back(make_entity(id, EntityKind(id % 3), random_point(rng), {}));
  std::vector<std::uint32_t> kept;
  for (const double no_set_radius : {0.0, 700.0}) {
    InterestSettings settings;
    settings.radius = 300;
    settings.no_set_radius = no_set_radius;
    InterestFilter filter(settings, none);
    filter.begin_snapshot(entities, kPeriod);
    std::size_t culled = 0;
    for (const Entity& me : entities) {
      if (me.kind != EntityKind::kPlayer) continue;
      filter.select(filter.viewer(me.id, &me), kept);
      const Vec3 eye = me.pose.position + Vec3{0, 0, kInterestEyeHeight};
      std::vector<std::uint32_t> expected;
      for (std::size_t i = 0; i < entities.size(); ++i)
        if (no_set_radius == 0 || entities[i].id == me.id ||
            squared_distance(eye, world_box(entities[i], entities[i].pose)) <= no_set_radius * no_set_radius)
          expected.push_back(std::uint32_t(i));
      ASSERT_EQ(kept, expected) << "no_set_radius " << no_set_radius << ", viewer " << me.id;
      culled += entities.size() - kept.size();
    }
    if (no_set_radius == 0) {
      EXPECT_EQ(culled, 0u);
    } else {
      EXPECT_GT(culled, 100u);
    }
  }
}

TEST(InterestFilter, DisabledOrUnplacedSendsEverything) {
  const GridSet g = make_grid_set(kCellsX, kCellsY, kCell, 0.0, 9);  // each cell sees only itself
  std::vector<Entity> entities;
  for (EntityId id = 1; id <= 30; ++id)
    entities.push_back(make_entity(id, EntityKind::kPlayer, {id * 50.0f, 100, 0}, {}));
  std::vector<std::uint32_t> kept;
  InterestSettings off;
  off.enabled = 0;
  InterestFilter disabled(off, g.set);
  disabled.begin_snapshot(entities, kPeriod);
  disabled.select(disabled.viewer(1, &entities[0]), kept);
  EXPECT_EQ(kept.size(), entities.size());
  InterestFilter on({}, g.set);
  on.begin_snapshot(entities, kPeriod);
  on.select(on.viewer(1, &entities[0]), kept);
  EXPECT_LT(kept.size(), entities.size());  // the far end of the row is in cells the first cannot see
  on.select(on.viewer(99, nullptr), kept);  // not spawned yet
  EXPECT_EQ(kept.size(), entities.size());
}

}  // namespace
}  // namespace shiftcast
