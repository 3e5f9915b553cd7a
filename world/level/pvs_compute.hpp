// A potentially visible set computed at compile time, for levels whose source has none (.map, .obj,
// procedural). The level's bounds are cut into a grid of cubic cells; every cell with open space is a
// cluster; cell A may see cell B when an exact ray through the collision BSP connects a sampled open
// point of A with one of B; the result is then dilated by one cell (each visible pair also makes the
// 26 neighbours of either end visible), which covers most of what the sampling misses.
//
//   PvsComputeResult r = compute_grid_pvs(compiled.tree, level.bounds, {});   // settings: cell size, samples
//   compiled.visibility = std::move(r.set);
//
// What is guaranteed: the set is conservative for the pairs of points that were sampled, and a point the
// set cannot place (outside the grid, in a cell where no open point was found) answers "visible". It is
// sampled, not proven: two points whose connecting ray threads a gap no sample ray found, further than
// one cell from any pair that was found, can be culled. tests/world/level/pvs_computed_test.cpp measures
// it with the same exact-ray count as the imported sets (0 culled wrongly of the pairs sampled).
#pragma once

#include <cstdint>

#include "collision/aabb.hpp"
#include "collision/bsp_tree.hpp"
#include "world/level/potentially_visible_set.hpp"

namespace shiftcast {

// Edge of a grid cell (units): about a room's width in the shipped levels.
inline constexpr float kDefaultPvsCellSize = 256;

struct PvsComputeSettings {
  bool enabled = true;  // off: the level ships no set and distance alone decides
  float cell_size = kDefaultPvsCellSize;
  // The grid never has more cells than this; a larger level gets larger cells (the tool reports the
  // size used). Bounds the compile time, which grows with the square of the open cells.
  std::int32_t max_cells = 1024;
  std::int32_t samples_per_cell = 8;  // open points kept per cell (drawn from up to 4 times as many)
  std::int32_t rays_per_pair = 8;     // sample pairs tried before a pair of cells is called hidden
  std::uint32_t seed = 0x9e3779b9u;
};

struct PvsComputeResult {
  PotentiallyVisibleSet set;  // empty when disabled or the bounds are empty
  float cell_size = 0;        // the edge used
  std::int32_t cells = 0;     // in the grid
  std::int32_t clusters = 0;  // cells with open space
  std::int64_t rays = 0;      // exact rays traced
  double build_ms = 0;
};

PvsComputeResult compute_grid_pvs(const BspTree& tree, const Aabb& bounds,
                                  const PvsComputeSettings& settings);

}  // namespace shiftcast
