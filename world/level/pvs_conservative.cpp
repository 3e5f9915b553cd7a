// Widening an imported set through open opaque space: probes, leaky clusters, the exposed closure.
#include "world/level/pvs_conservative.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <span>
#include <vector>

#include "collision/shape.hpp"
#include "world/level/pvs_random_internal.hpp"

namespace shiftcast {
namespace {

bool sees(std::span<const std::uint8_t> bits, std::int32_t bytes, std::int32_t from, std::int32_t to) {
  return (bits[std::size_t(from) * std::size_t(bytes) + std::size_t(to >> 3)] >> (to & 7)) & 1;
}

}  // namespace

PotentiallyVisibleSet widen_through_open_opaque_space(const PotentiallyVisibleSet& set, const BspTree& tree,
                                                      const Aabb& bounds, const PvsWidenOptions& options,
                                                      PvsWidenStats* stats) {
  PvsWidenStats local;
  PvsWidenStats& out = stats ? *stats : local;
  out = {};
  if (set.empty() || bounds.empty()) return set;
  const std::int32_t clusters = set.cluster_count();
  std::mt19937 rng(options.seed);
  // Each probe's borders: the clusters its open rays reach, sorted; probes in one pocket mostly find the
  // same ones, so they are kept once.
  std::set<std::vector<std::int32_t>> borders;
  std::vector<std::uint8_t> leaky(std::size_t(clusters), 0);
  std::vector<std::int32_t> crossed, reached;
  for (std::int32_t attempt = 0;
       attempt < options.max_attempts && out.open_opaque_points < options.probe_points; ++attempt) {
    const Vec3 p = pvs_random::point_in(rng, bounds);
    if (set.cluster_at(p) != kNoCluster || tree.point_brush(p) != kNoBrush) continue;
    ++out.open_opaque_points;
    reached.clear();
    for (std::int32_t r = 0; r < options.rays_per_point; ++r) {
      const Vec3 end = p + pvs_random::direction(rng) * options.ray_length;
      const TraceResult hit = tree.trace(Shape::point(), p, end);
      if (hit.status != QueryStatus::kOk) continue;
      crossed.clear();
      set.clusters_on_segment(p, hit.hit ? hit.end_position : end, crossed);
      // The first cluster after the open opaque stretch the ray starts in borders the pocket; what
      // the ray meets beyond it is the set's business.
      for (std::int32_t c : crossed) {
        if (c == kNoCluster) continue;
        reached.push_back(c);
        break;
      }
    }
    std::sort(reached.begin(), reached.end());
    reached.erase(std::unique(reached.begin(), reached.end()), reached.end());
    for (std::int32_t c : reached)
      leaky[std::size_t(c)] = 1;
    if (!reached.empty()) borders.insert(reached);
  }
  for (std::uint8_t l : leaky)
    out.leaky_clusters += l;

  // A ray through the pocket enters it from a border cluster its start sees and leaves it into one its
  // end sees: every pair of clusters that see the pocket's borders may see each other.
  const std::int32_t bytes = set.bytes_per_cluster();
  std::vector<std::uint8_t> bits(set.bits().begin(), set.bits().end());
  std::vector<std::uint8_t> exposed_any(std::size_t(clusters), 0);
  std::vector<std::int32_t> exposed;
  for (const std::vector<std::int32_t>& border : borders) {
    exposed.clear();
    for (std::int32_t c = 0; c < clusters; ++c) {
      bool sees_border = false;
      for (std::int32_t b : border)
        sees_border = sees_border || b == c || sees(set.bits(), bytes, c, b);
      if (sees_border) exposed.push_back(c);
    }
    for (std::int32_t from : exposed) {
      exposed_any[std::size_t(from)] = 1;
      for (std::int32_t to : exposed) {
        std::uint8_t& byte = bits[std::size_t(from) * std::size_t(bytes) + std::size_t(to >> 3)];
        const std::uint8_t bit = std::uint8_t(1u << (to & 7));
        out.bits_added += (byte & bit) == 0;
        byte |= bit;
      }
    }
  }
  for (std::uint8_t e : exposed_any)
    out.exposed_clusters += e;
  std::vector<PvsNode> nodes(set.nodes().begin(), set.nodes().end());
  // The same tree and row length as a set that already passed: from_parts cannot refuse it.
  return PotentiallyVisibleSet::from_parts(std::move(nodes), clusters, bytes, std::move(bits)).set;
}

}  // namespace shiftcast
