// TurnedShape: a shape turned by a yaw about its reference point, as an unturned Shape. A BSP cannot turn
// a shape (its planes are shifted by the shape's support in world axes), so anything that asks the level,
// or a prop's tree in its frame, about a turned box or hull asks about this instead: round shapes keep
// their kind with the offset turned (they look the same from every yaw); boxes become hulls over their 8
// turned corners and their three edge directions, held inside; hulls become hulls over their turned vertices
// (the one allocation).
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
    // A round shape on the vertical axis through its reference point (every player and projectile) is
    // its own turn: no sine or cosine for it. The turn would only make the offset's zeros -0.
    const bool round = shape.kind == ShapeKind::kPoint || shape.kind == ShapeKind::kSphere ||
                       shape.kind == ShapeKind::kCylinder;
    if (round && shape.offset.x == 0.0f && shape.offset.y == 0.0f) return;
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
        axes_ = {turn({1, 0, 0}), turn({0, 1, 0}), Vec3{0, 0, 1}};
        shape_ = Shape::hull(corners_, axes_);
        break;
      case ShapeKind::kHull:
        // The one allocation of these queries, for turned hulls only (boxes fit in corners_).
        hull_.reserve(shape.hull_vertices.size() + shape.hull_edge_directions.size());
        for (Vec3 v : shape.hull_vertices)
          hull_.push_back(turn(v));
        for (Vec3 d : shape.hull_edge_directions)
          hull_.push_back(turn(d));
        shape_ = Shape::hull(std::span<const Vec3>(hull_).first(shape.hull_vertices.size()),
                             std::span<const Vec3>(hull_).subspan(shape.hull_vertices.size()));
        break;
    }
  }
  TurnedShape(const TurnedShape&) = delete;
  TurnedShape& operator=(const TurnedShape&) = delete;

  const Shape& shape() const { return shape_; }

 private:
  Shape shape_;
  std::array<Vec3, 8> corners_{};
  std::array<Vec3, 3> axes_{};  // the turned box's edge directions
  std::vector<Vec3> hull_;      // turned vertices, then turned edge directions
};

}  // namespace shiftcast
