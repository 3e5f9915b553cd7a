// Closed forms for round pairs and for cylinder–box (collision/prism_pair.hpp), GJK
// (collision/gjk_internal.hpp) for everything else.
//
// Every closed form reports its witnesses so that point_b − point_a = distance · normal, apart or
// overlapping, and compares with a strict < 0 for overlap: touching at exactly distance 0 is contact,
// not overlap, as everywhere in shiftcast.
#include "collision/narrow_phase.hpp"

#include <algorithm>
#include <cmath>

#include "collision/closed_form_parts_internal.hpp"
#include "collision/gjk_internal.hpp"
#include "collision/prism_pair.hpp"

namespace shiftcast {
namespace {

using detail::make_distance;
using detail::posed_offset;

struct Ball {
  Vec3d centre;
  double radius;
};

// Upright, so yaw only moves the bottom-centre.
using Cylinder = PosedCylinder;

Ball posed_ball(const Shape& s, const Pose& p) {
  if (s.kind == ShapeKind::kPoint) return {to_double(p.position), 0.0};
  return {posed_offset(s, p), double(s.radius)};
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
  return make_distance(len - (a.radius + b.radius), n, a.centre + n * a.radius, b.centre - n * b.radius);
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
  return make_distance(centre_distance - s.radius, -out, s.centre - out * s.radius, surface);
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
    if (-gap_z <= -gap_xy) return make_distance(gap_z, vertical, at(lens_mid, cap_a), at(lens_mid, cap_b));
    return make_distance(gap_xy, u, at(rim_a, z_mid), at(rim_b, z_mid));
  }
  // Apart (or touching) across one axis while the other overlaps: that axis's gap is the distance. Both
  // gaps exactly 0 is rim on rim, reported vertically like the overlap tie.
  if (gap_z >= 0 && gap_xy <= 0)
    return make_distance(gap_z, vertical, at(lens_mid, cap_a), at(lens_mid, cap_b));
  if (gap_xy >= 0 && gap_z <= 0) return make_distance(gap_xy, u, at(rim_a, z_mid), at(rim_b, z_mid));
  const double distance = std::sqrt(gap_xy * gap_xy + gap_z * gap_z);
  return make_distance(distance, (u * gap_xy + vertical * gap_z) * (1.0 / distance), at(rim_a, cap_a),
                       at(rim_b, cap_b));
}

bool finite_pose(const Pose& p) {
  return is_finite(p.position) && std::isfinite(p.yaw);
}

}  // namespace

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
