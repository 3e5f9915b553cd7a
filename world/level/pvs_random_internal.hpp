// Internal to world/level: the random numbers of the compile-time visibility work (widening an imported
// set, computing one), the same on every standard library so a compiled level is the same everywhere.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>

#include "collision/aabb.hpp"
#include "collision/vec3.hpp"

namespace shiftcast::pvs_random {

// Uniform in [0, 1) from the top 24 bits of one output (std's distributions differ between libraries).
inline float unit(std::mt19937& rng) {
  return float(rng() >> 8) * 0x1p-24f;
}

inline Vec3 point_in(std::mt19937& rng, const Aabb& box) {
  const Vec3 size = box.size();
  const float x = unit(rng), y = unit(rng), z = unit(rng);
  return {box.min.x + size.x * x, box.min.y + size.y * y, box.min.z + size.z * z};
}

// Uniform on the unit sphere: z uniform in [-1, 1), the angle uniform.
inline Vec3 direction(std::mt19937& rng) {
  const float z = 2 * unit(rng) - 1;
  const float angle = 6.2831853f * unit(rng);
  const float ring = std::sqrt(std::max(0.0f, 1 - z * z));
  return {ring * std::cos(angle), ring * std::sin(angle), z};
}

}  // namespace shiftcast::pvs_random
