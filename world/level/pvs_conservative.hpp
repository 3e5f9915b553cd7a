// Making an imported potentially visible set conservative against the collision BSP. Quake III's vis
// treats every leaf q3map marked opaque as a wall, but some of those leaves are open space in the
// collision set (q3map fills the leaves its entity flood does not reach, sealed pockets included, and
// such a pocket can border clusters on both sides). A ray through such "open opaque" space connects
// clusters the set says cannot see each other (oa_dm4: 987 of 6,106 connected pairs culled).
//
//   PvsWidenStats stats;
//   PotentiallyVisibleSet safe = widen_through_open_opaque_space(imported, tree, level.bounds, {}, &stats);
//
// How: open opaque points are found by sampling (inside the level's bounds, kNoCluster in the set, in no
// brush of the tree); rays from each in random directions, cut where the tree stops them, name the
// clusters that border that pocket ("leaky"). A ray that crosses the pocket enters it from a border
// cluster its start already sees (the set handles the stretch before) and leaves it into one its end
// sees; so, per pocket, every cluster that sees one of its borders ("exposed") is made to see every other
// cluster exposed to the same pocket.
// Sampled, not proven: a pocket or a border no probe finds stays as Quake III had it.
#pragma once

#include <cstdint>

#include "collision/aabb.hpp"
#include "collision/bsp_tree.hpp"
#include "world/level/potentially_visible_set.hpp"

namespace shiftcast {

struct PvsWidenOptions {
  std::uint32_t seed = 0x5eed15;
  std::int32_t probe_points = 4096;     // open opaque points to probe from
  std::int32_t max_attempts = 1 << 18;  // random points drawn to find them, at most
  std::int32_t rays_per_point = 16;
  float ray_length = 8192;  // units: across any OpenArena map
};

struct PvsWidenStats {
  std::int32_t open_opaque_points = 0;  // probe points found
  std::int32_t leaky_clusters = 0;      // clusters a probe ray reached
  std::int32_t exposed_clusters = 0;    // clusters that see a pocket's border
  std::int64_t bits_added = 0;          // visible pairs added
};

PotentiallyVisibleSet widen_through_open_opaque_space(const PotentiallyVisibleSet& set, const BspTree& tree,
                                                      const Aabb& bounds, const PvsWidenOptions& options = {},
                                                      PvsWidenStats* stats = nullptr);

}  // namespace shiftcast
