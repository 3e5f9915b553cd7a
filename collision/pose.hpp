// Pose: where an entity is. Entities translate freely and rotate only about +z (yaw), like everything a
// shooter moves: players, projectiles, doors, lifts, crates at rest. Keeping rotation to yaw means an
// upright cylinder or a sphere looks the same from every pose, so the level BSP and a prop's BSP can
// test them in any frame without a transform of the shape.
//
//   Pose p{{100, 0, 24}, kPi / 2};
//   Vec3 w = to_world(p, local);       // rotate by yaw, then translate
//   Vec3 l = to_local(p, w);           // the inverse
//   double s = support_posed(shape, p, u);   // max over the posed shape's points x of u·x
#pragma once

#include <cmath>
#include <numbers>

#include "collision/shape.hpp"
#include "collision/vec3.hpp"

namespace shiftcast {

inline constexpr float kPi = std::numbers::pi_v<float>;

struct Pose {
  Vec3 position{};
  float yaw = 0;  // radians, counter-clockwise about +z seen from above

  constexpr bool operator==(const Pose&) const = default;
};

template <typename T>
Vec3T<T> rotate_z(Vec3T<T> v, T cos_yaw, T sin_yaw) {
  return {cos_yaw * v.x - sin_yaw * v.y, sin_yaw * v.x + cos_yaw * v.y, v.z};
}

inline Vec3 to_world(const Pose& pose, Vec3 local) {
  return rotate_z(local, std::cos(pose.yaw), std::sin(pose.yaw)) + pose.position;
}
inline Vec3 to_local(const Pose& pose, Vec3 world) {
  return rotate_z(world - pose.position, std::cos(pose.yaw), -std::sin(pose.yaw));
}
inline Vec3d to_world(const Pose& pose, Vec3d local) {
  const double yaw = pose.yaw;
  return rotate_z(local, std::cos(yaw), std::sin(yaw)) + to_double(pose.position);
}
inline Vec3d to_local(const Pose& pose, Vec3d world) {
  const double yaw = pose.yaw;
  return rotate_z(world - to_double(pose.position), std::cos(yaw), -std::sin(yaw));
}
// Directions rotate without the translation.
inline Vec3d direction_to_local(const Pose& pose, Vec3d world_dir) {
  const double yaw = pose.yaw;
  return rotate_z(world_dir, std::cos(yaw), -std::sin(yaw));
}
inline Vec3d direction_to_world(const Pose& pose, Vec3d local_dir) {
  const double yaw = pose.yaw;
  return rotate_z(local_dir, std::cos(yaw), std::sin(yaw));
}

// max over the points x of `shape` placed at `pose` of u·x (u in world space, any length).
inline double support_posed(const Shape& shape, const Pose& pose, Vec3d u) {
  return shape.support(direction_to_local(pose, u)) + dot(u, to_double(pose.position));
}

// The pose a fraction t of the way from a to b: position and yaw both linear in t (yaw along the short
// way round is the caller's choice; the difference is taken as given).
inline Pose lerp_pose(const Pose& a, const Pose& b, float t) {
  return {lerp(a.position, b.position, t), a.yaw + (b.yaw - a.yaw) * t};
}

}  // namespace shiftcast
