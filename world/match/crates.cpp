// Crates: props that fall under gravity, land without bouncing, slide off slopes steeper than a floor,
// and sleep once they have not moved for SimulationConfig::sleep_ticks, until something touches them.
#include <cmath>

#include "world/match/simulation_state_internal.hpp"

namespace shiftcast {

namespace {

// A landing surface whose normal is at least this steep up is a floor (Quake's MIN_WALK_NORMAL): the crate
// stops there; on anything steeper it slides.
constexpr float kFloorNormalZ = 0.7f;
// Moving less than this in a tick counts as resting (units): well below what a player could see.
constexpr float kRestDistance = 0.01f;
// Slide iterations per tick: floor, wall, crease.
constexpr int kMaxSlides = 3;

}  // namespace

void move_crates(SimulationState& s) {
  s.sleepers.clear();
  for (std::size_t i = 0; i < s.entities.size(); ++i) {
    Entity& e = s.entities[i];
    EntityExtra& x = s.extras[i];
    if (e.motion != PropMotion::kCrate) continue;
    if (e.asleep) {
      s.sleepers.push_back(e.id);  // ascending: the loop runs in id order
      continue;
    }
    e.velocity.z -= s.config.crate_gravity * s.dt;
    Vec3 from = e.pose.position;
    Vec3 to = from + e.velocity * s.dt;
    float time = 0;
    for (int slide = 0; slide < kMaxSlides; ++slide) {
      // Against everyone's end-of-tick pose: where the crate stops must be free when the tick ends.
      const SweepHit h = s.sweep(e, from, to, false, kLayerProjectile);
      if (!h.hit) {
        from = to;
        break;
      }
      const float speed_into = -dot(e.velocity, h.normal);
      time += (1 - time) * float(h.t);
      s.record(e, h, time, speed_into);
      const Vec3 remaining = (to - h.end);
      from = h.end;
      if (h.normal.z >= kFloorNormalZ || h.start_solid) {
        e.velocity = {};
        break;
      }
      e.velocity -= h.normal * dot(e.velocity, h.normal);
      to = from + (remaining - h.normal * dot(remaining, h.normal));
    }
    e.pose.position = from;
    if (length(e.pose.position - x.start_pose.position) < kRestDistance) {
      if (++x.rest_ticks >= s.config.sleep_ticks) {
        e.asleep = true;
        e.velocity = {};
      }
    } else {
      x.rest_ticks = 0;
    }
    s.place_in_grid(e, x.start_pose);
  }
  s.tracker.keep_alive(s.sleepers);
}

}  // namespace shiftcast
