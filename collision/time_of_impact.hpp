// Time of impact: when, within a tick, two moving shapes first come within a target separation. This is
// what stops tunneling once a speedbox (world/grid.hpp) has said two movers *might* meet: the speedbox is
// only a filter, the contact time comes from here, so nothing bounces off the empty corners of a box.
//
//   Motion ma{start_a, end_a}, mb{start_b, end_b};       // linear in position and yaw over t in [0, 1]
//   Toi toi = time_of_impact(shape_a, ma, shape_b, mb, {});
//   if (toi.hit) stop both at lerp_pose(..., toi.t)      // they are then toi.separation apart
//
// Three methods, chosen from the motions:
//   - both shapes round (sphere, cylinder, point) and not rotating: analytic. The relative motion is a
//     ray against the Minkowski sum grown by the target separation; sphere–sphere solves the stable
//     quadratic (RTR eqs. 25.19–25.20), cylinder–cylinder an upright cylinder (quadratic in xy, linear in
//     z), sphere–cylinder a rounded cylinder (quadratic side, linear caps, and the rim torus by
//     safeguarded Newton on its closed-form distance). t is exact up to double rounding.
//   - translation only, any convex pair: conservative advancement on shape_distance. For two translating
//     convex shapes the distance is a convex function of t, so each step t += (d − target) / closing
//     speed never overshoots, and a non-positive closing speed proves they never meet. Stops when the
//     gap to the target is below options.distance_tolerance.
//   - either shape rotating (doors, turning props): Blow's binary-search time backtracking, with the
//     digest's fix that the predicate on each half-interval is *swept*: an interval [t0, t1] is free when
//     the distance at its middle exceeds the most any point can move in half the interval (linear speed
//     plus |yaw rate|·reach). Earlier halves are searched first (Redon's first-half-first), so the first
//     contact is found, not any contact; the search ends when that motion bound is below
//     options.distance_tolerance, so the result is at most that far (in distance) from the true contact
//     and never after it.
//
// The reported time is never later than the true first time the shapes come within `target_separation`
// (up to double rounding), and at most `distance_tolerance` of motion earlier.
#pragma once

#include "collision/narrow_phase.hpp"
#include "collision/pose.hpp"
#include "collision/shape.hpp"

namespace shiftcast {

// The resolution of every non-analytic time-of-impact search, as a distance: issue 4 asks for at most
// 0.01 units.
inline constexpr double kToiDistanceTolerance = 0.01;
// Halvings before the bisection gives up refining (2^-40 of a tick: far below any useful resolution,
// only reached when a motion bound is zero or non-finite).
inline constexpr int kToiMaxHalvings = 40;
// Conservative-advancement steps before it stops and reports the last safe time.
inline constexpr int kToiMaxAdvances = 64;

struct Motion {
  Pose start;
  Pose end;
};

struct ToiOptions {
  // Stop when the shapes come this close (Quake units); 0 stops at touching. The world passes its skin.
  double target_separation = 0;
  double distance_tolerance = kToiDistanceTolerance;
};

enum class ToiMethod : std::uint8_t { kAnalytic, kConservativeAdvancement, kBisection };

struct Toi {
  QueryStatus status = QueryStatus::kOk;
  bool hit = false;              // they come within target_separation during [0, 1]
  bool initially_close = false;  // already within target_separation at t = 0 (then t = 0 when hit)
  double t = 1;                  // in [0, 1]: the time of impact when hit, 1 otherwise
  double separation = 0;         // distance between the shapes at t (>= target − tolerance when hit)
  Vec3d normal{};                // unit, from a towards b at t, when hit
  Vec3d point{};                 // a contact point at t (midway between the witnesses), when hit
  ToiMethod method = ToiMethod::kAnalytic;
  int steps = 0;  // advances or halvings taken
};

// Two shapes already within the target and not approaching (closing speed <= 0 along the normal) are not
// a hit: resting contact must not stop a motion that separates them.
Toi time_of_impact(const Shape& a, const Motion& motion_a, const Shape& b, const Motion& motion_b,
                   const ToiOptions& options);

}  // namespace shiftcast
