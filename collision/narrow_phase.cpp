// Closed forms for round pairs and for cylinder–box (collision/prism_pair.hpp), GJK
// (collision/gjk_internal.hpp) for everything else.
//
// Every closed form reports its witnesses so that point_b − point_a = distance · normal, apart or
// overlapping, and compares with a strict < 0 for overlap: touching at exactly distance 0 is contact,
// not overlap, as everywhere in shiftcast.
#include "collision/narrow_phase.hpp"

#include <algorithm>
#include <cmath>

#include "collision/gjk_internal.hpp"
#include "collision/prism_pair.hpp"

namespace shiftcast {
namespace {

struct Ball {
  Vec3d centre;
  double radius;
};

// Upright, so yaw only moves the bottom-centre.
using Cylinder = PosedCylinder;

// The offset turns with yaw; a vertical (or zero) offset does not, and skipping the trigonometry for it
// (players, most props) gives the same bits.
Vec3d posed_offset(const Shape& s, const Pose& p) {
  if (s.offset.x == 0 && s.offset.y == 0) return to_double(p.position) + Vec3d{0, 0, double(s.offset.z)};
  return to_world(p, to_double(s.offset));
}

Ball posed_ball(const Shape& s, const Pose& p) {
  if (s.kind == ShapeKind::kPoint) return {to_double(p.position), 0.0};
  return {posed_offset(s, p), double(s.radius)};
}

ShapeDistance make(double distance, Vec3d normal, Vec3d point_a, Vec3d point_b) {
  ShapeDistance d;
  d.overlapping = distance < 0;
  d.distance = distance;
  d.normal = normal;
  d.point_a = point_a;
  d.point_b = point_b;
  return d;
}

ShapeDistance swapped(ShapeDistance d) {
  std::swap(d.point_a, d.point_b);
  d.normal = -d.normal;
  return d;
}

ShapeDistance ball_ball(const Ball& a, const Ball& b) {
  const Vec3d d = b.centre - a.centre;
  const double len = length(d);
  // Coincident centres have no direction; +z is as good as any and never changes between runs.
  const Vec3d n = len > 0 ? d * (1.0 / len) : Vec3d{0, 0, 1};
  return make(len - (a.radius + b.radius), n, a.centre + n * a.radius, b.centre - n * b.radius);
}

// Ball as a, cylinder as b. Everything is measured from the cylinder (the closest point of the solid
// cylinder to the centre, or the nearest face when the centre is inside), then turned to run a → b.
ShapeDistance ball_cylinder(const Ball& s, const Cylinder& c) {
  const Vec3d rel = s.centre - c.bottom;
  const double rho = std::sqrt(rel.x * rel.x + rel.y * rel.y);
  // A centre on the axis has no radial direction; +x is a fixed choice.
  const Vec3d radial = rho > 0 ? Vec3d{rel.x / rho, rel.y / rho, 0} : Vec3d{1, 0, 0};
  const Vec3d up{0, 0, 1};
  const bool out_side = rho > c.radius, above = rel.z > c.height, below = rel.z < 0;
  Vec3d out;               // unit, from the cylinder towards the ball centre
  Vec3d surface;           // point of the cylinder's surface the ball is measured against
  double centre_distance;  // signed: negative when the centre is inside the cylinder
  if (!out_side && !above && !below) {
    // Inside: the nearest face is the way out (depth of a convex body's offset = face depth + radius);
    // ties prefer the top, then the bottom, then the side, like the cylinder pair's vertical tie.
    const double top = c.height - rel.z, bottom = rel.z, side = c.radius - rho;
    centre_distance = -top, out = up;
    if (bottom < -centre_distance) centre_distance = -bottom, out = -up;
    if (side < -centre_distance) centre_distance = -side, out = radial;
    surface = s.centre - out * centre_distance;
  } else {
    // Outside: clamp radially and in z. Each gap is computed directly, never as a difference of points,
    // so a centre just outside the rim keeps an exact direction.
    const double gap_xy = out_side ? rho - c.radius : 0.0;
    const double gap_z = above ? rel.z - c.height : (below ? rel.z : 0.0);
    centre_distance = std::sqrt(gap_xy * gap_xy + gap_z * gap_z);
    out = (radial * gap_xy + up * gap_z) * (1.0 / centre_distance);
    surface = c.bottom + Vec3d{0, 0, std::clamp(rel.z, 0.0, c.height)} +
              (out_side ? radial * c.radius : Vec3d{rel.x, rel.y, 0});
  }
  return make(centre_distance - s.radius, -out, s.centre - out * s.radius, surface);
}

// Two upright cylinders: their Minkowski difference is again an upright cylinder (radius ra + rb,
// height ha + hb), so the gaps below are its exact distance or depth, with no iteration.
ShapeDistance cylinder_cylinder(const Cylinder& a, const Cylinder& b) {
  const Vec3d dxy{b.bottom.x - a.bottom.x, b.bottom.y - a.bottom.y, 0};
  const double centre_xy = length(dxy);
  // Coaxial cylinders have no radial direction; +x is a fixed choice.
  const Vec3d u = centre_xy > 0 ? dxy * (1.0 / centre_xy) : Vec3d{1, 0, 0};
  const double gap_xy = centre_xy - (a.radius + b.radius);
  const double a_top = a.bottom.z + a.height, b_top = b.bottom.z + b.height;
  const double gap_up = b.bottom.z - a_top;    // b above a
  const double gap_down = a.bottom.z - b_top;  // b below a
  const bool b_above = gap_up >= gap_down;
  const double gap_z = b_above ? gap_up : gap_down;
  const Vec3d vertical{0, 0, b_above ? 1.0 : -1.0};

  // Witness candidates: rims facing each other radially, caps facing each other vertically; where an
  // axis overlaps, the middle of the overlap on that axis (a point both shapes share there).
  const Vec3d a_xy{a.bottom.x, a.bottom.y, 0};
  const Vec3d rim_a = a_xy + u * a.radius, rim_b = a_xy + u * (centre_xy - b.radius);
  const double lens =
      0.5 * (std::max(-a.radius, centre_xy - b.radius) + std::min(a.radius, centre_xy + b.radius));
  const Vec3d lens_mid = a_xy + u * lens;
  const double cap_a = b_above ? a_top : a.bottom.z, cap_b = b_above ? b.bottom.z : b_top;
  const double z_mid = 0.5 * (std::max(a.bottom.z, b.bottom.z) + std::min(a_top, b_top));
  const auto at = [](Vec3d xy, double z) { return Vec3d{xy.x, xy.y, z}; };

  if (gap_xy < 0 && gap_z < 0) {
    // Overlap: the shallower axis is the way out; ties go vertical (stacking is the common case).
    if (-gap_z <= -gap_xy) return make(gap_z, vertical, at(lens_mid, cap_a), at(lens_mid, cap_b));
    return make(gap_xy, u, at(rim_a, z_mid), at(rim_b, z_mid));
  }
  // Apart (or touching) across one axis while the other overlaps: that axis's gap is the distance. Both
  // gaps exactly 0 is rim on rim, reported vertically like the overlap tie.
  if (gap_z >= 0 && gap_xy <= 0) return make(gap_z, vertical, at(lens_mid, cap_a), at(lens_mid, cap_b));
  if (gap_xy >= 0 && gap_z <= 0) return make(gap_xy, u, at(rim_a, z_mid), at(rim_b, z_mid));
  const double distance = std::sqrt(gap_xy * gap_xy + gap_z * gap_z);
  return make(distance, (u * gap_xy + vertical * gap_z) * (1.0 / distance), at(rim_a, cap_a),
              at(rim_b, cap_b));
}

bool finite_pose(const Pose& p) {
  return is_finite(p.position) && std::isfinite(p.yaw);
}

}  // namespace

// The prism part of cylinder_box_distance, without the sphere's margin.
ShapeDistance prism_box_distance(const PosedCylinder& a, const PosedBox& b);

PosedCylinder posed_cylinder(const Shape& s, const Pose& p) {
  if (s.kind == ShapeKind::kSphere) return {posed_offset(s, p), 0.0, 0.0, double(s.radius)};
  return {posed_offset(s, p), double(s.radius), double(s.height)};
}

PosedBox posed_box(const Shape& s, const Pose& p) {
  // Most props stand unturned: cos 0 and sin 0 are exactly 1 and 0, so skipping the call changes no bit.
  if (p.yaw == 0) return {posed_offset(s, p), 1.0, 0.0, to_double(s.half_extents)};
  const double yaw = p.yaw;
  return {posed_offset(s, p), std::cos(yaw), std::sin(yaw), to_double(s.half_extents)};
}

// In the box's frame (origin at its centre, axes along its edges) the disc centre is c; the xy part is
// the signed distance from c to the rectangle minus r, the z part the gap of the two intervals, each
// with witnesses on both shapes, then combined as cylinder_cylinder combines its two axes.
ShapeDistance cylinder_box_distance(const PosedCylinder& a, const PosedBox& b) {
  ShapeDistance d = prism_box_distance(a, b);
  if (a.margin > 0) {
    // A sphere: its centre's distance less its radius, its witness on its surface towards the box.
    d.distance -= a.margin;
    d.overlapping = d.distance < 0;
    d.point_a = d.point_a + d.normal * a.margin;
  }
  return d;
}

ShapeDistance prism_box_distance(const PosedCylinder& a, const PosedBox& b) {
  const double rel_x = a.bottom.x - b.centre.x, rel_y = a.bottom.y - b.centre.y;
  const double cx = b.cos_yaw * rel_x + b.sin_yaw * rel_y;
  const double cy = -b.sin_yaw * rel_x + b.cos_yaw * rel_y;
  const double hx = b.half_extents.x, hy = b.half_extents.y;
  // q: the rectangle's point nearest to c. Each difference is taken directly, never from world points,
  // so a centre just outside a face keeps an exact direction.
  const double dx = std::clamp(cx, -hx, hx) - cx, dy = std::clamp(cy, -hy, hy) - cy;
  const double outside = std::sqrt(dx * dx + dy * dy);
  double gap_xy;  // signed distance from the disc to the rectangle (negative: overlap in xy)
  double ux, uy;  // unit, from the disc towards the rectangle (box frame)
  double ax, ay;  // the disc's witness (box frame)
  double bx, by;  // the rectangle's witness (box frame)
  double sx, sy;  // a point of both (closed) sets when gap_xy <= 0
  if (outside > 0) {
    ux = dx / outside, uy = dy / outside;
    gap_xy = outside - a.radius;
    ax = cx + ux * a.radius, ay = cy + uy * a.radius;
    bx = cx + dx, by = cy + dy;
    sx = bx, sy = by;  // q is in the rectangle, and in the disc once the gap is not positive
  } else {
    // The centre is in the closed rectangle: the nearest face is the way out, ties to the x faces (a
    // fixed choice). The box moves away from the disc through the opposite face: u points inwards.
    const double depth_x = hx - std::abs(cx), depth_y = hy - std::abs(cy);
    const bool along_x = depth_x <= depth_y;
    const double depth = along_x ? depth_x : depth_y;
    const double fx = along_x ? (cx < 0 ? -1.0 : 1.0) : 0.0;  // outward face normal
    const double fy = along_x ? 0.0 : (cy < 0 ? -1.0 : 1.0);
    ux = -fx, uy = -fy;
    gap_xy = -depth - a.radius;
    ax = cx - fx * a.radius, ay = cy - fy * a.radius;
    bx = cx + fx * depth, by = cy + fy * depth;
    sx = cx, sy = cy;
  }

  const double a_top = a.bottom.z + a.height;
  const double b_bottom = b.centre.z - b.half_extents.z, b_top = b.centre.z + b.half_extents.z;
  const double gap_up = b_bottom - a_top;      // box above the cylinder
  const double gap_down = a.bottom.z - b_top;  // box below the cylinder
  const bool b_above = gap_up >= gap_down;
  const double gap_z = b_above ? gap_up : gap_down;
  const double vertical = b_above ? 1.0 : -1.0;
  const double cap_a = b_above ? a_top : a.bottom.z, cap_b = b_above ? b_bottom : b_top;
  const double z_mid = 0.5 * (std::max(a.bottom.z, b_bottom) + std::min(a_top, b_top));

  // Back to world space: rotate the box-frame xy by the yaw, about the box's centre.
  const auto world = [&](double x, double y, double z) {
    return Vec3d{b.centre.x + b.cos_yaw * x - b.sin_yaw * y, b.centre.y + b.sin_yaw * x + b.cos_yaw * y, z};
  };
  const auto horizontal = [&](double x, double y) {
    return Vec3d{b.cos_yaw * x - b.sin_yaw * y, b.sin_yaw * x + b.cos_yaw * y, 0};
  };
  const auto across_z = [&](double distance) {
    return make(distance, Vec3d{0, 0, vertical}, world(sx, sy, cap_a), world(sx, sy, cap_b));
  };
  const auto across_xy = [&](double distance) {
    return make(distance, horizontal(ux, uy), world(ax, ay, z_mid), world(bx, by, z_mid));
  };
  // Overlap: the shallower axis is the way out; ties go vertical (a player on a crate). Apart or touching
  // across one axis while the other overlaps: that axis's gap is the distance; both exactly 0 (rim on an
  // edge) is reported vertically like the overlap tie.
  if (gap_xy < 0 && gap_z < 0) return -gap_z <= -gap_xy ? across_z(gap_z) : across_xy(gap_xy);
  if (gap_z >= 0 && gap_xy <= 0) return across_z(gap_z);
  if (gap_xy >= 0 && gap_z <= 0) return across_xy(gap_xy);
  const double distance = std::sqrt(gap_xy * gap_xy + gap_z * gap_z);
  const Vec3d n = (horizontal(ux, uy) * gap_xy + Vec3d{0, 0, vertical * gap_z}) * (1.0 / distance);
  return make(distance, n, world(ax, ay, cap_a), world(bx, by, cap_b));
}

bool is_round(const Shape& shape) {
  return shape.kind == ShapeKind::kPoint || shape.kind == ShapeKind::kSphere ||
         shape.kind == ShapeKind::kCylinder;
}

ShapeDistance shape_distance(const Shape& a, const Pose& pose_a, const Shape& b, const Pose& pose_b) {
  ShapeDistance refused;
  if (!finite_pose(pose_a) || !finite_pose(pose_b)) {
    refused.status = QueryStatus::kNonFiniteInput;
    return refused;
  }
  if (!a.valid() || !b.valid()) {
    refused.status = QueryStatus::kInvalidShape;
    return refused;
  }
  if (is_cylinder_box(a, b)) {
    if (b.kind == ShapeKind::kBox)
      return cylinder_box_distance(posed_cylinder(a, pose_a), posed_box(b, pose_b));
    return swapped(cylinder_box_distance(posed_cylinder(b, pose_b), posed_box(a, pose_a)));
  }
  if (!is_round(a) || !is_round(b)) return gjk::shape_distance(a, pose_a, b, pose_b);
  const bool a_cylinder = a.kind == ShapeKind::kCylinder, b_cylinder = b.kind == ShapeKind::kCylinder;
  if (a_cylinder && b_cylinder)
    return cylinder_cylinder(posed_cylinder(a, pose_a), posed_cylinder(b, pose_b));
  if (b_cylinder) return ball_cylinder(posed_ball(a, pose_a), posed_cylinder(b, pose_b));
  if (a_cylinder) return swapped(ball_cylinder(posed_ball(b, pose_b), posed_cylinder(a, pose_a)));
  return ball_ball(posed_ball(a, pose_a), posed_ball(b, pose_b));
}

bool separated_along(const Shape& a, const Pose& pose_a, const Shape& b, const Pose& pose_b, Vec3d axis,
                     double gap) {
  const double len = length(axis);
  // No direction (zero, NaN or infinite axis) or no valid input: nothing is proven separated.
  if (!(len > 0) || !std::isfinite(len) || !std::isfinite(gap)) return false;
  if (!finite_pose(pose_a) || !finite_pose(pose_b) || !a.valid() || !b.valid()) return false;
  const Vec3d n = axis * (1.0 / len);
  return support_posed(a, pose_a, n) + gap < -support_posed(b, pose_b, -n);
}

}  // namespace shiftcast
