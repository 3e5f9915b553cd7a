// The conservative-contract measurement for a potentially visible set, shared by the real-map test
// (imported sets) and the computed-set test: sample pairs of open-space points (inside a cluster, in no
// brush of the collision tree), trace an exact ray between them through the same BSP the server uses, and
// count the pairs the ray connects that the set culls. Nearby pairs dominate the sample (most random long
// pairs are blocked), so the connected count is large enough to mean something.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

#include "collision/bsp_tree.hpp"
#include "tests/support/seeded_random.hpp"
#include "world/level/potentially_visible_set.hpp"

namespace shiftcast {

struct PvsRaySample {
  std::int64_t pairs = 0;           // pairs of open-space points in clusters
  std::int64_t connected = 0;       // of those, the exact ray between them hits nothing
  std::int64_t culled = 0;          // pairs the set culls (cluster_sees false)
  std::int64_t wrongly_culled = 0;  // connected and culled: must be 0
  std::int64_t attempts = 0;        // points drawn to find them
};

// Pairs sampled per level by default: ASan and UBSan run about ten times slower.
#ifdef SHIFTCAST_SANITIZE
inline constexpr std::int64_t kPvsSamplePairs = 4000;
#else
inline constexpr std::int64_t kPvsSamplePairs = 20000;
#endif

// Longest pair distance drawn (units): a few rooms across on the OpenArena maps.
inline constexpr float kPvsSampleReach = 3000;

inline Vec3 random_open_point(std::mt19937& rng, const BspTree& tree, const PotentiallyVisibleSet& set,
                              const Aabb& bounds, std::int64_t& attempts) {
  for (;;) {
    ++attempts;
    const Vec3 p{uniform_float(rng, bounds.min.x, bounds.max.x),
                 uniform_float(rng, bounds.min.y, bounds.max.y),
                 uniform_float(rng, bounds.min.z, bounds.max.z)};
    if (set.cluster_at(p) != kNoCluster && tree.point_brush(p) == kNoBrush) return p;
  }
}

inline PvsRaySample sample_pvs_against_rays(const PotentiallyVisibleSet& set, const BspTree& tree,
                                            const Aabb& bounds, std::uint32_t seed, std::int64_t pairs) {
  std::mt19937 rng(seed);
  PvsRaySample s;
  while (s.pairs < pairs) {
    const Vec3 a = random_open_point(rng, tree, set, bounds, s.attempts);
    Vec3 b;
    if (uniform_int(rng, 0, 3) == 0) {
      b = random_open_point(rng, tree, set, bounds, s.attempts);
    } else {
      // A point at a random direction and distance from a, kept only if it is open space too.
      const Vec3 d{uniform_float(rng, -1, 1), uniform_float(rng, -1, 1), uniform_float(rng, -0.3f, 0.3f)};
      const float r = uniform_float(rng, 0, kPvsSampleReach);
      b = a + d * r;
      ++s.attempts;
      if (!bounds.contains(b) || set.cluster_at(b) == kNoCluster || tree.point_brush(b) != kNoBrush) continue;
    }
    ++s.pairs;
    const bool culled = !set.cluster_sees(set.cluster_at(a), set.cluster_at(b));
    const TraceResult ray = tree.trace(Shape::point(), a, b);
    const bool connected = ray.status == QueryStatus::kOk && !ray.hit && !ray.start_solid;
    s.connected += connected;
    s.culled += culled;
    s.wrongly_culled += connected && culled;
  }
  return s;
}

}  // namespace shiftcast
