#include "collision/round_toi_internal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "collision/closed_form_parts_internal.hpp"

namespace shiftcast {
namespace {

using detail::kRimMaxIterations;
using detail::kRimRootGap;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A round shape as core (upright cylinder, radius and height possibly 0) grown by a sphere.
struct RoundShape {
  double core_radius = 0;
  double core_height = 0;
  double rounding = 0;
};

RoundShape round_shape(const Shape& s) {
  switch (s.kind) {
    case ShapeKind::kSphere:
      return {0, 0, double(s.radius)};
    case ShapeKind::kCylinder:
      return {double(s.radius), double(s.height), 0};
    default:
      return {};
  }
}

// The anchor: sphere centre, cylinder bottom-centre, or the point itself.
Vec3d anchor(const Shape& s, const Pose& p) {
  if (s.kind == ShapeKind::kPoint) return to_double(p.position);
  // An offset on the axis (players, projectiles) turns with nothing: skip the sine and cosine.
  if (s.offset.x == 0 && s.offset.y == 0) return to_double(p.position) + Vec3d{0, 0, s.offset.z};
  return to_world(p, to_double(s.offset));
}

// K: upright cylinder of radius `radius` over z in [z_lo, z_hi], in the frame of anchor_a.
struct Core {
  double radius;
  double z_lo;
  double z_hi;
};

struct CorePoint {
  double distance;  // from q to K; negative inside (minus the depth to the nearest face)
  Vec3d normal;     // unit, from K towards q (the way out when inside)
  Vec3d closest;    // the point of K's boundary measured against
};

CorePoint core_point(const Core& k, Vec3d q) {
  const double radial_length = std::sqrt(q.x * q.x + q.y * q.y);  // no overflow at level scale
  // On the axis the radial direction is undefined; +x is a fixed choice (only reached with a zero
  // radial gap, where it is multiplied by 0, or for an inside point whose nearest face is the side).
  const Vec3d radial =
      radial_length > 0 ? Vec3d{q.x / radial_length, q.y / radial_length, 0} : Vec3d{1, 0, 0};
  const double dx = std::max(radial_length - k.radius, 0.0);
  const double dz = q.z > k.z_hi ? q.z - k.z_hi : (q.z < k.z_lo ? q.z - k.z_lo : 0.0);
  if (dx > 0 || dz != 0) {
    const double f = std::sqrt(dx * dx + dz * dz);
    const Vec3d n = (radial * dx + Vec3d{0, 0, dz}) * (1.0 / f);
    const double r = std::min(radial_length, k.radius);
    return {f, n, Vec3d{radial.x * r, radial.y * r, std::clamp(q.z, k.z_lo, k.z_hi)}};
  }
  // Inside (or on) K: the nearest face is the way out. Ties go top, bottom, side, the narrow phase's
  // order, so that a dead-centre overlap has a fixed normal (+z).
  double depth = k.z_hi - q.z;
  Vec3d n{0, 0, 1};
  if (q.z - k.z_lo < depth) depth = q.z - k.z_lo, n = {0, 0, -1};
  if (k.radius - radial_length < depth) depth = k.radius - radial_length, n = radial;
  return {-depth, n, q + n * depth};
}

// Times at which q0 + w·t lies in the vertical cylinder |xy| <= radius, z in [z_lo, z_hi] (closed).
struct Slab {
  double enter = kInfinity;
  double exit = -kInfinity;
  bool radial_binding = false;  // entered through the side (else through a cap)
};

Slab cylinder_slab(Vec3d q0, Vec3d w, double radius, double z_lo, double z_hi) {
  Slab s;
  double xy_enter = -kInfinity, xy_exit = kInfinity;
  const double a = w.x * w.x + w.y * w.y;
  const double half_b = q0.x * w.x + q0.y * w.y;
  const double c = q0.x * q0.x + q0.y * q0.y - radius * radius;
  if (a == 0) {
    if (c > 0) return s;
  } else {
    // RTR eqs. 25.19–25.20 with b = 2·half_b: q = −(half_b + sign·√disc), roots q/a and c/q, which never
    // subtracts nearly equal numbers. disc <= 0 is a graze of the side (touching is not entering).
    const double disc = half_b * half_b - a * c;
    if (disc <= 0) return s;
    const double q = -(half_b + std::copysign(std::sqrt(disc), half_b));
    if (q == 0) return s;
    const double r0 = q / a, r1 = c / q;
    xy_enter = std::min(r0, r1);
    xy_exit = std::max(r0, r1);
  }
  double z_enter = -kInfinity, z_exit = kInfinity;
  if (w.z == 0) {
    if (q0.z < z_lo || q0.z > z_hi) return s;
  } else {
    const double t0 = (z_lo - q0.z) / w.z, t1 = (z_hi - q0.z) / w.z;
    z_enter = std::min(t0, t1);
    z_exit = std::max(t0, t1);
  }
  s.enter = std::max(xy_enter, z_enter);
  s.exit = std::min(xy_exit, z_exit);
  s.radial_binding = xy_enter >= z_enter;
  return s;
}

// First t in [0, 1] at which q0 + w·t comes within rho of K (q0 itself is farther than rho), or a
// negative value when it never does. `iterations` counts Newton steps.
double first_entry(const Core& k, double rho, Vec3d q0, Vec3d w, int& iterations) {
  if (k.radius == 0 && k.z_lo == k.z_hi) {
    // K is a point: |q0 + w t − k|² = ρ², RTR eq. 25.17 with half_b, solved by 25.19–25.20. c > 0 (we
    // start outside), so both roots have the sign of −b: half_b >= 0 means moving away or sideways.
    const Vec3d l = q0 - Vec3d{0, 0, k.z_lo};
    const double a = dot(w, w), half_b = dot(l, w), c = dot(l, l) - rho * rho;
    if (a == 0 || half_b >= 0) return -1;
    const double disc = half_b * half_b - a * c;
    if (disc <= 0) return -1;                      // a graze at exactly ρ touches, it does not come within
    const double q = -(half_b - std::sqrt(disc));  // > 0
    const double t = c / q;                        // the smaller root
    return t <= 1 ? std::max(t, 0.0) : -1;
  }
  // Side of the rounded cylinder: the cylinder of radius R + ρ over the core's z range, entered through
  // its side. Caps: the cylinder of radius R over the z range grown by ρ, entered through a cap. Any
  // other way into either means the ray crossed the rim torus first.
  double best = kInfinity;
  const Slab side = cylinder_slab(q0, w, k.radius + rho, k.z_lo, k.z_hi);
  // (An interval wholly before t = 0 is one the ray left in the past: it starts outside both.)
  if (side.enter < side.exit && side.exit > 0 && side.radial_binding) best = std::min(best, side.enter);
  const Slab caps = cylinder_slab(q0, w, k.radius, k.z_lo - rho, k.z_hi + rho);
  if (caps.enter < caps.exit && caps.exit > 0 && !caps.radial_binding) best = std::min(best, caps.enter);
  if (best < kInfinity) return best <= 1 ? std::max(best, 0.0) : -1;
  if (rho == 0) return -1;
  // The rim. f(t) = |q(t), K| is convex, f(0) > ρ: Newton from the left never passes the first root, a
  // non-negative slope means f never comes down again, and a step past t = 1 means f > ρ on [t, 1]
  // (the tangent line is below f).
  double t = 0;
  for (iterations = 0; iterations < kRimMaxIterations; ++iterations) {
    const CorePoint p = core_point(k, q0 + w * t);
    const double gap = p.distance - rho;
    if (gap <= kRimRootGap) return t;
    const double slope = dot(p.normal, w);
    if (!(slope < 0)) return -1;
    const double next = t + gap / -slope;
    if (next > 1) return -1;
    if (!(next > t)) return t;  // no progress left in double: t is the root
    t = next;
  }
  return t;
}

}  // namespace

double toi_pose_rounding(const Motion& motion, double turning_reach) {
  const Vec3d p0 = to_double(motion.start.position), p1 = to_double(motion.end.position);
  const Vec3d larger{std::max(std::abs(p0.x), std::abs(p1.x)), std::max(std::abs(p0.y), std::abs(p1.y)),
                     std::max(std::abs(p0.z), std::abs(p1.z))};
  double bound = length(larger) + 3 * length(p1 - p0);
  if (turning_reach > 0) {
    const double y0 = motion.start.yaw, y1 = motion.end.yaw;
    bound += (std::max(std::abs(y0), std::abs(y1)) + 3 * std::abs(y1 - y0)) * turning_reach;
  }
  return kToiPoseRounding * bound;
}

bool toi_approaching(const Shape& a, const Pose& pose_a, const Shape& b, const Pose& pose_b, Vec3d normal,
                     double distance, double target, Vec3d relative, double speed) {
  // Without a normal (an overlap GJK gives no direction for) only a pair that does not move rests.
  if (length_squared(normal) == 0) return speed > 0;
  const double closing = -dot(relative, normal);
  if (!(closing > kToiRestingSlack * speed)) return false;
  const Vec3d along = relative + normal * closing;  // the part along the contact plane
  if (closing > kToiRestingMaxTilt * length(along)) return true;
  // v·n' = 0 for n' = n + v·(closing / |v|²): the gap along n' does not change with translation.
  const Vec3d tilted = normalize(normal + relative * (closing / length_squared(relative)));
  const double gap = -support_posed(b, pose_b, -tilted) - support_posed(a, pose_a, tilted);
  return gap < std::min(distance, target) - kToiRestingDepth;
}

Toi round_time_of_impact(const Shape& a, const Motion& motion_a, const Shape& b, const Motion& motion_b,
                         const ToiOptions& options) {
  Toi out;
  out.method = ToiMethod::kAnalytic;
  const RoundShape ra = round_shape(a), rb = round_shape(b);
  const Core k{ra.core_radius + rb.core_radius, -rb.core_height, ra.core_height};
  const double s = ra.rounding + rb.rounding;
  // The ray is exact in double, but the caller stops at float poses: search for the target grown by
  // their rounding, so that those poses are never closer than the target.
  const double rho = s + options.target_separation;
  const double grown = rho + toi_pose_rounding(motion_a, 0) + toi_pose_rounding(motion_b, 0);

  const Vec3d a0 = anchor(a, motion_a.start), a1 = anchor(a, motion_a.end);
  const Vec3d b0 = anchor(b, motion_b.start), b1 = anchor(b, motion_b.end);
  const Vec3d q0 = b0 - a0;
  const Vec3d w = (b1 - b0) - (a1 - a0);

  const CorePoint start = core_point(k, q0);
  double t;
  if (start.distance <= grown) {
    // Already within the target (or within rounding of it): a hit at 0 only if approaching (closing
    // along the normal), the resting rule of time_of_impact.hpp. The derivative is exact here.
    out.initially_close = start.distance <= rho;
    if (!toi_approaching(a, motion_a.start, b, motion_b.start, start.normal, start.distance - s,
                         options.target_separation, w, length(w))) {
      out.separation = start.distance - s;
      return out;
    }
    t = 0;
  } else {
    t = first_entry(k, grown, q0, w, out.steps);
    if (t < 0) {
      out.separation = core_point(k, q0 + w).distance - s;
      return out;
    }
  }

  out.hit = true;
  out.t = t;
  // Measured at the poses the caller will build from t, as the searches do.
  const float tf = float(t);
  const Vec3d at_a = anchor(a, lerp_pose(motion_a.start, motion_a.end, tf));
  const Vec3d at_b = anchor(b, lerp_pose(motion_b.start, motion_b.end, tf));
  const CorePoint p = core_point(k, at_b - at_a);
  out.separation = p.distance - s;
  out.normal = p.normal;
  // Split the closest point c of K into c = x_a − x_b with x_a in core_a, x_b in core_b (both relative
  // to their anchors): radially in proportion to the radii, in z the middle of the two cores' common
  // height range, so that the contact point sits in the overlap of a side-by-side contact.
  const Vec3d c = p.closest;
  const double share_a = k.radius > 0 ? ra.core_radius / k.radius : 0;
  const double share_b = k.radius > 0 ? rb.core_radius / k.radius : 0;
  const double za = 0.5 * (std::max(0.0, c.z) + std::min(ra.core_height, c.z + rb.core_height));
  const Vec3d xa{c.x * share_a, c.y * share_a, za};
  const Vec3d xb{-c.x * share_b, -c.y * share_b, za - c.z};
  const Vec3d witness_a = at_a + xa + p.normal * ra.rounding;
  const Vec3d witness_b = at_b + xb - p.normal * rb.rounding;
  out.point = (witness_a + witness_b) * 0.5;
  return out;
}

}  // namespace shiftcast
