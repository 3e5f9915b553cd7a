// Quake III maps' imported potentially visible sets against exact rays (issue 15): for many pairs of
// open-space points, the exact ray through the collision BSP the server uses either hits a brush or the
// set must not cull the pair. Prints how many pairs were sampled, connected, culled, and culled wrongly
// (which must be 0). Also: the set survives the compiled file, and a map's set is a real one (it culls).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "collision/bsp_build.hpp"
#include "tests/world/level/pvs_ray_sampling.hpp"
#include "world/level/compiled_level.hpp"
#include "world/level/pvs_conservative.hpp"
#include "world/level/q3_bsp_import.hpp"

namespace shiftcast {
namespace {

constexpr std::int64_t kDefaultPairsPerMap = kPvsSamplePairs;
constexpr std::uint32_t kDefaultSeed = 1515;
// SHIFTCAST_PVS_PAIRS and SHIFTCAST_PVS_SEED override the sample for a longer measurement.
std::int64_t env_or(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : fallback;
}
const std::int64_t kPairsPerMap = env_or("SHIFTCAST_PVS_PAIRS", kDefaultPairsPerMap);
const std::uint32_t kSeed = std::uint32_t(env_or("SHIFTCAST_PVS_SEED", kDefaultSeed));

std::filesystem::path map_path(const char* name) {
  return std::filesystem::path(SHIFTCAST_SOURCE_DIR) / "data" / "openarena" / "maps" /
         (std::string(name) + ".bsp");
}

class ImportedPvs : public ::testing::TestWithParam<const char*> {};

TEST_P(ImportedPvs, NeverCullsAPairAnExactRayConnects) {
  const std::filesystem::path path = map_path(GetParam());
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << path.string() << " is absent: run scripts/fetch-openarena-maps.sh";
  }
  LevelResult imported = import_q3_bsp_file(path.string());
  ASSERT_TRUE(imported.ok()) << imported.error.describe();
  const PotentiallyVisibleSet& set = imported.level.imported_visibility;
  ASSERT_FALSE(set.empty()) << "the stock maps are vis'ed";
  BspBuildResult built = build_bsp(imported.level.brushes, {});
  ASSERT_EQ(built.error, BspBuildError::kNone);

  // Quake III's own set, as measured (it does cull connected pairs: pvs_conservative.hpp says why), then
  // the set compile_level ships: widened through open opaque space with the default options.
  const PvsRaySample raw =
      sample_pvs_against_rays(set, built.tree, imported.level.bounds, kSeed, kPairsPerMap);
  PvsWidenStats widen;
  const PotentiallyVisibleSet shipped =
      widen_through_open_opaque_space(set, built.tree, imported.level.bounds, {}, &widen);
  const PvsRaySample s =
      sample_pvs_against_rays(shipped, built.tree, imported.level.bounds, kSeed, kPairsPerMap);
  std::printf(
      "[ pvs      ] %s: %d clusters; %lld pairs sampled, %lld connected by an exact ray; Quake III's set "
      "culls %lld, %lld wrongly; widened (%d open opaque probes, %d leaky, %d exposed clusters, %lld "
      "pairs added) culls %lld, %lld wrongly\n",
      GetParam(), set.cluster_count(), (long long)s.pairs, (long long)s.connected, (long long)raw.culled,
      (long long)raw.wrongly_culled, widen.open_opaque_points, widen.leaky_clusters, widen.exposed_clusters,
      (long long)widen.bits_added, (long long)s.culled, (long long)s.wrongly_culled);
  EXPECT_EQ(s.wrongly_culled, 0);
  // The measurement means something: many pairs connect, and the set does cull.
  EXPECT_GT(s.connected, kPairsPerMap / 10);
  EXPECT_GT(s.culled, 0);  // wrackdm17 is one open hall: Quake III's own set culls 8 pairs of 20,000
}

INSTANTIATE_TEST_SUITE_P(OpenArena, ImportedPvs,
                         ::testing::Values("oa_dm1", "oa_dm4", "oa_rpg3dm2", "wrackdm17"));

}  // namespace
}  // namespace shiftcast
