// BspTree: the static level as a solid-leaf BSP, and the queries every other part of shiftcast asks of it.
//
// Build one with build_bsp() (collision/bsp_build.hpp) and share it read-only: all queries are const,
// allocation-free and safe to call from any number of threads at once. One tree serves every shape
// size, because each query shifts the node planes by its shape's offsets on the fly (Melax, RTR 25.5).
//
//   tree.trace(Shape::cylinder(15, 56), from, to)   first contact of a player moving from→to
//   tree.raycast(origin, dir, 8192)                 first contact of a ray (dir need not be unit)
//   tree.overlap(Shape::sphere(8), p)               is the shape in solid at p, and in which brush
//   tree.point_brush(p)                             which brush holds p (kNoBrush in empty space)
//
// Results follow the contract in collision/trace_result.hpp. Accuracy: point queries and raycasts are
// exact against the stored float planes (evaluated in double). Shape queries are exact against the
// brushes: the shifted planes (with bevels) only choose which brushes to ask, and each is asked in closed
// form (collision/brush_chord.hpp), so there is no early stop near edges and no false start in solid.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collision/aabb.hpp"
#include "collision/brush.hpp"
#include "collision/brush_topology.hpp"
#include "collision/plane.hpp"
#include "collision/shape.hpp"
#include "collision/trace_result.hpp"

namespace shiftcast {

// One interior node: 24 bytes, stored depth-first so a descent mostly walks forward in memory.
// child[0] is behind the plane (the side solid is on), child[1] in front. A child >= 0 is a node index;
// kEmptyLeaf is empty space; a value <= kSolidLeafBase is solid leaf number (kSolidLeafBase − value).
struct BspNode {
  Plane plane;
  std::int32_t child[2];
};

// A solid leaf: the brush it belongs to and its bevel planes. Melax inserts bevels as extra nodes above
// the leaf, each with an empty front child; a chain like that is exactly a list of planes to clip by, so
// they are stored as one contiguous run in BspTree::bevels(). Shape queries clip by them; point queries
// skip them, since a bevel supports its cell and cannot change a point's answer.
struct BspLeaf {
  std::int32_t brush;
  std::int32_t first_bevel;
  std::int32_t bevel_count;
};

// Interior nodes on any root-to-leaf path, at most: ray queries keep a fixed stack of this size. The
// build fails with kTooDeep beyond it and check() rejects deeper trees (real levels stay below 100).
inline constexpr int kMaxTreeDepth = 256;

inline constexpr std::int32_t kEmptyLeaf = -1;
inline constexpr std::int32_t kSolidLeafBase = -2;
constexpr std::int32_t solid_leaf(std::int32_t leaf_index) {
  return kSolidLeafBase - leaf_index;
}
constexpr bool is_leaf(std::int32_t child) {
  return child < 0;
}
constexpr bool is_solid_leaf(std::int32_t child) {
  return child <= kSolidLeafBase;
}
constexpr std::int32_t leaf_index(std::int32_t child) {
  return kSolidLeafBase - child;
}

enum class BspLoadError : std::uint8_t {
  kNone,
  kBadRoot,   // root is neither a node index nor a leaf
  kBadChild,  // a child index out of range or not after its parent (would allow cycles)
  kBadLeaf,   // a solid leaf index out of range, or its bevel run outside the bevel array
  kBadBrush,  // a solid leaf names a brush outside [0, brush_count)
  kBadPlane,  // non-finite or non-unit normal, in a node or a bevel
  kTooDeep,   // a path longer than kMaxTreeDepth
};

class BspTree {
 public:
  BspTree() = default;

  // Adopts arrays produced by build_bsp() or read from a compiled level, and derives the exact boundary
  // of `brushes` (the ones the tree was built from; leaves name them by index), which shape queries need.
  // Children must come after their parent (which rules out cycles); check() reports the first violation.
  BspTree(std::vector<BspNode> nodes, std::vector<BspLeaf> leaves, std::vector<Plane> bevels,
          std::int32_t root, std::span<const Brush> brushes, Aabb bounds);
  BspLoadError check() const;

  TraceResult trace(const Shape& shape, Vec3 from, Vec3 to) const;
  TraceResult raycast(Vec3 origin, Vec3 direction, float max_distance) const;
  OverlapResult overlap(const Shape& shape, Vec3 position) const;
  std::int32_t point_brush(Vec3 p) const;

  std::span<const BspNode> nodes() const { return nodes_; }
  std::span<const BspLeaf> leaves() const { return leaves_; }
  std::span<const Plane> bevels() const { return bevels_; }
  std::int32_t root() const { return root_; }
  std::int32_t brush_count() const { return brush_count_; }
  const BrushTopology& topology() const { return topology_; }
  const Aabb& bounds() const { return bounds_; }  // of all brushes

  // Where a query may start instead of the root: the deepest node (or leaf) whose ancestors all have the
  // box [lo, hi] grown by `radius` strictly on one side, so a descent from the root would have sent
  // everything the query can touch down this one path without splitting or clipping it. `radius` must
  // bound the shape's reach from its reference point (Shape::reach()). Answers from the start grid, a
  // uniform grid of cells kStartCell wide whose start nodes were found for the cell grown by
  // kStartMargin; boxes that do not fit one grown cell start at the root.
  std::int32_t start_node(Vec3 lo, Vec3 hi, float radius) const;

 private:
  void build_start_grid();

  std::vector<BspNode> nodes_;
  std::vector<BspLeaf> leaves_;
  std::vector<Plane> bevels_;
  std::int32_t root_ = kEmptyLeaf;
  std::int32_t brush_count_ = 0;
  Aabb bounds_;
  BrushTopology topology_;
  // Start grid: derived from the arrays at construction (empty for a tree that fails check()).
  Vec3 grid_origin_{};
  std::int32_t grid_dims_[3] = {0, 0, 0};
  float grid_cell_ = 0;
  std::vector<std::int32_t> grid_start_;
};

// The start grid's cell width, and how far each cell is grown before its start node is found: queries
// whose swept box grown by their shape's reach stays within a grown cell skip the descent above it.
inline constexpr float kStartCell = 128;
inline constexpr float kStartMargin = 64;
// The grid's size cap: larger levels get wider cells.
inline constexpr std::int64_t kMaxStartCells = 1 << 18;

}  // namespace shiftcast
