// Seeded queries for the exactness check (exactness_check.hpp): the shapes of issue 11, starts the
// oracle certifies free, starts against a surface, and motions in a match's mix of lengths.
//
//   ExactnessQueries queries(oracle, tree.bounds(), seed);
//   const SampledShape s = queries.shape(ExactShape::kYawedBox);
//   const TurnedShape turned(s.shape, s.yaw);                    // a yawed box is a hull of 8 corners
//   if (auto from = queries.free_start(turned.shape())) {
//     const Vec3 to = *from + queries.motion();
//     check.sweep(turned.shape(), *from, to);
//   }
//
// Deterministic on every platform: std::mt19937 through our own float mapping, no std distributions.
// Cylinder heights come from a fixed list (kCylinderHeights): the oracle caches one swept hull per
// brush and height.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <random>

#include "collision/aabb.hpp"
#include "collision/shape.hpp"
#include "tests/support/brush_oracle.hpp"

namespace shiftcast {

enum class ExactShape : std::uint8_t { kRay, kSphere, kCylinder, kBox, kYawedBox };
inline constexpr int kExactShapes = 5;
const char* to_string(ExactShape shape);

inline constexpr std::array<float, 12> kCylinderHeights = {1, 2, 4, 8, 16, 24, 32, 48, 56, 64, 96, 128};

// A shape to sweep; yawed boxes are turned by `yaw` about the reference point (collision/turned_shape.hpp).
struct SampledShape {
  Shape shape;
  double yaw = 0;
};

// Where free starts are drawn: half near a random brush's vertex (where edges and corners are) and half
// anywhere in the level's bounds, or all anywhere in the bounds (as the benchmarks' query sets are).
enum class StartPlaces : std::uint8_t { kNearBrushesAndAnywhere, kAnywhere };

class ExactnessQueries {
 public:
  ExactnessQueries(const BrushOracle& oracle, const Aabb& bounds, std::uint32_t seed,
                   StartPlaces places = StartPlaces::kNearBrushesAndAnywhere);

  double uniform(double lo, double hi);
  double log_uniform(double lo, double hi);

  // Spheres r 0.5–128 (log-uniform), cylinders r 1–64 (log-uniform) of a kCylinderHeights height, boxes
  // with half extents 1–64 (log-uniform, half of them with the reference point at the bottom face), yawed
  // boxes the same at a uniform yaw.
  SampledShape shape(ExactShape kind);
  // A start at least kFreeClearance clear of every brush (the oracle's grown shape overlaps nothing),
  // drawn from the StartPlaces. Nullopt when none is found in kStartAttempts tries (a large shape in a
  // tight level).
  std::optional<Vec3> free_start(const Shape& shape);
  // A point within the shape's reach (plus a margin) of a random brush's vertex: in solid or out.
  Vec3 near_brush(const Shape& shape);
  // A motion vector: a uniform direction, the length from a match's mix: 60% short (0–16 units, movement
  // ticks), 30% medium (16–256), 10% long (2048–4096, projectiles and hitscan).
  Vec3 motion();
  Vec3 direction();
  // A start where the shape has reached a surface along a random motion from a free start and then
  // gone `depth` further (units along that motion; 0 touches). `into` gets the motion's direction, for
  // a caller that wants to go on into the surface or back off it.
  std::optional<Vec3> start_against_surface(const Shape& shape, double depth, Vec3* into = nullptr);

  static constexpr int kStartAttempts = 200;

 private:
  Vec3 near_vertex(double reach);

  const BrushOracle& oracle_;
  Aabb bounds_;
  StartPlaces places_;
  std::mt19937 rng_;
};

}  // namespace shiftcast
