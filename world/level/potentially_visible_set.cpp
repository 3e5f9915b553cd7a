// The potentially visible set: validation of untrusted parts, and the point, box and segment walks down
// the cluster tree. Every walk is iterative (no recursion depth an imported tree could choose).
#include "world/level/potentially_visible_set.hpp"

#include <array>
#include <cmath>
#include <utility>

namespace shiftcast {
namespace {

// A leaf child code's cluster (kNoCluster for -1).
constexpr std::int32_t leaf_cluster(std::int32_t child) {
  return -child - 2;
}

// Signed distance of p from the node's plane: >= 0 is front (children[0]). Written as one function so the
// point, box and segment walks agree on which side a point exactly on a plane goes.
float plane_distance(const PvsNode& node, const Vec3& p) {
  return node.normal.x * p.x + node.normal.y * p.y + node.normal.z * p.z - node.distance;
}

bool finite(const Vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

PvsResult refuse(PvsError error, std::string detail) {
  PvsResult r;
  r.error = error;
  r.detail = std::move(detail);
  return r;
}

}  // namespace

PvsResult PotentiallyVisibleSet::from_parts(std::vector<PvsNode> nodes, std::int32_t cluster_count,
                                            std::int32_t bytes_per_cluster, std::vector<std::uint8_t> bits) {
  if (cluster_count < 0 || bytes_per_cluster < 0)
    return refuse(PvsError::kBadBitsLength, "negative cluster count " + std::to_string(cluster_count) +
                                                " or row length " + std::to_string(bytes_per_cluster));
  if (std::int64_t(bytes_per_cluster) * 8 < cluster_count)
    return refuse(PvsError::kBadBitsLength, "rows of " + std::to_string(bytes_per_cluster) +
                                                " bytes cannot hold " + std::to_string(cluster_count) +
                                                " clusters");
  if (std::int64_t(bits.size()) != std::int64_t(cluster_count) * bytes_per_cluster)
    return refuse(PvsError::kBadBitsLength, std::to_string(bits.size()) + " bytes of rows, expected " +
                                                std::to_string(cluster_count) + " x " +
                                                std::to_string(bytes_per_cluster));
  if (cluster_count == 0) {
    // The empty set: nothing to walk to, whatever nodes were handed over.
    if (!nodes.empty()) return refuse(PvsError::kBadChild, "nodes without clusters");
    return {};
  }
  if (nodes.empty()) return refuse(PvsError::kBadChild, "clusters without a root node");

  const std::int64_t node_count = std::int64_t(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const PvsNode& n = nodes[i];
    const float length =
        std::sqrt(n.normal.x * n.normal.x + n.normal.y * n.normal.y + n.normal.z * n.normal.z);
    if (!finite(n.normal) || !std::isfinite(n.distance) ||
        !(std::fabs(length - 1) <= kPvsNormalLengthTolerance))
      return refuse(PvsError::kBadPlane, "node " + std::to_string(i));
    for (std::int32_t child : n.children) {
      const bool bad_node = child >= 0 && child >= node_count;
      const bool bad_cluster =
          child < -1 && -std::int64_t(child) - 2 >= cluster_count;  // no overflow at INT_MIN
      if (bad_node || bad_cluster)
        return refuse(PvsError::kBadChild, "node " + std::to_string(i) + " child " + std::to_string(child));
    }
  }

  // Every node reachable from the root is reached once: a second arrival is a cycle or a shared subtree,
  // either of which would let a walk revisit (or loop). Depth is tracked for the fixed query stacks.
  std::vector<std::uint8_t> seen(nodes.size(), 0);
  std::vector<std::pair<std::int32_t, std::int32_t>> pending{{0, 1}};  // node, its depth
  seen[0] = 1;
  while (!pending.empty()) {
    auto [node, depth] = pending.back();
    pending.pop_back();
    if (depth > kMaxPvsDepth)
      return refuse(PvsError::kTooDeep,
                    "node " + std::to_string(node) + " at depth " + std::to_string(depth));
    for (std::int32_t child : nodes[std::size_t(node)].children) {
      if (child < 0) continue;
      if (seen[std::size_t(child)])
        return refuse(PvsError::kCycle, "node " + std::to_string(child) + " reached twice");
      seen[std::size_t(child)] = 1;
      pending.emplace_back(child, depth + 1);
    }
  }

  PvsResult r;
  r.set.nodes_ = std::move(nodes);
  r.set.cluster_count_ = cluster_count;
  r.set.bytes_per_cluster_ = bytes_per_cluster;
  r.set.bits_ = std::move(bits);
  return r;
}

std::int32_t PotentiallyVisibleSet::cluster_at(const Vec3& p) const {
  if (empty()) return kNoCluster;
  std::int32_t node = 0;
  while (node >= 0) {
    const PvsNode& n = nodes_[std::size_t(node)];
    node = n.children[plane_distance(n, p) >= 0 ? 0 : 1];
  }
  return leaf_cluster(node);
}

double PotentiallyVisibleSet::visible_pair_share() const {
  if (empty()) return 1;
  std::int64_t visible = 0;
  for (std::int32_t from = 0; from < cluster_count_; ++from)
    for (std::int32_t to = 0; to < cluster_count_; ++to)
      visible += cluster_sees(from, to);
  return double(visible) / (double(cluster_count_) * double(cluster_count_));
}

bool PotentiallyVisibleSet::cluster_sees(std::int32_t from, std::int32_t to) const {
  if (empty() || from < 0 || to < 0 || from >= cluster_count_ || to >= cluster_count_) return true;
  const std::uint8_t row_byte =
      bits_[std::size_t(from) * std::size_t(bytes_per_cluster_) + std::size_t(to >> 3)];
  return (row_byte >> (to & 7)) & 1;
}

namespace {

// Visits the leaf child code of every leaf the closed box touches, until visit returns true. Returns
// whether it did.
template <class Visit>
bool walk_box(std::span<const PvsNode> nodes, const Aabb& box, Visit&& visit) {
  std::array<std::int32_t, kMaxPvsDepth + 1> pending;
  std::size_t count = 0;
  pending[count++] = 0;
  while (count > 0) {
    std::int32_t node = pending[--count];
    while (node >= 0) {
      const PvsNode& n = nodes[std::size_t(node)];
      // The box's nearest and farthest corners along the normal bound every point of the closed box.
      Vec3 low, high;
      for (int axis = 0; axis < 3; ++axis) {
        const bool positive = n.normal[axis] >= 0;
        low[axis] = positive ? box.min[axis] : box.max[axis];
        high[axis] = positive ? box.max[axis] : box.min[axis];
      }
      const float d_low = plane_distance(n, low);
      const float d_high = plane_distance(n, high);
      if (d_low >= 0) {
        node = n.children[0];
      } else if (d_high < 0) {
        node = n.children[1];
      } else {
        // Straddles (or touches the plane from behind: the plane itself is front). The depth bound of
        // from_parts keeps the pending count within the array: one pending sibling per level at most.
        pending[count++] = n.children[1];
        node = n.children[0];
      }
    }
    if (visit(node)) return true;
  }
  return false;
}

}  // namespace

bool PotentiallyVisibleSet::sees_box(std::int32_t from, const Aabb& box) const {
  if (empty() || from < 0 || from >= cluster_count_ || box.empty()) return true;
  bool touched_cluster = false;
  const bool seen = walk_box(nodes_, box, [&](std::int32_t leaf) {
    const std::int32_t cluster = leaf_cluster(leaf);
    if (cluster == kNoCluster) return false;
    touched_cluster = true;
    return cluster_sees(from, cluster);
  });
  return seen || !touched_cluster;
}

void PotentiallyVisibleSet::clusters_in_box(const Aabb& box, std::vector<std::int32_t>& out) const {
  if (empty() || box.empty()) return;
  const std::size_t first = out.size();
  walk_box(nodes_, box, [&](std::int32_t leaf) {
    const std::int32_t cluster = leaf_cluster(leaf);
    if (cluster != kNoCluster && (out.size() == first || out.back() != cluster)) out.push_back(cluster);
    return false;
  });
}

namespace {

// Visits the leaf child code of every leaf the segment a-b passes through (a leaf may come more than
// once), until visit returns true. Returns whether it did.
template <class Visit>
bool walk_segment(std::span<const PvsNode> nodes, const Vec3& a, const Vec3& b, Visit&& visit) {
  struct Piece {
    std::int32_t node;
    Vec3 a, b;
  };
  std::array<Piece, kMaxPvsDepth + 1> pending;
  std::size_t count = 0;
  pending[count++] = {0, a, b};
  while (count > 0) {
    Piece piece = pending[--count];
    while (piece.node >= 0) {
      const PvsNode& n = nodes[std::size_t(piece.node)];
      const float da = plane_distance(n, piece.a);
      const float db = plane_distance(n, piece.b);
      if (da >= 0 && db >= 0) {
        piece.node = n.children[0];
      } else if (da < 0 && db < 0) {
        piece.node = n.children[1];
      } else {
        // Crosses: each side gets its part, both ending at the crossing point. The crossing point is
        // rounded; that moves the split along the segment by a rounding error, and both parts keep it.
        // The far part waits on the stack, so leaves come in order from a to b.
        const float t = da / (da - db);
        const Vec3 cross = piece.a + (piece.b - piece.a) * t;
        const int near_side = da >= 0 ? 0 : 1;
        pending[count++] = {n.children[1 - near_side], cross, piece.b};
        piece = {n.children[near_side], piece.a, cross};
      }
    }
    if (visit(piece.node)) return true;
  }
  return false;
}

}  // namespace

bool PotentiallyVisibleSet::sees_segment(std::int32_t from, const Vec3& a, const Vec3& b) const {
  if (empty() || from < 0 || from >= cluster_count_ || !finite(a) || !finite(b)) return true;
  bool touched_cluster = false;
  const bool seen = walk_segment(nodes_, a, b, [&](std::int32_t leaf) {
    const std::int32_t cluster = leaf_cluster(leaf);
    if (cluster == kNoCluster) return false;
    touched_cluster = true;
    return cluster_sees(from, cluster);
  });
  return seen || !touched_cluster;
}

void PotentiallyVisibleSet::clusters_on_segment(const Vec3& a, const Vec3& b,
                                                std::vector<std::int32_t>& out) const {
  if (empty() || !finite(a) || !finite(b)) return;
  const std::size_t first = out.size();
  walk_segment(nodes_, a, b, [&](std::int32_t leaf) {
    if (out.size() == first || out.back() != leaf_cluster(leaf)) out.push_back(leaf_cluster(leaf));
    return false;
  });
}

bool PotentiallyVisibleSet::sees_any(std::int32_t from, std::span<const std::int32_t> clusters) const {
  bool touched_cluster = false;
  for (const std::int32_t cluster : clusters) {
    if (cluster == kNoCluster) continue;
    touched_cluster = true;
    if (cluster_sees(from, cluster)) return true;
  }
  return !touched_cluster;
}

const char* to_string(PvsError error) {
  switch (error) {
    case PvsError::kNone:
      return "none";
    case PvsError::kBadChild:
      return "bad child";
    case PvsError::kCycle:
      return "cycle";
    case PvsError::kBadBitsLength:
      return "bad bits length";
    case PvsError::kBadPlane:
      return "bad plane";
    case PvsError::kTooDeep:
      return "too deep";
  }
  return "unknown";
}

}  // namespace shiftcast
