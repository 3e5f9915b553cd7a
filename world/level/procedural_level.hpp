// Procedural levels: seeded arenas of brushes with the features that break collision code (stairs,
// 45-degree and shallow ramps, pillars, thin walls one unit thick at arbitrary yaw, sharp wedges and
// spikes, overlapping random convex brushes). Used by the oracle tests, the benchmarks and the level demo
// until real levels can be imported; the same seed always gives the same brushes, bit for bit.
//
//   ProceduralLevel level = make_procedural_level({.seed = 7, .target_brushes = 240});
//   BspBuildResult built = build_bsp(level.brushes, {});
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collision/aabb.hpp"
#include "collision/brush.hpp"

namespace shiftcast {

struct ProceduralLevelOptions {
  std::uint32_t seed = 1;
  // Brushes to aim for; the result has at least this many (structures are added whole).
  std::int32_t target_brushes = 240;
  // The arena spans [-half_extent, half_extent] in x and y.
  float half_extent = 2048.0f;
  float wall_thickness = 1.0f;  // of the thin walls
};

enum class BrushFeature : std::uint8_t {
  kFloor,
  kBoundary,
  kStair,
  kRamp,
  kPillar,
  kThinWall,
  kWedge,
  kRandom
};

struct ProceduralLevel {
  std::vector<Brush> brushes;
  std::vector<BrushFeature> features;  // one per brush: what structure it belongs to
  Aabb bounds;                         // of all brushes
};

ProceduralLevel make_procedural_level(const ProceduralLevelOptions& options);

const char* to_string(BrushFeature feature);

}  // namespace shiftcast
