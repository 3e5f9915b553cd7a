// Shapes swept through the level and the plane offsets that let one BSP serve every shape size.
//
// Every shape is described relative to a *reference point* p, the point whose motion a trace follows:
//   point     p itself
//   sphere    centre = p + offset (offset defaults to 0: p is the centre)
//   cylinder  upright (axis +z), bottom-centre = p + offset (offset defaults to 0: p is at the feet)
//   box       axis-aligned, centre = p + offset
//   hull      convex hull of `hull_vertices`, each given relative to p (p need not be inside)
//
// Melax plane shifting (RTR 25.5, with the digest's sign correction of eq. 25.8): for a plane n·x − d = 0
// with solid behind it, the shape placed at p touches the closed solid half-space exactly when
//   n·p − d <= support(−n)         (the plane "shifted out" by back = support(−n))
// and touches the open empty half-space exactly when
//   n·p − d >  −support(n)         (the plane "shifted in" by front = support(n)),
// where support(u) = max over shape points s (relative to p) of u·s. The printed eq. 25.8 uses
// −max(n·(v−p)), which is only right for shapes symmetric about p; see tests/collision/shape_test.cpp.
//
// The cylinder uses the closed form of eqs. 25.9–25.10, support(u) = r·|u_xy| + max(0, u_z)·h, which
// needs no n_x = n_y = 0 branch (|u_xy| is continuous), so no tolerance is needed there.
//
// Shapes are small values; a hull only points at vertices owned by the caller, which must outlive every
// query made with the shape.
#pragma once

#include <cstdint>
#include <span>

#include "collision/vec3.hpp"

namespace shiftcast {

enum class ShapeKind : std::uint8_t { kPoint, kSphere, kCylinder, kBox, kHull };

// How far a node plane moves for one shape: the back (solid-side) region is n·p − d < back, the front
// region is n·p − d > −front. For shapes containing p both are >= 0 and the two regions overlap in a band
// that both children of a node must see (RTR Fig. 25.18).
struct ShiftOffsets {
  double back = 0;
  double front = 0;
};

struct Shape {
  ShapeKind kind = ShapeKind::kPoint;
  Vec3 offset{};        // sphere/box centre or cylinder bottom-centre, relative to the reference point
  float radius = 0;     // sphere, cylinder
  float height = 0;     // cylinder
  Vec3 half_extents{};  // box
  std::span<const Vec3> hull_vertices;  // hull, relative to the reference point
  // Optional: directions of the hull's edges (any superset will do). Exact level sweeps of a hull consider
  // the cross products of its edges with the level's, so stating the few true directions (a box's three
  // axes) is much faster than the default, every pair of vertices.
  std::span<const Vec3> hull_edge_directions;

  static Shape point() { return {}; }
  static Shape sphere(float radius, Vec3 centre_offset = {});
  static Shape cylinder(float radius, float height, Vec3 bottom_offset = {});
  static Shape box(Vec3 half_extents, Vec3 centre_offset = {});
  static Shape hull(std::span<const Vec3> vertices_relative_to_reference,
                    std::span<const Vec3> edge_directions = {});

  // max over the shape's points s (relative to the reference point) of u·s.
  double support(Vec3d u) const;
  ShiftOffsets shift_offsets(Vec3d plane_normal) const {
    return {support(-plane_normal), support(plane_normal)};
  }
  // The farthest any point of the shape is from the reference point: |support(u)| <= reach() for every
  // unit u. Queries use it to start below the root (BspTree::start_node).
  float reach() const;
  // True when turning the shape about the vertical axis through its reference point leaves it the same set:
  // points, and spheres and cylinders centred on that axis. Poses need no yaw for these.
  bool yaw_symmetric() const {
    return kind == ShapeKind::kPoint ||
           ((kind == ShapeKind::kSphere || kind == ShapeKind::kCylinder) && offset.x == 0 && offset.y == 0);
  }
  // True when every parameter is finite and non-negative (radius, height, extents) and a hull has at
  // least one vertex. Queries reject invalid shapes with QueryStatus::kInvalidShape.
  bool valid() const;
};

}  // namespace shiftcast
