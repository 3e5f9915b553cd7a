#include "collision/bsp_tree.hpp"

#include <algorithm>
#include <cmath>

namespace shiftcast {
namespace {

// Stored planes must be unit length to this tolerance; a compiled level that violates it is corrupt.
constexpr float kStoredNormalTolerance = 1e-3f;

}  // namespace

BspTree::BspTree(std::vector<BspNode> nodes, std::vector<BspLeaf> leaves, std::vector<Plane> bevels,
                 std::int32_t root, std::span<const Brush> brushes, Aabb bounds)
    : nodes_(std::move(nodes)),
      leaves_(std::move(leaves)),
      bevels_(std::move(bevels)),
      root_(root),
      brush_count_(std::int32_t(brushes.size())),
      bounds_(bounds),
      topology_(brushes) {
  if (check() == BspLoadError::kNone) build_start_grid();
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

}  // namespace

void BspTree::build_start_grid() {
  if (bounds_.empty()) return;
  const Vec3 size = bounds_.size();
  float cell = kStartCell;
  for (;;) {
    std::int64_t cells = 1;
    for (int axis = 0; axis < 3; ++axis)
      cells *= std::int64_t(size[axis] / cell) + 1;
    if (cells <= kMaxStartCells) break;
    cell *= 2;
  }
  grid_cell_ = cell;
  grid_origin_ = bounds_.min;
  for (int axis = 0; axis < 3; ++axis)
    grid_dims_[axis] = std::int32_t(size[axis] / cell) + 1;
  grid_start_.resize(std::size_t(grid_dims_[0]) * std::size_t(grid_dims_[1]) * std::size_t(grid_dims_[2]));
  const Vec3 margin{kStartMargin, kStartMargin, kStartMargin};
  for (std::int32_t z = 0; z < grid_dims_[2]; ++z) {
    for (std::int32_t y = 0; y < grid_dims_[1]; ++y) {
      for (std::int32_t x = 0; x < grid_dims_[0]; ++x) {
        const Vec3 lo = grid_origin_ + Vec3{float(x), float(y), float(z)} * cell - margin;
        const Vec3 hi = lo + Vec3{cell, cell, cell} + margin * 2.0f;
        std::int32_t child = root_;
        while (child >= 0) {
          const BspNode& node = nodes_[std::size_t(child)];
          const int side = box_side(node.plane, lo, hi);
          if (side == 0) break;
          child = node.child[side < 0 ? 0 : 1];
        }
        grid_start_[(std::size_t(z) * std::size_t(grid_dims_[1]) + std::size_t(y)) *
                        std::size_t(grid_dims_[0]) +
                    std::size_t(x)] = child;
      }
    }
  }
}

std::int32_t BspTree::start_node(Vec3 lo, Vec3 hi, float radius) const {
  // A little more than the radius: float rounding of the box and of the grid's cells must not let a
  // point slip past a plane the grown cell only just clears.
  radius += kStartSlack;
  if (grid_start_.empty() || !(radius <= kStartMargin)) return root_;
  // The cell of the box's centre; the box grown by radius must lie within that cell grown by the margin.
  const Vec3 centre = (lo + hi) * 0.5f;
  std::int32_t index[3];
  for (int axis = 0; axis < 3; ++axis) {
    const float cell = std::floor((centre[axis] - grid_origin_[axis]) / grid_cell_);
    if (!(cell >= 0.0f && cell < float(grid_dims_[axis]))) return root_;
    const float cell_lo = grid_origin_[axis] + cell * grid_cell_ - kStartMargin;
    const float cell_hi = cell_lo + grid_cell_ + 2 * kStartMargin;
    if (!(lo[axis] - radius >= cell_lo && hi[axis] + radius <= cell_hi)) return root_;
    index[axis] = std::int32_t(cell);
  }
  return grid_start_[(std::size_t(index[2]) * std::size_t(grid_dims_[1]) + std::size_t(index[1])) *
                         std::size_t(grid_dims_[0]) +
                     std::size_t(index[0])];
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
