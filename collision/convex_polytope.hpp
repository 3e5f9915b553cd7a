// ConvexPolytope: a convex solid as face polygons, in double, for building. Brushes become polytopes by
// clipping a world-sized cube with their planes; the BSP build splits polytopes by splitter planes and
// reads bevel planes off the polytope of each solid cell. Never used by queries.
//
// Classification uses a caller-supplied epsilon (the build passes kPlaneEpsilon): a vertex within eps of
// a plane is *on* it, belongs to both sides, and never causes a split by itself.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collision/aabb.hpp"
#include "collision/plane.hpp"

namespace shiftcast {

struct PolytopeFace {
  Planed plane;                 // outward
  std::vector<Vec3d> vertices;  // convex loop, counter-clockwise seen from the front
  // Index of the brush plane this face lies on, or kCutFace for a face made by a splitter.
  std::int32_t source = 0;
  // The face lies on a splitter plane on the path from the BSP root, on the cell's side.
  bool on_splitter = false;
};

inline constexpr std::int32_t kCutFace = -1;

enum class PlaneSide : std::uint8_t { kBack, kFront, kSpanning };

struct ConvexPolytope {
  std::vector<PolytopeFace> faces;

  bool empty() const { return faces.size() < 4; }
  Aabbd bounds() const;
  // All distinct vertices (faces share them; duplicates within eps are merged).
  std::vector<Vec3d> vertices(double eps) const;
};

// The cube [-extent, extent]^3 clipped by every plane (kept behind each). Faces of the cube that survive
// carry kWorldFace as their source: the planes did not close the solid within the cube.
inline constexpr std::int32_t kWorldFace = -2;
ConvexPolytope polytope_from_planes(std::span<const Planed> planes, double extent, double eps);

// kBack: no vertex in front by more than eps; kFront: none behind by more than eps; else kSpanning.
PlaneSide classify(const ConvexPolytope& poly, const Planed& plane, double eps);

// The part of `poly` behind `plane`; the new cap face gets `cap_source` and `on_splitter = cap_on_splitter`.
// Returns an empty polytope when nothing remains.
ConvexPolytope clip_behind(const ConvexPolytope& poly, const Planed& plane, double eps,
                           std::int32_t cap_source, bool cap_on_splitter);

}  // namespace shiftcast
