// Kinematic props: doors, lifts and platforms follow their paths. They move first in a tick, so players
// and crates see them where they are going. A player or crate standing on one is carried with it (its
// feet keep their place in the prop's frame); one the prop would move into is pushed the same way.
// Every carry and push is a sweep, so nobody is pushed into a wall; when a push cannot complete, the
// prop does not move this tick (a blocked door, as in Quake) and the block is counted.
#include <algorithm>
#include <cmath>

#include "world/match/simulation_state_internal.hpp"

namespace shiftcast {

namespace {

bool is_pushable(const Entity& e) {
  return e.kind == EntityKind::kPlayer || (e.kind == EntityKind::kProp && e.motion == PropMotion::kCrate);
}

}  // namespace

void move_kinematic_props(SimulationState& s) {
  const double end_time = double(s.tick + 1) * double(s.dt);
  std::vector<PushedEntity>& moved = s.pushed;
  for (std::size_t i = 0; i < s.entities.size(); ++i) {
    if (s.entities[i].motion != PropMotion::kKinematic) continue;
    const Pose before = s.entities[i].pose;
    const Pose target = s.extras[i].path.at(end_time - s.extras[i].path_start);
    if (target == before) continue;

    Aabb swept = world_box(s.entities[i], before);
    swept.grow(world_box(s.entities[i], target));
    const Vec3 reach{kContactDistance, kContactDistance, s.config.motor.ground_probe + kContactDistance};
    swept.min -= reach;
    swept.max += reach;
    s.grid.query(swept, s.mover_candidates);

    s.entities[i].pose = target;
    const Entity prop = s.entities[i];
    moved.clear();
    bool blocked = false;
    for (EntityId id : s.mover_candidates) {
      const int j = s.index_of(id);
      if (j < 0 || std::size_t(j) == i) continue;
      Entity& other = s.entities[std::size_t(j)];
      EntityExtra& ox = s.extras[std::size_t(j)];
      if (!is_pushable(other) || !should_collide(prop, other)) continue;
      const bool rider =
          other.kind == EntityKind::kPlayer && ox.motor.on_ground && ox.motor.ground_entity == prop.id;
      PairContact contact;
      if (!rider && !culled_hard_case(prop, other, kEntitySkin, contact)) continue;  // not in the way
      // Carried along: the reference point keeps its place in the prop's frame; riders also turn with it.
      const Vec3 carried = to_world(target, to_local(before, other.pose.position));
      const SweepHit h = s.sweep(other, other.pose.position, carried, false, kLayerProjectile, prop.id);
      moved.push_back({std::size_t(j), other.pose});
      other.pose.position = h.end;
      if (rider) other.pose.yaw += target.yaw - before.yaw;
      other.asleep = false;
      s.extras[std::size_t(j)].rest_ticks = 0;
      PairContact after;
      if (culled_hard_case(prop, other, 0, after) && after.overlapping) {
        blocked = true;
        break;
      }
    }
    if (blocked) {
      s.entities[i].pose = before;
      for (const PushedEntity& m : moved)
        s.entities[m.index].pose = m.before;
      ++s.counters.blocked_movers;
      continue;
    }
    s.entities[i].velocity = (target.position - before.position) * (1.0f / s.dt);
    s.entities[i].yaw_rate = (target.yaw - before.yaw) / s.dt;
    s.place_in_grid(s.entities[i], before);
    for (const PushedEntity& m : moved)
      s.place_in_grid(s.entities[m.index], m.before);
  }
}

}  // namespace shiftcast
