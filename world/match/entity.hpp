// Entity: one dynamic thing in a match: a player, a projectile or a prop. The simulation
// (world/match/simulation.hpp) owns them; the grid, the filters, the contacts and the history refer to them
// by id.
//
// Shapes are in the entity's local frame: the reference point is Pose::position and the shape turns
// with Pose::yaw. Players are upright cylinders with the reference point at the feet (DESIGN.md §3),
// projectiles spheres centred on it, props a box, a convex hull or a set of brushes (PropModel).
//
// Who collides with whom is decided by layers and masks, as in every physics engine a studio knows:
// a and b interact when (a.layer & b.mask) and (b.layer & a.mask) are both non-zero; a projectile never
// hits the player who fired it.
#pragma once

#include <cstdint>

#include "collision/aabb.hpp"
#include "collision/pose.hpp"
#include "collision/shape.hpp"

namespace shiftcast {

struct PropModel;

// Ids start at 1 and are never reused within a match, so a stale id can never name a new entity.
using EntityId = std::uint32_t;
inline constexpr EntityId kNoEntity = 0;

enum class EntityKind : std::uint8_t { kPlayer, kProjectile, kProp };
const char* to_string(EntityKind kind);

// How a prop moves: along a scripted path that nothing can stop but a blocked player (doors, lifts,
// platforms), or under gravity until it rests and sleeps (crates).
enum class PropMotion : std::uint8_t { kNone, kKinematic, kCrate };

inline constexpr std::uint32_t kLayerPlayer = 1u << 0;
inline constexpr std::uint32_t kLayerProjectile = 1u << 1;
inline constexpr std::uint32_t kLayerProp = 1u << 2;
inline constexpr std::uint32_t kLayerAll = 0xffffffffu;
// Defaults: projectiles do not hit each other; everything else meets everything.
inline constexpr std::uint32_t kMaskPlayer = kLayerAll;
inline constexpr std::uint32_t kMaskProjectile = kLayerPlayer | kLayerProp;
inline constexpr std::uint32_t kMaskProp = kLayerAll;

struct Entity {
  EntityId id = kNoEntity;
  EntityKind kind = EntityKind::kPlayer;
  PropMotion motion = PropMotion::kNone;
  Shape shape;                       // local frame; a hull's vertices belong to `model`
  const PropModel* model = nullptr;  // props only; owned by the simulation, immutable, outlives the entity
  Pose pose;
  Vec3 velocity{};
  float yaw_rate = 0;  // radians per second (kinematic props)
  std::uint32_t layer = kLayerAll;
  std::uint32_t mask = kLayerAll;
  EntityId owner = kNoEntity;  // projectiles: the player who fired it
  bool asleep = false;         // crates at rest: skipped until something touches them

  // Conservative bounds in the local frame, computed once from the shape (or model) by
  // compute_entity_bounds: a sphere about local_center and a box. Both are grown by kBoundsSlack so
  // rounding in a transform can never make a filter say "apart" when the hard case says "touching".
  Vec3 local_center{};
  float bound_radius = 0;
  Aabb local_box;
};

// Grows the bounds by this much beyond the exact extent (Quake units): far above float rounding of a
// pose transform at level scale (4096 · 2^-23 ≈ 5e-4), far below anything a player could see.
inline constexpr float kBoundsSlack = 1.0f / 64.0f;

// Fills local_center, bound_radius and local_box from entity.shape (and entity.model when set).
void compute_entity_bounds(Entity& entity);

// The world-space box of the entity at `pose`: its local box turned by the yaw (so it covers the turned
// box) and moved. Conservative by kBoundsSlack.
Aabb world_box(const Entity& entity, const Pose& pose);
// The world-space centre of the bounding sphere at `pose`.
Vec3 world_center(const Entity& entity, const Pose& pose);

// Layer/mask rule and the projectile-owner rule above.
bool should_collide(const Entity& a, const Entity& b);

}  // namespace shiftcast
