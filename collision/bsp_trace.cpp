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
//
// The shifted planes are only a filter for shapes: near convex edges they meet beyond the true rounded
// offset surface, so a leaf's shifted region is larger than where the shape really touches its cell. Every
// solid leaf the motion reaches therefore asks the exact question of its brush
// (collision/brush_chord_internal.hpp), once per brush per query; only exact contacts lower the best impact,
// and every waiting share that starts after it is cut away, so the walk stops as soon as the best exact
// contact is earlier than the next leaf's shifted entry. A cell lies inside its leaf's brush, so the earliest
// exact contact over the brushes of the reached leaves is the earliest contact with the level.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "collision/brush_chord_internal.hpp"
#include "collision/bsp_tree.hpp"
#include "collision/narrow_phase.hpp"

namespace shiftcast {
namespace {

// Per-shape offset functors: the traversal is instantiated once per shape kind so the offset of each
// node plane inlines to a few multiplies. kClipsBevels: a point needs no bevels (each supports its cell).
// chord(): the exact chord of the shape, eroded by `erosion`, with one brush
// (collision/brush_chord_internal.hpp).
struct PointOffsets {
  static constexpr bool kClipsBevels = false;
  ShiftOffsets operator()(Vec3d) const { return {0.0, 0.0}; }
  static double planar_shift(Vec3d) { return 1.0; }
  static bool on_face(const BrushTopology&, const BrushTopology::Record&, int, Vec3d, double) {
    return false;
  }
  Chord chord(const BrushTopology& topo, const BrushTopology::Record& b, Vec3d ref, Vec3d w, double) const {
    return sphere_chord(topo, b, ref, w, 0.0);
  }
};
struct SphereOffsets {
  static constexpr bool kClipsBevels = true;
  double radius;
  Vec3d centre;
  ShiftOffsets operator()(Vec3d n) const {
    const double along = dot(n, centre);
    return {radius - along, radius + along};
  }
  static double planar_shift(Vec3d) { return 1.0; }
  bool on_face(const BrushTopology& topo, const BrushTopology::Record& b, int face, Vec3d ref,
               double margin) const {
    return sphere_on_face(topo, b, face, ref + centre, radius, margin);
  }
  Chord chord(const BrushTopology& topo, const BrushTopology::Record& b, Vec3d ref, Vec3d w,
              double erosion) const {
    return sphere_chord(topo, b, ref + centre, w, std::max(0.0, radius - erosion));
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
  // Eroding the cylinder by e pulls a plane of K with normal n in by e·(|n_xy| + |n_z|).
  static double planar_shift(Vec3d n) { return std::sqrt(n.x * n.x + n.y * n.y) + std::abs(n.z); }
  bool on_face(const BrushTopology& topo, const BrushTopology::Record& b, int face, Vec3d ref,
               double margin) const {
    return cylinder_on_face(topo, b, face, ref + bottom, radius, height, margin);
  }
  Chord chord(const BrushTopology& topo, const BrushTopology::Record& b, Vec3d ref, Vec3d w,
              double erosion) const {
    const double ends = std::min(erosion, 0.5 * height);
    return cylinder_chord(topo, b, ref + bottom + Vec3d{0, 0, ends}, w, std::max(0.0, radius - erosion),
                          height - 2.0 * ends);
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
  static double planar_shift(Vec3d) { return 1.0; }  // erosion is by translation distance
  static bool on_face(const BrushTopology&, const BrushTopology::Record&, int, Vec3d, double) {
    return false;
  }
  Chord chord(const BrushTopology& topo, const BrushTopology::Record& b, Vec3d ref, Vec3d w,
              double erosion) const {
    return box_chord(topo, b, ref + centre, w, half, erosion);
  }
};
struct HullOffsets {
  static constexpr bool kClipsBevels = true;
  const Shape* shape;
  ShiftOffsets operator()(Vec3d n) const { return shape->shift_offsets(n); }
  static double planar_shift(Vec3d) { return 1.0; }  // erosion is by translation distance
  static bool on_face(const BrushTopology&, const BrushTopology::Record&, int, Vec3d, double) {
    return false;
  }
  Chord chord(const BrushTopology& topo, const BrushTopology::Record& b, Vec3d ref, Vec3d w,
              double erosion) const {
    return hull_chord(topo, b, shape->hull_vertices, shape->hull_edge_directions, ref, w, erosion);
  }
};

// The plane through which the current segment start was entered (a node plane or a bevel), and whether
// its front side was entered (the solid is then in front, so the contact normal is −n). No plane: the
// start was never raised, so the segment starts where the motion starts.
struct Entry {
  const Plane* plane = nullptr;
  bool front = false;
};

// The best contact so far. A start in solid beats every contact (its t is below every share's start).
struct Impact {
  double t = 1.0;
  Vec3d normal{};
  std::int32_t brush = kNoBrush;
  bool start_solid = false;
};

constexpr double kStartSolidT = -1.0;

// How far inside a face's region (units) a face-on contact must be to skip the exact chord: a contact
// nearer a face's edge may be an edge contact, which the chord decides.
constexpr double kFaceMargin = 1e-6;

// A ray's contact from the plane it entered through: no plane means it started inside.
Impact impact_from_entry(double t, Entry entry, std::int32_t brush) {
  if (entry.plane == nullptr) return {kStartSolidT, {}, brush, true};
  const Vec3d n = to_double(entry.plane->normal);
  return {t, entry.front ? -n : n, brush, false};
}

// The exact answer of one brush for one query (collision/brush_chord_internal.hpp), remembered for the few
// brushes the query met last: a brush split into many cells is asked once, not once per cell.
template <class Offsets>
class ExactTester {
 public:
  enum class Kind : std::uint8_t { kNone, kHit, kStartSolid };
  struct Contact {
    Kind kind = Kind::kNone;
    double t = 0.0;  // first contact of the true shape, >= 0
    Vec3d normal{};  // the brush's outward normal there
  };

  // t_end: 1 for a motion, 0 for a static test (any direction then serves to find the chord).
  ExactTester(const BrushTopology& topo, const Offsets& offsets, const Shape& shape, Vec3d from, Vec3d delta,
              double t_end)
      : topo_(topo),
        offsets_(offsets),
        shape_(shape),
        from_(from),
        w_(t_end > 0.0 ? delta : Vec3d{1, 0, 0}),
        t_end_(t_end) {}

  // `limit`: a contact at or after it is of no interest (reported as none). Limits only ever fall
  // during a query, so a remembered answer stays right.
  const Contact& test(std::int32_t brush, double limit = 1.0) {
    for (int i = 0; i < kCached; ++i) {
      if (cached_[i] == brush) return contacts_[i];
    }
    const int slot = next_;
    next_ = (next_ + 1) % kCached;
    cached_[slot] = brush;
    contacts_[slot] = decide(topo_.brush(brush), limit);
    return contacts_[slot];
  }
  int tests() const { return tests_; }

  // Lowers `best` to this brush's exact contact, and to those of the brushes interpenetrating it when
  // it is touched (collision/brush_topology.hpp: slivers); true when the start is in solid.
  bool update(std::int32_t brush, Impact& best, bool& found) {
    if (consider(brush, best, found)) return true;
    const BrushTopology::Record& record = topo_.brush(brush);
    if (record.overlapping.count == 0 || test(brush).kind == Kind::kNone) return false;
    for (std::int32_t other : topo_.overlapping(record)) {
      if (consider(other, best, found)) return true;
    }
    return false;
  }

  // Where the motion is in `brush` deeper than kPenetrationTolerance (empty when in >= out).
  Chord solid_chord(std::int32_t brush) const {
    const BrushTopology::Record& record = topo_.brush(brush);
    if (record.faces.count == 0) return {};
    return offsets_.chord(topo_, record, from_, w_, kPenetrationTolerance);
  }

 private:
  // The brush's own faces shifted by the shape's supports (Melax's planes, without the cell's splitters
  // or bevels) bound K: where the line misses them, or meets them only after `limit`, there is nothing
  // to compute.
  struct FaceBound {
    bool possible = false;
    double lo = 0.0;  // where the line enters the shifted faces (all of them)
    double hi = 0.0;
    int entry = -1;  // the face it enters last, at lo
  };
  FaceBound may_touch(const BrushTopology::Record& record, double limit) const {
    FaceBound bound{false, -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                    -1};
    const std::span<const Planed> faces = topo_.faces(record);
    for (std::size_t i = 0; i < faces.size(); ++i) {
      const Planed& f = faces[i];
      const double a = dot(f.normal, from_) - f.d - offsets_(f.normal).back;
      const double b = dot(f.normal, w_);
      if (b == 0.0) {
        if (a >= 0.0) return bound;
      } else if (b < 0.0) {
        if (-a / b > bound.lo) {
          bound.lo = -a / b;
          bound.entry = int(i);
        }
      } else {
        bound.hi = std::min(bound.hi, -a / b);
      }
    }
    bound.possible =
        bound.lo < bound.hi && bound.hi > 0.0 && bound.lo < (t_end_ == 0.0 ? 0.0 : std::min(t_end_, limit));
    return bound;
  }

  // The common contact: the motion meets the brush face-on, well inside one face's region. The shifted
  // faces' entry is then the exact contact, and nothing else needs computing.
  bool face_on(const BrushTopology::Record& record, const FaceBound& bound, Contact& c) const {
    if (bound.entry < 0 || bound.lo < 0.0) return false;
    const Vec3d n = topo_.faces(record)[std::size_t(bound.entry)].normal;
    const double approach = -dot(n, w_);
    // Far enough inside the face that the motion is deeper than the skin before it could leave it.
    const double margin = std::max(kFaceMargin, 4.0 * kContactSkin * length(w_) / approach);
    const double deep_enough = bound.lo + kContactSkin * Offsets::planar_shift(n) / approach;
    if (!(deep_enough < std::min(t_end_, bound.hi))) return false;
    if (!offsets_.on_face(topo_, record, bound.entry, from_ + w_ * bound.lo, margin)) return false;
    c.kind = Kind::kHit;
    c.t = bound.lo;
    c.normal = n;
    return true;
  }

  Contact decide(const BrushTopology::Record& record, double limit) {
    Contact c;
    if (record.faces.count == 0) return c;
    const FaceBound bound = may_touch(record, limit);
    if (!bound.possible) return c;
    ++tests_;
    if (t_end_ > 0.0 && face_on(record, bound, c)) return c;
    if (t_end_ == 0.0) {
      const Chord deep = offsets_.chord(topo_, record, from_, w_, kPenetrationTolerance);
      if (deep.exists && deep.t_in < 0.0 && deep.t_out > 0.0) c.kind = Kind::kStartSolid;
      return c;
    }
    const Chord skin = offsets_.chord(topo_, record, from_, w_, kContactSkin);
    if (!skin.exists || skin.t_out <= 0.0 || skin.t_in >= t_end_) return c;
    if (skin.t_in >= 0.0) {
      const double approach = -dot(skin.normal, w_);
      if (skin.planar_entry && approach > 0.0) {
        // Through a planar piece: the true shape meets that plane kContactSkin·shift earlier. The plane
        // supports K, so this is never later than the true entry, and differs from it only where the
        // entry is within the skin of the piece's edge.
        c.kind = Kind::kHit;
        c.t = std::max(0.0, skin.t_in - kContactSkin * Offsets::planar_shift(skin.normal) / approach);
        c.normal = skin.normal;
        return c;
      }
      const Chord touch = offsets_.chord(topo_, record, from_, w_, 0.0);
      c.kind = Kind::kHit;
      c.t = touch.exists ? std::max(0.0, touch.t_in) : skin.t_in;
      c.normal = touch.exists ? touch.normal : skin.normal;
      return c;
    }
    const Chord deep = offsets_.chord(topo_, record, from_, w_, kPenetrationTolerance);
    if (deep.exists && deep.t_in < 0.0 && deep.t_out > 0.0) {
      c.kind = Kind::kStartSolid;
      return c;
    }
    // Touching, within the tolerance: a hit at once if the motion heads into the brush's nearest
    // surface, free otherwise (sliding along it, or leaving it).
    const Shape brush_hull = Shape::hull(topo_.vertices_float(record));
    const ShapeDistance d = shape_distance(shape_, {to_float(from_), 0.0f}, brush_hull, {});
    const Vec3d outward = -d.normal;  // from the brush towards the shape
    if (dot(outward, w_) < 0.0) {
      c.kind = Kind::kHit;
      c.normal = outward;
    }
    return c;
  }

  bool consider(std::int32_t brush, Impact& best, bool& found) {
    const Contact& c = test(brush, found ? best.t : t_end_);
    if (c.kind == Kind::kStartSolid) {
      best = {kStartSolidT, {}, brush, true};
      return true;
    }
    if (c.kind == Kind::kHit && (!found || c.t < best.t)) {
      best = {c.t, c.normal, brush, false};
      found = true;
    }
    return false;
  }

  static constexpr int kCached = 8;
  const BrushTopology& topo_;
  const Offsets& offsets_;
  const Shape& shape_;
  Vec3d from_;
  Vec3d w_;
  double t_end_;
  std::int32_t cached_[kCached] = {kNoBrush, kNoBrush, kNoBrush, kNoBrush,
                                   kNoBrush, kNoBrush, kNoBrush, kNoBrush};
  Contact contacts_[kCached];
  int next_ = 0;
  int tests_ = 0;
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
  Tracer(const BspTree& tree, Offsets offsets, const Shape& shape, Vec3d from, Vec3d delta, double t_end)
      : nodes_(tree.nodes().data()),
        leaves_(tree.leaves().data()),
        bevels_(tree.bevels().data()),
        kinds_(tree.plane_kinds().data()),
        offsets_(offsets),
        from_(from),
        delta_(delta),
        exact_(tree.topology(), offsets_, shape, from, delta, t_end) {}

  int exact_tests() const { return exact_.tests(); }

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
            if (exact_.update(leaf.brush, best, found)) return true;
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
        // A contact at t = 0 still lets shares starting at 0 in: one of them may start in solid.
        const double end = found ? std::min(p.t1, best.t) : p.t1;
        if (p.t0 < end || (p.t0 == end && (!found || end == 0.0))) {
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
        best = impact_from_entry(t0, entry, leaves_[leaf_index(child)].brush);
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
      const BspLeaf& leaf = leaves_[leaf_index(child)];
      Span s{t0, t1, {}, true};
      if (!clip_bevels(leaf, s) || s.t0 > ts) return ts;
      if constexpr (!Offsets::kClipsBevels) return std::max(ts, s.t1);  // a point: the cell is exact
      const Chord c = exact_.solid_chord(leaf.brush);
      return c.exists && c.t_in <= ts && c.t_out > ts ? std::max(ts, c.t_out) : ts;
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
  mutable ExactTester<Offsets> exact_;  // per query: the tracer lives on the query's stack
};

// The first brush the shape at p overlaps deeper than kPenetrationTolerance: every solid leaf whose shifted
// region holds p asks its brush the exact question (`exact` is a static tester at p; unused for a point,
// whose cell is exact). Without a tester, the first leaf whose shifted region holds p (may_overlap).
template <class Offsets>
std::int32_t overlap_brush(const BspTree& tree, std::int32_t child, const Offsets& offsets, Vec3d p,
                           ExactTester<Offsets>* exact) {
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
      const std::int32_t found = overlap_brush(tree, node.child[0], offsets, p, exact);
      if (found != kNoBrush) return found;
      child = node.child[1];
    } else if (back || front) {
      child = node.child[back ? 0 : 1];
    } else {
      // Only a shape with no width along n gets here: it lies exactly in the plane. It is in solid only
      // where both sides are (the plane cuts through a brush), not on the face of a brush on one side:
      // a point on a floor's top face is outside the floor, whichever way the splitter faces.
      const std::int32_t below = overlap_brush(tree, node.child[0], offsets, p, exact);
      if (below == kNoBrush) return kNoBrush;
      return overlap_brush(tree, node.child[1], offsets, p, exact) == kNoBrush ? kNoBrush : below;
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
    if (exact == nullptr) return leaf.brush;  // may_overlap: the shifted region is the answer
    return exact->test(leaf.brush).kind == ExactTester<Offsets>::Kind::kStartSolid ? leaf.brush : kNoBrush;
  }
  return leaf.brush;
}

// The shape's bounding box relative to its reference point: a start node found for the swept box grown
// by it is as deep as one found for the reach in every direction, and deeper for an upright cylinder
// (15 across, 56 up), whose reach would have grown the box by 58 units on every side.
struct ShapeExtent {
  Vec3 lo;
  Vec3 hi;
};
ShapeExtent shape_extent(const Shape& shape) {
  ShapeExtent e;
  for (int axis = 0; axis < 3; ++axis) {
    Vec3d u{};
    u[axis] = 1.0;
    e.lo[axis] = -float(shape.support(-u));
    e.hi[axis] = float(shape.support(u));
  }
  return e;
}

template <class Offsets>
TraceResult run_trace(const BspTree& tree, const Offsets& offsets, const Shape& shape, Vec3 from, Vec3 to) {
  TraceResult result;
  result.end_position = to;
  const Vec3d from_d = to_double(from);
  const Vec3d delta = to_double(to) - from_d;
  const double t_end = delta == Vec3d{} ? 0.0 : 1.0;
  const Tracer<Offsets> tracer(tree, offsets, shape, from_d, delta, t_end);
  Impact impact;
  const ShapeExtent extent = shape_extent(shape);
  const std::int32_t start = tree.start_node(min(from, to) + extent.lo, max(from, to) + extent.hi, 0.0f);
  bool found;
  if constexpr (std::is_same_v<Offsets, PointOffsets>) {
    found = tracer.first_impact_point(start, t_end, impact);
  } else {
    found = tracer.first_impact(start, 0.0, t_end, {}, impact);
  }
  result.exact_tests = std::uint16_t(std::min(tracer.exact_tests(), 0xffff));
  if (!found) return result;

  result.hit = true;
  result.brush = impact.brush;
  if (impact.start_solid) {
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
  const double t = std::clamp(impact.t, 0.0, 1.0);
  result.fraction = float(t);
  result.normal = to_float(impact.normal);
  // Back along the motion by kSurfaceBackoff: the gap to the brush is then at most that, whatever the
  // angle of approach, and the shape is outside it (it stands before its first contact).
  const double backed = t - double(kSurfaceBackoff) / length(delta);
  result.end_position = backed > 0.0 ? to_float(from_d + delta * backed) : from;
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
  return with_offsets(shape, [&](const auto& offsets) { return run_trace(*this, offsets, shape, from, to); });
}

TraceResult BspTree::raycast(Vec3 origin, Vec3 direction, float max_distance) const {
  if (!is_finite(origin) || !is_finite(direction) || !std::isfinite(max_distance) || max_distance < 0.0f) {
    return refused(QueryStatus::kNonFiniteInput, origin);
  }
  const Vec3 to = origin + normalize(direction) * max_distance;
  if (!is_finite(to)) return refused(QueryStatus::kNonFiniteInput, origin);
  const Shape point = Shape::point();
  return run_trace(*this, PointOffsets{}, point, origin, to);
}

OverlapResult BspTree::overlap_query(const Shape& shape, Vec3 position, bool exact) const {
  OverlapResult result;
  if (!is_finite(position)) {
    result.status = QueryStatus::kNonFiniteInput;
    return result;
  }
  if (!shape.valid()) {
    result.status = QueryStatus::kInvalidShape;
    return result;
  }
  const ShapeExtent extent = shape_extent(shape);
  const std::int32_t start = start_node(position + extent.lo, position + extent.hi, 0.0f);
  const Vec3d p = to_double(position);
  result.brush = with_offsets(shape, [&](const auto& offsets) {
    using Tester = ExactTester<std::decay_t<decltype(offsets)>>;
    if (!exact) return overlap_brush(*this, start, offsets, p, static_cast<Tester*>(nullptr));
    Tester tester(topology_, offsets, shape, p, {}, 0.0);
    return overlap_brush(*this, start, offsets, p, &tester);
  });
  result.overlap = result.brush != kNoBrush;
  return result;
}

OverlapResult BspTree::overlap(const Shape& shape, Vec3 position) const {
  return overlap_query(shape, position, true);
}

OverlapResult BspTree::may_overlap(const Shape& shape, Vec3 position) const {
  return overlap_query(shape, position, false);
}

std::int32_t BspTree::point_brush(Vec3 p) const {
  if (!is_finite(p)) return kNoBrush;
  const PointOffsets offsets;
  return overlap_brush<PointOffsets>(*this, start_node(p, p, 0.0f), offsets, to_double(p), nullptr);
}

}  // namespace shiftcast
