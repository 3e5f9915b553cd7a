#include "world/match/filters.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "collision/narrow_phase.hpp"
#include "world/match/prop_model.hpp"

namespace shiftcast {

const char* to_string(FilterStage stage) {
  switch (stage) {
    case FilterStage::kSpheres:
      return "bounding spheres";
    case FilterStage::kBoxes:
      return "box safety";
    case FilterStage::kPlane:
      return "plane divides";
    case FilterStage::kHard:
      return "hard case";
  }
  return "unknown";
}

void FilterStats::add(const FilterStats& other) {
  for (int i = 0; i < kFilterStageCount; ++i) {
    stages[std::size_t(i)].tests += other.stages[std::size_t(i)].tests;
    stages[std::size_t(i)].definitive += other.stages[std::size_t(i)].definitive;
    stages[std::size_t(i)].nanoseconds += other.stages[std::size_t(i)].nanoseconds;
  }
}

std::string FilterStats::format() const {
  std::uint64_t all_definitive = 0;
  for (const FilterStageStats& s : stages)
    all_definitive += s.definitive;
  std::string out = "stage                 tests   definitive   share   mean us\n";
  char line[128];
  for (int i = 0; i < kFilterStageCount; ++i) {
    const FilterStageStats& s = stages[std::size_t(i)];
    const double share = all_definitive > 0 ? 100.0 * double(s.definitive) / double(all_definitive) : 0.0;
    const double mean_us = s.tests > 0 ? double(s.nanoseconds) / double(s.tests) / 1000.0 : 0.0;
    std::snprintf(line, sizeof line, "%-18s %8llu %12llu %6.1f%% %9.3f\n", to_string(FilterStage(i)),
                  static_cast<unsigned long long>(s.tests), static_cast<unsigned long long>(s.definitive),
                  share, mean_us);
    out += line;
  }
  return out;
}

namespace {

// How much further than `reach` the culls inside the concave hard case look: covers the float rounding
// of the frame change (the other shape's position enters the prop's tree as a float) and of the brush
// corners against the brush planes, so a cull never drops a brush GJK would find within reach. The same
// size as the entity bounds' slack, for the same reason.
constexpr double kCullSlack = kBoundsSlack;

bool is_concave(const Entity& e) {
  return e.model != nullptr && e.model->concave;
}

// The convex shape the narrow phase sees: the model's (for a concave one, its convex bound).
Shape convex_shape(const Entity& e) {
  return e.model != nullptr ? model_shape(*e.model) : e.shape;
}

std::uint64_t pair_key(EntityId a, EntityId b) {
  const EntityId lo = std::min(a, b);
  const EntityId hi = std::max(a, b);
  return (std::uint64_t(lo) << 32) | std::uint64_t(hi);
}

// A box turned by a yaw, in double: the frame both the box stage and the hard case's culls reason in.
struct TurnedBox {
  Vec3d centre;  // world (or the frame the pose is given in)
  double hx = 0, hy = 0;
  double c = 1, s = 0;  // the box's local x axis is (c, s), its y axis (−s, c)
  double zmin = 0, zmax = 0;
};

TurnedBox turn(const Aabb& box, Vec3d position, double yaw) {
  TurnedBox t;
  t.c = std::cos(yaw);
  t.s = std::sin(yaw);
  const Vec3d centre = to_double(box.center());
  t.centre = rotate_z(centre, t.c, t.s) + position;
  t.hx = 0.5 * (double(box.max.x) - double(box.min.x));
  t.hy = 0.5 * (double(box.max.y) - double(box.min.y));
  t.zmin = double(box.min.z) + position.z;
  t.zmax = double(box.max.z) + position.z;
  return t;
}

// The turned box's axis-aligned bounds in its frame, grown by `grow`.
Aabbd bounds_of(const TurnedBox& t, double grow) {
  const double ex = std::abs(t.c) * t.hx + std::abs(t.s) * t.hy + grow;
  const double ey = std::abs(t.s) * t.hx + std::abs(t.c) * t.hy + grow;
  return {{t.centre.x - ex, t.centre.y - ey, t.zmin - grow},
          {t.centre.x + ex, t.centre.y + ey, t.zmax + grow}};
}

bool overlaps(const Aabbd& a, const Aabb& b) {
  return a.min.x <= b.max.x && a.max.x >= b.min.x && a.min.y <= b.max.y && a.max.y >= b.min.y &&
         a.min.z <= b.max.z && a.max.z >= b.min.z;
}

// The best answer found so far by the hard case: the smallest distance, an overlap beating any gap.
struct HardResult {
  bool found = false;
  ShapeDistance d;
  std::int32_t brush_a = kNoBrush;
  std::int32_t brush_b = kNoBrush;

  void offer(const ShapeDistance& candidate, std::int32_t ba, std::int32_t bb) {
    if (candidate.status != QueryStatus::kOk) return;
    const auto score = [](const ShapeDistance& x) {
      return x.overlapping ? std::min(x.distance, 0.0) : x.distance;
    };
    const bool better = !found || score(candidate) < score(d) ||
                        (score(candidate) == score(d) && candidate.overlapping && !d.overlapping);
    if (!better) return;
    found = true;
    d = candidate;
    brush_a = ba;
    brush_b = bb;
  }
};

// The conservative stand-in the prop's tree is asked about: the other shape grown by `grow` in the
// prop's frame. Round shapes grow exactly (radius, height and offset); boxes and hulls are replaced by
// the 8 corners of their local box grown by `grow`, turned by the relative yaw (a superset of the shape
// grown by `grow`, since a cube of half-size g contains the ball of radius g).
Shape tree_culler(const Shape& s, const Aabb& s_box, double c, double sn, double grow,
                  std::array<Vec3, 11>& corners) {
  const float g = float(grow);
  const Vec3 offset = to_float(rotate_z(to_double(s.offset), c, sn));
  switch (s.kind) {
    case ShapeKind::kPoint:
      return Shape::sphere(g);
    case ShapeKind::kSphere:
      return Shape::sphere(s.radius + g, offset);
    case ShapeKind::kCylinder:
      return Shape::cylinder(s.radius + g, s.height + 2 * g, offset - Vec3{0, 0, g});
    case ShapeKind::kBox:
    case ShapeKind::kHull:
      break;
  }
  for (int i = 0; i < 8; ++i) {
    const Vec3d corner{(i & 1) ? double(s_box.max.x) + grow : double(s_box.min.x) - grow,
                       (i & 2) ? double(s_box.max.y) + grow : double(s_box.min.y) - grow,
                       (i & 4) ? double(s_box.max.z) + grow : double(s_box.min.z) - grow};
    corners[std::size_t(i)] = to_float(rotate_z(corner, c, sn));
  }
  // The turned box's edge directions, so the tree's exact test needs only their cross products.
  corners[8] = to_float(Vec3d{c, sn, 0});
  corners[9] = to_float(Vec3d{-sn, c, 0});
  corners[10] = {0, 0, 1};
  return Shape::hull(std::span<const Vec3>(corners).first(8), std::span<const Vec3>(corners).subspan(8));
}

// The convex shape `s` (local bounds `s_box`, in its own frame) at `s_pose` against every brush of the
// concave `model` at `model_pose`. `model_is_a` orders the narrow-phase calls so normals run a → b;
// `s_brush` is the brush `s` stands for when it is one brush of another concave prop.
void concave_against(const PropModel& model, const Pose& model_pose, const Shape& s, const Aabb& s_box,
                     const Pose& s_pose, float reach, bool model_is_a, std::int32_t s_brush,
                     HardResult& best) {
  const double grow = double(reach) + kCullSlack;
  const Vec3d local = to_local(model_pose, to_double(s_pose.position));
  const double yaw = double(s_pose.yaw) - double(model_pose.yaw);
  const TurnedBox turned = turn(s_box, local, yaw);
  const Aabbd near = bounds_of(turned, grow);
  if (!overlaps(near, model.local_box)) return;

  // The miss path first (Blow: near misses are the common case): the prop's tree says whether anything
  // solid may be within `grow` at all (may_overlap: a cull needs no exact answer, only no missed one).
  std::array<Vec3, 11> corners;  // 8 corners, then 3 edge directions
  const Shape culler = tree_culler(s, s_box, turned.c, turned.s, grow, corners);
  const OverlapResult named = model.tree.may_overlap(culler, to_float(local));
  if (named.status != QueryStatus::kOk || !named.overlap) return;

  // The tree named a brush; its neighbours within reach may be closer, so every brush whose box is near
  // is measured and the smallest separation kept.
  for (std::size_t i = 0; i < model.brush_vertices.size(); ++i) {
    if (!overlaps(near, model.brush_boxes[i])) continue;
    const Shape brush = Shape::hull(model.brush_vertices[i]);
    if (model_is_a) {
      best.offer(shape_distance(brush, model_pose, s, s_pose), std::int32_t(i), s_brush);
    } else {
      best.offer(shape_distance(s, s_pose, brush, model_pose), s_brush, std::int32_t(i));
    }
  }
}

HardResult run_hard_case(const Entity& a, const Entity& b, float reach) {
  HardResult best;
  const bool ca = is_concave(a);
  const bool cb = is_concave(b);
  if (!ca && !cb) {
    best.offer(shape_distance(convex_shape(a), a.pose, convex_shape(b), b.pose), kNoBrush, kNoBrush);
  } else if (ca != cb) {
    const Entity& prop = ca ? a : b;
    const Entity& other = ca ? b : a;
    concave_against(*prop.model, prop.pose, convex_shape(other), other.local_box, other.pose, reach, ca,
                    kNoBrush, best);
  } else {
    // Blow: the smaller object (by bounding radius) is A, its pieces dropped into the larger one's tree.
    const bool a_smaller = a.bound_radius <= b.bound_radius;
    const Entity& small = a_smaller ? a : b;
    const Entity& large = a_smaller ? b : a;
    const PropModel& m = *small.model;
    const TurnedBox in_large = turn(m.local_box, to_local(large.pose, to_double(small.pose.position)),
                                    double(small.pose.yaw) - double(large.pose.yaw));
    if (overlaps(bounds_of(in_large, double(reach) + kCullSlack), large.model->local_box)) {
      for (std::size_t i = 0; i < m.brush_vertices.size(); ++i) {
        concave_against(*large.model, large.pose, Shape::hull(m.brush_vertices[i]), m.brush_boxes[i],
                        small.pose, reach, !a_smaller, std::int32_t(i), best);
      }
    }
  }
  return best;
}

bool within(const HardResult& r, float reach) {
  return r.found && (r.d.overlapping || r.d.distance <= double(reach));
}

void fill(const HardResult& r, PairContact& contact) {
  contact.point = to_float((r.d.point_a + r.d.point_b) * 0.5);
  contact.normal = to_float(r.d.normal);
  contact.separation = float(r.d.distance);
  contact.overlapping = r.d.overlapping;
  contact.brush_a = r.brush_a;
  contact.brush_b = r.brush_b;
}

using Clock = std::chrono::steady_clock;

}  // namespace

Vec3d bounding_centre(const Entity& e) {
  const Vec3d c = to_double(e.local_center);
  // rotate_z of (0, 0, z) is (±0, ±0, z) for any yaw, so adding the position gives the same numbers.
  if (c.x == 0 && c.y == 0) return to_double(e.pose.position) + Vec3d{0, 0, c.z};
  return to_world(e.pose, c);
}

namespace {

bool centres_apart(const Entity& a, const Vec3d& ca, const Entity& b, const Vec3d& cb, float reach) {
  const double r = double(a.bound_radius) + double(b.bound_radius) + double(reach);
  return length_squared(cb - ca) > r * r;
}

}  // namespace

bool spheres_apart(const Entity& a, const Entity& b, float reach) {
  return centres_apart(a, bounding_centre(a), b, bounding_centre(b), reach);
}

bool boxes_apart(const Entity& a, const Entity& b, float reach) {
  const TurnedBox ta = turn(a.local_box, to_double(a.pose.position), a.pose.yaw);
  const TurnedBox tb = turn(b.local_box, to_double(b.pose.position), b.pose.yaw);
  const double gap = reach;
  if (ta.zmin > tb.zmax + gap || tb.zmin > ta.zmax + gap) return true;
  // Two rectangles in the plane are disjoint exactly when one of their four edge directions separates
  // them; the projections are grown by the reach.
  const Vec3d d = tb.centre - ta.centre;
  const std::array<Vec3d, 4> axes = {Vec3d{ta.c, ta.s, 0}, Vec3d{-ta.s, ta.c, 0}, Vec3d{tb.c, tb.s, 0},
                                     Vec3d{-tb.s, tb.c, 0}};
  for (const Vec3d& u : axes) {
    const double ra = ta.hx * std::abs(u.x * ta.c + u.y * ta.s) + ta.hy * std::abs(-u.x * ta.s + u.y * ta.c);
    const double rb = tb.hx * std::abs(u.x * tb.c + u.y * tb.s) + tb.hy * std::abs(-u.x * tb.s + u.y * tb.c);
    if (std::abs(dot(u, d)) > ra + rb + gap) return true;
  }
  return false;
}

bool hard_case(const Entity& a, const Entity& b, float reach, PairContact& contact) {
  const HardResult r = run_hard_case(a, b, reach);
  if (!within(r, reach)) return false;
  fill(r, contact);
  return true;
}

bool culled_hard_case(const Entity& a, const Entity& b, float reach, PairContact& contact) {
  if (spheres_apart(a, b, reach) || boxes_apart(a, b, reach)) return false;
  return hard_case(a, b, reach, contact);
}

FilterCascade::FilterCascade(const FilterOptions& options) : options_(options) {}

bool FilterCascade::test(const Entity& a, const Entity& b, PairContact& contact, FilterStats& stats) {
  return test(a, bounding_centre(a), b, bounding_centre(b), contact, stats);
}

bool FilterCascade::test(const Entity& a, const Vec3d& centre_a, const Entity& b, const Vec3d& centre_b,
                         PairContact& contact, FilterStats& stats) {
  const float reach = options_.reach;
  Clock::time_point start{};
  if (options_.measure_time) start = Clock::now();
  // Closes the stage that just ran: counts it and, when timing, charges it the time since `start`.
  const auto close = [&](FilterStage stage, bool definitive) {
    FilterStageStats& s = stats[stage];
    ++s.tests;
    if (definitive) ++s.definitive;
    if (options_.measure_time) {
      const Clock::time_point now = Clock::now();
      s.nanoseconds +=
          std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count());
      start = now;
    }
    return definitive;
  };

  if (close(FilterStage::kSpheres, centres_apart(a, centre_a, b, centre_b, reach))) return false;
  if (close(FilterStage::kBoxes, boxes_apart(a, b, reach))) return false;

  const std::uint64_t key = pair_key(a.id, b.id);
  if (options_.use_plane_cache) {
    // Every pair that gets here counts as a test, with or without a cached axis, so each stage's tests
    // are the previous stage's tests minus its definitive answers.
    const auto it = axes_.find(key);
    bool apart = false;
    if (it != axes_.end()) {
      const Vec3d axis = a.id <= b.id ? it->second : -it->second;
      apart = separated_along(convex_shape(a), a.pose, convex_shape(b), b.pose, axis, reach);
    }
    if (close(FilterStage::kPlane, apart)) return false;
  }

  const HardResult r = run_hard_case(a, b, reach);
  const bool touching = within(r, reach);
  close(FilterStage::kHard, true);
  // Remember the hard case's normal whenever it has one, apart or touching: for a separated pair it is a
  // separating axis with the whole distance to spare (the next test of an unmoved pair stops at stage
  // 3), and for a touching pair it is the axis most likely to separate them once they part. Only an
  // overlap without a normal (GJK gives none for deep overlaps) keeps the previous axis.
  if (options_.use_plane_cache && r.found && length_squared(r.d.normal) > 0.0) {
    axes_[key] = a.id <= b.id ? r.d.normal : -r.d.normal;
  }
  if (touching) fill(r, contact);
  return touching;
}

void FilterCascade::forget(std::span<const EntityId> ids) {
  // A scan of the cache: it holds one entry per pair that reached the hard case, and entities are removed
  // a few a tick (projectiles' ends, a disconnect), so an index by id would cost more on every insert than
  // it saves here; a tick's removals share one scan.
  if (ids.empty()) return;
  const auto named = [ids](EntityId id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  std::erase_if(axes_, [&](const auto& entry) {
    return named(EntityId(entry.first >> 32)) || named(EntityId(entry.first & 0xffffffffu));
  });
}

}  // namespace shiftcast
