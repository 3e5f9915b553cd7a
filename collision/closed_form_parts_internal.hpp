// Internal to collision/: the few pieces the closed-form narrow phase (narrow_phase.cpp), the cylinder–box
// pair (prism_pair.cpp) and the analytic time of impact (round_toi.cpp) share, so each is written once.
// Not part of the public API: nothing outside collision/ includes a detail/ header.
#pragma once

#include "collision/narrow_phase.hpp"
#include "collision/pose.hpp"
#include "collision/shape.hpp"

namespace shiftcast::detail {

// The offset turns with yaw; a vertical (or zero) offset does not, and skipping the trigonometry for it
// (players, most props) gives the same bits.
inline Vec3d posed_offset(const Shape& s, const Pose& p) {
  if (s.offset.x == 0 && s.offset.y == 0) return to_double(p.position) + Vec3d{0, 0, double(s.offset.z)};
  return to_world(p, to_double(s.offset));
}

// A closed form's answer, overlapping exactly when the distance is negative (touching is contact).
inline ShapeDistance make_distance(double distance, Vec3d normal, Vec3d point_a, Vec3d point_b) {
  ShapeDistance d;
  d.overlapping = distance < 0;
  d.distance = distance;
  d.normal = normal;
  d.point_a = point_a;
  d.point_b = point_b;
  return d;
}

// Newton on a rim (the round pairs' torus, the cylinder–box distance) stops when the ray is this close
// (Quake units) to the grown set. Double rounding of a distance at level scale (|q| up to ~1e5) is
// ~1e-11, so the gap is real, and it is five orders of magnitude below the float rounding of the poses a
// caller builds from t: the result is exact for every practical purpose, and still on the near side.
inline constexpr double kRimRootGap = 1e-9;
// Newton iterations on the rim before giving up with the last (still safe) time. Newton from the left on
// a convex function at least halves the gap each step even at a grazing (double) root, so 64 steps take
// any gap at level scale far below kRimRootGap; the cap only guards against a non-finite slope.
inline constexpr int kRimMaxIterations = 64;

}  // namespace shiftcast::detail
