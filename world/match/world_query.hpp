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
#include "collision/time_of_impact.hpp"
#include "world/match/entity.hpp"

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

// One entity's answer to a sweep, in fractions of the motion: the per-entity step of world_sweep and of
// every mover in the simulation's tick, so both mean the same by a hit. `shape` keeps the yaw `shape_yaw`
// during the motion; the entity moves along `target` (the same pose twice when it stands still). Convex
// entities by time_of_impact at separation 0; concave props by their own BSP trace (round shapes, prop not
// turning) or by time_of_impact against each brush's hull. `may_start_inside` asks for the start-inside
// test first (skip it when the bounding spheres prove the start is outside).
struct EntitySweep {
  bool hit = false;
  bool start_solid = false;
  bool all_solid = false;
  double fraction = 1;
  Vec3d normal{};  // world space, out of the entity (towards the mover)
  Vec3d point{};   // a contact point (for concave props: the mover's reference point at the contact)
};
EntitySweep sweep_against_entity(const Entity& target_entity, const Motion& target, const Shape& shape,
                                 float shape_yaw, Vec3 from, Vec3 to, bool may_start_inside);

// The bounding-sphere cull before sweep_against_entity: the first fraction of the motion at which the
// shape (by its reach) can be within the entity's bounding sphere, given both motions; -1 when it never is,
// 0 when it starts there (only then can the shape start inside the entity).
double bounding_entry(const Entity& target_entity, const Motion& target, const Shape& shape, Vec3 from,
                      Vec3 to);

// Where a motion from + s·delta stopped at `fraction` by a plane with `normal` ends: backed off along the
// motion so that it is kSurfaceBackoff in front of the plane (the level's rule, collision/bsp_trace.cpp).
Vec3 backed_off_end(Vec3d from, Vec3d delta, double fraction, Vec3d normal);

}  // namespace shiftcast
