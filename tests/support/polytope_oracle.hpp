// The oracle of the narrow-phase tests (tests/collision/narrow_phase_*_test.cpp), sharing none of
// collision/narrow_phase's or collision/gjk's algorithms:
//   - polytope pairs (boxes, hulls, and points/spheres as a centre plus a radius): the exact distance by
//     brute force over every vertex–triangle and segment–segment pair, certified by a separating plane,
//     and the exact depth from the supporting planes of the Minkowski difference's point set;
//   - every shape: closed-form membership and distance tests (inside_margin, outside_distance), and
//     Shape::support for the extent along an axis (overlap_along);
//   - random shapes, poses and pairs from a fixed-seed generator with the test's own uniform mapping.
//
// Everything is in namespace shiftcast::narrow_phase_test; the tests live there too and use it
// unqualified.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <limits>
#include <random>
#include <vector>

#include "collision/narrow_phase.hpp"
#include "collision/pose.hpp"
#include "collision/shape.hpp"
#include "collision/vec3.hpp"
#include "tests/support/seeded_random.hpp"

namespace shiftcast::narrow_phase_test {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
// GJK's distance is exact to kGjkTolerance; twice that absorbs the float geometry's double rounding.
inline constexpr double kDistanceSlack = 2 * kGjkTolerance;
// Double rounding of the test geometry (float coordinates within ~100 units) is ~1e-13; exact answers
// (closed forms, probed axes, oracle plane sides) are compared with this much room.
inline constexpr double kRounding = 1e-9;
// GJK witnesses are barycentric sums of rotated float vertices: on their shapes to about this.
inline constexpr double kWitnessSlack = 1e-6;

class Rng {
 public:
  explicit Rng(unsigned seed) : gen_(seed) {}
  double uniform(double lo, double hi) { return uniform_double(gen_, lo, hi); }
  int index(int n) { return int(gen_() % unsigned(n)); }

 private:
  std::mt19937 gen_;
};

// ---- Closest points by explicit minimisation (no Voronoi regions, no simplices).

struct Pair {
  Vec3d p, q;
  double distance() const { return length(q - p); }
};

// Closest pair of two convex polytopes given by points, over every vertex–triangle and segment–segment
// pair (the closest features of disjoint polytopes are always among them).
Pair brute_closest(const std::vector<Vec3d>& P, const std::vector<Vec3d>& Q);

// True when the plane through the closest pair, normal to it, has P behind and Q in front.
bool separated_by_pair(const std::vector<Vec3d>& P, const std::vector<Vec3d>& Q, const Pair& c);

// Supporting planes n·x = d (unit n, every point with n·x <= d) through triples of `points`.
struct FacetPlane {
  Vec3d n;
  double d;
};
std::vector<FacetPlane> supporting_planes(const std::vector<Vec3d>& pts, bool* full_dimensional);

// Depth of the origin inside conv(points): the distance to the nearest supporting plane.
double depth_of_origin(const std::vector<Vec3d>& pts);

// ---- Shapes, their world points, and closed-form membership.

struct HullInfo {
  std::vector<Vec3> vertices;
  std::vector<FacetPlane> facets;  // local frame
  bool full = false;               // has an interior
};
struct World {
  std::deque<HullInfo> hulls;  // hull vertices outlive the shapes that point at them
  Shape add_hull(std::vector<Vec3> v);
  const HullInfo& info(const Shape& s) const {
    for (const HullInfo& h : hulls)
      if (h.vertices.data() == s.hull_vertices.data()) return h;
    ADD_FAILURE() << "hull not owned by this world";
    return hulls.front();
  }
};

// kind: 0 point, 1 sphere, 2 cylinder, 3 box, 4 hull (of 4 to 10 points on an ellipsoid), owned by `w`.
Shape random_shape(Rng& rng, World& w, int kind);

Pose random_pose(Rng& rng, double spread);

// The polytope part of a point, sphere, box or hull in world space; spheres add their radius.
std::vector<Vec3d> core_points(const Shape& s, const Pose& p);
double core_margin(const Shape& s);

// Signed depth of x inside the shape: the radius of the largest ball around x inside it (negative or
// -inf outside; for hulls, the nearest supporting plane).
double inside_margin(const World& w, const Shape& s, const Pose& p, Vec3d x);

// Distance from x to the shape (0 inside): closed forms, or brute force over a hull's triangles.
double outside_distance(const World& w, const Shape& s, const Pose& p, Vec3d x);

// h_A(n) + h_B(−n) from Shape::support: > 0 is overlap along n, its negative the gap.
double overlap_along(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, Vec3d n);

// ---- Random pairs.

inline constexpr const char* kKindName[] = {"point", "sphere", "cylinder", "box", "hull"};

struct Sample {
  World world;
  Shape a, b;
  Pose pa, pb;
};

// A pair about as likely to overlap as not: b within ~30 units of a.
void random_pair(Rng& rng, int kind_a, int kind_b, Sample& s, double spread = 30);

}  // namespace shiftcast::narrow_phase_test
