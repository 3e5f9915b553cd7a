#include "collision/bsp_tree.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shiftcast {
namespace {

// Stored planes must be unit length to this tolerance; a compiled level that violates it is corrupt.
constexpr float kStoredNormalTolerance = 1e-3f;

}  // namespace

std::uint8_t plane_kind(const Plane& plane) {
  const Vec3 n = plane.normal;
  for (int axis = 0; axis < 3; ++axis) {
    if (std::abs(n[axis]) == 1.0f && n[(axis + 1) % 3] == 0.0f && n[(axis + 2) % 3] == 0.0f) {
      return std::uint8_t(2 * axis + (n[axis] < 0.0f ? 1 : 0));
    }
  }
  return kGeneralPlane;
}

const char* to_string(BspLoadError error) {
  switch (error) {
    case BspLoadError::kNone:
      return "none";
    case BspLoadError::kBadRoot:
      return "bad root (neither a node index nor a leaf)";
    case BspLoadError::kBadChild:
      return "bad child (out of range or not after its parent)";
    case BspLoadError::kBadLeaf:
      return "bad solid leaf (index out of range, or bevel run outside the bevel array)";
    case BspLoadError::kBadBrush:
      return "bad brush (a solid leaf names a brush outside the level)";
    case BspLoadError::kBadPlane:
      return "bad plane (non-finite, or normal not unit length)";
    case BspLoadError::kTooDeep:
      return "too deep (a root-to-leaf path longer than kMaxTreeDepth)";
    default:
      return "tree rejected by check()";
  }
}

BspTree::BspTree(std::vector<BspNode> nodes, std::vector<BspLeaf> leaves, std::vector<Plane> bevels,
                 std::int32_t root, std::span<const Brush> brushes, Aabb bounds)
    : nodes_(std::move(nodes)),
      leaves_(std::move(leaves)),
      bevels_(std::move(bevels)),
      root_(root),
      brush_count_(std::int32_t(brushes.size())),
      bounds_(bounds),
      topology_(brushes) {
  if (check() != BspLoadError::kNone) return;
  plane_kinds_.reserve(nodes_.size());
  for (const BspNode& node : nodes_)
    plane_kinds_.push_back(plane_kind(node.plane));
  build_start_grids();
}

namespace {

constexpr float kStartSlack = 1.0f / 16.0f;

// Where a box falls against a plane: strictly behind (−1), strictly in front (+1), or touching it (0).
int box_side(const Plane& plane, Vec3 lo, Vec3 hi) {
  const Vec3d n = to_double(plane.normal);
  const Vec3d centre = (to_double(lo) + to_double(hi)) * 0.5;
  const Vec3d half = (to_double(hi) - to_double(lo)) * 0.5;
  const double dist = dot(n, centre) - double(plane.d);
  const double extent = std::abs(n.x) * half.x + std::abs(n.y) * half.y + std::abs(n.z) * half.z;
  if (dist + extent < 0.0) return -1;
  if (dist - extent > 0.0) return 1;
  return 0;
}

// One axis of a grown start cell, computed the same way when the grid is built and when it is looked up.
struct CellSpan {
  float lo;
  float hi;
};
CellSpan grown_cell(float origin, float index, float cell, float margin) {
  const float lo = origin + index * cell - margin;
  return {lo, lo + cell + 2 * margin};
}

}  // namespace

void BspTree::build_start_grids() {
  if (bounds_.empty()) return;
  const Vec3 size = bounds_.size();
  // Every grid from kStartCell up to the first whose single cell spans the level on every axis.
  std::vector<StartLevel> levels;
  for (float cell = kStartCell;; cell *= 2) {
    StartLevel& level = levels.emplace_back();
    level.cell = cell;
    level.margin = cell / 2;
    level.inverse_cell = 1 / cell;
    for (int axis = 0; axis < 3; ++axis)
      level.dims[axis] = std::int32_t(size[axis] / cell) + 1;
    if (level.dims[0] == 1 && level.dims[1] == 1 && level.dims[2] == 1) break;
  }
  const auto cells_of = [](const StartLevel& l) {
    return std::int64_t(l.dims[0]) * std::int64_t(l.dims[1]) * std::int64_t(l.dims[2]);
  };
  std::int64_t total = 0;
  for (const StartLevel& l : levels)
    total += cells_of(l);
  std::size_t finest = 0;
  while (total > kMaxStartCells && finest + 1 < levels.size())
    total -= cells_of(levels[finest++]);
  levels.erase(levels.begin(), levels.begin() + std::ptrdiff_t(finest));
  for (StartLevel& l : levels) {
    l.first = start_cells_.size();
    start_cells_.resize(start_cells_.size() + std::size_t(cells_of(l)));
  }

  // Coarsest first: a cell's grown box lies inside its parent's (half the width grown by a quarter of the
  // parent's width, inside the parent grown by half), so its descent resumes at the parent's start node.
  for (std::size_t li = levels.size(); li-- > 0;) {
    const StartLevel& level = levels[li];
    const StartLevel* parent = li + 1 < levels.size() ? &levels[li + 1] : nullptr;
    for (std::int32_t z = 0; z < level.dims[2]; ++z) {
      for (std::int32_t y = 0; y < level.dims[1]; ++y) {
        for (std::int32_t x = 0; x < level.dims[0]; ++x) {
          const std::int32_t index[3] = {x, y, z};
          Vec3 lo;
          Vec3 hi;
          for (int axis = 0; axis < 3; ++axis) {
            const CellSpan span = grown_cell(bounds_.min[axis], float(index[axis]), level.cell, level.margin);
            lo[axis] = span.lo;
            hi[axis] = span.hi;
          }
          std::int32_t child =
              parent == nullptr
                  ? root_
                  : start_cells_[parent->first +
                                 (std::size_t(z / 2) * std::size_t(parent->dims[1]) + std::size_t(y / 2)) *
                                     std::size_t(parent->dims[0]) +
                                 std::size_t(x / 2)];
          while (child >= 0) {
            const BspNode& node = nodes_[std::size_t(child)];
            const int side = box_side(node.plane, lo, hi);
            if (side == 0) break;
            child = node.child[side < 0 ? 0 : 1];
          }
          start_cells_[level.first +
                       (std::size_t(z) * std::size_t(level.dims[1]) + std::size_t(y)) *
                           std::size_t(level.dims[0]) +
                       std::size_t(x)] = child;
        }
      }
    }
  }
  start_levels_ = std::move(levels);
  // Half the bytes when every child link fits 16 bits once offset by the solid leaf count: the grids are
  // read at random, so their size decides how many lookups miss the cache.
  const std::int64_t links = std::int64_t(nodes_.size()) + std::int64_t(leaves_.size()) + 1;
  if (links <= std::int64_t(std::numeric_limits<std::uint16_t>::max()) + 1) {
    start_link_offset_ = std::int32_t(leaves_.size()) + 1;
    start_cells16_.reserve(start_cells_.size());
    for (std::int32_t child : start_cells_)
      start_cells16_.push_back(std::uint16_t(child + start_link_offset_));
    start_cells_ = {};
  }
}

std::int32_t BspTree::start_node(Vec3 lo, Vec3 hi, float radius) const {
  // A little more than the radius: float rounding of the box and of the grid's cells must not let a
  // point slip past a plane the grown cell only just clears.
  radius += kStartSlack;
  const Vec3 half = (hi - lo) * 0.5f;
  const float reach = std::max({half.x, half.y, half.z}) + radius;
  // Long queries fit no grid (and NaN fits none): the root, before any per-grid work.
  if (start_levels_.empty() || !(reach <= start_levels_.back().margin)) return root_;
  // The first grid whose margin covers the reach holds the box around any centre; the one finer than it
  // holds it too when the centre is far enough inside its cell, which is worth one try.
  std::size_t li = 0;
  while (start_levels_[li].margin < reach)
    ++li;
  if (li > 0) --li;
  const Vec3 centre = (lo + hi) * 0.5f;
  for (; li < start_levels_.size(); ++li) {
    const StartLevel& level = start_levels_[li];
    std::size_t index[3];
    bool fits = true;
    for (int axis = 0; axis < 3 && fits; ++axis) {
      // Cell widths are powers of two, so the product is the quotient, and truncating a non-negative
      // quotient is its floor (std::floor is a library call without SSE4.1).
      const float along = (centre[axis] - bounds_.min[axis]) * level.inverse_cell;
      fits = along >= 0.0f && along < float(level.dims[axis]);
      if (!fits) break;
      const float cell = float(std::int32_t(along));
      const CellSpan span = grown_cell(bounds_.min[axis], cell, level.cell, level.margin);
      fits = lo[axis] - radius >= span.lo && hi[axis] + radius <= span.hi;
      index[axis] = std::size_t(std::int32_t(along));
    }
    if (!fits) continue;
    const std::size_t i = level.first +
                          (index[2] * std::size_t(level.dims[1]) + index[1]) * std::size_t(level.dims[0]) +
                          index[0];
    return start_cells16_.empty() ? start_cells_[i] : std::int32_t(start_cells16_[i]) - start_link_offset_;
  }
  return root_;
}

BspLoadError BspTree::check() const {
  const auto valid_plane = [](const Plane& p) {
    return is_finite(p.normal) && std::isfinite(p.d) &&
           std::abs(length(p.normal) - 1.0f) <= kStoredNormalTolerance;
  };
  const auto node_count = std::int64_t(nodes_.size());
  const auto valid_child = [&](std::int32_t child, std::int64_t parent) {
    if (child == kEmptyLeaf) return BspLoadError::kNone;
    if (is_solid_leaf(child)) {
      return std::size_t(leaf_index(child)) < leaves_.size() ? BspLoadError::kNone : BspLoadError::kBadLeaf;
    }
    return child > parent && child < node_count ? BspLoadError::kNone : BspLoadError::kBadChild;
  };
  if (valid_child(root_, -1) != BspLoadError::kNone) return BspLoadError::kBadRoot;
  for (std::int64_t i = 0; i < node_count; ++i) {
    const BspNode& node = nodes_[std::size_t(i)];
    if (!valid_plane(node.plane)) return BspLoadError::kBadPlane;
    for (std::int32_t child : node.child) {
      if (const BspLoadError e = valid_child(child, i); e != BspLoadError::kNone) return e;
    }
  }
  // Children follow parents, so one forward pass gives every node's depth (root at depth 1).
  std::vector<std::int32_t> depth(nodes_.size(), 0);
  if (root_ >= 0) depth[std::size_t(root_)] = 1;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (depth[i] > kMaxTreeDepth) return BspLoadError::kTooDeep;
    for (std::int32_t child : nodes_[i].child) {
      if (child >= 0) depth[std::size_t(child)] = std::max(depth[std::size_t(child)], depth[i] + 1);
    }
  }
  for (const BspLeaf& leaf : leaves_) {
    if (leaf.brush < 0 || leaf.brush >= brush_count_) return BspLoadError::kBadBrush;
    if (leaf.first_bevel < 0 || leaf.bevel_count < 0 ||
        std::int64_t(leaf.first_bevel) + leaf.bevel_count > std::int64_t(bevels_.size())) {
      return BspLoadError::kBadLeaf;
    }
  }
  for (const Plane& bevel : bevels_) {
    if (!valid_plane(bevel)) return BspLoadError::kBadPlane;
  }
  return BspLoadError::kNone;
}

}  // namespace shiftcast
