#include "collision/bsp_tree.hpp"

#include <algorithm>
#include <cmath>

namespace shiftcast {
namespace {

// Stored planes must be unit length to this tolerance; a compiled level that violates it is corrupt.
constexpr float kStoredNormalTolerance = 1e-3f;

}  // namespace

BspTree::BspTree(std::vector<BspNode> nodes, std::vector<BspLeaf> leaves, std::vector<Plane> bevels,
                 std::int32_t root, std::int32_t brush_count, Aabb bounds)
    : nodes_(std::move(nodes)),
      leaves_(std::move(leaves)),
      bevels_(std::move(bevels)),
      root_(root),
      brush_count_(brush_count),
      bounds_(bounds) {}

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
