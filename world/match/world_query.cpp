// World queries: the level's own answer (BspTree) merged with the entities', nearest first.
//
// Per entity, after a bounding-sphere cull:
//   rays    spheres, cylinders and boxes in closed form in the entity's frame (the chord of the ray
//           through the open solid, as an intersection of slabs and discs); hulls by time_of_impact of a
//           point; concave props by the prop's own BSP raycast in its frame.
//   sweeps  convex entities by time_of_impact (the swept shape keeps its world orientation, the entity
//           stays at its pose); concave props by the prop's BSP trace in its frame for round shapes, and
//           by time_of_impact against each brush's hull for boxes and hulls. time_of_impact runs at
//           separation 0 and counts a pass within its tolerance as a hit: conservative, like the level.
//   overlap the same tests as the sweeps: shape_distance (strict interpenetration) for convex entities
//           and for boxes and hulls against each brush of a concave prop, the prop's BSP for round shapes,
//           so a shape a sweep stopped short of an entity never overlaps it here.
//
// Results follow collision/trace_result.hpp for entities too: touching is not a hit, a start inside an
// entity's interior is start_solid at fraction 0, and end_position is backed off kSurfaceBackoff in front
// of the contact plane along the motion, as the level does. brush is kNoBrush for every entity hit,
// concave props included (their brush ids name the model's brushes, not the level's).
#include "world/match/world_query.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "collision/narrow_phase.hpp"
#include "collision/time_of_impact.hpp"
#include "collision/turned_shape.hpp"
#include "world/match/prop_model.hpp"

namespace shiftcast {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool tested(const Entity& e, const QueryFilter& filter) {
  return (e.layer & filter.mask) != 0 && e.id != filter.ignore && is_finite(e.pose.position) &&
         std::isfinite(e.pose.yaw);
}

bool concave(const Entity& e) {
  return e.model != nullptr && e.model->concave;
}

// Where the motion from + s·delta (s in [0, 1]) first comes strictly within `radius` of `centre`;
// -1 when it never does within the motion. Culls entities by their bounding spheres: the spheres carry
// kBoundsSlack, so a sphere only touched at its surface bounds a shape that is never reached.
double sphere_entry(Vec3d from, Vec3d delta, Vec3d centre, double radius) {
  const Vec3d m = from - centre;
  const double c = dot(m, m) - radius * radius;
  if (c < 0.0) return 0.0;
  const double a = dot(delta, delta);
  const double b = dot(m, delta);
  if (a == 0.0 || b >= 0.0) return -1.0;  // not moving, or moving away from outside
  const double disc = b * b - a * c;
  if (!(disc > 0.0)) return -1.0;
  const double s = (-b - std::sqrt(disc)) / a;
  return s < 1.0 ? s : -1.0;
}

// The part of a ray o + t·d inside an open convex solid, as the intersection of slabs and round
// constraints (all in the solid's frame). Open sets: a ray lying in a face, or tangent, is outside.
struct Chord {
  double enter = -kInf;
  double exit = kInf;
  Vec3d normal{};  // outward normal of the surface crossed at `enter` (zero while it is −inf)
};

// Narrows to lo < o + t·d < hi along one axis.
bool clip_slab(Chord& c, double o, double d, double lo, double hi, Vec3d axis) {
  if (d == 0.0) return o > lo && o < hi && c.enter < c.exit;
  double t0 = (lo - o) / d;
  double t1 = (hi - o) / d;
  Vec3d n = -axis;
  if (d < 0.0) {
    std::swap(t0, t1);
    n = axis;
  }
  if (t0 > c.enter) {
    c.enter = t0;
    c.normal = n;
  }
  c.exit = std::min(c.exit, t1);
  return c.enter < c.exit;
}

// Narrows to |m + t·d| < r (a ball, or a disc when m and d have no z).
bool clip_round(Chord& c, Vec3d m, Vec3d d, double r) {
  const double a = dot(d, d);
  const double cc = dot(m, m) - r * r;
  if (a == 0.0) return cc < 0.0 && c.enter < c.exit;
  const double b = dot(m, d);
  const double disc = b * b - a * cc;
  if (!(disc > 0.0)) return false;
  // The stable pair of roots (no cancellation between −b and the root).
  const double q = -(b + std::copysign(std::sqrt(disc), b));
  double t0 = q / a;
  double t1 = cc / q;
  if (t0 > t1) std::swap(t0, t1);
  if (t0 > c.enter) {
    c.enter = t0;
    c.normal = normalize(m + d * t0);
  }
  c.exit = std::min(c.exit, t1);
  return c.enter < c.exit;
}

// The chord of a local ray through a sphere, cylinder or box; false when the ray misses the interior
// or the shape has none (a point, a hull: not handled here).
bool shape_chord(const Shape& s, Vec3d o, Vec3d d, Chord& c) {
  const Vec3d off = to_double(s.offset);
  switch (s.kind) {
    case ShapeKind::kSphere:
      return clip_round(c, o - off, d, s.radius);
    case ShapeKind::kCylinder: {
      const Vec3d m = o - off;
      return clip_slab(c, o.z, d.z, off.z, off.z + double(s.height), {0, 0, 1}) &&
             clip_round(c, {m.x, m.y, 0}, {d.x, d.y, 0}, s.radius);
    }
    case ShapeKind::kBox: {
      const Vec3d h = to_double(s.half_extents);
      return clip_slab(c, o.x, d.x, off.x - h.x, off.x + h.x, {1, 0, 0}) &&
             clip_slab(c, o.y, d.y, off.y - h.y, off.y + h.y, {0, 1, 0}) &&
             clip_slab(c, o.z, d.z, off.z - h.z, off.z + h.z, {0, 0, 1});
    }
    case ShapeKind::kPoint:
    case ShapeKind::kHull:
      break;
  }
  return false;
}

// A convex target at a fixed pose against a shape translating from→to with yaw 0: start_solid from
// shape_distance (strict overlap), otherwise the first touch from time_of_impact at separation 0.
EntitySweep convex_sweep(const Shape& mover, float mover_yaw, Vec3 from, Vec3 to, const Shape& target,
                         const Motion& target_motion, bool may_start_inside) {
  EntitySweep h;
  const Pose start{from, mover_yaw};
  const Pose end{to, mover_yaw};
  const Toi toi = time_of_impact(mover, {start, end}, target, target_motion, {.target_separation = 0.0});
  if (toi.status != QueryStatus::kOk) return h;
  // Only a start within the target's reach can be inside it, and time_of_impact has measured the start:
  // the exact overlap test runs only when it found the shapes within touching distance there.
  if (may_start_inside && toi.initially_close) {
    const ShapeDistance d = shape_distance(mover, start, target, target_motion.start);
    if (d.status == QueryStatus::kOk && d.overlapping) {
      // Both ends inside a convex target means the whole straight motion is.
      h.hit = h.start_solid = true;
      h.fraction = 0;
      h.all_solid = shape_distance(mover, end, target, target_motion.end).overlapping;
      h.point = d.point_a;
      return h;
    }
  }
  if (!toi.hit) return h;
  h.hit = true;
  h.fraction = toi.t;
  h.normal = -toi.normal;  // toi.normal points from the mover towards the target
  h.point = toi.point;
  return h;
}

// A hit on a concave prop's BSP, asked in the prop's frame, turned back to world space. The point is the
// mover's reference point at the contact (the BSP does not name a contact point).
EntitySweep from_local_trace(const TraceResult& r, const Pose& pose) {
  EntitySweep h;
  if (r.status != QueryStatus::kOk || !r.hit) return h;
  h.hit = true;
  h.start_solid = r.start_solid;
  h.all_solid = r.all_solid;
  h.fraction = r.fraction;
  h.normal = direction_to_world(pose, to_double(r.normal));
  h.point = to_world(pose, to_double(r.end_position));
  return h;
}

EntitySweep ray_entity(const Entity& e, Vec3d origin, Vec3d dir, double length, bool may_start_inside) {
  if (concave(e)) {
    const Vec3 o = to_float(to_local(e.pose, origin));
    const Vec3 d = to_float(direction_to_local(e.pose, dir));
    return from_local_trace(e.model->tree.raycast(o, d, float(length)), e.pose);
  }
  EntitySweep h;
  if (e.shape.kind == ShapeKind::kHull) {
    const Vec3 from = to_float(origin);
    return convex_sweep(Shape::point(), 0.0f, from, to_float(origin + dir * length), e.shape,
                        {e.pose, e.pose}, may_start_inside);
  }
  Chord c;
  if (!shape_chord(e.shape, to_local(e.pose, origin), direction_to_local(e.pose, dir), c)) return h;
  if (!(c.exit > 0.0) || !(c.enter < length)) return h;
  h.hit = true;
  if (c.enter < 0.0) {
    h.start_solid = true;
    h.all_solid = c.exit >= length;
    h.fraction = 0;
    return h;
  }
  h.fraction = length > 0.0 ? c.enter / length : 0.0;
  h.normal = direction_to_world(e.pose, c.normal);
  return h;
}

bool strictly_overlap(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb) {
  const ShapeDistance d = shape_distance(a, pa, b, pb);
  return d.status == QueryStatus::kOk && d.overlapping;
}

// The same tests as the sweeps, so a shape a sweep stopped is clear of the entity here: convex entities
// and boxes or hulls against a concave prop's brushes by shape_distance, round shapes by the prop's BSP.
bool overlaps_entity(const Entity& e, const Shape& shape, const Pose& pose) {
  if (!concave(e)) return strictly_overlap(shape, pose, e.shape, e.pose);
  const PropModel& model = *e.model;
  const Vec3d local = to_local(e.pose, to_double(pose.position));
  if (is_round(shape)) {
    const TurnedShape turned(shape, double(pose.yaw) - double(e.pose.yaw));
    return model.tree.overlap(turned.shape(), to_float(local)).overlap;
  }
  const double reach = shape.reach();
  for (std::size_t k = 0; k < model.brush_vertices.size(); ++k) {
    const Aabb& b = model.brush_boxes[k];
    if (b.min.x >= local.x + reach || b.min.y >= local.y + reach || b.min.z >= local.z + reach ||
        b.max.x <= local.x - reach || b.max.y <= local.y - reach || b.max.z <= local.z - reach) {
      continue;
    }
    if (strictly_overlap(shape, pose, Shape::hull(model.brush_vertices[k]), e.pose)) return true;
  }
  return false;
}

// The running answer of a ray or sweep: the nearest hit so far, ties to the level, then the lower id.
class Nearest {
 public:
  Nearest(Vec3 from, Vec3 to) : from_(from), to_(to) { hit_.trace.end_position = to; }

  void level(const TraceResult& r) {
    if (r.status != QueryStatus::kOk || !r.hit) return;
    hit_.trace = r;
    hit_.entity = kNoEntity;
    fraction_ = r.fraction;
    found_ = true;
  }
  // Entities whose bounding sphere is entered after the current best cannot win.
  bool can_beat(double entry) const { return !found_ || entry <= fraction_; }
  void entity(EntityId id, const EntitySweep& h) {
    if (!h.hit) return;
    if (found_ && (h.fraction > fraction_ ||
                   (h.fraction == fraction_ && (hit_.entity == kNoEntity || hit_.entity < id)))) {
      return;
    }
    found_ = true;
    fraction_ = h.fraction;
    hit_.entity = id;
    TraceResult& t = hit_.trace;
    t = {};
    t.hit = true;
    t.start_solid = h.start_solid;
    t.all_solid = h.all_solid;
    t.fraction = float(std::clamp(h.fraction, 0.0, 1.0));
    t.brush = kNoBrush;
    if (h.start_solid) {
      t.end_position = from_;
    } else {
      t.normal = to_float(h.normal);
      t.end_position =
          backed_off_end(to_double(from_), to_double(to_) - to_double(from_), h.fraction, h.normal);
    }
  }
  const WorldHit& result() const { return hit_; }

 private:
  Vec3 from_;
  Vec3 to_;
  WorldHit hit_;
  double fraction_ = 1;
  bool found_ = false;
};

WorldHit refused(QueryStatus status, Vec3 from) {
  WorldHit h;
  h.trace.status = status;
  h.trace.fraction = 0;
  h.trace.end_position = is_finite(from) ? from : Vec3{};
  return h;
}

}  // namespace

double bounding_entry(const Entity& e, const Motion& target, const Shape& shape, Vec3 from, Vec3 to) {
  // The mover's reference point relative to the bounding sphere's centre, both moving linearly. A turning
  // target moves its centre along an arc, which strays from the chord by at most |offset|·|Δyaw|.
  const Vec3d c0 = to_double(world_center(e, target.start));
  const Vec3d c1 = to_double(world_center(e, target.end));
  const Vec3d m0 = to_double(from) - c0;
  const Vec3d m1 = to_double(to) - c1;
  const double arc =
      double(length(e.local_center)) * std::abs(double(target.end.yaw) - double(target.start.yaw));
  return sphere_entry(m0, m1 - m0, {}, double(shape.reach()) + double(e.bound_radius) + arc);
}

Vec3 backed_off_end(Vec3d from, Vec3d delta, double fraction, Vec3d normal) {
  const double approach = -dot(normal, delta);
  const double backed = approach > 0.0 ? fraction - double(kSurfaceBackoff) / approach : 0.0;
  return to_float(from + delta * std::max(0.0, backed));
}

EntitySweep sweep_against_entity(const Entity& e, const Motion& target, const Shape& shape, float shape_yaw,
                                 Vec3 from, Vec3 to, bool may_start_inside) {
  if (!concave(e)) return convex_sweep(shape, shape_yaw, from, to, e.shape, target, may_start_inside);
  const PropModel& model = *e.model;
  if (is_round(shape) && target.start.yaw == target.end.yaw) {
    // The prop's own tree in its frame: the mover's motion relative to a prop that does not turn is a
    // straight line from its start-frame position to its end-frame position.
    const TurnedShape local(shape, double(shape_yaw) - double(target.start.yaw));
    const TraceResult r = model.tree.trace(local.shape(), to_float(to_local(target.start, to_double(from))),
                                           to_float(to_local(target.end, to_double(to))));
    return from_local_trace(r, target.end);
  }
  // Boxes and hulls (exact where the prop's BSP would shift planes), and anything against a turning prop:
  // each brush's hull by time_of_impact, culled by the brush boxes against the motion's local box grown by
  // the shape's reach (and, for a moving prop, by how far its frame moves).
  const Vec3d lf = to_local(target.start, to_double(from));
  const Vec3d lt = to_local(target.end, to_double(to));
  const double frame_motion = length(to_double(target.end.position - target.start.position)) +
                              std::abs(double(target.end.yaw) - double(target.start.yaw)) *
                                  double(length(model.local_box.max - model.local_box.min));
  const double reach = shape.reach() + frame_motion;
  const Vec3d lo = min(lf, lt) - Vec3d{reach, reach, reach};
  const Vec3d hi = max(lf, lt) + Vec3d{reach, reach, reach};
  EntitySweep best;
  for (std::size_t k = 0; k < model.brush_vertices.size(); ++k) {
    const Aabb& b = model.brush_boxes[k];
    if (b.min.x >= hi.x || b.min.y >= hi.y || b.min.z >= hi.z || b.max.x <= lo.x || b.max.y <= lo.y ||
        b.max.z <= lo.z) {
      continue;
    }
    const EntitySweep h = convex_sweep(shape, shape_yaw, from, to, Shape::hull(model.brush_vertices[k]),
                                       target, may_start_inside);
    if (!h.hit) continue;
    // A start inside any brush is the prop's start_solid; all_solid only when one brush holds the whole
    // motion (the union of several could too, but that is not worth a walk along the motion).
    if (!best.hit || h.fraction < best.fraction || (h.start_solid && h.all_solid)) best = h;
  }
  return best;
}

WorldHit world_raycast(const BspTree& level, std::span<const Entity> entities, Vec3 origin, Vec3 direction,
                       float max_distance, const QueryFilter& filter) {
  if (!is_finite(origin) || !is_finite(direction) || !std::isfinite(max_distance) || max_distance < 0.0f) {
    return refused(QueryStatus::kNonFiniteInput, origin);
  }
  // The level's own end point (BspTree::raycast), so a miss ends exactly where the level's would.
  const Vec3 to = origin + normalize(direction) * max_distance;
  if (!is_finite(to)) return refused(QueryStatus::kNonFiniteInput, origin);
  Nearest nearest(origin, to);
  if (filter.level) nearest.level(level.raycast(origin, direction, max_distance));

  const Vec3d o = to_double(origin);
  const Vec3d dir = normalize(to_double(direction));
  const double length = dir == Vec3d{} ? 0.0 : double(max_distance);
  const Vec3d delta = dir * length;
  for (const Entity& e : entities) {
    if (!tested(e, filter)) continue;
    const double entry = sphere_entry(o, delta, to_double(world_center(e, e.pose)), e.bound_radius);
    if (entry < 0.0 || !nearest.can_beat(entry)) continue;
    nearest.entity(e.id, ray_entity(e, o, dir, length, entry == 0.0));
  }
  return nearest.result();
}

WorldHit world_sweep(const BspTree& level, std::span<const Entity> entities, const Shape& shape, Vec3 from,
                     Vec3 to, const QueryFilter& filter) {
  if (!is_finite(from) || !is_finite(to)) return refused(QueryStatus::kNonFiniteInput, from);
  if (!shape.valid()) return refused(QueryStatus::kInvalidShape, from);
  Nearest nearest(from, to);
  if (filter.level) nearest.level(level.trace(shape, from, to));

  for (const Entity& e : entities) {
    if (!tested(e, filter)) continue;
    const double entry = bounding_entry(e, {e.pose, e.pose}, shape, from, to);
    if (entry < 0.0 || !nearest.can_beat(entry)) continue;
    // Only a start within both bounding spheres can be inside the entity: the rest skip that test.
    nearest.entity(e.id, sweep_against_entity(e, {e.pose, e.pose}, shape, 0.0f, from, to, entry == 0.0));
  }
  return nearest.result();
}

WorldOverlap world_overlap(const BspTree& level, std::span<const Entity> entities, const Shape& shape,
                           const Pose& pose, const QueryFilter& filter) {
  WorldOverlap result;
  if (!is_finite(pose.position) || !std::isfinite(pose.yaw)) {
    result.status = QueryStatus::kNonFiniteInput;
    return result;
  }
  if (!shape.valid()) {
    result.status = QueryStatus::kInvalidShape;
    return result;
  }
  if (filter.level) {
    const TurnedShape turned(shape, pose.yaw);
    result.brush = level.overlap(turned.shape(), pose.position).brush;
  }
  const Vec3d p = to_double(pose.position);
  const double reach = shape.reach();
  for (const Entity& e : entities) {
    if (!tested(e, filter)) continue;
    // Farther apart than both bounding spheres: the shapes cannot even touch.
    const Vec3d gap = to_double(world_center(e, e.pose)) - p;
    const double radius = reach + double(e.bound_radius);
    if (dot(gap, gap) >= radius * radius) continue;
    if (overlaps_entity(e, shape, pose)) result.entities.push_back(e.id);
  }
  std::sort(result.entities.begin(), result.entities.end());
  return result;
}

}  // namespace shiftcast
