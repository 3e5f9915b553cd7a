// SimulationState::sweep: how every mover in a tick finds what it runs into first. The level answers with
// its BSP trace (sweep_level); entities near the sweep come from the grid and answer through
// sweep_entity_step over sweep_against_entity, the same per-entity step world_sweep uses, so a mover in the
// tick and a query over RPC agree on every hit. The steps are public (world/match/entity_sweep.hpp) so a
// client's prediction (shiftcast-sim) runs the very same code against the players it knows.
#include <algorithm>
#include <cmath>
#include <limits>

#include "collision/turned_shape.hpp"
#include "world/match/entity_sweep.hpp"
#include "world/match/simulation_state_internal.hpp"

namespace shiftcast {

namespace {

bool convex_target(const Entity& e) {
  return e.model == nullptr || !e.model->concave;
}

// The distance from `shape` at `pose` to `other` at `other_pose`: the narrow phase's for a convex entity;
// for a concave prop, the least over its brushes whose boxes come within the guard's reach of the shape
// (the distance to a union of convex parts is the least of the distances to the parts). A brush farther
// than kEntityRestGap cannot decide the guard, so brushes beyond it are skipped; when none is near, the
// answer is "at least kEntityRestGap" (the guard then lets the move be).
ShapeDistance distance_to_entity(const Shape& shape, const Pose& pose, const Entity& other,
                                 const Pose& other_pose) {
  if (convex_target(other)) return shape_distance(shape, pose, other.shape, other_pose);
  const PropModel& model = *other.model;
  const Vec3d local = to_local(other_pose, to_double(pose.position));
  const double reach = double(shape.reach()) + double(kEntityRestGap);
  ShapeDistance best;
  best.distance = double(kEntityRestGap);
  for (std::size_t k = 0; k < model.brush_vertices.size(); ++k) {
    const Aabb& b = model.brush_boxes[k];
    if (double(b.min.x) > local.x + reach || double(b.min.y) > local.y + reach ||
        double(b.min.z) > local.z + reach || double(b.max.x) < local.x - reach ||
        double(b.max.y) < local.y - reach || double(b.max.z) < local.z - reach) {
      continue;
    }
    const ShapeDistance d = shape_distance(shape, pose, Shape::hull(model.brush_vertices[k]), other_pose);
    if (d.status != QueryStatus::kOk) return d;
    if (d.distance < best.distance) best = d;
  }
  return best;
}

// The skin guard asks GJK only about neighbours whose boxes are nearer than this at the end of the move:
// a rest gap, plus a margin far above GJK's rounding, so a skipped neighbour is one GJK would have found
// at least a rest gap away: the guard decides exactly as if it had asked.
inline constexpr double kSkinGuardBoxMargin = double(kBoundsSlack);

}  // namespace

SweepHit SimulationState::sweep(const Entity& self, Vec3 from, Vec3 to, bool moving_targets,
                                std::uint32_t skip_layers, EntityId ignore) {
  grid.query_sweep(from, to, self.bound_radius + length(self.local_center) + kContactDistance, near);
  return sweep_among(self, from, to, moving_targets, skip_layers, ignore, near);
}

SweepHit SimulationState::sweep_among(const Entity& self, Vec3 from, Vec3 to, bool moving_targets,
                                      std::uint32_t skip_layers, EntityId ignore,
                                      std::span<const EntityId> candidates) {
  SweepHit best = sweep_level(level, TurnedShape(self.shape, self.pose.yaw).shape(), from, to);
  // A start in solid at fraction 0 is final: no entity can be met earlier.
  if (best.start_solid && best.t == 0) return best;
  near_start.clear();
  for (EntityId id : candidates) {
    if (id == self.id || id == ignore) continue;
    const int index = index_of(id);
    if (index < 0) continue;
    const Entity& other = entities[std::size_t(index)];
    const EntityExtra& other_extra = extras[std::size_t(index)];
    if (other_extra.dead || (other.layer & skip_layers) != 0 || !should_collide(self, other)) continue;
    const Motion target{moving_targets ? other_extra.start_pose : other.pose, other.pose};
    const EntityStep step = sweep_entity_step(other, target, self.shape, self.pose.yaw, from, to, best);
    if (step.searched) ++last_tick.toi_searches;
    if (step.started_near) near_start.push_back(std::size_t(index));
  }
  for (std::size_t index : near_start) {
    const Entity& other = entities[index];
    const Motion target{moving_targets ? extras[index].start_pose : other.pose, other.pose};
    if (skin_guard(other, target, self.shape, self.pose.yaw, from, best)) {
      ++last_tick.skin_guards;
      ++counters.skin_guards;
      break;
    }
  }
  return best;
}

SweepHit sweep_level(const BspTree& level, const Shape& shape, Vec3 from, Vec3 to) {
  SweepHit best;
  best.end = to;
  const TraceResult level_hit = level.trace(shape, from, to);
  if (level_hit.status != QueryStatus::kOk) {
    best.hit = true;
    best.t = 0;
    best.start_solid = true;
    best.end = from;
    return best;
  }
  if (level_hit.hit) {
    best.hit = true;
    best.t = level_hit.fraction;
    best.normal = level_hit.normal;
    best.point = level_hit.end_position;
    best.end = level_hit.end_position;
    best.brush = level_hit.brush;
    best.start_solid = level_hit.start_solid;
  }
  return best;
}

EntityStep sweep_entity_step(const Entity& other, const Motion& target, const Shape& shape, float shape_yaw,
                             Vec3 from, Vec3 to, SweepHit& best) {
  const double entry = bounding_entry(other, target, shape, from, to);
  EntityStep step;
  step.started_near = entry == 0.0;
  if (entry < 0.0 || !(entry < best.t)) return step;
  step.searched = true;
  const EntitySweep h = sweep_against_entity(other, target, shape, shape_yaw, from, to, entry == 0.0);
  // Ties go to what came first: the level, then the lower id (callers pass ascending ids).
  if (!h.hit || !(h.fraction < best.t)) return step;
  const Vec3d delta = to_double(to) - to_double(from);
  best.hit = true;
  best.t = h.fraction;
  best.normal = to_float(h.normal);
  best.point = to_float(h.point);
  best.end = h.start_solid ? from : backed_off_end(to_double(from), delta, h.fraction, h.normal);
  best.entity = other.id;
  best.brush = kNoBrush;
  best.start_solid = h.start_solid;
  return step;
}

bool skin_guard(const Entity& other, const Motion& target, const Shape& shape, float shape_yaw, Vec3 from,
                SweepHit& best) {
  // The skin guard. time_of_impact lets a pair that rests in contact (sliding along each other) close by
  // up to kToiRestingDepth per sweep, and the float end position rounds by up to half a unit in the last
  // place (1.2e-4 at 1,600 units): tick after tick of pressing against a neighbour wears the kEntitySkin
  // gap down until a rounding puts the two inside each other (the load ladder's rare player-player
  // overlap, found by replaying its recording: docs/replay.md). So a move may not end nearer than
  // kEntityRestGap to an entity it started near unless it ends no nearer than it started; such a move
  // is blocked where it began, against that entity, and the motor slides (and nudges) off it as off any
  // other contact.
  if (best.start_solid || !(best.t > 0.0)) return false;
  if (entity_box_gap(shape, {best.end, shape_yaw}, other, target.end) >=
      double(kEntityRestGap) + kSkinGuardBoxMargin)
    return false;
  const ShapeDistance at_end = distance_to_entity(shape, {best.end, shape_yaw}, other, target.end);
  if (at_end.status != QueryStatus::kOk || at_end.distance >= double(kEntityRestGap)) return false;
  const ShapeDistance at_start = distance_to_entity(shape, {from, shape_yaw}, other, target.start);
  if (at_start.status != QueryStatus::kOk || at_end.distance >= at_start.distance) return false;
  best.hit = true;
  best.t = 0;
  best.end = from;
  // at_start.normal points from the mover towards the other entity; the hit normal points back.
  best.normal = at_start.normal == Vec3d{} ? Vec3{} : to_float(-at_start.normal);
  best.point = to_float(at_start.point_b);
  best.entity = other.id;
  best.brush = kNoBrush;
  return true;
}

// A lower bound on the distance between `shape` posed at `pose` and `other` at `other_pose`: how far apart
// their world boxes are along the axis that separates them most (0 or less when the boxes overlap). The
// other's box is its grown bound (kBoundsSlack), so the bound holds whatever the rounding of its pose.
double entity_box_gap(const Shape& shape, const Pose& pose, const Entity& other, const Pose& other_pose) {
  const Aabb box = world_box(other, other_pose);
  const double c = std::cos(double(pose.yaw)), s = std::sin(double(pose.yaw));
  double gap = -std::numeric_limits<double>::infinity();
  for (int axis = 0; axis < 3; ++axis) {
    Vec3d world{};
    world[axis] = 1;
    // The world axis in the shape's own frame (turned back by its yaw).
    const Vec3d local{c * world.x + s * world.y, -s * world.x + c * world.y, world.z};
    const double hi = double(pose.position[axis]) + shape.support(local);
    const double lo = double(pose.position[axis]) - shape.support(-local);
    gap = std::max({gap, double(box.min[axis]) - hi, lo - double(box.max[axis])});
  }
  return gap;
}

MotorHit to_motor_hit(const SweepHit& h) {
  MotorHit m;
  m.entity = h.entity;
  m.trace.hit = h.hit;
  m.trace.start_solid = h.start_solid;
  m.trace.all_solid = h.start_solid && h.t == 0;
  m.trace.fraction = float(h.t);
  m.trace.end_position = h.end;
  m.trace.normal = h.normal;
  m.trace.brush = h.brush;
  return m;
}

void SimulationState::record(const Entity& self, const SweepHit& hit, float time, float relative_speed) {
  record_touch(self.id, hit.entity, hit.brush, hit.point, hit.normal, time, relative_speed);
}

void SimulationState::record_touch(EntityId mover, EntityId other, std::int32_t brush, Vec3 point,
                                   Vec3 normal, float time, float relative_speed) {
  Contact c;
  c.time = time;
  c.a = mover;
  c.b = other;
  c.brush = other == kNoEntity ? brush : kNoBrush;
  c.point = point;
  c.normal = -normal;              // from the mover towards what it touched
  c.separation = kSurfaceBackoff;  // every stop is backed off this far
  c.relative_speed = relative_speed;
  tracker.touch(c);
  if (Entity* touched = find(other); touched != nullptr && touched->asleep) touched->asleep = false;
}

}  // namespace shiftcast
