#include "world/match/entity.hpp"

#include <algorithm>
#include <cmath>

#include "world/match/prop_model.hpp"

namespace shiftcast {

const char* to_string(EntityKind kind) {
  switch (kind) {
    case EntityKind::kPlayer:
      return "player";
    case EntityKind::kProjectile:
      return "projectile";
    case EntityKind::kProp:
      return "prop";
  }
  return "unknown";
}

namespace {

// The exact local box of a shape (before slack).
Aabb shape_box(const Shape& shape) {
  Aabb box;
  switch (shape.kind) {
    case ShapeKind::kPoint:
      box.grow(shape.offset);
      break;
    case ShapeKind::kSphere: {
      const Vec3 r{shape.radius, shape.radius, shape.radius};
      box.grow(shape.offset - r);
      box.grow(shape.offset + r);
      break;
    }
    case ShapeKind::kCylinder:
      box.grow(shape.offset - Vec3{shape.radius, shape.radius, 0});
      box.grow(shape.offset + Vec3{shape.radius, shape.radius, shape.height});
      break;
    case ShapeKind::kBox:
      box.grow(shape.offset - shape.half_extents);
      box.grow(shape.offset + shape.half_extents);
      break;
    case ShapeKind::kHull:
      for (Vec3 v : shape.hull_vertices)
        box.grow(v);
      break;
  }
  return box;
}

}  // namespace

void compute_entity_bounds(Entity& entity) {
  Aabb box = entity.model != nullptr ? entity.model->local_box : shape_box(entity.shape);
  const Vec3 slack{kBoundsSlack, kBoundsSlack, kBoundsSlack};
  box.min -= slack;
  box.max += slack;
  entity.local_box = box;
  entity.local_center = box.center();
  // The sphere around the box centre through the box's corners: covers the box, hence the shape. For a
  // sphere or cylinder that is a little loose; the box stage takes the slack back.
  entity.bound_radius = length(box.max - entity.local_center);
  if (entity.shape.kind == ShapeKind::kSphere && entity.model == nullptr) {
    entity.local_center = entity.shape.offset;
    entity.bound_radius = entity.shape.radius + kBoundsSlack;
  }
}

Aabb world_box(const Entity& entity, const Pose& pose) {
  const Aabb& b = entity.local_box;
  // Players and projectiles look the same from every yaw: their box does not turn (and stays tight).
  if (pose.yaw == 0.0f || (entity.model == nullptr && entity.shape.yaw_symmetric())) {
    return {b.min + pose.position, b.max + pose.position};
  }
  const float c = std::cos(pose.yaw);
  const float s = std::sin(pose.yaw);
  const Vec3 center = entity.local_center;
  const Vec3 half = b.max - center;
  // The turned box's extent along x and y: |c|·hx + |s|·hy and |s|·hx + |c|·hy, plus slack for the
  // rounding of c and s.
  const float ex = std::abs(c) * half.x + std::abs(s) * half.y + kBoundsSlack;
  const float ey = std::abs(s) * half.x + std::abs(c) * half.y + kBoundsSlack;
  const Vec3 wc = rotate_z(center, c, s) + pose.position;
  return {{wc.x - ex, wc.y - ey, b.min.z + pose.position.z},
          {wc.x + ex, wc.y + ey, b.max.z + pose.position.z}};
}

Vec3 world_center(const Entity& entity, const Pose& pose) {
  // Players, projectiles and centred props have their centre on the turning axis: no trigonometry.
  const Vec3 c = entity.local_center;
  if (c.x == 0 && c.y == 0) return {pose.position.x, pose.position.y, pose.position.z + c.z};
  return to_world(pose, c);
}

bool should_collide(const Entity& a, const Entity& b) {
  if ((a.layer & b.mask) == 0 || (b.layer & a.mask) == 0) return false;
  if (a.owner != kNoEntity && a.owner == b.id) return false;
  if (b.owner != kNoEntity && b.owner == a.id) return false;
  return true;
}

}  // namespace shiftcast
