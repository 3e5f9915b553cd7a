// Query sets for the benchmarks: the same seeded rays, sphere sweeps and player sweeps, short, medium
// and long, for every benchmark program, so their figures describe the same workload.
//
//   std::vector<Query> rays = make_query_set(tree, Shape::point(), QueryKind::kRay, MotionLength::kShort,
//                                            4096, 0.5f, seed);
//
// Deterministic on every platform: numbers come from std::mt19937 through our own float helper (the
// standard distributions are implementation-defined) and headings by rejection rather than libm
// trigonometry, so checksums of the answers match across machines.
#pragma once

#include <cstdint>
#include <vector>

#include "collision/bsp_tree.hpp"
#include "world/level/query_csv.hpp"

namespace shiftcast::bench {

// The procedural level both benchmark programs measure when given no level file, and the seed their
// query sets start from (set i uses kBenchQuerySeed + i).
inline constexpr std::uint32_t kBenchLevelSeed = 1;
inline constexpr std::int32_t kBenchLevelBrushes = 1200;
inline constexpr std::uint32_t kBenchQuerySeed = 20240601;

// The query kinds are shiftcast-level's (world/level/query_csv.hpp): ray, sphere, cylinder.
enum class MotionLength : std::uint8_t { kShort, kMedium, kLong };  // (0, 16], [16, 256], [2048, 4096] units
inline constexpr int kMotionLengths = 3;

const char* to_string(MotionLength length);

struct Query {
  Vec3 from;
  Vec3 to;
  Vec3 direction;  // unit
  float length;
};

// `count` queries whose starts are free for `shape` in `tree`, drawn from the lowest
// `start_height_fraction` of the tree's bounds. Fewer come back only when the level is nearly all solid.
std::vector<Query> make_query_set(const BspTree& tree, const Shape& shape, QueryKind kind,
                                  MotionLength length, std::size_t count, float start_height_fraction,
                                  std::uint32_t seed);

}  // namespace shiftcast::bench
