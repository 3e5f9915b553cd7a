// Upright cylinder against a yawed box: the pair that dominates a match (players against crates), with a
// closed form because both shapes are vertical prisms.
//
// The cylinder is disc(r) × [z, z + h], the box is rect(turned by its yaw) × [z_lo, z_hi]. The Minkowski
// difference of two prisms is the prism (disc ⊖ rect) × (interval ⊖ interval), and the distance from the
// origin to a product of convex sets splits into an xy part and a z part:
//   gap_xy = (signed distance from the disc centre to the rectangle) − r   (negative: overlapping in xy)
//   gap_z  = the gap between the two z intervals                            (negative: overlapping in z)
//   apart:       distance = √(max(gap_xy, 0)² + max(gap_z, 0)²)
//   overlapping: gap_xy < 0 and gap_z < 0 (strict: touching is not overlapping), depth = min(−gap_xy, −gap_z)
// so the narrow phase needs no GJK for it, and the time of impact (both sets translating) needs no
// conservative advancement: Newton's method on this exact, convex-in-t distance.
//
// A sphere against a box (a projectile against a crate) is the same pair with a degenerate cylinder: its
// centre is a cylinder of radius 0 and height 0, and the sphere is that point grown by its radius, so its
// distance is the point's minus the radius (still convex in t along a line).
#pragma once

#include "collision/narrow_phase.hpp"
#include "collision/time_of_impact.hpp"

namespace shiftcast {

struct PosedCylinder {
  Vec3d bottom;  // bottom-centre in world space (a sphere: its centre)
  double radius;
  double height;
  double margin = 0;  // a sphere: radius and height 0, grown by this (its radius)
};

struct PosedBox {
  Vec3d centre;  // world space
  double cos_yaw;
  double sin_yaw;
  Vec3d half_extents;
};

PosedCylinder posed_cylinder(const Shape& cylinder, const Pose& pose);
PosedBox posed_box(const Shape& box, const Pose& pose);

// True when one shape is a cylinder or a sphere and the other a box, in either order.
inline bool is_cylinder_box(const Shape& a, const Shape& b) {
  const auto upright = [](const Shape& s) {
    return s.kind == ShapeKind::kCylinder || s.kind == ShapeKind::kSphere;
  };
  return (upright(a) && b.kind == ShapeKind::kBox) || (a.kind == ShapeKind::kBox && upright(b));
}

// The closed form above, the cylinder as a (normal from the cylinder towards the box, witnesses with
// point_b − point_a = distance · normal). Exact up to double rounding.
ShapeDistance cylinder_box_distance(const PosedCylinder& a, const PosedBox& b);

// The analytic time of impact of a cylinder–box pair (either order) whose sets do not turn: the box's
// yaw is constant and the cylinder's is constant or irrelevant (yaw_symmetric). Same contract as
// round_time_of_impact (collision/round_toi_internal.hpp): inputs already valid, method kAnalytic, steps =
// Newton iterations. (collision/round_toi.cpp)
Toi cylinder_box_time_of_impact(const Shape& a, const Motion& motion_a, const Shape& b,
                                const Motion& motion_b, const ToiOptions& options);

}  // namespace shiftcast
