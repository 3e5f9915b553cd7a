// World queries: rays, shape sweeps and overlaps against the level and a set of entities at given poses.
// The live match asks them with candidates from its grid; rewound queries with the entities of a
// RewindView. Pure functions of their arguments: any thread, no allocation beyond `out` vectors.
//
//   WorldHit hit = world_raycast(level, candidates, origin, dir, 8192, {.mask = kLayerPlayer});
//   if (hit.trace.hit) ... hit.entity == kNoEntity means the level (hit.trace.brush names the brush)
//
// Entities are culled by their bounding spheres first; rays then meet spheres, cylinders and boxes in
// closed form (exact), hulls through time_of_impact with a point shape, concave props through their own
// BSP in the prop's frame. Sweeps meet entities through time_of_impact (concave props: their BSP for
// round shapes, each brush's hull for boxes and hulls), so like every time_of_impact answer they are
// never late and at most kToiDistanceTolerance early, and a pass closer than that counts as a hit.
// The nearest hit wins; ties go to the level, then to the lower entity id. Entity hits follow the
// level's TraceResult contract (start_solid inside an entity, end_position backed off kSurfaceBackoff)
// with brush = kNoBrush.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collision/bsp_tree.hpp"
#include "collision/shape.hpp"
#include "world/entity.hpp"

namespace shiftcast {

struct QueryFilter {
  std::uint32_t mask = kLayerAll;  // entities whose layer meets the mask are tested
  EntityId ignore = kNoEntity;     // e.g. the shooter
  bool level = true;               // test the level
};

struct WorldHit {
  TraceResult trace;            // fraction, end position, normal, brush as for the level
  EntityId entity = kNoEntity;  // the entity hit; kNoEntity when the level (or nothing) was hit
};

// Rays: direction need not be unit; max_distance along the normalised direction.
WorldHit world_raycast(const BspTree& level, std::span<const Entity> entities, Vec3 origin, Vec3 direction,
                       float max_distance, const QueryFilter& filter);
// Shape sweeps (any Shape; box and hull shapes keep their orientation, no rotation during the sweep).
WorldHit world_sweep(const BspTree& level, std::span<const Entity> entities, const Shape& shape, Vec3 from,
                     Vec3 to, const QueryFilter& filter);

struct WorldOverlap {
  QueryStatus status = QueryStatus::kOk;
  std::int32_t brush = kNoBrush;   // a level brush the shape overlaps, if any
  std::vector<EntityId> entities;  // entities it overlaps, ascending
};
WorldOverlap world_overlap(const BspTree& level, std::span<const Entity> entities, const Shape& shape,
                           const Pose& pose, const QueryFilter& filter);

}  // namespace shiftcast
