// BrushOracle: brute-force, exact answers to the collision queries, to test the BSP against.
//
// It shares no code with the BSP or with collision/convex_polytope: every brush becomes an OraclePolytope
// (vertices from plane triples, ordered face loops, edges) and every query loops over all brushes in double
// with closed-form per-feature tests (RTR 25.11.3: faces, edge cylinders, vertex spheres). It is slow by
// design, O(brushes x features) per query with AABB culling only, and it trusts nothing the BSP computes.
// The upright cylinder is handled exactly through the hull E of a brush and its copy h below: the
// cylinder overlaps the brush when its reference point is in E grown by a horizontal disk. Sweeps and
// cylinder_overlaps() use E; cylinder_gap() slices the brush itself, so the tests can check one against
// the other. Boxes (axis-aligned or yawed) and hulls are convex polytopes K: they overlap brush B when
// the reference point is inside the configuration obstacle B ⊕ (−K), which sweeps and overlaps use
// through its supporting planes; hull_gap() measures the distance between K and B feature by feature
// (box_oracle.cpp).
//
//   BrushOracle oracle(level.brushes);
//   OracleHit want = oracle.sweep_cylinder(15, 56, from, to);      // exact first contact
//   EXPECT_LE(bsp.fraction, want.fraction + tol);                  // the BSP is never late,
//   EXPECT_EQ(oracle.cylinder_overlaps(15, 56, end), kNoBrush);    // never stops in solid,
//   EXPECT_LE(oracle.cylinder_gap(15, 56, end), bound);            // and is early by at most `bound`.
//   oracle.sweep(TurnedShape(Shape::box(h), yaw).shape(), from, to);   // any collision/ Shape, too
//
// tests/support/exactness_check.hpp holds BspTree to the whole trace contract with it.
//
// Contact convention, the same as collision/: brushes are open sets, so a shape touching a brush does not
// overlap it. A sweep hits when the motion takes the shape into a brush's interior, at the first time it
// touches that brush; motion that only slides along a surface (resting on a floor across tile seams,
// sliding down a wall, exactly tangent to an edge) is not a hit, and neither is touching exactly at the
// end of the motion. Per brush the oracle finds where the motion's line meets the closed grown brush
// (a chord, from inclusive feature tests) and asks the strict static test whether the chord's middle is
// inside: a convex set's chord is either interior throughout or lies in its surface.
// Near-tangent motion is a hit however shallow (down to ~1e-12 units of depth), so tests comparing
// against another implementation should settle doubtful cases with a slightly shrunk shape: a hit with
// radius r - e is a hit that every implementation must find.
//
// Ties: when several brushes are hit within kOracleTieFraction of the first contact (or contain the start
// point), the lowest brush id is reported.
//
// Cost: per brush, construction enumerates plane triples; the first cylinder query of a given height
// builds, per brush it reaches, the hull of the brush and its copy h below by brute force over vertex
// triples (O(v^4), microseconds for level brushes), and caches it per exact height: use a few fixed
// heights. With AABB and shifted-plane culling, 100,000 random sweeps over a 240-brush level take well
// under a second (-O2).
//
// Polytope shapes cache the obstacle planes per brush for the few shapes used most recently
// (kOracleHullShapes): a box of new dimensions or yaw costs one plane set per brush it comes near.
//
// Threading: queries are const; the cylinder hull and obstacle caches are behind mutexes, so concurrent
// queries are safe but serialise on them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "collision/aabb.hpp"
#include "collision/brush.hpp"
#include "collision/plane.hpp"
#include "collision/shape.hpp"
#include "collision/vec3.hpp"

namespace shiftcast {

// A vertex within this distance of a plane lies on it (faces, boundedness); vertices closer than this to
// each other are one vertex. Far above double rounding at level scale (4096 x 2^-52 ~ 1e-12), far below
// any feature of a level.
inline constexpr double kOracleOnPlane = 1e-6;

// Sweep entries closer than this (as a fraction of the motion) count as simultaneous; the lowest id wins.
inline constexpr double kOracleTieFraction = 1e-9;

// cylinder_gap() minimises over height by golden-section search, which converges to double rounding; its
// answer is within this of the exact gap (rounding in z is amplified by the inverse slope of nearly
// horizontal faces, which keeps it far below this for any level geometry).
inline constexpr double kOracleCylinderGapPrecision = 1e-7;

// How many polytope shapes (vertex sets, each with its growth) keep their obstacle planes cached.
inline constexpr std::size_t kOracleHullShapes = 8;

// A convex polytope with its full boundary structure, in double.
struct OraclePolytope {
  struct Face {
    Planed plane;           // unit outward normal
    std::vector<int> loop;  // vertex indices, counter-clockwise seen from outside, no collinear points
  };

  std::vector<Planed> planes;  // every input plane, normalised (redundant ones included); empty for a hull
  std::vector<Vec3d> vertices;
  std::vector<Face> faces;
  std::vector<std::array<int, 2>> edges;  // each once, from consecutive loop vertices
  Aabbd bounds;
  double volume = 0;
  bool bounded = true;  // false: the planes do not close the brush within ±2^20

  bool empty() const;  // unbounded, or no volume: such a brush is never hit and never contains anything
};

// From planes (outward normals of any non-zero length): vertices are the plane-triple intersections not in
// front of any plane by more than kOracleOnPlane.
OraclePolytope make_oracle_polytope(std::span<const Planed> planes);
// The convex hull of points, by brute force over point triples (O(n^4)); for the cylinder's swept hulls.
OraclePolytope make_oracle_hull(std::span<const Vec3d> points);

enum class OracleFeature : std::uint8_t {
  kNone,
  kFace,    // a face of the (grown) brush
  kEdge,    // an edge: sphere -> round cylinder, upright cylinder -> elliptic cylinder
  kVertex,  // a vertex sphere (sphere sweeps only)
  kCap,     // top or bottom of the cylinder's grown brush
};

struct OracleHit {
  bool hit = false;
  bool start_solid = false;  // the shape overlaps a brush at the start: hit, fraction 0, zero normal, kNone
  double fraction = 1.0;     // first contact, in [0, 1]; 1 when there is no hit
  Vec3d normal{};            // unit outward normal of the grown brush at the contact point
  std::int32_t brush = -1;   // -1 when there is no hit (kNoBrush)
  OracleFeature feature = OracleFeature::kNone;
};

class BrushOracle {
 public:
  explicit BrushOracle(std::span<const Brush> brushes);
  ~BrushOracle();
  BrushOracle(BrushOracle&&) noexcept;
  BrushOracle& operator=(BrushOracle&&) noexcept;

  std::int32_t brush_count() const { return std::int32_t(polytopes_.size()); }
  const OraclePolytope& polytope(std::int32_t brush) const { return polytopes_[std::size_t(brush)]; }

  // Points. Containment uses the stored float planes in double, exactly like brush_contains().
  std::int32_t point_brush(Vec3d p) const;  // lowest id strictly containing p, or -1
  bool contains(std::int32_t brush, Vec3d p) const;
  // Distance from p to the nearest brush surface, inside or out: tests skip points closer than their
  // tolerance, where float planes may legitimately decide either way.
  double distance_to_surface(Vec3d p) const;

  // First entry of the segment from -> to into the open interior of any brush (Cyrus-Beck per brush);
  // the normal is that of the entering plane. A segment that only touches a face, edge or vertex misses.
  OracleHit raycast(Vec3d from, Vec3d to) const;

  // First contact of a moving sphere (centre from -> to) and of an upright cylinder (axis +z, reference
  // point at the bottom centre, ref from -> to) with the union of the brushes. Sizes are >= 0; zero
  // sizes degenerate gracefully (a sphere or cylinder of size 0 is the raycast).
  OracleHit sweep_sphere(double radius, Vec3d centre_from, Vec3d centre_to) const;
  OracleHit sweep_cylinder(double radius, double height, Vec3d ref_from, Vec3d ref_to) const;

  // Static overlap, strict (touching is not overlapping): the lowest id of a brush the shape overlaps,
  // or -1. Use them to check that a reported end position is never in solid.
  std::int32_t sphere_overlaps(double radius, Vec3d centre) const;
  std::int32_t cylinder_overlaps(double radius, double height, Vec3d ref) const;

  // How far the shape is from touching any brush (0 when touching or overlapping): for the sphere the
  // Euclidean distance from centre to the brushes minus the radius; for the cylinder the smallest g >= 0
  // such that the cylinder grown by g (radius r + g, z from ref.z - g to ref.z + h + g) touches a brush.
  // A trace that stops early leaves such a gap; its size is the early-hit error.
  double sphere_gap(double radius, Vec3d centre) const;
  double cylinder_gap(double radius, double height, Vec3d ref) const;

  // Convex polytope shapes: the hull of `vertices`, given relative to the reference point (at least four
  // of them not in one plane), at p. An axis-aligned box is the hull of its 8 corners; a yawed box
  // (collision/turned_shape.hpp) already is a hull. hull_gap() is the Euclidean distance between the
  // hull and the nearest brush (0 when touching or overlapping).
  OracleHit sweep_hull(std::span<const Vec3d> vertices, Vec3d from, Vec3d to) const;
  std::int32_t hull_overlaps(std::span<const Vec3d> vertices, Vec3d p) const;
  double hull_gap(std::span<const Vec3d> vertices, Vec3d p) const;

  // The same queries for a collision/ Shape at reference point p (its offset honoured), of every kind.
  // `grow` grows the shape by that distance first (negative: shrinks it), so that tests can settle what
  // a contact within float rounding may do: a sphere's radius grows; a cylinder's radius grows and each
  // end moves out; a box's or hull's faces move out along their normals; a point becomes a sphere of
  // radius `grow`, or, shrunk, a point that must be `-grow` inside a brush (the brushes' planes move in).
  // The grown shape contains every point within `grow` of the shape, and the shape contains every point
  // within `-grow` of the shrunk one. Sizes must stay >= 0 (std::invalid_argument otherwise).
  OracleHit sweep(const Shape& shape, Vec3d from, Vec3d to, double grow = 0) const;
  std::int32_t overlaps(const Shape& shape, Vec3d p, double grow = 0) const;
  bool overlaps_brush(std::int32_t brush, const Shape& shape, Vec3d p, double grow = 0) const;
  // How far the shape is from touching any brush: sphere_gap, cylinder_gap or hull_gap (a point's is its
  // distance to the nearest brush, 0 inside one).
  double gap(const Shape& shape, Vec3d p) const;
  // The support function of the configuration obstacle of `brush` for `shape` (the reference points at
  // which the shape meets the closed brush, B ⊕ (−shape)) in direction n: max over brush points b and
  // shape points s of n·(b − s). A normal n is a true contact normal at reference point c exactly when
  // the plane n·x = obstacle_support(n) passes through c.
  double obstacle_support(std::int32_t brush, const Shape& shape, Vec3d n) const;

 private:
  struct CylinderHull;
  struct CylinderCache;
  struct HullShape;
  class HullCache;
  struct HullCacheDeleter {
    void operator()(HullCache* cache) const;
  };

  static std::unique_ptr<HullCache, HullCacheDeleter> make_hull_cache();
  const CylinderHull& cylinder_hull(std::size_t brush, double height) const;
  bool cylinder_overlaps_brush(std::size_t brush, double radius, double height, Vec3d ref) const;
  std::shared_ptr<const HullShape> hull_shape(std::span<const Vec3d> vertices, double grow) const;
  const std::vector<Planed>& obstacle_planes(const HullShape& shape, std::size_t brush) const;
  bool hull_overlaps_brush(const HullShape& shape, std::size_t brush, Vec3d p) const;
  OracleHit sweep_hull_shape(const HullShape& shape, Vec3d from, Vec3d to) const;
  bool point_overlaps_brush(std::size_t brush, Vec3d p, double erode) const;
  OracleHit raycast_eroded(Vec3d from, Vec3d to, double erode) const;

  std::vector<OraclePolytope> polytopes_;
  std::vector<std::vector<Planed>> stored_planes_;  // exactly as given, in double
  std::unique_ptr<CylinderCache> cache_;
  std::unique_ptr<HullCache, HullCacheDeleter> hull_cache_;
};

// The vertices of a box shape (half extents and centre offset) grown by `grow`, relative to the
// reference point.
std::vector<Vec3d> box_vertices(const Shape& box, double grow = 0);

}  // namespace shiftcast
