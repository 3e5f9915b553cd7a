// The cluster tree of an axis-aligned grid: cells bounded by ascending cut coordinates on each axis become
// the leaves of a balanced tree of axis planes, outside the grid is kNoCluster. Used for the sets computed
// at compile time (pvs_compute.hpp) and by the tests as a tree whose answers have a closed form.
//
//   GridCuts cuts{{{0, 64, 128}, {0, 64}, {0, 32, 64}}};            // 2 x 1 x 2 cells
//   std::vector<PvsNode> nodes = grid_cluster_tree(cuts, cell_clusters);  // cell_clusters[grid_cell(...)]
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "world/level/potentially_visible_set.hpp"

namespace shiftcast {

// cuts[axis]: n + 1 strictly ascending coordinates bound n cells on that axis. A cell holds the points with
// cuts[i] <= p < cuts[i + 1] on each axis (the plane counts front, the higher side), except that the last
// cell also holds its upper face (a point exactly on the grid's upper bound is inside).
struct GridCuts {
  std::array<std::vector<float>, 3> cuts;

  std::int32_t cells(int axis) const {
    return cuts[std::size_t(axis)].empty() ? 0 : std::int32_t(cuts[std::size_t(axis)].size()) - 1;
  }
  std::int32_t cell_count() const { return cells(0) * cells(1) * cells(2); }
  // Row-major, x fastest.
  std::int32_t cell_index(std::int32_t x, std::int32_t y, std::int32_t z) const {
    return (z * cells(1) + y) * cells(0) + x;
  }
};

// The tree, nodes[0] the root. cell_clusters[cell_index(...)] is each cell's cluster (or kNoCluster for a
// cell no one can stand in). Requires at least one cell per axis and cell_clusters.size() == cell_count().
std::vector<PvsNode> grid_cluster_tree(const GridCuts& grid, std::span<const std::int32_t> cell_clusters);

}  // namespace shiftcast
