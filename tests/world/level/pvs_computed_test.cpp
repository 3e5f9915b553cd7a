// Sets computed at compile time for levels without their own: on the authored maps in configs/levels
// and on procedural levels, exact rays between sampled open points (another seed than the compile's)
// must never connect a pair the set culls; prints clusters, cell size, the share of visible cluster pairs,
// compile time, pairs sampled, connected, culled and culled wrongly (0). Also: turned off, no set; the
// tree is the grid's (every open sample point's cluster is its cell's).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "collision/brush.hpp"
#include "collision/bsp_build.hpp"
#include "tests/world/level/pvs_ray_sampling.hpp"
#include "world/level/compiled_level.hpp"
#include "world/level/procedural_level.hpp"
#include "world/level/pvs_compute.hpp"

namespace shiftcast {
namespace {

constexpr std::int64_t kPairs = kPvsSamplePairs;
constexpr std::uint32_t kSeed = 4242;

double visible_share(const PotentiallyVisibleSet& set) {
  std::int64_t visible = 0;
  for (std::int32_t a = 0; a < set.cluster_count(); ++a)
    for (std::int32_t b = 0; b < set.cluster_count(); ++b)
      visible += set.cluster_sees(a, b);
  return double(visible) / (double(set.cluster_count()) * double(set.cluster_count()));
}

void measure(const std::string& name, const BspTree& tree, const Aabb& bounds) {
  const PvsComputeResult r = compute_grid_pvs(tree, bounds, {});
  ASSERT_FALSE(r.set.empty()) << name;
  const PvsRaySample s = sample_pvs_against_rays(r.set, tree, bounds, kSeed, kPairs);
  std::printf(
      "[ pvs      ] %s: computed, %d clusters of %d cells (%.0f-unit cells), %.1f%% of cluster pairs "
      "visible, %lld rays, %.1f ms; %lld pairs sampled, %lld connected, %lld culled, %lld culled "
      "wrongly\n",
      name.c_str(), r.clusters, r.cells, r.cell_size, 100 * visible_share(r.set), (long long)r.rays,
      r.build_ms, (long long)s.pairs, (long long)s.connected, (long long)s.culled,
      (long long)s.wrongly_culled);
  EXPECT_EQ(s.wrongly_culled, 0) << name;
  EXPECT_GT(s.connected, kPairs / 20) << name;
}

TEST(ComputedPvs, AuthoredMapsNeverCullAPairAnExactRayConnects) {
  const std::filesystem::path dir = std::filesystem::path(SHIFTCAST_SOURCE_DIR) / "configs" / "levels";
  int maps = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".map") continue;
    ++maps;
    LevelResult imported = import_level_file(entry.path().string());
    ASSERT_TRUE(imported.ok()) << imported.error.describe();
    BspBuildResult built = build_bsp(imported.level.brushes, {});
    ASSERT_EQ(built.error, BspBuildError::kNone);
    measure(entry.path().filename().string(), built.tree, imported.level.bounds);
  }
  if (maps == 0) GTEST_SKIP() << "no .map files in " << dir;
}

TEST(ComputedPvs, ProceduralLevelsNeverCullAPairAnExactRayConnects) {
  for (std::uint32_t seed : {3u, 11u}) {
    ProceduralLevel p = make_procedural_level({.seed = seed, .target_brushes = 120});
    BspBuildResult built = build_bsp(p.brushes, {});
    ASSERT_EQ(built.error, BspBuildError::kNone);
    measure("procedural-" + std::to_string(seed), built.tree, p.bounds);
  }
}

// Two sealed rooms side by side, a 128-unit wall between them: the far ends cannot see each other, and
// the set says so, while no connected pair is culled.
TEST(ComputedPvs, SealedRoomsDoNotSeeEachOther) {
  std::vector<Brush> brushes;
  for (float x0 : {-1152.0f, 64.0f}) {
    const float x1 = x0 + 1088;
    brushes.push_back(brush_from_box({x0, -576, -64}, {x1, 576, 0}));       // floor
    brushes.push_back(brush_from_box({x0, -576, 256}, {x1, 576, 320}));     // ceiling
    brushes.push_back(brush_from_box({x0, -576, 0}, {x1, -512, 256}));      // south
    brushes.push_back(brush_from_box({x0, 512, 0}, {x1, 576, 256}));        // north
    brushes.push_back(brush_from_box({x0, -512, 0}, {x0 + 64, 512, 256}));  // west
    brushes.push_back(brush_from_box({x1 - 64, -512, 0}, {x1, 512, 256}));  // east
  }
  BspBuildResult built = build_bsp(brushes, {});
  ASSERT_EQ(built.error, BspBuildError::kNone);
  const Aabb bounds{{-1152, -576, -64}, {1152, 576, 320}};
  const PvsComputeResult r = compute_grid_pvs(built.tree, bounds, {});
  ASSERT_FALSE(r.set.empty());
  const std::int32_t west = r.set.cluster_at({-1000, 0, 128}), east = r.set.cluster_at({1000, 0, 128});
  ASSERT_NE(west, kNoCluster);
  ASSERT_NE(east, kNoCluster);
  EXPECT_FALSE(r.set.cluster_sees(west, east));
  EXPECT_FALSE(r.set.sees_box(west, Aabb{{900, -20, 100}, {940, 20, 156}}));
  EXPECT_TRUE(r.set.sees_box(west, Aabb{{-900, -20, 100}, {-860, 20, 156}}));
  const PvsRaySample s = sample_pvs_against_rays(r.set, built.tree, bounds, kSeed, kPairs);
  std::printf(
      "[ pvs      ] two sealed rooms: %d clusters, %.1f%% of cluster pairs visible; %lld pairs, %lld "
      "connected, %lld culled, %lld culled wrongly\n",
      r.clusters, 100 * visible_share(r.set), (long long)s.pairs, (long long)s.connected, (long long)s.culled,
      (long long)s.wrongly_culled);
  EXPECT_EQ(s.wrongly_culled, 0);
  EXPECT_GT(s.culled, kPairs / 10);
}

TEST(ComputedPvs, ClustersAreTheGridsOpenCellsAndOffMeansNone) {
  ProceduralLevel p = make_procedural_level({.seed = 5, .target_brushes = 60});
  BspBuildResult built = build_bsp(p.brushes, {});
  ASSERT_EQ(built.error, BspBuildError::kNone);
  EXPECT_TRUE(compute_grid_pvs(built.tree, p.bounds, {.enabled = false}).set.empty());
  const PvsComputeResult r = compute_grid_pvs(built.tree, p.bounds, {});
  ASSERT_FALSE(r.set.empty());
  EXPECT_LE(r.cells, PvsComputeSettings{}.max_cells);
  // Two open points in one cell share a cluster; points in different cells do not (closed form of the
  // grid: cells of r.cell_size from bounds.min minus the 1-unit margin).
  std::mt19937 rng(9);
  const Vec3 lo = p.bounds.min - Vec3{1, 1, 1};
  int compared = 0;
  for (int i = 0; i < 2000; ++i) {
    const Vec3 a{uniform_float(rng, p.bounds.min.x, p.bounds.max.x),
                 uniform_float(rng, p.bounds.min.y, p.bounds.max.y),
                 uniform_float(rng, p.bounds.min.z, p.bounds.max.z)};
    const Vec3 b = a + Vec3{uniform_float(rng, -300, 300), uniform_float(rng, -300, 300), 0};
    const std::int32_t ca = r.set.cluster_at(a), cb = r.set.cluster_at(b);
    if (ca == kNoCluster || cb == kNoCluster) continue;
    bool same_cell = true;
    for (int axis = 0; axis < 3; ++axis)
      same_cell = same_cell && std::floor((a[axis] - lo[axis]) / r.cell_size) ==
                                   std::floor((b[axis] - lo[axis]) / r.cell_size);
    // Points within a rounding error of a cut are left out: the closed form here is in float too.
    bool near_cut = false;
    for (int axis = 0; axis < 3; ++axis)
      for (const Vec3& q : {a, b}) {
        const float f = (q[axis] - lo[axis]) / r.cell_size;
        near_cut = near_cut || std::abs(f - std::round(f)) < 1e-3f;
      }
    if (near_cut) continue;
    EXPECT_EQ(ca == cb, same_cell);
    ++compared;
  }
  EXPECT_GT(compared, 500);
}

}  // namespace
}  // namespace shiftcast
