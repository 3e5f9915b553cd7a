// Projectiles: spheres up to SimulationConfig::max_speed (10,000 units/s: 500 units a tick at 20 Hz). Each
// finds the first thing its sweep meets: the level through the BSP trace, entities found by walking the
// grid along the sweep (every mover's cells already cover its whole motion this tick: its speedbox),
// each with an exact time of impact against that entity's own motion. Hits are then resolved in
// time-of-impact order; a projectile that hits stops there and is removed (it exploded).
#include <algorithm>
#include <cmath>

#include "world/match/simulation_state_internal.hpp"

namespace shiftcast {

namespace {

// Projectiles this far outside the level's bounds have left the world for good.
constexpr float kEscapeMargin = 4096;

}  // namespace

void move_projectiles(SimulationState& s) {
  const int lifetime_ticks = int(std::lround(s.config.projectile_lifetime * float(s.config.tick_rate)));
  Aabb world = s.level.bounds();
  world.min -= Vec3{kEscapeMargin, kEscapeMargin, kEscapeMargin};
  world.max += Vec3{kEscapeMargin, kEscapeMargin, kEscapeMargin};
  std::vector<PendingHit>& hits = s.pending_hits;
  hits.clear();
  for (std::size_t i = 0; i < s.entities.size(); ++i) {
    Entity& e = s.entities[i];
    EntityExtra& x = s.extras[i];
    if (e.kind != EntityKind::kProjectile || x.dead) continue;
    if (++x.age_ticks > lifetime_ticks || !world.contains(e.pose.position)) {
      x.dead = true;
      continue;
    }
    e.velocity.z -= s.config.projectile_gravity * s.dt;
    const float speed = length(e.velocity);
    if (!(speed <= s.config.max_speed)) {
      ++s.counters.speed_clamps;
      e.velocity = std::isfinite(speed) ? e.velocity * (s.config.max_speed / speed) : Vec3{};
    }
    const Vec3 from = e.pose.position;
    const Vec3 to = from + e.velocity * s.dt;
    const SweepHit h = s.sweep(e, from, to, true);
    if (h.hit) {
      hits.push_back({h.t, e.id, i, h});
    } else {
      e.pose.position = to;
      s.place_in_grid(e, x.start_pose);
    }
  }
  // Time-of-impact order (ties by id): projectiles do not meet each other, so the order decides only the
  // order contacts are recorded in, and keeps it independent of array order.
  std::sort(hits.begin(), hits.end(),
            [](const PendingHit& a, const PendingHit& b) { return a.t != b.t ? a.t < b.t : a.id < b.id; });
  for (const PendingHit& p : hits) {
    Entity& e = s.entities[p.index];
    e.pose.position = p.hit.end;
    float closing = -dot(e.velocity, p.hit.normal);
    if (const Entity* other = s.find(p.hit.entity); other != nullptr) {
      closing += dot(other->velocity, p.hit.normal);
    }
    s.record(e, p.hit, float(p.t), closing);
    s.extras[p.index].dead = true;
    ++s.counters.projectile_hits;
    ++s.last_tick.projectile_hits;
  }
}

}  // namespace shiftcast
