// Narrow phase: the exact answer for two convex shapes at given poses, used as the hard case of the
// filter cascade (world/match/filters.hpp) and inside every time-of-impact search.
//
//   ShapeDistance d = shape_distance(Shape::cylinder(15, 56), pa, Shape::box({16, 16, 16}), pb);
//   if (d.status != QueryStatus::kOk) ...       // NaN pose or invalid shape: refused, nothing else set
//   if (d.overlapping) ...                      // interiors intersect (d.distance is then <= 0)
//   else if (d.distance <= kContactDistance)    // touching: d.normal and the witness points are the contact
//
// Sphere, cylinder and point pairs (any two of them), and an upright cylinder or a sphere against a box
// turned about z (vertical prisms, so their Minkowski difference is one; a sphere is a point-cylinder
// grown by its radius: collision/prism_pair.hpp), use closed forms: distances are exact up to double
// rounding and depths are exact too. Every other pair (box–box, hulls, a point against a box or hull)
// runs GJK on the shapes' support functions (Shape::support, posed by collision/pose.hpp) in double: the
// distance is exact to kGjkTolerance, and an overlap is reported when the Minkowski difference contains
// the origin, with `distance` then -depth: never less deep than the truth (moving b by -distance along
// `normal` always leaves the pair at most touching), exact for two boxes and for a point or sphere centre
// inside a box, and otherwise within kGjkTolerance whenever the bounded EPA in collision/gjk_internal.hpp
// converges (it does for polytopes; curved pairs may stop at its iteration cap). The sign is what the
// world relies on.
//
// Touching convention, the same as the level's: shapes whose boundaries meet but whose interiors do not
// are *not* overlapping (distance 0, overlapping false for closed forms; GJK cannot tell distance 0 from
// a sliver of overlap thinner than kGjkTolerance, which is why the world keeps entities kEntitySkin
// apart, far above it).
#pragma once

#include "collision/pose.hpp"
#include "collision/shape.hpp"
#include "collision/trace_result.hpp"

namespace shiftcast {

// GJK stops when an iteration improves the distance by less than this (Quake units). Four orders of
// magnitude below kEntitySkin, so "touching within the skin" is never confused with overlap.
inline constexpr double kGjkTolerance = 1e-5;
// GJK iterations before it gives up and returns its best bound (degenerate hulls); never reached by the
// shapes the world builds, counted in ShapeDistance::iterations.
inline constexpr int kGjkMaxIterations = 64;

struct ShapeDistance {
  QueryStatus status = QueryStatus::kOk;
  bool overlapping = false;
  double distance = 0;  // >= 0 apart; <= 0 when overlapping (-depth for closed forms)
  Vec3d point_a{};      // closest points (witnesses) in world space; for overlaps, deepest points
  Vec3d point_b{};
  Vec3d normal{};      // unit, from a towards b: moving b along it separates them; zero if undefined
  int iterations = 0;  // GJK iterations; 0 for closed forms
};

ShapeDistance shape_distance(const Shape& a, const Pose& pose_a, const Shape& b, const Pose& pose_b);

// The plane-divides-entities test for a cached axis: true when the plane with normal `axis` (world
// space, any length) separates a from b with at least `gap` to spare on the normalised axis:
//   max over a of n·x + gap < min over b of n·x.
// O(support), no iteration: what the world remembers per pair between ticks.
bool separated_along(const Shape& a, const Pose& pose_a, const Shape& b, const Pose& pose_b, Vec3d axis,
                     double gap);

// True for points, spheres and cylinders: a pair of two of them has a closed form.
bool is_round(const Shape& shape);

}  // namespace shiftcast
