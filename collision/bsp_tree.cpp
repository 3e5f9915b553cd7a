#include "collision/bsp_tree.hpp"

#include <cmath>

namespace shiftcast {
namespace {

// Stored planes must be unit length to this tolerance; a compiled level that violates it is corrupt.
constexpr float kStoredNormalTolerance = 1e-3f;

}  // namespace

BspTree::BspTree(std::vector<BspNode> nodes, std::int32_t root, std::int32_t brush_count, Aabb bounds)
    : nodes_(std::move(nodes)), root_(root), brush_count_(brush_count), bounds_(bounds) {}

BspLoadError BspTree::check() const {
  const auto node_count = std::int32_t(nodes_.size());
  const auto valid_child = [&](std::int32_t child, std::int32_t parent) {
    if (child == kEmptyLeaf) return BspLoadError::kNone;
    if (is_solid_leaf(child))
      return leaf_brush(child) < brush_count_ ? BspLoadError::kNone : BspLoadError::kBadBrush;
    return child > parent && child < node_count ? BspLoadError::kNone : BspLoadError::kBadChild;
  };
  if (valid_child(root_, -1) != BspLoadError::kNone) return BspLoadError::kBadRoot;
  for (std::int32_t i = 0; i < node_count; ++i) {
    const BspNode& node = nodes_[std::size_t(i)];
    if (!is_finite(node.plane.normal) || !std::isfinite(node.plane.d) ||
        std::abs(length(node.plane.normal) - 1.0f) > kStoredNormalTolerance) {
      return BspLoadError::kBadPlane;
    }
    for (std::int32_t child : node.child) {
      if (const BspLoadError e = valid_child(child, i); e != BspLoadError::kNone) return e;
    }
  }
  return BspLoadError::kNone;
}

}  // namespace shiftcast
