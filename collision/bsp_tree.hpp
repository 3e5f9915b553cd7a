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
// form (collision/brush_chord_internal.hpp), so there is no early stop near edges and no false start in
// solid.
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

// A node plane whose normal is exactly ±1 on one axis and ±0 on the others has kind 2·axis + (normal
// negative); every other plane has kGeneralPlane. For those planes n·p in double is exactly ±p[axis] (the
// zero components add signed zeros, which change nothing unless ±p[axis] is itself zero), so the ray
// descent tests them with one subtraction and gets the same bits as the full dot product.
inline constexpr std::uint8_t kAxialPlaneKinds = 6;
inline constexpr std::uint8_t kGeneralPlane = kAxialPlaneKinds;
std::uint8_t plane_kind(const Plane& plane);

enum class BspLoadError : std::uint8_t {
  kNone,
  kBadRoot,   // root is neither a node index nor a leaf
  kBadChild,  // a child index out of range or not after its parent (would allow cycles)
  kBadLeaf,   // a solid leaf index out of range, or its bevel run outside the bevel array
  kBadBrush,  // a solid leaf names a brush outside [0, brush_count)
  kBadPlane,  // non-finite or non-unit normal, in a node or a bevel
  kTooDeep,   // a path longer than kMaxTreeDepth
};
// What check() found, in words for a load error message ("bad child (out of range ...)").
const char* to_string(BspLoadError error);

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
  // The conservative overlap: true wherever the shape overlaps a brush, and also where it only comes
  // near a convex edge or corner (within the shifted planes and bevels, at most a fraction of its size).
  // Cheaper than overlap(); for culling, where "maybe" is good enough.
  OverlapResult may_overlap(const Shape& shape, Vec3 position) const;
  std::int32_t point_brush(Vec3 p) const;

  std::span<const BspNode> nodes() const { return nodes_; }
  std::span<const BspLeaf> leaves() const { return leaves_; }
  std::span<const Plane> bevels() const { return bevels_; }
  // Per node, which coordinate axis its normal lies on exactly (plane_kind()), for the ray descent.
  std::span<const std::uint8_t> plane_kinds() const { return plane_kinds_; }
  std::int32_t root() const { return root_; }
  std::int32_t brush_count() const { return brush_count_; }
  const BrushTopology& topology() const { return topology_; }
  const Aabb& bounds() const { return bounds_; }  // of all brushes

  // Where a query may start instead of the root: the deepest node (or leaf) whose ancestors all have the
  // box [lo, hi] grown by `radius` strictly on one side, so a descent from the root would have sent
  // everything the query can touch down this one path without splitting or clipping it. `radius` must
  // bound the shape's reach from its reference point (Shape::reach()). Answers from the start grids: a
  // pyramid of uniform grids, cells kStartCell, 2·kStartCell, 4·kStartCell, … wide, each cell's start node
  // found for the cell grown by half its width; a box is looked up in the finest grid one of whose grown
  // cells holds it. Boxes that fit no grown cell start at the root.
  std::int32_t start_node(Vec3 lo, Vec3 hi, float radius) const;

 private:
  // One grid of the start pyramid: dims[0]·dims[1]·dims[2] cells of width `cell`, x fastest, from
  // `first` in start_cells_.
  struct StartLevel {
    float cell = 0;
    float inverse_cell = 0;  // exact: cells are powers of two
    float margin = 0;
    std::int32_t dims[3] = {0, 0, 0};
    std::size_t first = 0;
  };

  void build_start_grids();
  OverlapResult overlap_query(const Shape& shape, Vec3 position, bool exact) const;

  std::vector<BspNode> nodes_;
  std::vector<BspLeaf> leaves_;
  std::vector<Plane> bevels_;
  std::int32_t root_ = kEmptyLeaf;
  std::int32_t brush_count_ = 0;
  Aabb bounds_;
  BrushTopology topology_;
  std::vector<std::uint8_t> plane_kinds_;  // derived like the start grids
  // Start grids, finest first: derived from the arrays at construction (none for a tree that fails
  // check()). All grids share the origin bounds_.min.
  std::vector<StartLevel> start_levels_;
  // Each cell's start node as a child link, or (when every link fits) as link + start_link_offset_ in
  // 16 bits, with start_cells_ then empty.
  std::vector<std::int32_t> start_cells_;
  std::vector<std::uint16_t> start_cells16_;
  std::int32_t start_link_offset_ = 0;
};

// The finest start grid's cell width; each coarser grid doubles it, up to the first that spans the level.
// Every cell is grown by half its width before its start node is found, so a query box grown by its
// shape's reach whose largest half-width is at most that margin fits the grown cell around its centre.
// 16 units: a 16-unit ray (the short class of the benchmarks) fits the finest grid, where on oa_dm1 and
// oa_dm4 41–49% of short rays start in a leaf, i.e. are answered without a plane test.
inline constexpr float kStartCell = 16;
// The grids' size cap (cells over all grids, 4 bytes each): levels so large that the finest grid would
// pass it start one grid coarser or more (oa_ctf2, 4,096 units wide, starts at 32-unit cells). Measured
// against 2^16 and 2^18 on three OpenArena maps: the finer grid is worth its cache misses on short rays.
inline constexpr std::int64_t kMaxStartCells = 1 << 20;

}  // namespace shiftcast
