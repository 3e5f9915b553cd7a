// Potentially visible set: which parts of a level can see which, so a server sends each player only what
// it could plausibly see (interest management, docs/protocol.md "Interest"). The level is cut into
// clusters by a small BSP of its own (not the collision tree: Quake III's rendering tree for imported .bsp
// maps, axis-aligned cuts of a coarse grid for levels whose set is computed at compile time); each
// cluster has a bit vector of the clusters it may see.
//
//   const PotentiallyVisibleSet& pvs = compiled.visibility;   // empty(): the level ships none
//   std::int32_t eye = pvs.cluster_at(eye_point);             // once per viewer per snapshot
//   if (pvs.sees_box(eye, entity_bounds)) ... send it ...
//
// Conservative by contract: a pair of points that an exact ray through the level's solid brushes connects
// is never reported invisible. Whenever the set cannot answer (no set, a point in solid or outside every
// cluster, kNoCluster) it answers "visible", so a caller never culls on missing information; distance
// and the caller's own radius decide then. Immutable after construction: share it read-only between
// threads.
//
// How far the contract is held (docs/levels.md, "Potentially visible set"): Quake III's own set is not
// conservative against the collision brushes (q3map's opaque leaves include open space), so compile_level
// widens it (pvs_conservative.hpp); computed sets (pvs_compute.hpp) come from sampled rays. Both are
// measured by exact-ray sampling (0 connected pairs culled on every level tested), not proven.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collision/aabb.hpp"
#include "collision/vec3.hpp"

namespace shiftcast {

inline constexpr std::int32_t kNoCluster = -1;

// One cut of the cluster tree. A child >= 0 is a node index; a child < 0 is a leaf holding cluster
// (-child - 2), or kNoCluster when child == -1 (solid or outside the level). A point with
// dot(normal, p) - distance >= 0 goes to children[0] (front; the plane itself counts as front).
struct PvsNode {
  Vec3 normal;
  float distance = 0;
  std::int32_t children[2] = {-1, -1};
};

// Why parts handed to PotentiallyVisibleSet::from_parts were refused (an imported or loaded set is
// untrusted until it passes).
enum class PvsError : std::uint8_t {
  kNone,
  kBadChild,       // a child index outside the node array, or a cluster outside [0, cluster_count)
  kCycle,          // the nodes do not form a tree reachable from node 0 without revisiting
  kBadBitsLength,  // bits.size() != cluster_count * bytes_per_cluster, or bytes_per_cluster too small
  kBadPlane,       // a normal that is not finite or not unit length, or a non-finite distance
  kTooDeep,        // a path from the root longer than kMaxPvsDepth nodes (queries walk with a fixed stack)
};

// Deepest tree a set may have: the box and segment walks keep their pending nodes in a fixed array of this
// size (no allocation per query). Quake III's rendering trees and the compile-time grids are far shallower.
inline constexpr std::int32_t kMaxPvsDepth = 256;
// How far from 1 a plane normal's length may be (Quake III stores normals as normalized floats).
inline constexpr float kPvsNormalLengthTolerance = 1e-3f;

struct PvsResult;

class PotentiallyVisibleSet {
 public:
  PotentiallyVisibleSet() = default;  // no set: every query answers "visible"

  // nodes[0] is the root. bits: cluster_count rows of bytes_per_cluster bytes; bit (to & 7) of byte
  // (to >> 3) in row `from` says `from` may see `to` (Quake III's layout). A set with no nodes and no
  // clusters is the empty set.
  static PvsResult from_parts(std::vector<PvsNode> nodes, std::int32_t cluster_count,
                              std::int32_t bytes_per_cluster, std::vector<std::uint8_t> bits);

  bool empty() const { return cluster_count_ == 0; }
  std::int32_t cluster_count() const { return cluster_count_; }
  std::int32_t bytes_per_cluster() const { return bytes_per_cluster_; }
  std::span<const PvsNode> nodes() const { return nodes_; }
  std::span<const std::uint8_t> bits() const { return bits_; }
  // The share of ordered cluster pairs (from, to) whose bit is set, in [0, 1]; 1 for no set.
  double visible_pair_share() const;

  // The cluster holding p, or kNoCluster (solid, outside, or no set).
  std::int32_t cluster_at(const Vec3& p) const;
  // from may see to. kNoCluster on either side, or no set: true.
  bool cluster_sees(std::int32_t from, std::int32_t to) const;
  // Any cluster the closed box touches is visible from `from` (true when the box reaches kNoCluster
  // space only, or no set).
  bool sees_box(std::int32_t from, const Aabb& box) const;
  // Any cluster the segment a-b passes through is visible from `from` (a projectile's path this tick).
  bool sees_segment(std::int32_t from, const Vec3& a, const Vec3& b) const;
  // Appends the clusters the segment passes through, in order from a to b, kNoCluster for solid or
  // outside stretches (a run in one cluster is appended once). Nothing for no set or non-finite ends.
  void clusters_on_segment(const Vec3& a, const Vec3& b, std::vector<std::int32_t>& out) const;
  // Appends the clusters the closed box touches (kNoCluster never; a cluster may come more than once).
  // Nothing for no set or an empty box.
  void clusters_in_box(const Aabb& box, std::vector<std::int32_t>& out) const;
  // sees_box / sees_segment over what clusters_in_box / clusters_on_segment appended for the box or
  // segment: `from` may see one of them (kNoCluster entries skipped), or they hold no cluster at all. For
  // asking many `from` about one box or path: one walk instead of one each.
  bool sees_any(std::int32_t from, std::span<const std::int32_t> clusters) const;

 private:
  std::vector<PvsNode> nodes_;
  std::int32_t cluster_count_ = 0;
  std::int32_t bytes_per_cluster_ = 0;
  std::vector<std::uint8_t> bits_;
};

struct PvsResult {
  PvsError error = PvsError::kNone;
  std::string detail;  // which node, cluster or length, for the log
  PotentiallyVisibleSet set;
  bool ok() const { return error == PvsError::kNone; }
};

const char* to_string(PvsError error);

}  // namespace shiftcast
