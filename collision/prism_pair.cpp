// The cylinder–box pair of collision/prism_pair.hpp: the closed-form distance and the analytic time of
// impact (Newton on that distance), with the posed forms both start from.
#include "collision/prism_pair.hpp"

#include <algorithm>
#include <cmath>

#include "collision/closed_form_parts_internal.hpp"
#include "collision/round_toi_internal.hpp"

namespace shiftcast {
namespace {

using detail::kRimMaxIterations;
using detail::kRimRootGap;
using detail::make_distance;
using detail::posed_offset;

// The prism part of cylinder_box_distance, without the sphere's margin.
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
    return make_distance(distance, Vec3d{0, 0, vertical}, world(sx, sy, cap_a), world(sx, sy, cap_b));
  };
  const auto across_xy = [&](double distance) {
    return make_distance(distance, horizontal(ux, uy), world(ax, ay, z_mid), world(bx, by, z_mid));
  };
  // Overlap: the shallower axis is the way out; ties go vertical (a player on a crate). Apart or touching
  // across one axis while the other overlaps: that axis's gap is the distance; both exactly 0 (rim on an
  // edge) is reported vertically like the overlap tie.
  if (gap_xy < 0 && gap_z < 0) return -gap_z <= -gap_xy ? across_z(gap_z) : across_xy(gap_xy);
  if (gap_z >= 0 && gap_xy <= 0) return across_z(gap_z);
  if (gap_xy >= 0 && gap_z <= 0) return across_xy(gap_xy);
  const double distance = std::sqrt(gap_xy * gap_xy + gap_z * gap_z);
  const Vec3d n = (horizontal(ux, uy) * gap_xy + Vec3d{0, 0, vertical * gap_z}) * (1.0 / distance);
  return make_distance(distance, n, world(ax, ay, cap_a), world(bx, by, cap_b));
}

}  // namespace

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

// The cylinder–box pair (collision/prism_pair.hpp). Both sets only translate, so the box keeps its
// cos/sin and each anchor moves on a straight line: f(t) = distance(t) is the distance from a point
// moving on a line to a fixed convex set (the Minkowski difference), convex in t, and its derivative is
// exact from the closed form (normal · relative velocity, the distance being differentiable wherever it
// is positive). Newton from t = 0 on f − grown is then the rim search of first_entry: every step lands on
// or before the first root, a non-negative slope proves f never comes down again, and a step past t = 1
// proves f > grown on [t, 1]. A face approached head-on is linear in t and takes one step.
Toi cylinder_box_time_of_impact(const Shape& a, const Motion& motion_a, const Shape& b,
                                const Motion& motion_b, const ToiOptions& options) {
  Toi out;
  out.method = ToiMethod::kAnalytic;
  // Work with the cylinder (or sphere) as `c`; flip the normal back at the end when the box is a.
  const bool cylinder_first = a.kind != ShapeKind::kBox;
  const Shape& cyl = cylinder_first ? a : b;
  const Shape& box = cylinder_first ? b : a;
  const Motion& motion_c = cylinder_first ? motion_a : motion_b;
  const Motion& motion_x = cylinder_first ? motion_b : motion_a;
  const double sign = cylinder_first ? 1.0 : -1.0;
  const double target = options.target_separation;
  // The search is exact in double, but the caller stops at float poses: search for the target grown by
  // their rounding, so that those poses are never closer than the target (as round_time_of_impact).
  const double grown = target + toi_pose_rounding(motion_a, 0) + toi_pose_rounding(motion_b, 0);

  // Neither set turns, so each anchor moves exactly as its reference point does (an offset is either on
  // the axis or turned by a constant yaw): no second trigonometry for the end poses.
  const PosedCylinder c0 = posed_cylinder(cyl, motion_c.start);
  const PosedBox x0 = posed_box(box, motion_x.start);
  const Vec3d dc = to_double(motion_c.end.position) - to_double(motion_c.start.position);
  const Vec3d dx = to_double(motion_x.end.position) - to_double(motion_x.start.position);
  // Velocity of the box relative to the cylinder, the direction the closed form's normal runs.
  const Vec3d w = dx - dc;
  const auto at = [&](double t) {
    PosedCylinder c = c0;
    PosedBox x = x0;
    c.bottom = c0.bottom + dc * t;
    x.centre = x0.centre + dx * t;
    return cylinder_box_distance(c, x);
  };

  const ShapeDistance start = at(0);
  double t = 0;
  if (start.distance <= grown) {
    // Already within the target (or within rounding of it): a hit at 0 only if approaching, the resting
    // rule of time_of_impact.hpp. The relative velocity is exact here.
    out.initially_close = start.distance <= target;
    if (!toi_approaching(a, motion_a.start, b, motion_b.start, start.normal * sign, start.distance, target,
                         w * sign, length(w))) {
      out.separation = start.distance;
      return out;
    }
  } else {
    bool hit = false;
    ShapeDistance d = start;
    for (out.steps = 0; out.steps < kRimMaxIterations; ++out.steps) {
      const double gap = d.distance - grown;
      if (gap <= kRimRootGap) {
        hit = true;
        break;
      }
      const double slope = dot(d.normal, w);
      if (!(slope < 0)) break;
      const double next = t + gap / -slope;
      if (next > 1) break;
      if (!(next > t)) {  // no progress left in double: t is the root
        hit = true;
        break;
      }
      t = next;
      d = at(t);
    }
    // Out of iterations: t is still safe (never past the first root), stop there.
    if (out.steps == kRimMaxIterations) hit = true;
    if (!hit) {
      out.separation = at(1).distance;
      return out;
    }
  }

  out.hit = true;
  out.t = t;
  // Measured at the poses the caller will build from t, as the searches do.
  const float tf = float(t);
  const ShapeDistance p = shape_distance(a, lerp_pose(motion_a.start, motion_a.end, tf), b,
                                         lerp_pose(motion_b.start, motion_b.end, tf));
  out.separation = p.distance;
  out.normal = p.normal;
  out.point = (p.point_a + p.point_b) * 0.5;
  return out;
}

}  // namespace shiftcast
