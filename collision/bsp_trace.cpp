// Melax's HitCheckBSP (RTR 25.5) for every shape, with the digest's fixes: a hit found in one child is
// never overwritten by a miss in the other, the impact is returned per query (no global), the segment is
// shortened to the first impact so later subtrees only look for earlier ones, the child the motion
// reaches first is visited first, and a start in solid is detected and reported.
//
// Everything is computed in fractions t of the motion p(t) = from + t·delta, in double: a node plane's
// distance along the motion is ds + t·dw. The back child gets the part with distance < back offset
// (open), the front child the part with distance >= −front offset (closed), so for a point the two
// sides partition space exactly and a motion lying in a splitter plane is never lost between them.
// A solid leaf's bevels narrow the part that reached it like a chain of back-only nodes would.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "collision/bsp_tree.hpp"

namespace shiftcast {
namespace {

// Per-shape offset functors: the traversal is instantiated once per shape kind so the offset of each
// node plane inlines to a few multiplies. kClipsBevels: a point needs no bevels (each supports its cell).
struct PointOffsets {
  static constexpr bool kClipsBevels = false;
  ShiftOffsets operator()(Vec3d) const { return {0.0, 0.0}; }
};
struct SphereOffsets {
  static constexpr bool kClipsBevels = true;
  double radius;
  Vec3d centre;
  ShiftOffsets operator()(Vec3d n) const {
    const double along = dot(n, centre);
    return {radius - along, radius + along};
  }
};
struct CylinderOffsets {
  static constexpr bool kClipsBevels = true;
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
  static constexpr bool kClipsBevels = true;
  Vec3d half;
  Vec3d centre;
  ShiftOffsets operator()(Vec3d n) const {
    const double along = dot(n, centre);
    const double extent = std::abs(n.x) * half.x + std::abs(n.y) * half.y + std::abs(n.z) * half.z;
    return {extent - along, extent + along};
  }
};
struct HullOffsets {
  static constexpr bool kClipsBevels = true;
  const Shape* shape;
  ShiftOffsets operator()(Vec3d n) const { return shape->shift_offsets(n); }
};

// The plane through which the current segment start was entered (a node plane or a bevel), and whether
// its front side was entered (the solid is then in front, so the contact normal is −n). No plane: the
// start was never raised, so the segment starts where the motion starts.
struct Entry {
  const Plane* plane = nullptr;
  bool front = false;
};

struct Impact {
  double t = 1.0;
  Entry entry;
  std::int32_t brush = kNoBrush;
};

// A share of the segment [t0, t1].
struct Span {
  double t0;
  double t1;
  Entry entry;
  bool present;
};

// The part of [t0, t1] where the plane distance ds + t·dw is < back (open): the solid side grown by
// the shape. Distances at both ends decide most cases without a division; only a segment that crosses
// the shifted plane pays for the crossing time.
Span back_part(const Plane& plane, double ds, double dw, double back, double t0, double t1, Entry entry) {
  const double d0 = ds + t0 * dw;
  const double d1 = ds + t1 * dw;
  Span s{t0, t1, entry, false};
  if (dw == 0.0 || t0 == t1) {
    s.present = d0 < back;
  } else if (dw > 0.0) {  // leaving the back side: [t0, t_back)
    if (d1 < back) {
      s.present = true;
    } else if (d0 < back) {
      s.t1 = (back - ds) / dw;
      s.present = t0 < s.t1;
    }
  } else {  // entering the back side: (t_back, t1]
    if (d0 < back) {
      s.present = true;
    } else if (d1 < back) {
      s.t0 = (back - ds) / dw;
      s.entry = {&plane, false};
      s.present = s.t0 < t1;
    }
  }
  return s;
}

// The part of [t0, t1] where the plane distance is > −front: the empty side shrunk by the shape. When
// the shape has no width along n (a point), the two sides would leave the plane itself to neither, and
// a motion lying in a splitter that cuts a brush would slip through it; then the front side is closed.
Span front_part(const Plane& plane, double ds, double dw, double front, bool closed, double t0, double t1,
                Entry entry) {
  const double d0 = ds + t0 * dw;
  const double d1 = ds + t1 * dw;
  Span s{t0, t1, entry, false};
  if (dw == 0.0 || t0 == t1) {
    s.present = closed ? d0 >= -front : d0 > -front;
  } else if (dw > 0.0) {  // entering the front side: [t_front, t1]
    if (d0 > -front) {
      s.present = true;
    } else if (d1 >= -front) {
      s.t0 = (-front - ds) / dw;
      s.entry = {&plane, true};
      s.present = s.t0 < t1;
    }
  } else {  // leaving the front side: [t0, t_front]
    if (d1 >= -front) {
      s.present = true;
    } else if (d0 > -front) {
      s.t1 = (-front - ds) / dw;
      s.present = t0 < s.t1;
    }
  }
  return s;
}

// An empty asm the compiler cannot see through: placed in one arm of an if, it stops the compiler from
// turning the if into a conditional move, which would make the next load wait for the comparison.
inline void keep_branch(std::int32_t& value) {
#if defined(__GNUC__)
  asm("" : "+r"(value));
#else
  (void)value;
#endif
}

// A share of the motion waiting on the traversal stack: the subtree, its [t0, t1] and the plane it was
// entered through. Trivially constructible (no default member initialisers), so a stack array of
// kMaxTreeDepth of them costs nothing per query.
struct Pending {
  std::int32_t child;
  bool front;
  const Plane* plane;
  double t0;
  double t1;
};

template <class Offsets>
class Tracer {
 public:
  Tracer(const BspTree& tree, Offsets offsets, Vec3d from, Vec3d delta)
      : nodes_(tree.nodes().data()),
        leaves_(tree.leaves().data()),
        bevels_(tree.bevels().data()),
        kinds_(tree.plane_kinds().data()),
        offsets_(offsets),
        from_(from),
        delta_(delta) {}

  // Finds the earliest solid contact within [t0, t1]; lowers `best` and returns true when one is found.
  // Depth first with an explicit stack: where both children get a share, the one whose share starts
  // first is walked now and the other waits; once a hit is found, every waiting share is cut at it, so
  // later subtrees only look for earlier contacts, and a hit is never cleared by a later miss (the
  // digest's fix of HitCheckBSP line 12).
  bool first_impact(std::int32_t child, double t0, double t1, Entry entry, Impact& best) const {
    Pending stack[kMaxTreeDepth];
    int top = 0;
    bool found = false;
    for (;;) {
      while (child != kEmptyLeaf) {
        if (is_solid_leaf(child)) {
          const BspLeaf& leaf = leaves_[leaf_index(child)];
          Span s{t0, t1, entry, true};
          if (clip_bevels(leaf, s)) {
            best = {s.t0, s.entry, leaf.brush};
            found = true;
          }
          break;
        }
        const BspNode& node = nodes_[child];
        Span back;
        Span front;
        split(node, t0, t1, entry, back, front);
        back.present &= node.child[0] != kEmptyLeaf;
        front.present &= node.child[1] != kEmptyLeaf;
        if (!back.present && !front.present) break;
        const bool back_now = back.present && (!front.present || back.t0 <= front.t0);
        if (back.present && front.present) {
          const Span& later = back_now ? front : back;
          stack[top++] = {node.child[back_now ? 1 : 0], later.entry.front, later.entry.plane, later.t0,
                          later.t1};
        }
        const Span& now = back_now ? back : front;
        child = node.child[back_now ? 0 : 1];
        t0 = now.t0;
        t1 = now.t1;
        entry = now.entry;
      }
      for (;;) {
        if (top == 0) return found;
        const Pending& p = stack[--top];
        const double end = found ? std::min(p.t1, best.t) : p.t1;
        if (p.t0 < end || (p.t0 == end && !found)) {
          child = p.child;
          t0 = p.t0;
          t1 = end;
          entry = {p.plane, p.front};
          break;
        }
      }
    }
  }

  // The point case of first_impact, iterative: with no shift the two sides partition the segment, so
  // each crossing sends the near part down first and stacks the far part; no band, no bevels.
  //
  // The descent is a chain of dependent steps (plane distance, then the child to load), so its speed is
  // the latency of one step. Axial planes (most of a Quake map) skip the dot products: their distances
  // come from per-query tables holding exactly what dot(n, from) and dot(n, delta) give for n = ±e_axis,
  // so every comparison sees the same bits as the general path. A start coordinate of exactly 0 is the
  // one case where the dot product's signed zeros could differ in sign; such queries use the general
  // path throughout.
  bool first_impact_point(std::int32_t child, double t1, Impact& best) const {
    double axial_from[kAxialPlaneKinds];
    double axial_delta[kAxialPlaneKinds];
    for (int axis = 0; axis < 3; ++axis) {
      axial_from[2 * axis] = from_[axis];
      axial_from[2 * axis + 1] = -from_[axis];
      axial_delta[2 * axis] = delta_[axis];
      axial_delta[2 * axis + 1] = -delta_[axis];
    }
    const bool axial_exact = from_.x != 0.0 && from_.y != 0.0 && from_.z != 0.0;
    const std::uint8_t fast_kinds = axial_exact ? kAxialPlaneKinds : 0;
    Pending stack[kMaxTreeDepth];
    int top = 0;
    double t0 = 0.0;
    Entry entry;
    for (;;) {
      while (child >= 0) {
        const BspNode& node = nodes_[child];
        const std::uint8_t kind = kinds_[child];
        double ds;
        double dw;
        if (kind < fast_kinds) {
          ds = axial_from[kind] - double(node.plane.d);
          dw = axial_delta[kind];
        } else {
          const Vec3d n = to_double(node.plane.normal);
          ds = dot(n, from_) - double(node.plane.d);
          dw = dot(n, delta_);
        }
        const double d0 = ds + t0 * dw;
        const double d1 = ds + t1 * dw;
        const bool back0 = d0 < 0.0;
        if (back0 == (d1 < 0.0)) {
          // A branch, not a select: the CPU then loads the predicted child while the plane test is still
          // in flight, instead of waiting for it (medium and long rays +10–25%, measured on three maps).
          if (back0) {
            child = node.child[0];
            keep_branch(child);
          } else {
            child = node.child[1];
          }
          continue;
        }
        // The segment crosses the plane at t: the near side is the one holding p(t0).
        const double t = -ds / dw;
        if (t < t1) stack[top++] = {node.child[back0 ? 1 : 0], back0, &node.plane, t, t1};
        if (!(t0 < t)) {
          child = kEmptyLeaf;
          break;
        }
        child = node.child[back0 ? 0 : 1];
        t1 = t;
      }
      if (child != kEmptyLeaf) {
        best = {t0, entry, leaves_[leaf_index(child)].brush};
        return true;
      }
      if (top == 0) return false;
      const Pending& p = stack[--top];
      child = p.child;
      t0 = p.t0;
      t1 = p.t1;
      entry = {p.plane, p.front};
    }
  }

  // Latest t such that [ts, t) stays in one solid leaf region entered at or before ts; ts if none.
  double solid_reach(std::int32_t child, double t0, double t1, double ts) const {
    if (child == kEmptyLeaf || t0 > ts) return ts;
    if (is_solid_leaf(child)) {
      Span s{t0, t1, {}, true};
      return clip_bevels(leaves_[leaf_index(child)], s) && s.t0 <= ts ? std::max(ts, s.t1) : ts;
    }
    const BspNode& node = nodes_[child];
    Span back;
    Span front;
    split(node, t0, t1, {}, back, front);
    double reach = ts;
    if (back.present) reach = std::max(reach, solid_reach(node.child[0], back.t0, back.t1, ts));
    if (front.present) reach = std::max(reach, solid_reach(node.child[1], front.t0, front.t1, ts));
    return reach;
  }

 private:
  void split(const BspNode& node, double t0, double t1, Entry entry, Span& back, Span& front) const {
    const Vec3d n = to_double(node.plane.normal);
    const double ds = dot(n, from_) - double(node.plane.d);
    const double dw = dot(n, delta_);
    const ShiftOffsets off = offsets_(n);
    back = back_part(node.plane, ds, dw, off.back, t0, t1, entry);
    front = front_part(node.plane, ds, dw, off.front, off.back + off.front <= 0.0, t0, t1, entry);
  }

  // Narrows `s` to the back side of every bevel of the leaf; false when nothing is left.
  bool clip_bevels(const BspLeaf& leaf, Span& s) const {
    if constexpr (Offsets::kClipsBevels) {
      for (std::int32_t k = 0; k < leaf.bevel_count; ++k) {
        const Plane& bevel = bevels_[leaf.first_bevel + k];
        const Vec3d n = to_double(bevel.normal);
        s = back_part(bevel, dot(n, from_) - double(bevel.d), dot(n, delta_), offsets_(n).back, s.t0, s.t1,
                      s.entry);
        if (!s.present) return false;
      }
    }
    return true;
  }

  const BspNode* nodes_;
  const BspLeaf* leaves_;
  const Plane* bevels_;
  const std::uint8_t* kinds_;
  Offsets offsets_;
  Vec3d from_;
  Vec3d delta_;
};

template <class Offsets>
std::int32_t overlap_brush(const BspTree& tree, std::int32_t child, const Offsets& offsets, Vec3d p) {
  const auto back_of = [&](const Plane& plane, ShiftOffsets& off) {
    const Vec3d n = to_double(plane.normal);
    off = offsets(n);
    return dot(n, p) - double(plane.d);
  };
  while (!is_leaf(child)) {
    const BspNode& node = tree.nodes()[std::size_t(child)];
    ShiftOffsets off;
    const double dist = back_of(node.plane, off);
    const bool back = dist < off.back;
    const bool front = dist > -off.front;
    if (back && front) {
      const std::int32_t found = overlap_brush(tree, node.child[0], offsets, p);
      if (found != kNoBrush) return found;
      child = node.child[1];
    } else if (back || front) {
      child = node.child[back ? 0 : 1];
    } else {
      // Only a shape with no width along n gets here: it lies exactly in the plane. It is in solid only
      // where both sides are (the plane cuts through a brush), not on the face of a brush on one side:
      // a point on a floor's top face is outside the floor, whichever way the splitter faces.
      const std::int32_t below = overlap_brush(tree, node.child[0], offsets, p);
      if (below == kNoBrush) return kNoBrush;
      return overlap_brush(tree, node.child[1], offsets, p) == kNoBrush ? kNoBrush : below;
    }
  }
  if (child == kEmptyLeaf) return kNoBrush;
  const BspLeaf& leaf = tree.leaves()[std::size_t(leaf_index(child))];
  if constexpr (Offsets::kClipsBevels) {
    for (const Plane& bevel :
         tree.bevels().subspan(std::size_t(leaf.first_bevel), std::size_t(leaf.bevel_count))) {
      ShiftOffsets off;
      if (!(back_of(bevel, off) < off.back)) return kNoBrush;
    }
  }
  return leaf.brush;
}

template <class Offsets>
TraceResult run_trace(const BspTree& tree, const Offsets& offsets, float reach, Vec3 from, Vec3 to) {
  TraceResult result;
  result.end_position = to;
  const Vec3d from_d = to_double(from);
  const Vec3d delta = to_double(to) - from_d;
  const Tracer<Offsets> tracer(tree, offsets, from_d, delta);
  Impact impact;
  const double t_end = delta == Vec3d{} ? 0.0 : 1.0;
  const std::int32_t start = tree.start_node(min(from, to), max(from, to), reach);
  bool found;
  if constexpr (std::is_same_v<Offsets, PointOffsets>) {
    found = tracer.first_impact_point(start, t_end, impact);
  } else {
    found = tracer.first_impact(start, 0.0, t_end, {}, impact);
  }
  if (!found) return result;

  result.hit = true;
  result.brush = impact.brush;
  result.fraction = float(std::clamp(impact.t, 0.0, 1.0));
  if (impact.entry.plane == nullptr) {
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
  const Vec3d plane_normal = to_double(impact.entry.plane->normal);
  const Vec3d normal = impact.entry.front ? -plane_normal : plane_normal;
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
  return with_offsets(
      shape, [&](const auto& offsets) { return run_trace(*this, offsets, shape.reach(), from, to); });
}

TraceResult BspTree::raycast(Vec3 origin, Vec3 direction, float max_distance) const {
  if (!is_finite(origin) || !is_finite(direction) || !std::isfinite(max_distance) || max_distance < 0.0f) {
    return refused(QueryStatus::kNonFiniteInput, origin);
  }
  const Vec3 to = origin + normalize(direction) * max_distance;
  if (!is_finite(to)) return refused(QueryStatus::kNonFiniteInput, origin);
  return run_trace(*this, PointOffsets{}, 0.0f, origin, to);
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
  const std::int32_t start = start_node(position, position, shape.reach());
  result.brush = with_offsets(
      shape, [&](const auto& offsets) { return overlap_brush(*this, start, offsets, to_double(position)); });
  result.overlap = result.brush != kNoBrush;
  return result;
}

std::int32_t BspTree::point_brush(Vec3 p) const {
  if (!is_finite(p)) return kNoBrush;
  return overlap_brush(*this, start_node(p, p, 0.0f), PointOffsets{}, to_double(p));
}

}  // namespace shiftcast
