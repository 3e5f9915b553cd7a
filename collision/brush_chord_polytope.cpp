// Box and hull chords (collision/brush_chord_internal.hpp): a Cyrus-Beck clip of the line by every plane that
// can be a face of K = P ⊕ (−shape). A plane that is not a face of K still bounds it (its offset is the sum
// of the two supports), so including extra planes never changes the answer; leaving out a face would.
#include <algorithm>
#include <cmath>
#include <limits>

#include "collision/brush_chord_internal.hpp"

namespace shiftcast {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// How many distinct edge directions a hull without stated ones may contribute (pairs of its vertices).
constexpr std::size_t kMaxHullDirections = 64;

// The line clipped by half-spaces u·p < offset, kept open: a line in a plane is outside it.
class Clip {
 public:
  Clip(Vec3d start, Vec3d w, double erosion) : start_(start), w_(w), erosion_(erosion) {}

  void add(Vec3d u, double offset) {
    if (empty_) return;
    const double a = dot(u, start_) - offset + erosion_;
    const double b = dot(u, w_);
    if (b == 0.0) {
      empty_ = a >= 0.0;
    } else if (b < 0.0) {
      const double t = -a / b;
      if (t > t_in_) {
        t_in_ = t;
        normal_ = u;
      }
    } else {
      t_out_ = std::min(t_out_, -a / b);
    }
  }
  Chord chord() const {
    Chord c;
    c.exists = !empty_ && t_in_ < t_out_;
    c.t_in = t_in_;
    c.t_out = t_out_;
    c.normal = normal_;
    c.planar_entry = true;
    return c;
  }

 private:
  Vec3d start_;
  Vec3d w_;
  double erosion_;
  bool empty_ = false;
  double t_in_ = -kInfinity;
  double t_out_ = kInfinity;
  Vec3d normal_{};
};

double box_support(Vec3d u, Vec3d half) {
  return std::abs(u.x) * half.x + std::abs(u.y) * half.y + std::abs(u.z) * half.z;
}

// Both extents of a vertex set along u.
void extent(std::span<const Vec3d> vertices, Vec3d u, double& lo, double& hi) {
  lo = kInfinity;
  hi = -kInfinity;
  for (Vec3d v : vertices) {
    const double s = dot(u, v);
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
}
void extent(std::span<const Vec3> vertices, Vec3d u, double& lo, double& hi) {
  lo = kInfinity;
  hi = -kInfinity;
  for (Vec3 v : vertices) {
    const double s = dot(u, to_double(v));
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
}

void add_direction(Vec3d d, Vec3d* out, std::size_t& count) {
  const double len = length(d);
  if (len == 0.0 || count == kMaxHullDirections) return;
  d = d * (1.0 / len);
  for (std::size_t i = 0; i < count; ++i) {
    if (length(cross(out[i], d)) <= kDirectionEpsilon) return;
  }
  out[count++] = d;
}

}  // namespace

Chord box_chord(const BrushTopology& topo, const BrushTopology::Record& brush, Vec3d centre, Vec3d w,
                Vec3d half, double erosion) {
  Clip clip(centre, w, erosion);
  for (const Planed& f : topo.faces(brush))
    clip.add(f.normal, f.d + box_support(f.normal, half));
  for (int axis = 0; axis < 3; ++axis) {
    Vec3d u{};
    u[axis] = 1.0;
    clip.add(u, brush.bounds.max[axis] + half[axis]);
    clip.add(-u, -brush.bounds.min[axis] + half[axis]);
  }
  for (const BrushTopology::SweptPlane& s : topo.box_planes(brush)) {
    const double grow = box_support(s.u, half);
    clip.add(s.u, s.hi + grow);
    clip.add(-s.u, -s.lo + grow);
  }
  return clip.chord();
}

Chord hull_chord(const BrushTopology& topo, const BrushTopology::Record& brush,
                 std::span<const Vec3> vertices, std::span<const Vec3> edge_directions, Vec3d reference,
                 Vec3d w, double erosion) {
  Clip clip(reference, w, erosion);
  const std::span<const Vec3d> brush_vertices = topo.vertices(brush);
  double lo;
  double hi;
  for (const Planed& f : topo.faces(brush)) {
    extent(vertices, f.normal, lo, hi);
    clip.add(f.normal, f.d - lo);
  }
  // The hull's edge directions: stated, or every pair of its vertices.
  Vec3d dirs[kMaxHullDirections];
  std::size_t dir_count = 0;
  if (!edge_directions.empty()) {
    for (Vec3 d : edge_directions)
      add_direction(to_double(d), dirs, dir_count);
  } else {
    for (std::size_t i = 0; i < vertices.size(); ++i) {
      for (std::size_t j = i + 1; j < vertices.size(); ++j)
        add_direction(to_double(vertices[j]) - to_double(vertices[i]), dirs, dir_count);
    }
  }
  // A plane u bounds K at (max over P of u·v) − (min over the hull of u·v), and −u likewise.
  const auto both_ways = [&](Vec3d c) {
    const double len = length(c);
    if (len <= kDirectionEpsilon) return;
    const Vec3d u = c * (1.0 / len);
    double p_lo;
    double p_hi;
    extent(brush_vertices, u, p_lo, p_hi);
    extent(vertices, u, lo, hi);
    clip.add(u, p_hi - lo);
    clip.add(-u, -p_lo + hi);
  };
  for (int axis = 0; axis < 3; ++axis) {
    Vec3d u{};
    u[axis] = 1.0;
    both_ways(u);
  }
  for (std::size_t i = 0; i < dir_count; ++i) {
    for (std::size_t j = i + 1; j < dir_count; ++j)
      both_ways(cross(dirs[i], dirs[j]));  // the hull's own faces
    for (Vec3d e : topo.directions(brush))
      both_ways(cross(e, dirs[i]));
  }
  return clip.chord();
}

}  // namespace shiftcast
