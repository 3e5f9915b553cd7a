// The grid's cluster tree: six bounding planes, then a balanced split of the cell ranges, always cutting
// the axis with the most cells left (so the depth is about log2 of the cell count plus six).
#include "world/level/pvs_grid.hpp"

namespace shiftcast {
namespace {

constexpr std::int32_t leaf_child(std::int32_t cluster) {
  return -cluster - 2;
}  // kNoCluster -> -1

Vec3 axis_normal(int axis, float sign) {
  Vec3 n{0, 0, 0};
  n[axis] = sign;
  return n;
}

struct Builder {
  const GridCuts& grid;
  std::span<const std::int32_t> cell_clusters;
  std::vector<PvsNode> nodes;

  // The child code for the cell block [lo, hi) on each axis: a leaf for one cell, else a new node.
  std::int32_t build(std::array<std::int32_t, 3> lo, std::array<std::int32_t, 3> hi) {
    int axis = 0;
    for (int a = 1; a < 3; ++a)
      if (hi[std::size_t(a)] - lo[std::size_t(a)] > hi[std::size_t(axis)] - lo[std::size_t(axis)]) axis = a;
    const std::size_t ax = std::size_t(axis);
    if (hi[ax] - lo[ax] == 1)
      return leaf_child(cell_clusters[std::size_t(grid.cell_index(lo[0], lo[1], lo[2]))]);
    const std::int32_t mid = (lo[ax] + hi[ax]) / 2;
    const std::int32_t index = std::int32_t(nodes.size());
    nodes.push_back({axis_normal(axis, 1), grid.cuts[ax][std::size_t(mid)], {-1, -1}});
    std::array<std::int32_t, 3> front_lo = lo, back_hi = hi;
    front_lo[ax] = mid;
    back_hi[ax] = mid;
    const std::int32_t front = build(front_lo, hi);
    const std::int32_t back = build(lo, back_hi);
    nodes[std::size_t(index)].children[0] = front;
    nodes[std::size_t(index)].children[1] = back;
    return index;
  }
};

}  // namespace

std::vector<PvsNode> grid_cluster_tree(const GridCuts& grid, std::span<const std::int32_t> cell_clusters) {
  Builder b{grid, cell_clusters, {}};
  // The bounding planes chain: each sends the outside to kNoCluster and the inside on to the next. The
  // upper planes face down (normal -axis) so that the grid's upper face is inside.
  for (int axis = 0; axis < 3; ++axis) {
    const std::vector<float>& c = grid.cuts[std::size_t(axis)];
    const std::int32_t lower = std::int32_t(b.nodes.size());
    b.nodes.push_back({axis_normal(axis, 1), c.front(), {lower + 1, -1}});
    b.nodes.push_back({axis_normal(axis, -1), -c.back(), {lower + 2, -1}});
  }
  const std::int32_t inner = b.build({0, 0, 0}, {grid.cells(0), grid.cells(1), grid.cells(2)});
  // The last bounding plane pointed at the node after it; a grid of one cell has no such node.
  if (inner < 0) b.nodes.back().children[0] = inner;
  return std::move(b.nodes);
}

}  // namespace shiftcast
