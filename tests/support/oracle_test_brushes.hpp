// Brushes and random numbers for the oracle's own tests (brush_oracle_test.cpp, box_oracle_test.cpp):
// closed-form boxes, random convex brushes, and the dense procedural level the sampling tests share.
#pragma once

#include <cstdint>
#include <random>

#include "collision/brush.hpp"
#include "tests/support/seeded_random.hpp"
#include "world/level/procedural_level.hpp"

namespace shiftcast::oracle_test {

// A box brush; collision/brush.cpp belongs to the BSP, which the oracle must not depend on.
inline Brush box(Vec3 lo, Vec3 hi) {
  Brush b;
  b.planes = {{{1, 0, 0}, hi.x},   {{-1, 0, 0}, -lo.x}, {{0, 1, 0}, hi.y},
              {{0, -1, 0}, -lo.y}, {{0, 0, 1}, hi.z},   {{0, 0, -1}, -lo.z}};
  return b;
}

class Uniform {
 public:
  explicit Uniform(std::uint32_t seed) : rng_(seed) {}
  double operator()(double lo, double hi) { return uniform_double(rng_, lo, hi); }
  Vec3d in_box(Vec3d lo, Vec3d hi) { return {(*this)(lo.x, hi.x), (*this)(lo.y, hi.y), (*this)(lo.z, hi.z)}; }
  Vec3d direction() {
    for (;;) {
      const Vec3d d{(*this)(-1, 1), (*this)(-1, 1), (*this)(-1, 1)};
      const double l = length(d);
      if (l > 0.1 && l <= 1) return d * (1.0 / l);
    }
  }

 private:
  std::mt19937 rng_;
};

// A bounded random convex brush: a randomly oriented tetrahedron's planes plus random cuts, all at least
// half the radius from the centre.
inline Brush random_brush(Uniform& u, Vec3d centre, double radius) {
  Brush b;
  const Vec3d tetra[4] = {{1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}};
  const Vec3d axis = u.direction();
  const Vec3d side = normalize(cross(axis, Vec3d{0.3, 0.5, 0.7}));
  const Vec3d third = cross(axis, side);
  for (Vec3d t : tetra) {
    const Vec3d n = normalize(axis * t.x + side * t.y + third * t.z);
    b.planes.push_back(to_float(Planed{n, dot(n, centre) + radius * u(1.0, 1.4)}));
  }
  const int extra = int(u(2, 9));
  for (int i = 0; i < extra; ++i) {
    const Vec3d n = u.direction();
    b.planes.push_back(to_float(Planed{n, dot(n, centre) + radius * u(0.5, 1.0)}));
  }
  return b;
}

// 100 brushes in a 1,280-unit arena: every feature of the procedural levels, close together.
inline ProceduralLevel dense_level() {
  return make_procedural_level({.seed = 21, .target_brushes = 100, .half_extent = 640});
}

}  // namespace shiftcast::oracle_test
