// Plane: n·x − d = 0 with a unit normal n pointing out of solid. `distance(p)` is signed: positive in
// front (empty side), negative behind (solid side). A point exactly on the plane is in front for every
// "is inside" question in shiftcast: brushes are open sets, so touching is never overlapping.
#pragma once

#include "collision/vec3.hpp"

namespace shiftcast {

template <typename T>
struct PlaneT {
  Vec3T<T> normal;  // unit length
  T d = 0;          // n·x = d on the plane

  constexpr T distance(Vec3T<T> p) const { return dot(normal, p) - d; }
  constexpr PlaneT flipped() const { return {-normal, -d}; }
  constexpr bool operator==(const PlaneT&) const = default;
};

using Plane = PlaneT<float>;
using Planed = PlaneT<double>;

// Plane through `point` with the given unit normal.
template <typename T>
constexpr PlaneT<T> plane_through(Vec3T<T> normal, Vec3T<T> point) {
  return {normal, dot(normal, point)};
}

inline Planed to_double(const Plane& p) {
  return {to_double(p.normal), p.d};
}
inline Plane to_float(const Planed& p) {
  return {to_float(p.normal), float(p.d)};
}

}  // namespace shiftcast
