// Vec3: the one vector type of shiftcast, in float for stored geometry and queries (Vec3) and in double
// for building (Vec3d: BSP splits and brush clipping). World convention: right-handed, z up, Quake units.
//
// Plain aggregates with free functions; no hidden normalisation. Convert between precisions explicitly
// with `to_double` / `to_float` so every narrowing is visible at the call site.
#pragma once

#include <cmath>

namespace shiftcast {

template <typename T>
struct Vec3T {
  T x = 0;
  T y = 0;
  T z = 0;

  constexpr T operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  constexpr T& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
  constexpr bool operator==(const Vec3T&) const = default;
};

using Vec3 = Vec3T<float>;
using Vec3d = Vec3T<double>;

template <typename T>
constexpr Vec3T<T> operator+(Vec3T<T> a, Vec3T<T> b) {
  return {a.x + b.x, a.y + b.y, a.z + b.z};
}
template <typename T>
constexpr Vec3T<T> operator-(Vec3T<T> a, Vec3T<T> b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z};
}
template <typename T>
constexpr Vec3T<T> operator-(Vec3T<T> a) {
  return {-a.x, -a.y, -a.z};
}
template <typename T>
constexpr Vec3T<T> operator*(Vec3T<T> a, T s) {
  return {a.x * s, a.y * s, a.z * s};
}
template <typename T>
constexpr Vec3T<T> operator*(T s, Vec3T<T> a) {
  return {a.x * s, a.y * s, a.z * s};
}
template <typename T>
constexpr Vec3T<T>& operator+=(Vec3T<T>& a, Vec3T<T> b) {
  a = a + b;
  return a;
}
template <typename T>
constexpr Vec3T<T>& operator-=(Vec3T<T>& a, Vec3T<T> b) {
  a = a - b;
  return a;
}

template <typename T>
constexpr T dot(Vec3T<T> a, Vec3T<T> b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}
template <typename T>
constexpr Vec3T<T> cross(Vec3T<T> a, Vec3T<T> b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
template <typename T>
constexpr T length_squared(Vec3T<T> a) {
  return dot(a, a);
}
template <typename T>
T length(Vec3T<T> a) {
  return std::sqrt(dot(a, a));
}
// Returns the zero vector for a zero-length input instead of NaNs; callers that need a direction check
// the length first.
template <typename T>
Vec3T<T> normalize(Vec3T<T> a) {
  const T len = length(a);
  return len > T(0) ? a * (T(1) / len) : Vec3T<T>{};
}
template <typename T>
constexpr Vec3T<T> lerp(Vec3T<T> a, Vec3T<T> b, T t) {
  return a + (b - a) * t;
}
template <typename T>
constexpr Vec3T<T> min(Vec3T<T> a, Vec3T<T> b) {
  return {a.x < b.x ? a.x : b.x, a.y < b.y ? a.y : b.y, a.z < b.z ? a.z : b.z};
}
template <typename T>
constexpr Vec3T<T> max(Vec3T<T> a, Vec3T<T> b) {
  return {a.x > b.x ? a.x : b.x, a.y > b.y ? a.y : b.y, a.z > b.z ? a.z : b.z};
}
template <typename T>
bool is_finite(Vec3T<T> a) {
  return std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z);
}

inline Vec3d to_double(Vec3 a) {
  return {a.x, a.y, a.z};
}
inline Vec3 to_float(Vec3d a) {
  return {float(a.x), float(a.y), float(a.z)};
}

}  // namespace shiftcast
