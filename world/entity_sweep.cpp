// SimulationState::sweep: how every mover in a tick finds what it runs into first. The level answers with
// its BSP trace; entities near the sweep come from the grid and answer with an exact time of impact (or,
// for round movers against concave props that do not turn, the prop's own BSP trace in its frame).
#include <algorithm>
#include <cmath>

#include "world/simulation_state.hpp"

namespace shiftcast {

namespace {

// Hull vertices a turned box or hull may have for level traces; larger hulls are traced with their box.
constexpr std::size_t kMaxOrientedVertices = 256;

}  // namespace

Shape oriented_shape(const Entity& e, float yaw, std::vector<Vec3>& scratch) {
  Shape shape = e.shape;
  if (yaw == 0.0f) return shape;
  const float c = std::cos(yaw);
  const float s = std::sin(yaw);
  shape.offset = rotate_z(shape.offset, c, s);
  if (shape.kind == ShapeKind::kBox) {
    scratch.clear();
    const Vec3 h = e.shape.half_extents;
    for (int i = 0; i < 8; ++i) {
      const Vec3 corner{(i & 1) ? h.x : -h.x, (i & 2) ? h.y : -h.y, (i & 4) ? h.z : -h.z};
      scratch.push_back(rotate_z(corner + e.shape.offset, c, s));
    }
    return Shape::hull(scratch);
  }
  if (shape.kind == ShapeKind::kHull && shape.hull_vertices.size() <= kMaxOrientedVertices) {
    scratch.clear();
    for (Vec3 v : e.shape.hull_vertices)
      scratch.push_back(rotate_z(v, c, s));
    return Shape::hull(scratch);
  }
  return shape;
}

SweepHit SimulationState::sweep(const Entity& self, Vec3 from, Vec3 to, bool moving_targets,
                                std::uint32_t skip_layers, EntityId ignore) {
  SweepHit best;
  best.end = to;
  std::vector<Vec3> scratch;
  scratch.reserve(8);
  const Shape world_shape = oriented_shape(self, self.pose.yaw, scratch);
  const TraceResult level_hit = level.trace(world_shape, from, to);
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

  grid.query_sweep(from, to, self.bound_radius + length(self.local_center) + kContactDistance, ids);
  const Motion mine{{from, self.pose.yaw}, {to, self.pose.yaw}};
  for (EntityId id : ids) {
    if (id == self.id || id == ignore) continue;
    const int index = index_of(id);
    if (index < 0) continue;
    const Entity& other = entities[std::size_t(index)];
    const EntityExtra& other_extra = extras[std::size_t(index)];
    if (other_extra.dead || (other.layer & skip_layers) != 0 || !should_collide(self, other)) continue;
    const Motion theirs{moving_targets ? other_extra.start_pose : other.pose, other.pose};

    double t = 1;
    Vec3 normal{};
    Vec3 point{};
    bool hit = false;
    const bool turning = theirs.start.yaw != theirs.end.yaw;
    if (other.model != nullptr && other.model->concave && is_round(self.shape) && !turning) {
      // The prop's own tree, in its frame: the mover's motion relative to the prop is a straight line.
      const TraceResult r =
          other.model->tree.trace(self.shape, to_local(theirs.start, from), to_local(theirs.end, to));
      if (r.hit) {
        hit = true;
        t = r.fraction;
        normal = to_float(direction_to_world(theirs.end, to_double(r.normal)));
        point = to_world(theirs.end, r.end_position);
      }
    } else if (other.model != nullptr && other.model->concave) {
      // Box or hull movers, or a turning prop: the exact time of impact against each brush near the
      // motion, earliest wins.
      for (std::size_t b = 0; b < other.model->brush_vertices.size(); ++b) {
        const Shape brush = Shape::hull(other.model->brush_vertices[b]);
        const Toi toi = time_of_impact(self.shape, mine, brush, theirs, {.target_separation = kEntitySkin});
        if (toi.hit && toi.t < t) {
          hit = true;
          t = toi.t;
          normal = to_float(-toi.normal);
          point = to_float(toi.point);
        }
      }
    } else {
      const Toi toi =
          time_of_impact(self.shape, mine, other.shape, theirs, {.target_separation = kEntitySkin});
      ++last_tick.toi_searches;
      if (toi.hit) {
        hit = true;
        t = toi.t;
        normal = to_float(-toi.normal);
        point = to_float(toi.point);
      }
    }
    // Ties go to the level, then to the lower id (the ids come sorted).
    if (hit && t < best.t) {
      best.hit = true;
      best.t = t;
      best.normal = normal;
      best.point = point;
      best.end = lerp(from, to, float(t));
      best.entity = other.id;
      best.brush = kNoBrush;
      best.start_solid = false;
    }
  }
  return best;
}

void SimulationState::record(const Entity& self, const SweepHit& hit, float time, float relative_speed) {
  Contact c;
  c.time = time;
  c.a = self.id;
  c.b = hit.entity;
  c.brush = hit.entity == kNoEntity ? hit.brush : kNoBrush;
  c.point = hit.point;
  c.normal = -hit.normal;  // from the mover towards what it touched
  c.separation = hit.entity == kNoEntity ? kSurfaceBackoff : kEntitySkin;
  c.relative_speed = relative_speed;
  tracker.touch(c);
}

}  // namespace shiftcast
