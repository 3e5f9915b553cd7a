// Internal to the brute-force oracle: the helpers brush_oracle.cpp (spheres, cylinders, rays) and
// box_oracle.cpp (boxes and hulls) share. Not for tests; they use brush_oracle.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "tests/support/brush_oracle.hpp"

namespace shiftcast::oracle_internal {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Culling boxes grow by this: polytope bounds come from computed vertices, which rounding may place a
// hair inside the true planes.
inline constexpr Vec3d kCullMargin{kOracleOnPlane, kOracleOnPlane, kOracleOnPlane};

// Distance from q to the segment ab.
inline double segment_distance(Vec3d q, Vec3d a, Vec3d b) {
  const Vec3d ab = b - a;
  const double len2 = dot(ab, ab);
  double s = len2 > 0 ? dot(q - a, ab) / len2 : 0.0;
  s = std::clamp(s, 0.0, 1.0);
  return length(q - (a + ab * s));
}

// x (on the face's plane) is inside the face's polygon, or at most `tolerance` outside it.
inline bool inside_face(const OraclePolytope& poly, const OraclePolytope::Face& face, Vec3d x,
                        double tolerance) {
  for (std::size_t i = 0; i < face.loop.size(); ++i) {
    const Vec3d a = poly.vertices[std::size_t(face.loop[i])];
    const Vec3d b = poly.vertices[std::size_t(face.loop[(i + 1) % face.loop.size()])];
    const Vec3d ab = b - a;
    if (dot(cross(ab, x - a), face.plane.normal) < -tolerance * length(ab)) return false;
  }
  return true;
}

// Largest signed plane distance: negative exactly when p is strictly inside (and then minus the distance
// to the surface); otherwise a lower bound on the distance to the polytope.
inline double max_plane_distance(const OraclePolytope& poly, Vec3d p) {
  double m = -kInfinity;
  if (poly.planes.empty()) {
    for (const auto& face : poly.faces)
      m = std::max(m, face.plane.distance(p));
  } else {
    for (const Planed& plane : poly.planes)
      m = std::max(m, plane.distance(p));
  }
  return m;
}

// Euclidean distance from p to the closed polytope, for p not strictly inside: the nearest point is on
// a face's interior or on an edge.
inline double outside_distance(const OraclePolytope& poly, Vec3d p) {
  double best = kInfinity;
  for (const auto& face : poly.faces) {
    const double d = face.plane.distance(p);
    if (std::abs(d) < best && inside_face(poly, face, p - face.plane.normal * d, 0.0)) best = std::abs(d);
  }
  for (const auto& e : poly.edges) {
    best = std::min(best,
                    segment_distance(p, poly.vertices[std::size_t(e[0])], poly.vertices[std::size_t(e[1])]));
  }
  return best;
}

// Distance from p to the closed box (0 inside).
inline double aabb_distance(const Aabbd& box, Vec3d p) {
  const Vec3d d = max(max(box.min - p, p - box.max), Vec3d{});
  return length(d);
}

// Does the segment p0 + t w, t in [0, 1], meet the closed box? (slab test)
inline bool segment_meets_box(Vec3d p0, Vec3d w, const Aabbd& box) {
  double t0 = 0;
  double t1 = 1;
  for (int axis = 0; axis < 3; ++axis) {
    if (w[axis] == 0) {
      if (p0[axis] < box.min[axis] || p0[axis] > box.max[axis]) return false;
      continue;
    }
    double a = (box.min[axis] - p0[axis]) / w[axis];
    double b = (box.max[axis] - p0[axis]) / w[axis];
    if (a > b) std::swap(a, b);
    t0 = std::max(t0, a);
    t1 = std::min(t1, b);
    if (t0 > t1) return false;
  }
  return true;
}

inline Aabbd grown(Aabbd box, Vec3d by) {
  box.min -= by;
  box.max += by;
  return box;
}

// Where a sweep enters one brush.
struct BrushEntry {
  double t = kInfinity;
  Vec3d normal{};
  OracleFeature feature = OracleFeature::kNone;
};

// A sweep's per-brush entries, reduced to the first contact with the lowest id among ties.
class FirstContact {
 public:
  double bound() const { return best_ + kOracleTieFraction; }
  void add(std::int32_t brush, const BrushEntry& e) {
    best_ = std::min(best_, e.t);
    entries_.push_back({brush, e});
  }
  OracleHit result() const {
    OracleHit hit;
    for (const auto& [brush, e] : entries_) {
      if (e.t <= best_ + kOracleTieFraction && (!hit.hit || brush < hit.brush)) {
        hit.hit = true;
        hit.brush = brush;
        hit.normal = e.normal;
        hit.feature = e.feature;
      }
    }
    if (hit.hit) hit.fraction = best_;
    return hit;
  }

 private:
  double best_ = kInfinity;
  std::vector<std::pair<std::int32_t, BrushEntry>> entries_;
};

// The answer of a sweep that starts overlapping `brush`.
inline OracleHit start_solid_hit(std::int32_t brush) {
  OracleHit hit;
  hit.hit = true;
  hit.start_solid = true;
  hit.fraction = 0;
  hit.brush = brush;
  return hit;
}

// Cyrus-Beck: where the line p0 + t w (t <= 1) is strictly behind every plane moved in by `inset`: the
// open interval (t_in, t_out) and the plane it enters through (null if none enters: the line starts
// inside, or is parallel to every plane). `miss` when a parallel plane has the line on or in front of it.
struct PlaneClip {
  double t_in = -kInfinity;
  double t_out = 1;
  const Planed* entering = nullptr;
  bool miss = false;
};

inline PlaneClip clip_by_planes(std::span<const Planed> planes, Vec3d p0, Vec3d w, double inset) {
  PlaneClip c;
  for (const Planed& plane : planes) {
    const double dist = plane.distance(p0) + inset;
    const double denom = dot(plane.normal, w);
    if (denom == 0) {
      if (dist >= 0) {  // parallel, on or in front: never strictly behind
        c.miss = true;
        return c;
      }
    } else if (denom < 0) {
      if (-dist / denom > c.t_in) {
        c.t_in = -dist / denom;
        c.entering = &plane;
      }
    } else {
      c.t_out = std::min(c.t_out, -dist / denom);
    }
  }
  return c;
}

}  // namespace shiftcast::oracle_internal
