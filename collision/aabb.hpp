// Aabb: axis-aligned bounding box. An empty box has min > max (the default), so growing it by the
// first point gives that point's box.
#pragma once

#include <limits>

#include "collision/vec3.hpp"

namespace shiftcast {

template <typename T>
struct AabbT {
  Vec3T<T> min{std::numeric_limits<T>::max(), std::numeric_limits<T>::max(), std::numeric_limits<T>::max()};
  Vec3T<T> max{std::numeric_limits<T>::lowest(), std::numeric_limits<T>::lowest(),
               std::numeric_limits<T>::lowest()};

  constexpr bool empty() const { return min.x > max.x || min.y > max.y || min.z > max.z; }
  constexpr void grow(Vec3T<T> p) {
    min = shiftcast::min(min, p);
    max = shiftcast::max(max, p);
  }
  constexpr void grow(const AabbT& b) {
    min = shiftcast::min(min, b.min);
    max = shiftcast::max(max, b.max);
  }
  constexpr Vec3T<T> center() const { return (min + max) * T(0.5); }
  constexpr Vec3T<T> size() const { return max - min; }
  // Closed-box containment: points on the faces count as inside.
  constexpr bool contains(Vec3T<T> p) const {
    return p.x >= min.x && p.x <= max.x && p.y >= min.y && p.y <= max.y && p.z >= min.z && p.z <= max.z;
  }
  constexpr bool overlaps(const AabbT& b) const {
    return min.x <= b.max.x && max.x >= b.min.x && min.y <= b.max.y && max.y >= b.min.y && min.z <= b.max.z &&
           max.z >= b.min.z;
  }
};

using Aabb = AabbT<float>;
using Aabbd = AabbT<double>;

}  // namespace shiftcast
