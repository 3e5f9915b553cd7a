// Melax's HitCheckBSP (RTR 25.5) for every shape, with the digest's fixes: a hit found in one child is
// never overwritten by a miss in the other, the impact is returned per query (no global), the segment is
// shortened to the first impact so later subtrees only look for earlier ones, the child the motion
// reaches first is visited first, and a start in solid is detected and reported.
//
// Everything is computed in fractions t of the motion p(t) = from + t·delta, in double: a node plane's
// distance along the motion is ds + t·dw. The back child gets the part with distance < back offset
// (open), the front child the part with distance >= −front offset (closed), so for a point the two
// sides partition space exactly and a motion lying in a splitter plane is never lost between them.
#include <algorithm>
#include <cmath>

#include "collision/bsp_tree.hpp"

namespace shiftcast {
namespace {

// Per-shape offset functors: the traversal is instantiated once per shape kind so the offset of each
// node plane inlines to a few multiplies.
struct PointOffsets {
  ShiftOffsets operator()(Vec3d) const { return {0.0, 0.0}; }
};
struct SphereOffsets {
  double radius;
  Vec3d centre;
  ShiftOffsets operator()(Vec3d n) const {
    const double along = dot(n, centre);
    return {radius - along, radius + along};
  }
};
struct CylinderOffsets {
  double radius;
  double height;
  Vec3d bottom;
  ShiftOffsets operator()(Vec3d n) const {
    const double along = dot(n, bottom);
    const double rim = radius * std::sqrt(n.x * n.x + n.y * n.y);
    return {rim + std::max(0.0, -n.z) * height - along, rim + std::max(0.0, n.z) * height + along};
  }
};
struct BoxOffsets {
  Vec3d half;
  Vec3d centre;
  ShiftOffsets operator()(Vec3d n) const {
    const double along = dot(n, centre);
    const double extent = std::abs(n.x) * half.x + std::abs(n.y) * half.y + std::abs(n.z) * half.z;
    return {extent - along, extent + along};
  }
};
struct HullOffsets {
  const Shape* shape;
  ShiftOffsets operator()(Vec3d n) const { return shape->shift_offsets(n); }
};

// The plane through which the current segment start was entered: node index and whether the front side
// was entered (the solid is then in front, so the contact normal is −n). node < 0: never raised, so the
// segment starts where the motion starts.
struct Entry {
  std::int32_t node = -1;
  bool front = false;
};

struct Impact {
  double t = 1.0;
  Entry entry;
  std::int32_t brush = kNoBrush;
};

// A child's share of the segment [t0, t1].
struct Span {
  double t0;
  double t1;
  Entry entry;
  bool present;
};

template <class Offsets>
class Tracer {
 public:
  Tracer(std::span<const BspNode> nodes, Offsets offsets, Vec3d from, Vec3d delta)
      : nodes_(nodes.data()), offsets_(offsets), from_(from), delta_(delta) {}

  // Finds the earliest solid contact within [t0, t1]; lowers `best` and returns true when one is found.
  bool first_impact(std::int32_t child, double t0, double t1, Entry entry, Impact& best) const {
    for (;;) {
      if (child == kEmptyLeaf) return false;
      if (is_solid_leaf(child)) {
        best = {t0, entry, leaf_brush(child)};
        return true;
      }
      const BspNode& node = nodes_[child];
      Span back;
      Span front;
      split(child, t0, t1, entry, back, front);
      back.present &= node.child[0] != kEmptyLeaf;
      front.present &= node.child[1] != kEmptyLeaf;
      if (!back.present || !front.present) {
        // One way down (always so in bevel chains and face chains): loop instead of recursing.
        if (!back.present && !front.present) return false;
        const Span& only = back.present ? back : front;
        child = node.child[back.present ? 0 : 1];
        t0 = only.t0;
        t1 = only.t1;
        entry = only.entry;
        continue;
      }
      // Visit first the side whose share of the motion starts first: its hit shortens the other's search.
      const bool back_first = back.t0 <= front.t0;
      const Span& a = back_first ? back : front;
      const Span& b = back_first ? front : back;
      const bool hit = first_impact(node.child[back_first ? 0 : 1], a.t0, a.t1, a.entry, best);
      const double b_end = hit ? std::min(b.t1, best.t) : b.t1;
      const bool b_reaches = b.t0 < b_end || (b.t0 == b_end && !hit);
      // A hit in `a` is never cleared by a miss in `b` (the digest's fix of HitCheckBSP line 12).
      if (b_reaches && first_impact(node.child[back_first ? 1 : 0], b.t0, b_end, b.entry, best)) return true;
      return hit;
    }
  }

  // Latest t such that [ts, t) stays in one solid leaf region entered at or before ts; ts if none.
  double solid_reach(std::int32_t child, double t0, double t1, double ts) const {
    if (child == kEmptyLeaf || t0 > ts) return ts;
    if (is_solid_leaf(child)) return std::max(ts, t1);
    Span back;
    Span front;
    split(child, t0, t1, {}, back, front);
    const BspNode& node = nodes_[child];
    double reach = ts;
    if (back.present) reach = std::max(reach, solid_reach(node.child[0], back.t0, back.t1, ts));
    if (front.present) reach = std::max(reach, solid_reach(node.child[1], front.t0, front.t1, ts));
    return reach;
  }

 private:
  // Shares [t0, t1] between the node's children. Distances at both ends decide most nodes without a
  // division; only a segment that crosses a shifted plane pays for the crossing time.
  void split(std::int32_t index, double t0, double t1, Entry entry, Span& back, Span& front) const {
    const BspNode& node = nodes_[index];
    const Vec3d n = to_double(node.plane.normal);
    const double ds = dot(n, from_) - double(node.plane.d);
    const double dw = dot(n, delta_);
    const ShiftOffsets off = offsets_(n);
    const double d0 = ds + t0 * dw;
    const double d1 = ds + t1 * dw;
    back = {t0, t1, entry, false};
    front = {t0, t1, entry, false};
    if (dw == 0.0 || t0 == t1) {
      back.present = d0 < off.back;
      front.present = d0 >= -off.front;
      return;
    }
    if (dw > 0.0) {  // moving to the front: back is [t0, t_back), front is [t_front, t1]
      if (d1 < off.back) {
        back.present = true;
      } else if (d0 < off.back) {
        back.t1 = (off.back - ds) / dw;
        back.present = t0 < back.t1;
      }
      if (d0 > -off.front) {
        front.present = true;
      } else if (d1 >= -off.front) {
        front.t0 = (-off.front - ds) / dw;
        front.entry = {index, true};
        front.present = front.t0 < t1;
      }
    } else {  // moving to the back: back is (t_back, t1], front is [t0, t_front]
      if (d0 < off.back) {
        back.present = true;
      } else if (d1 < off.back) {
        back.t0 = (off.back - ds) / dw;
        back.entry = {index, false};
        back.present = back.t0 < t1;
      }
      if (d1 >= -off.front) {
        front.present = true;
      } else if (d0 > -off.front) {
        front.t1 = (-off.front - ds) / dw;
        front.present = t0 < front.t1;
      }
    }
  }

  const BspNode* nodes_;
  Offsets offsets_;
  Vec3d from_;
  Vec3d delta_;
};

template <class Offsets>
std::int32_t overlap_brush(const BspNode* nodes, std::int32_t child, const Offsets& offsets, Vec3d p) {
  while (!is_leaf(child)) {
    const BspNode& node = nodes[child];
    const Vec3d n = to_double(node.plane.normal);
    const double dist = dot(n, p) - double(node.plane.d);
    const ShiftOffsets off = offsets(n);
    const bool back = dist < off.back;
    const bool front = dist >= -off.front;
    if (back && front) {
      const std::int32_t found = overlap_brush(nodes, node.child[0], offsets, p);
      if (found != kNoBrush) return found;
      child = node.child[1];
    } else {
      child = node.child[back ? 0 : 1];
    }
  }
  return is_solid_leaf(child) ? leaf_brush(child) : kNoBrush;
}

template <class Offsets>
TraceResult run_trace(const BspTree& tree, const Offsets& offsets, Vec3 from, Vec3 to) {
  TraceResult result;
  result.end_position = to;
  const Vec3d from_d = to_double(from);
  const Vec3d delta = to_double(to) - from_d;
  const Tracer<Offsets> tracer(tree.nodes(), offsets, from_d, delta);
  Impact impact;
  const double t_end = delta == Vec3d{} ? 0.0 : 1.0;
  if (!tracer.first_impact(tree.root(), 0.0, t_end, {}, impact)) return result;

  result.hit = true;
  result.brush = impact.brush;
  result.fraction = float(std::clamp(impact.t, 0.0, 1.0));
  if (impact.entry.node < 0) {
    result.start_solid = true;
    result.fraction = 0.0f;
    result.end_position = from;
    double reach = 0.0;
    if (t_end > 0.0) {
      for (double next = tracer.solid_reach(tree.root(), 0.0, 1.0, 0.0); next > reach && reach < 1.0;
           next = tracer.solid_reach(tree.root(), 0.0, 1.0, reach)) {
        reach = next;
      }
    }
    result.all_solid = t_end == 0.0 || reach >= 1.0;
    return result;
  }
  const BspNode& node = tree.nodes()[std::size_t(impact.entry.node)];
  const Vec3d normal = impact.entry.front ? -to_double(node.plane.normal) : to_double(node.plane.normal);
  result.normal = to_float(normal);
  // The entering plane approaches at speed −n·delta > 0 per unit t; back off kSurfaceBackoff along n.
  const double approach = -dot(normal, delta);
  const double backed = approach > 0.0 ? impact.t - double(kSurfaceBackoff) / approach : 0.0;
  result.end_position = to_float(from_d + delta * std::max(0.0, backed));
  return result;
}

template <class Fn>
auto with_offsets(const Shape& shape, Fn&& fn) {
  switch (shape.kind) {
    case ShapeKind::kPoint:
      return fn(PointOffsets{});
    case ShapeKind::kSphere:
      return fn(SphereOffsets{shape.radius, to_double(shape.offset)});
    case ShapeKind::kCylinder:
      return fn(CylinderOffsets{shape.radius, shape.height, to_double(shape.offset)});
    case ShapeKind::kBox:
      return fn(BoxOffsets{to_double(shape.half_extents), to_double(shape.offset)});
    case ShapeKind::kHull:
      break;
  }
  return fn(HullOffsets{&shape});
}

TraceResult refused(QueryStatus status, Vec3 from) {
  TraceResult r;
  r.status = status;
  r.fraction = 0.0f;
  r.end_position = is_finite(from) ? from : Vec3{};
  return r;
}

}  // namespace

TraceResult BspTree::trace(const Shape& shape, Vec3 from, Vec3 to) const {
  if (!is_finite(from) || !is_finite(to)) return refused(QueryStatus::kNonFiniteInput, from);
  if (!shape.valid()) return refused(QueryStatus::kInvalidShape, from);
  return with_offsets(shape, [&](const auto& offsets) { return run_trace(*this, offsets, from, to); });
}

TraceResult BspTree::raycast(Vec3 origin, Vec3 direction, float max_distance) const {
  if (!is_finite(origin) || !is_finite(direction) || !std::isfinite(max_distance) || max_distance < 0.0f) {
    return refused(QueryStatus::kNonFiniteInput, origin);
  }
  const Vec3 to = origin + normalize(direction) * max_distance;
  if (!is_finite(to)) return refused(QueryStatus::kNonFiniteInput, origin);
  return run_trace(*this, PointOffsets{}, origin, to);
}

OverlapResult BspTree::overlap(const Shape& shape, Vec3 position) const {
  OverlapResult result;
  if (!is_finite(position)) {
    result.status = QueryStatus::kNonFiniteInput;
    return result;
  }
  if (!shape.valid()) {
    result.status = QueryStatus::kInvalidShape;
    return result;
  }
  result.brush = with_offsets(shape, [&](const auto& offsets) {
    return overlap_brush(nodes_.data(), root_, offsets, to_double(position));
  });
  result.overlap = result.brush != kNoBrush;
  return result;
}

std::int32_t BspTree::point_brush(Vec3 p) const {
  if (!is_finite(p)) return kNoBrush;
  return overlap_brush(nodes_.data(), root_, PointOffsets{}, to_double(p));
}

}  // namespace shiftcast
