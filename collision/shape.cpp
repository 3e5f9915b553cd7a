#include "collision/shape.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shiftcast {

Shape Shape::sphere(float radius, Vec3 centre_offset) {
  Shape s;
  s.kind = ShapeKind::kSphere;
  s.radius = radius;
  s.offset = centre_offset;
  return s;
}

Shape Shape::cylinder(float radius, float height, Vec3 bottom_offset) {
  Shape s;
  s.kind = ShapeKind::kCylinder;
  s.radius = radius;
  s.height = height;
  s.offset = bottom_offset;
  return s;
}

Shape Shape::box(Vec3 half_extents, Vec3 centre_offset) {
  Shape s;
  s.kind = ShapeKind::kBox;
  s.half_extents = half_extents;
  s.offset = centre_offset;
  return s;
}

Shape Shape::hull(std::span<const Vec3> vertices_relative_to_reference,
                  std::span<const Vec3> edge_directions) {
  Shape s;
  s.kind = ShapeKind::kHull;
  s.hull_vertices = vertices_relative_to_reference;
  s.hull_edge_directions = edge_directions;
  return s;
}

double Shape::support(Vec3d u) const {
  const double along_offset = dot(u, to_double(offset));
  switch (kind) {
    case ShapeKind::kPoint:
      return 0.0;
    case ShapeKind::kSphere:
      return along_offset + radius;
    case ShapeKind::kCylinder:
      return along_offset + double(radius) * std::sqrt(u.x * u.x + u.y * u.y) +
             std::max(0.0, u.z) * double(height);
    case ShapeKind::kBox:
      return along_offset + std::abs(u.x) * half_extents.x + std::abs(u.y) * half_extents.y +
             std::abs(u.z) * half_extents.z;
    case ShapeKind::kHull: {
      double best = -std::numeric_limits<double>::infinity();
      for (Vec3 v : hull_vertices)
        best = std::max(best, dot(u, to_double(v)));
      return best;
    }
  }
  return 0.0;
}

float Shape::reach() const {
  const float shift = length(offset);
  switch (kind) {
    case ShapeKind::kPoint:
      return 0.0f;
    case ShapeKind::kSphere:
      return shift + radius;
    case ShapeKind::kCylinder:
      return shift + std::sqrt(radius * radius + height * height);
    case ShapeKind::kBox:
      return shift + length(half_extents);
    case ShapeKind::kHull: {
      float best = 0.0f;
      for (Vec3 v : hull_vertices)
        best = std::max(best, length(v));
      return best;
    }
  }
  return 0.0f;
}

bool Shape::valid() const {
  const auto ok = [](float v) { return std::isfinite(v) && v >= 0.0f; };
  if (!is_finite(offset)) return false;
  switch (kind) {
    case ShapeKind::kPoint:
      return true;
    case ShapeKind::kSphere:
      return ok(radius);
    case ShapeKind::kCylinder:
      return ok(radius) && ok(height);
    case ShapeKind::kBox:
      return ok(half_extents.x) && ok(half_extents.y) && ok(half_extents.z);
    case ShapeKind::kHull:
      return !hull_vertices.empty() &&
             std::all_of(hull_vertices.begin(), hull_vertices.end(), [](Vec3 v) { return is_finite(v); });
  }
  return false;
}

}  // namespace shiftcast
