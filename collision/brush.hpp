// Brush: a convex solid given by its bounding planes, the unit of level geometry (Quake's brush).
// A point is inside a brush when it is strictly behind every plane (distance < 0); points on a face are
// outside, so a shape resting on a floor does not overlap it. A level is a list of brushes; a brush's id
// is its index in that list, and every query reports that id.
#pragma once

#include <vector>

#include "collision/aabb.hpp"
#include "collision/plane.hpp"

namespace shiftcast {

struct Brush {
  std::vector<Plane> planes;  // outward unit normals; order is irrelevant; duplicates are tolerated
};

// An axis-aligned box brush from its corners (min < max on every axis).
Brush brush_from_box(Vec3 min, Vec3 max);

// Strictly behind every plane, evaluated in double like every BSP query. Brute force; the BSP answers
// the same question in O(depth).
inline bool brush_contains(const Brush& brush, Vec3 p) {
  const Vec3d pd = to_double(p);
  for (const Plane& plane : brush.planes) {
    if (!(to_double(plane).distance(pd) < 0.0)) return false;
  }
  return true;
}

}  // namespace shiftcast
