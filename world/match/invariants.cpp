// The end of every tick: the grid's candidate pairs run Blow's filter cascade. Pairs within
// kContactDistance are contacts; pairs that overlap, and entities that overlap the level, break the
// invariant ("no objects interpenetrate in the steady state"). Each one is logged, counted, and the
// offender is put back at the nearest free spot: the navmesh's nearest walkable point if it is free,
// else the first free spot on rings around it (Blow's emergency routine); a projectile is removed.
//
// One overlap is not a violation: a projectile fired this tick joins where it was fired only after
// everyone moved (players.cpp), so an entity that moved into that spot since (another player walking in
// while the shooter's later commands of the same tick took it away) is inside it. The shot met that
// entity at once: it is recorded as the projectile's hit and the projectile removed, as a hit in flight.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include <spdlog/spdlog.h>

#include "collision/turned_shape.hpp"
#include "world/match/simulation_state_internal.hpp"

namespace shiftcast {

namespace {

// The re-placement search: rings of kRingDirections points every kRingStep units out to kRingMax, each
// tried at the height found and kRingLift above it.
constexpr float kRingStep = 16;
constexpr float kRingMax = 256;
constexpr int kRingDirections = 8;
constexpr float kRingLift = 24;

bool is_level_solid_for(const Entity& e) {
  // Kinematic props are part of the level's design (a door sits in its frame); only movers that the
  // tick sweeps are held to the level.
  return e.motion != PropMotion::kKinematic;
}

bool overlaps_level(SimulationState& s, const Entity& e, const Pose& pose) {
  const TurnedShape turned(e.shape, pose.yaw);
  return s.level.overlap(turned.shape(), pose.position).overlap;
}

bool spot_is_free(SimulationState& s, const Entity& e, const Pose& pose) {
  if (overlaps_level(s, e, pose)) return false;
  Entity probe = e;
  probe.pose = pose;
  Aabb box = world_box(e, pose);
  std::vector<EntityId> near;
  s.grid.query(box, near);
  for (EntityId id : near) {
    if (id == e.id) continue;
    const Entity* other = s.find(id);
    if (other == nullptr || !should_collide(e, *other)) continue;
    PairContact c;
    if (culled_hard_case(probe, *other, kEntitySkin, c)) return false;
  }
  return true;
}

// Puts `e` at the nearest free spot; false when none was found.
bool replace(SimulationState& s, std::size_t index) {
  Entity& e = s.entities[index];
  const EntityExtra& x = s.extras[index];
  // The last pose this tick started from is the nearest known-good place, if nothing took it since.
  std::array<Pose, 2> seeds{x.start_pose, {}};  // then the navmesh's nearest walkable point, if any
  int seed_count = 1;
  if (e.kind == EntityKind::kPlayer && s.nav_query) {
    if (const auto p = s.nav_query->nearest_point(e.pose.position)) {
      seeds[1] = {*p + Vec3{0, 0, kSurfaceBackoff}, e.pose.yaw};
      seed_count = 2;
    }
  }
  for (int k = 0; k < seed_count; ++k) {
    const Pose seed = seeds[std::size_t(k)];
    if (spot_is_free(s, e, seed)) {
      e.pose = seed;
      return true;
    }
  }
  const Pose centre = seeds[std::size_t(seed_count - 1)];
  for (float r = kRingStep; r <= kRingMax; r += kRingStep) {
    for (int d = 0; d < kRingDirections; ++d) {
      const float a = 2 * kPi * float(d) / float(kRingDirections);
      for (float lift : {0.0f, kRingLift}) {
        const Pose p{centre.position + Vec3{r * std::cos(a), r * std::sin(a), lift}, centre.yaw};
        if (spot_is_free(s, e, p)) {
          e.pose = p;
          return true;
        }
      }
    }
  }
  return false;
}

// The index of the pair's projectile that was fired this tick and has not flown yet, else -1.
int fired_this_tick(const SimulationState& s, int ia, int ib) {
  for (int i : {ia, ib}) {
    const std::size_t k = std::size_t(i);
    if (s.entities[k].kind == EntityKind::kProjectile && s.extras[k].age_ticks == 0) return i;
  }
  return -1;
}

// `normal` unit, from the projectile towards `target`; `point` on the way between them.
void record_point_blank_hit(SimulationState& s, std::size_t shot, const Entity& target, Vec3 point,
                            Vec3 normal) {
  Entity& p = s.entities[shot];
  // As a hit in flight (projectiles.cpp): the normal given back at the mover, the closing speed along it.
  s.record_touch(p.id, target.id, kNoBrush, point, -normal, 1.0f, dot(p.velocity - target.velocity, normal));
  s.extras[shot].dead = true;
  ++s.counters.projectile_hits;
  ++s.last_tick.projectile_hits;
  ++s.counters.point_blank_hits;
}

void handle_violation(SimulationState& s, std::size_t index, const std::string& what) {
  Entity& e = s.entities[index];
  ++s.counters.invariant_violations;
  ++s.last_tick.invariant_violations;
  const Vec3 was = e.pose.position;
  if (e.kind == EntityKind::kProjectile) {
    s.extras[index].dead = true;  // a projectile is not worth a search: it is removed
    spdlog::warn("tick {}: {} {} overlapped {} at ({:.2f} {:.2f} {:.2f}); removed", s.tick + 1,
                 to_string(e.kind), e.id, what, was.x, was.y, was.z);
    return;
  }
  if (replace(s, index)) {
    ++s.counters.replacements;
    ++s.last_tick.replacements;
    e.velocity = {};
    if (e.kind == EntityKind::kPlayer) s.extras[index].motor.velocity = {};
    s.place_in_grid(e, e.pose);
    spdlog::warn(
        "tick {}: {} {} overlapped {} at ({:.2f} {:.2f} {:.2f}); re-placed at ({:.2f} {:.2f} {:.2f})",
        s.tick + 1, to_string(e.kind), e.id, what, was.x, was.y, was.z, e.pose.position.x, e.pose.position.y,
        e.pose.position.z);
  } else {
    ++s.counters.replacement_failures;
    if (e.kind != EntityKind::kPlayer) s.extras[index].dead = true;
    spdlog::warn("tick {}: {} {} overlapped {} at ({:.2f} {:.2f} {:.2f}); no free spot found", s.tick + 1,
                 to_string(e.kind), e.id, what, was.x, was.y, was.z);
  }
}

}  // namespace

void check_pairs_and_invariants(SimulationState& s) {
  FilterStats stats;
  // Each entity's bounding-sphere centre once, for all of its pairs (stage 1 of the cascade).
  s.centres.resize(s.entities.size());
  for (std::size_t i = 0; i < s.entities.size(); ++i)
    s.centres[i] = bounding_centre(s.entities[i]);
  s.grid.pairs(s.pairs);
  s.last_tick.candidate_pairs = int(s.pairs.size());
  for (const auto& [id_a, id_b] : s.pairs) {
    const int ia = s.index_of(id_a);
    const int ib = s.index_of(id_b);
    if (ia < 0 || ib < 0 || s.extras[std::size_t(ia)].dead || s.extras[std::size_t(ib)].dead) continue;
    const Entity& a = s.entities[std::size_t(ia)];
    const Entity& b = s.entities[std::size_t(ib)];
    if ((a.asleep && b.asleep) || !should_collide(a, b)) continue;
    if (a.motion == PropMotion::kKinematic && b.motion == PropMotion::kKinematic) continue;
    PairContact c;
    if (!s.cascade.test(a, s.centres[std::size_t(ia)], b, s.centres[std::size_t(ib)], c, stats)) continue;
    if (c.overlapping) {
      if (const int shot = fired_this_tick(s, ia, ib); shot >= 0) {
        const bool shot_is_a = shot == ia;
        record_point_blank_hit(s, std::size_t(shot), shot_is_a ? b : a, c.point,
                               shot_is_a ? c.normal : -c.normal);
        continue;
      }
      // Move the one the tick is allowed to move: never a kinematic prop; between equals the higher id.
      const bool move_a =
          b.motion == PropMotion::kKinematic || (a.motion != PropMotion::kKinematic && ia > ib);
      const std::size_t moved = std::size_t(move_a ? ia : ib);
      const Entity& other = move_a ? b : a;
      handle_violation(s, moved, fmt::format("{} {}", to_string(other.kind), other.id));
      s.centres[moved] = bounding_centre(s.entities[moved]);  // its later pairs see where it went
      continue;
    }
    Contact contact;
    contact.time = 1;  // found at the end of the tick
    contact.a = a.id;
    contact.b = b.id;
    contact.point = c.point;
    contact.normal = c.normal;
    contact.separation = c.separation;
    contact.relative_speed = dot(a.velocity - b.velocity, c.normal);
    s.tracker.touch(contact);
  }
  s.counters.filters.add(stats);

  const int period = s.config.level_check_period;
  if (period <= 0) return;
  for (std::size_t i = 0; i < s.entities.size(); ++i) {
    const Entity& e = s.entities[i];
    if (s.extras[i].dead || e.asleep || !is_level_solid_for(e)) continue;
    if (period > 1 && (e.id + s.tick) % std::uint64_t(period) != 0) continue;
    if (overlaps_level(s, e, e.pose)) handle_violation(s, i, std::string("the level"));
  }
}

int Simulation::count_overlaps_brute_force() const {
  SimulationState& s = *state_;
  int count = 0;
  for (std::size_t i = 0; i < s.entities.size(); ++i) {
    const Entity& a = s.entities[i];
    if (is_level_solid_for(a) && overlaps_level(s, a, a.pose)) ++count;
    for (std::size_t j = i + 1; j < s.entities.size(); ++j) {
      const Entity& b = s.entities[j];
      if (!should_collide(a, b)) continue;
      if (a.motion == PropMotion::kKinematic && b.motion == PropMotion::kKinematic) continue;
      PairContact c;
      if (hard_case(a, b, 0, c) && c.overlapping) ++count;
    }
  }
  return count;
}

}  // namespace shiftcast
