// TurnedShape: a shape turned by a yaw about its reference point, as an unturned Shape. A BSP cannot turn
// a shape (its planes are shifted by the shape's support in world axes), so anything that asks the level,
// or a prop's tree in its frame, about a turned box or hull asks about this instead: round shapes keep
// their kind with the offset turned (they look the same from every yaw); boxes become hulls over their 8
// turned corners, held inside; hulls become hulls over their turned vertices (the one allocation).
//
//   const TurnedShape turned(crate.shape, crate.pose.yaw);
//   level.trace(turned.shape(), from, to);
//
// Not copyable: the shape points into this object, which must outlive every use of shape().
#pragma once

#include <array>
#include <cmath>
#include <vector>

#include "collision/pose.hpp"
#include "collision/shape.hpp"

namespace shiftcast {

class TurnedShape {
 public:
  TurnedShape(const Shape& shape, double yaw) : shape_(shape) {
    if (yaw == 0.0) return;
    const double c = std::cos(yaw);
    const double s = std::sin(yaw);
    const auto turn = [&](Vec3 v) { return to_float(rotate_z(to_double(v), c, s)); };
    switch (shape.kind) {
      case ShapeKind::kPoint:
      case ShapeKind::kSphere:
      case ShapeKind::kCylinder:
        shape_.offset = turn(shape.offset);
        break;
      case ShapeKind::kBox:
        for (int i = 0; i < 8; ++i) {
          const Vec3 h = shape.half_extents;
          const Vec3 corner{i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z};
          corners_[std::size_t(i)] = turn(shape.offset + corner);
        }
        shape_ = Shape::hull(corners_);
        break;
      case ShapeKind::kHull:
        // The one allocation of these queries, for turned hulls only (boxes fit in corners_).
        hull_.reserve(shape.hull_vertices.size());
        for (Vec3 v : shape.hull_vertices)
          hull_.push_back(turn(v));
        shape_ = Shape::hull(hull_);
        break;
    }
  }
  TurnedShape(const TurnedShape&) = delete;
  TurnedShape& operator=(const TurnedShape&) = delete;

  const Shape& shape() const { return shape_; }

 private:
  Shape shape_;
  std::array<Vec3, 8> corners_{};
  std::vector<Vec3> hull_;
};

}  // namespace shiftcast
