// The oracle of the world-query tests (tests/world/world_query_*_test.cpp), sharing no code with
// world/world_query: textbook signed distance functions (SDF) of spheres, upright cylinders and boxes,
// evaluated in a frame rotated by hand. The SDF of a convex solid is a convex function, so along a ray (or
// a translation) golden-section search finds its minimum and bisection before the minimum finds the first
// entry exactly; sweeps of a sphere use SDF − r (the Minkowski sum with a ball), cylinder pairs the summed
// cylinder, box pairs the separating-axis gap (also convex along a translation). Cases within kAmbiguity
// of touching are counted and skipped.
//
// Everything is in namespace shiftcast::world_query_test; the tests live there too and use it
// unqualified.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <utility>
#include <vector>

#include "collision/brush.hpp"
#include "collision/bsp_build.hpp"
#include "collision/time_of_impact.hpp"
#include "tests/support/seeded_random.hpp"
#include "world/match/world_query.hpp"

namespace shiftcast::world_query_test {

// Oracle answers closer than this (units) to touching, or to the end of the motion, are not judged:
// float inputs move a surface by ~1e-5 at these scales.
inline constexpr double kAmbiguity = 1e-3;
// Closed forms (spheres, cylinders, boxes) agree with the oracle to float rounding of the reported
// fraction (~6e-8 relative) over rays up to ~600 units.
inline constexpr double kExactTolerance = 2e-4;
// Time-of-impact answers stop at most kToiDistanceTolerance short of touching (in distance).
inline constexpr double kToiSlack = kToiDistanceTolerance + 1e-4;

inline Vec3 uniform_vec(std::mt19937& rng, double lo, double hi) {
  return {float(uniform_double(rng, lo, hi)), float(uniform_double(rng, lo, hi)),
          float(uniform_double(rng, lo, hi))};
}

Entity make_entity(EntityId id, Shape shape, Pose pose, std::uint32_t layer = kLayerProp);

// The eight corners of a box as hull vertices: the same solid as Shape::box, through the hull path.
std::vector<Vec3> box_corners(Vec3 h, Vec3 c);

inline Pose random_pose(std::mt19937& rng) {
  return {uniform_vec(rng, -50, 50), float(uniform_double(rng, -kPi, kPi))};
}

// A sphere, an upright cylinder or a box (one in three each), randomly sized and turned, its position
// within ±spread horizontally and ±40 vertically.
Entity random_convex_entity(std::mt19937& rng, EntityId id, double spread);

inline BspTree build_level(const std::vector<Brush>& brushes) {
  BspBuildResult built = build_bsp(brushes, {});
  EXPECT_EQ(built.error, BspBuildError::kNone);
  return std::move(built.tree);
}

// ---- The oracle ----

inline Vec3d dvec(Vec3 v) {
  return {v.x, v.y, v.z};
}
inline double norm(Vec3d v) {
  return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
}

// p in the frame of a pose, rotating by hand: x' = c·x + s·y, y' = −s·x + c·y.
Vec3d into_frame(const Pose& pose, Vec3d p);

double sdf_box(Vec3d q, Vec3d h);
// Upright cylinder, bottom centre at the origin of q.
double sdf_cylinder(Vec3d q, double r, double h);

// Signed distance from world point p to the entity's solid; a hull is only ever a box's corners here.
double sdf(const Entity& e, Vec3d p, Vec3 hull_half = {});

struct Entry {
  bool hit = false;
  bool start_inside = false;
  bool ambiguous = false;
  double s = 0;  // where along the motion the solid is first entered, in units of `length`
};

// First s in [0, length] with f(s) < 0, for f convex. Ambiguous when the minimum, the start or the
// entry is within kAmbiguity of deciding differently, or a miss passes within `miss_margin`.
Entry first_entry(const std::function<double(double)>& f, double length, double miss_margin = kAmbiguity);

inline Vec3d along(Vec3 origin, Vec3d unit, double s) {
  return {origin.x + unit.x * s, origin.y + unit.y * s, origin.z + unit.z * s};
}

// World position of a shape's anchor (centre or bottom-centre) for an entity, rotating by hand.
Vec3d anchor(const Entity& e);

// The separating-axis gap of two boxes turned about z: the largest gap between their projections on the
// five axes that can separate them (four horizontal face normals and z); negative exactly when the
// interiors meet. Linear in a translation per axis, so convex along a motion.
double sat_gap(Vec3d ca, Vec3d ha, double yaw_a, Vec3d cb, Vec3d hb, double yaw_b);

}  // namespace shiftcast::world_query_test
