// Method choice, conservative advancement and the swept bisection; the analytic method is in
// collision/round_toi.cpp.
//
// Boundaries (which side counts): a pair comes "within the target" when its distance drops to
// target_separation or below; a pass that stays above the target by less than distance_tolerance is
// reported as a hit too (conservatively: neither search can tell it from one that touches). The time
// reported is always one at which the pair is still at least the target apart (up to rounding), so
// stopping there never makes anything overlap.
#include "collision/time_of_impact.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "collision/prism_pair.hpp"
#include "collision/round_toi_internal.hpp"

namespace shiftcast {
namespace {

// Distance evaluations before the bisection stops refining and reports its current (safe) time. A door
// sweeping past a sphere needs ~30; the cap is reached only when a turning pair stays within a few
// tolerances of the target over much of the tick (a near-miss or a slide), where the search would
// otherwise need speed / tolerance intervals.
constexpr int kMaxBisectionEvaluations = 1024;

// One shape's motion with the bounds the searches need.
struct Mover {
  const Shape& shape;
  const Motion& motion;
  Vec3d linear{};       // change of the reference point over the tick
  double turn = 0;      // change of yaw over the tick; 0 when the shape's set does not turn
  double speed = 0;     // bound on how far any point of the shape moves per unit t
  double rounding = 0;  // bound on the distance error of float poses (kToiPoseRounding)
};

// The farthest any point of the shape is from the vertical axis through the reference point: turning
// by an angle θ moves no point farther than θ times this (arc >= chord).
double reach_xy(const Shape& s) {
  const double offset = std::hypot(double(s.offset.x), double(s.offset.y));
  switch (s.kind) {
    case ShapeKind::kPoint:
      return 0;
    case ShapeKind::kSphere:
    case ShapeKind::kCylinder:
      return offset + s.radius;
    case ShapeKind::kBox:
      return offset + std::hypot(double(s.half_extents.x), double(s.half_extents.y));
    case ShapeKind::kHull: {
      double best = 0;
      for (Vec3 v : s.hull_vertices)
        best = std::max(best, std::hypot(double(v.x), double(v.y)));
      return best;
    }
  }
  return 0;
}

// Whether the shape's set turns over the motion (a point, or a sphere or cylinder on its own axis, does
// not, whatever its yaw does).
bool turns(const Shape& shape, const Motion& motion) {
  return motion.start.yaw != motion.end.yaw && !shape.yaw_symmetric();
}

Mover make_mover(const Shape& shape, const Motion& motion) {
  Mover m{shape, motion};
  m.linear = to_double(motion.end.position) - to_double(motion.start.position);
  const double reach = turns(shape, motion) ? reach_xy(shape) : 0;
  if (reach > 0) m.turn = double(motion.end.yaw) - double(motion.start.yaw);
  m.speed = length(m.linear) + std::abs(m.turn) * reach;
  m.rounding = toi_pose_rounding(motion, reach);
  return m;
}

// Exactly the pose a caller builds from a reported t.
Pose pose_at(const Mover& m, double t) {
  return lerp_pose(m.motion.start, m.motion.end, float(t));
}

ShapeDistance distance_at(const Mover& a, const Mover& b, double t) {
  return shape_distance(a.shape, pose_at(a, t), b.shape, pose_at(b, t));
}

// Velocity (per unit t) of the point x of a shape at time t: translation plus the turn about +z through
// the reference point.
Vec3d point_velocity(const Mover& m, double t, Vec3d x) {
  const Vec3d r = x - to_double(pose_at(m, t).position);
  return m.linear + Vec3d{-r.y, r.x, 0} * m.turn;
}

// The resting rule (round_toi_internal.hpp) at time t for a pair within tolerance of the target.
bool approaching(const Mover& a, const Mover& b, const ShapeDistance& d, double t, double target) {
  const Vec3d relative = point_velocity(b, t, d.point_b) - point_velocity(a, t, d.point_a);
  return toi_approaching(a.shape, pose_at(a, t), b.shape, pose_at(b, t), d.normal, d.distance, target,
                         relative, a.speed + b.speed);
}

Toi hit_at(Toi out, double t, const ShapeDistance& d) {
  out.hit = true;
  out.t = t;
  out.separation = d.distance;
  out.normal = d.normal;
  out.point = (d.point_a + d.point_b) * 0.5;
  return out;
}

// Conservative advancement (translation only). For any unit n the gap along n,
//   g(t) = min over b of n·x − max over a of n·x,
// is a lower bound on the distance and, for translating shapes, exactly linear in t. So advancing to
// where the line g(t_k) − closing·(t − t_k) meets the target never passes a contact, whatever n is; with
// n the contact normal g(t_k) is the distance itself and the step is Newton's on the convex distance
// (quadratic convergence on a transversal hit).
Toi advance(const Mover& a, const Mover& b, const ToiOptions& options) {
  Toi out;
  out.method = ToiMethod::kConservativeAdvancement;
  const double target = options.target_separation;
  const Vec3d v = b.linear - a.linear;
  const double slack = a.rounding + b.rounding;
  double t = 0;
  for (int k = 0;; ++k) {
    const Pose pa = pose_at(a, t), pb = pose_at(b, t);
    const ShapeDistance d = shape_distance(a.shape, pa, b.shape, pb);
    if (k == 0 && d.distance <= target) out.initially_close = true;
    if (d.distance - target < options.distance_tolerance) {
      // Within tolerance: a hit when closing. When not, the distance of two translating convex shapes
      // is convex in t and does not decrease from here on: resting or sliding contact, no hit.
      if (approaching(a, b, d, t, target)) return hit_at(out, t, d);
      return out;
    }
    // Out of advances: t is still safe, stop there.
    if (k == kToiMaxAdvances) return hit_at(out, t, d);
    const Vec3d n = d.normal;
    const double gap = -support_posed(b.shape, pb, -n) - support_posed(a.shape, pa, n) - slack;
    const double closing = -dot(v, n);
    if (gap <= target) return hit_at(out, t, d);  // n too poor to bound anything: stop, still safe
    if (!(closing > 0)) return out;               // the gap never shrinks: they never meet
    const double next = t + (gap - target) / closing;
    if (next >= 1) return out;
    t = next;
    ++out.steps;
  }
}

// Blow's binary-search backtracking with a swept predicate and Redon's first-half-first order. On
// [t0, t1] no point of either shape is farther than speed·(t1 − t0)/2 from where it is at the middle, and
// distance is 1-Lipschitz in point positions, so
//   d(mid) − target > speed·(t1 − t0)/2 + rounding
// proves d > target on the whole closed interval. Intervals are popped in time order, so when one cannot
// be cleared everything before its start has been, and its start is free.
Toi bisect(const Mover& a, const Mover& b, const ToiOptions& options) {
  Toi out;
  out.method = ToiMethod::kBisection;
  const double target = options.target_separation;
  const double speed = a.speed + b.speed;
  // GJK's distance may exceed the true one by its tolerance; a closed form's by nothing.
  const double slack = a.rounding + b.rounding + kGjkTolerance;

  const ShapeDistance d0 = distance_at(a, b, 0);
  out.initially_close = d0.distance <= target;
  if (d0.distance - target < options.distance_tolerance) {
    // The search cannot clear anything next to a contact, so the resting rule decides at t = 0 from
    // the witnesses' velocities. (A turning pair's distance is not convex: one that starts resting
    // and comes back within the same tick is caught at the start of the next.)
    if (approaching(a, b, d0, 0, target)) return hit_at(out, 0, d0);
    return out;
  }

  struct Interval {
    double t0, t1;
    int depth;
  };
  std::array<Interval, kToiMaxHalvings + 2> stack;  // depth-first: at most one pending sibling per level
  int size = 0;
  stack[size++] = {0, 1, 0};
  while (size > 0) {
    const Interval iv = stack[--size];
    const double mid = 0.5 * (iv.t0 + iv.t1);
    const ShapeDistance d = distance_at(a, b, mid);
    ++out.steps;
    const double width = iv.t1 - iv.t0;
    if (d.distance - target > speed * width * 0.5 + slack) continue;
    if (speed * width <= options.distance_tolerance || iv.depth >= kToiMaxHalvings ||
        out.steps >= kMaxBisectionEvaluations)
      return hit_at(out, iv.t0, iv.t0 == 0 ? d0 : distance_at(a, b, iv.t0));
    stack[size++] = {mid, iv.t1, iv.depth + 1};
    stack[size++] = {iv.t0, mid, iv.depth + 1};
  }
  return out;
}

bool finite_pose(const Pose& p) {
  return is_finite(p.position) && std::isfinite(p.yaw);
}

}  // namespace

Toi time_of_impact_with(ToiMethod method, const Shape& a, const Motion& motion_a, const Shape& b,
                        const Motion& motion_b, const ToiOptions& options) {
  Toi out;
  out.method = method;
  out.t = 0;  // a refused query never moves anything (trace_result.hpp's convention)
  if (!finite_pose(motion_a.start) || !finite_pose(motion_a.end) || !finite_pose(motion_b.start) ||
      !finite_pose(motion_b.end) || !std::isfinite(options.target_separation) ||
      !std::isfinite(options.distance_tolerance)) {
    out.status = QueryStatus::kNonFiniteInput;
    return out;
  }
  const bool turning = turns(a, motion_a) || turns(b, motion_b);
  const bool cylinder_box = is_cylinder_box(a, b);
  const bool analytic_pair = (is_round(a) && is_round(b)) || cylinder_box;
  if (!a.valid() || !b.valid() || (method == ToiMethod::kAnalytic && !analytic_pair) ||
      (method != ToiMethod::kBisection && turning)) {
    out.status = QueryStatus::kInvalidShape;
    return out;
  }
  ToiOptions o = options;
  o.target_separation = std::max(0.0, o.target_separation);
  if (method == ToiMethod::kAnalytic) {
    return cylinder_box ? cylinder_box_time_of_impact(a, motion_a, b, motion_b, o)
                        : round_time_of_impact(a, motion_a, b, motion_b, o);
  }
  const Mover ma = make_mover(a, motion_a), mb = make_mover(b, motion_b);
  return method == ToiMethod::kConservativeAdvancement ? advance(ma, mb, o) : bisect(ma, mb, o);
}

Toi time_of_impact(const Shape& a, const Motion& motion_a, const Shape& b, const Motion& motion_b,
                   const ToiOptions& options) {
  const bool turning = turns(a, motion_a) || turns(b, motion_b);
  const bool analytic = (is_round(a) && is_round(b)) || is_cylinder_box(a, b);
  const ToiMethod method = turning    ? ToiMethod::kBisection
                           : analytic ? ToiMethod::kAnalytic
                                      : ToiMethod::kConservativeAdvancement;
  return time_of_impact_with(method, a, motion_a, b, motion_b, options);
}

}  // namespace shiftcast
