// The analytic time of impact of collision/time_of_impact.hpp: two round shapes (point, sphere, upright
// cylinder), neither turning, as one ray against one rounded cylinder.
// (The other analytic pair, an upright cylinder against a yawed box, is declared in
// collision/prism_pair.hpp and defined in prism_pair.cpp with these helpers.)
//
// Every round shape is a core (an upright cylinder of radius r and height h, either of which may be 0)
// grown by a sphere of radius s: a point is (0, 0, 0), a sphere (0, 0, radius) about its centre, a
// cylinder (radius, height, 0) from its bottom-centre (the shape's anchor). The distance between two such
// shapes is the distance from q = anchor_b − anchor_a to the core K = core_a ⊕ (−core_b) — an upright
// cylinder of radius r_a + r_b spanning z in [−h_b, h_a] — minus s_a + s_b. Translation makes q move on a
// straight line, so "within target" is the ray q(t) entering K grown by ρ = s_a + s_b + target: a rounded
// cylinder (flat side, flat caps, and a rim torus of tube radius ρ).
//   - sphere–sphere, point–sphere (K is a point): the stable quadratic of RTR eqs. 25.19–25.20;
//   - the flat side and caps: a quadratic in xy and a linear slab in z, exact;
//   - the rim torus: Newton's method on the closed-form distance to K, from t = 0. That distance is
//     convex in t (distance to a convex set along a line), so every Newton step lands on or before the
//     first root: it never reports later than the true time.
#pragma once

#include "collision/time_of_impact.hpp"

namespace shiftcast {

// True when the shape is the same set at every yaw about its reference point: a point, or a sphere or
// cylinder whose offset lies on the z axis. Turning such a shape moves none of its points' set.

// The resting rule of time_of_impact.hpp, shared by the three methods. A pair within tolerance of the
// target is approaching (a hit at t = 0) when its witnesses close along the contact normal n, except:
//   - closing at most kToiRestingSlack of the fastest point speed is not approaching: far above double
//     rounding of a derivative (~1e-15 relative), far below any real approach (1e-5 units per tick at
//     10,000 units per tick);
//   - a motion closer to the contact plane than kToiRestingMaxTilt is judged with n tilted just enough to
//     stop the closing: GJK's normal is off by ~1e-7 rad on curved supports, which alone would make an
//     exact slide along a face look like an approach of 1e-4 units per tick at 500 units per tick. The
//     pair rests when its gap along the tilted direction (exact, from the support functions) is at least
//     min(distance, target) − kToiRestingDepth. For translating shapes that gap is constant over the tick,
//     so a resting pair provably never comes more than kToiRestingDepth closer than that.
inline constexpr double kToiRestingSlack = 1e-9;
// 1e-3 rad: four orders of magnitude above the narrow phase's normal error, and a motion that dives
// into a contact at more than a milliradian is approaching whatever that error.
inline constexpr double kToiRestingMaxTilt = 1e-3;
// Ten times GJK's distance tolerance (the distance it reports may exceed the exact gap by that much),
// and 300 times below the world's skin.
inline constexpr double kToiRestingDepth = 1e-4;
// `relative`: velocity (per unit t) of b's witness minus a's; `speed`: bound on any point's speed.
bool toi_approaching(const Shape& a, const Pose& pose_a, const Shape& b, const Pose& pose_b, Vec3d normal,
                     double distance, double target, Vec3d relative, double speed);

// How far a pose built by lerp_pose can be from the exact motion. lerp_pose computes a + (b − a)·t in
// float with t rounded to float: four roundings of at most u = 2^-24 relative, so a coordinate is off by
// at most u·(max(|a|, |b|) + 3·|b − a|) to first order. kToiPoseRounding is 2u: a factor of two for the
// second-order terms. At the corner of an 8192-unit level that is ~2e-3 units, below the tolerance; it
// is added to every bound, so the poses a caller builds from t are never closer than the target and
// float rounding never clears what the exact motion would not.
inline constexpr double kToiPoseRounding = 0x1p-23;
// That bound in distance for a shape on `motion`; `turning_reach` is the shape's reach from its vertical
// axis when its set turns (a rounded yaw then moves points too), 0 otherwise.
double toi_pose_rounding(const Motion& motion, double turning_reach);

// The time of impact of two round shapes whose sets do not turn (each yaw_symmetric or with a constant
// yaw). Inputs must already be valid (finite, valid shapes, target >= 0). Sets status kOk, method
// kAnalytic, steps = Newton iterations (0 for a closed form).
Toi round_time_of_impact(const Shape& a, const Motion& motion_a, const Shape& b, const Motion& motion_b,
                         const ToiOptions& options);

}  // namespace shiftcast
