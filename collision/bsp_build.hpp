// build_bsp: turns a list of convex brushes into the solid-leaf BSP that every collision query walks.
//
// The build runs in double. Splitters are always brush face planes (so every solid leaf cell is bounded
// by real surfaces or by other cells), chosen to split few brushes and keep the tree balanced. A leaf is
// solid exactly when some brush fragment fills its whole cell, so the solid set is the union of the
// brushes, up to kPlaneEpsilon. Above every solid leaf the build inserts bevel planes (RTR 25.5,
// Fig. 25.17): axial planes at the cell's bounds, and a plane through every cell edge whose outer angle
// exceeds 90 degrees; for upright cylinders also the four horizontal diagonals and a horizontal plane
// through every edge between an upward and a downward face. Each bevel supports its cell, so point
// queries do not change, but shape sweeps no longer meet shifted planes far out in empty space near
// sharp corners.
//
//   BspBuildResult built = build_bsp(brushes, {});
//   if (built.error != BspBuildError::kNone) ...;     // names the brush at fault in built.error_brush
//   const BspTree& tree = built.tree;                 // share read-only between threads
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "collision/brush.hpp"
#include "collision/bsp_tree.hpp"

namespace shiftcast {

// Vertices closer than this to a plane are on it: used to classify fragments and faces during the build.
// 1/1024 unit is far below any gameplay-relevant size and far above double rounding at level scale.
inline constexpr double kPlaneEpsilon = 1.0 / 1024.0;

// Two bevels or faces whose normals differ by less than this (1 − cos) are the same direction.
inline constexpr double kBevelNormalEpsilon = 1e-6;

// Brushes must lie within ±kWorldExtent on every axis; a brush whose planes do not close it inside that
// box is rejected as unbounded.
inline constexpr double kWorldExtent = 1 << 20;

struct BspBuildOptions {
  bool add_bevels = true;
  // Candidate splitters scored per node; more gives slightly better trees at higher build cost.
  int max_splitter_candidates = 48;
  // Score of a splitter = split_cost · (fragments it cuts) + |front − back|: higher values trade depth for
  // fewer brush splits, hence fewer solid cells and bevel chains.
  int split_cost = 6;
};

struct BspBuildStats {
  std::int32_t brushes = 0;
  std::int32_t brushes_empty = 0;    // no volume (planes exclude each other): skipped
  std::int32_t brush_splits = 0;     // brush fragments cut in two by a splitter
  std::int32_t slivers_dropped = 0;  // fragments thinner than kPlaneEpsilon across a splitter
  std::int32_t nodes = 0;            // interior nodes
  std::int32_t bevel_planes = 0;     // over all solid leaves
  std::int32_t solid_leaves = 0;
  std::int32_t empty_leaves = 0;
  std::int32_t max_depth = 0;  // interior nodes on the longest root-to-leaf path
  double build_ms = 0;
};

enum class BspBuildError : std::uint8_t {
  kNone,
  kNonFinitePlane,  // a plane with NaN or infinity
  kNonUnitNormal,   // |n| differs from 1 by more than 1e-3
  kUnbounded,       // the planes do not close the brush within ±kWorldExtent
  kTooLarge,        // more nodes or brushes than an int32 leaf encoding can name
  kTooDeep,         // a root-to-leaf path longer than kMaxTreeDepth
};

const char* to_string(BspBuildError error);

struct BspBuildResult {
  BspBuildError error = BspBuildError::kNone;
  std::int32_t error_brush = kNoBrush;
  BspTree tree;
  BspBuildStats stats;
};

BspBuildResult build_bsp(std::span<const Brush> brushes, const BspBuildOptions& options);

// One line of statistics for logs and tools.
std::string format_stats(const BspBuildStats& stats);

}  // namespace shiftcast
