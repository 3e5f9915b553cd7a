// The steps of a sweep that every mover in a tick and a client predicting its own player share: the
// level's answer (the BSP trace), one entity's answer (the bounding-sphere cull, then the exact
// sweep_against_entity, backed off like the level), and the translation of the result into the character
// motor's MotorHit. SimulationState::sweep_among (world/match/entity_sweep.cpp) runs them over the grid's
// candidates; shiftcast-sim's prediction world runs them over the players of its newest snapshot, so the
// two agree on every hit they both see.
//
//   SweepHit best = sweep_level(level, TurnedShape(shape, yaw).shape(), from, to);
//   for (const Entity& other : near)   // ascending ids: ties go to the level, then the lower id
//     if (sweep_entity_step(other, {other.pose, other.pose}, shape, yaw, from, to, best).started_near) ...
//   for (const Entity& other : started_near) if (skin_guard(other, ..., from, best)) break;
//   MotorHit hit = to_motor_hit(best);
#pragma once

#include <cstdint>

#include "collision/bsp_tree.hpp"
#include "collision/time_of_impact.hpp"
#include "world/match/character_motor.hpp"
#include "world/match/entity.hpp"

namespace shiftcast {

// A swept hit against one entity or the level, in the form every phase uses.
struct SweepHit {
  bool hit = false;
  double t = 1;   // fraction of the motion
  Vec3 normal{};  // unit, pointing back at the mover (away from what it hit)
  Vec3 point{};   // contact point
  Vec3 end{};     // where the mover stops: kSurfaceBackoff in front of what it hit
  EntityId entity = kNoEntity;
  std::int32_t brush = kNoBrush;
  bool start_solid = false;
};

// The level's answer to `shape` (already turned by the mover's yaw) moving from→to. A trace the level
// refuses (non-finite input) is a start in solid at fraction 0, which no entity can beat.
SweepHit sweep_level(const BspTree& level, const Shape& shape, Vec3 from, Vec3 to);

// What one entity's step did: whether the exact search ran (the bounding spheres meet before best.t), for
// the tick's toi_searches, and whether the mover started within the entity's bounding sphere: the
// candidates the skin guard must then look at (convex entities and concave props alike).
struct EntityStep {
  bool searched = false;
  bool started_near = false;
};

// One entity's part of a sweep: when `shape` (turned by `shape_yaw` during the motion) moving from→to meets
// `other` moving along `target` strictly before best.t, `best` becomes that hit.
EntityStep sweep_entity_step(const Entity& other, const Motion& target, const Shape& shape, float shape_yaw,
                             Vec3 from, Vec3 to, SweepHit& best);

// Run after every entity's step, over the entities the mover started near (EntityStep::started_near), in
// ascending id order, stopping at the first that fires: a move that would end nearer than kEntityRestGap
// to `other` and nearer than it started is blocked where it began (best.t = 0, best.end = from), against
// `other`. Keeps resting contacts from wearing the kEntitySkin gap down over many ticks.
bool skin_guard(const Entity& other, const Motion& target, const Shape& shape, float shape_yaw, Vec3 from,
                SweepHit& best);

// A sweep's result as the character motor reads it.
// A lower bound on the distance between `shape` at `pose` and `other` at `other_pose`, from their world
// boxes (the largest gap along an axis; 0 or less when the boxes overlap): the skin guard's cull.
double entity_box_gap(const Shape& shape, const Pose& pose, const Entity& other, const Pose& other_pose);

MotorHit to_motor_hit(const SweepHit& hit);

}  // namespace shiftcast
