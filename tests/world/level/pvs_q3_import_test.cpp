// The Quake III importer's potentially visible set against corrupt files: every count and index it reads
// (the visibility header, node planes and children, leaf clusters) is checked and named with its byte
// offset, a node tree that is not a tree is refused, an empty lump or the option off gives no set, and
// random flips in the three lumps never crash. Also: the imported set places every spawn point (they
// stand in the playable space) in a cluster, and each such cluster sees itself.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>

#include "world/level/q3_bsp_import.hpp"

namespace shiftcast {
namespace {

constexpr int kPlanesLump = 2, kNodesLump = 3, kLeafsLump = 4, kVisLump = 16;

std::vector<std::uint8_t> dm1_bytes() {
  const std::filesystem::path path =
      std::filesystem::path(SHIFTCAST_SOURCE_DIR) / "data" / "openarena" / "maps" / "oa_dm1.bsp";
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::int32_t get32(const std::vector<std::uint8_t>& b, std::size_t at) {
  std::int32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
void put32(std::vector<std::uint8_t>& b, std::size_t at, std::int32_t v) {
  std::memcpy(b.data() + at, &v, 4);
}
std::size_t lump_offset(const std::vector<std::uint8_t>& b, int lump) {
  return std::size_t(get32(b, 8 + 8 * std::size_t(lump)));
}

#define SKIP_WITHOUT_DM1(bytes) \
  if ((bytes).empty()) GTEST_SKIP() << "oa_dm1.bsp is absent: run scripts/fetch-openarena-maps.sh"

// The edit must be refused with an error at `offset` whose text contains `what`.
void expect_refused(const std::vector<std::uint8_t>& b, std::size_t offset, const std::string& what) {
  const LevelResult r = import_q3_bsp(b, "corrupt.bsp");
  ASSERT_FALSE(r.ok()) << what;
  EXPECT_EQ(r.error.offset, offset) << r.error.describe();
  EXPECT_NE(r.error.what.find(what), std::string::npos) << r.error.describe();
}

TEST(Q3Visibility, ImportsTheSetAndPlacesEverySpawnInACluster) {
  const std::vector<std::uint8_t> good = dm1_bytes();
  SKIP_WITHOUT_DM1(good);
  const LevelResult r = import_q3_bsp(good, "oa_dm1.bsp");
  ASSERT_TRUE(r.ok()) << r.error.describe();
  const PotentiallyVisibleSet& set = r.level.imported_visibility;
  EXPECT_EQ(set.cluster_count(), get32(good, lump_offset(good, kVisLump)));
  EXPECT_EQ(set.bytes_per_cluster(), get32(good, lump_offset(good, kVisLump) + 4));
  EXPECT_EQ(set.nodes().size(), std::size_t(get32(good, 12 + 8 * kNodesLump) / 36));
  // The rows are the lump's bytes after its 8-byte header.
  ASSERT_EQ(set.bits().size(), std::size_t(set.cluster_count()) * std::size_t(set.bytes_per_cluster()));
  EXPECT_EQ(std::memcmp(set.bits().data(), good.data() + lump_offset(good, kVisLump) + 8, set.bits().size()),
            0);
  ASSERT_FALSE(r.level.spawns.empty());
  for (const SpawnPoint& s : r.level.spawns) {
    const std::int32_t c = set.cluster_at(s.origin);
    ASSERT_NE(c, kNoCluster) << s.origin.x << " " << s.origin.y << " " << s.origin.z;
    EXPECT_TRUE(set.cluster_sees(c, c));
  }
  Q3ImportOptions off;
  off.import_visibility = false;
  EXPECT_TRUE(import_q3_bsp(good, "oa_dm1.bsp", off).level.imported_visibility.empty());
}

TEST(Q3Visibility, AnEmptyLumpOrNoClustersGivesNoSet) {
  const std::vector<std::uint8_t> good = dm1_bytes();
  SKIP_WITHOUT_DM1(good);
  std::vector<std::uint8_t> b = good;
  put32(b, 12 + 8 * kVisLump, 0);
  LevelResult r = import_q3_bsp(b, "novis.bsp");
  ASSERT_TRUE(r.ok()) << r.error.describe();
  EXPECT_TRUE(r.level.imported_visibility.empty());
  b = good;
  put32(b, lump_offset(b, kVisLump), 0);
  r = import_q3_bsp(b, "novis.bsp");
  ASSERT_TRUE(r.ok()) << r.error.describe();
  EXPECT_TRUE(r.level.imported_visibility.empty());
}

TEST(Q3Visibility, EveryIndexAndLengthIsCheckedAndNamed) {
  const std::vector<std::uint8_t> good = dm1_bytes();
  SKIP_WITHOUT_DM1(good);
  const std::size_t vis = lump_offset(good, kVisLump);
  const std::size_t nodes = lump_offset(good, kNodesLump);
  const std::size_t leafs = lump_offset(good, kLeafsLump);
  const std::int32_t planes = get32(good, 12 + 8 * kPlanesLump) / 16;
  const std::int32_t leaf_count = get32(good, 12 + 8 * kLeafsLump) / 48;
  const std::int32_t clusters = get32(good, vis);
  std::vector<std::uint8_t> b;

  b = good;
  put32(b, vis, clusters + 1);  // rows past the lump
  expect_refused(b, vis, "do not fit");
  b = good;
  put32(b, vis + 4, -1);
  expect_refused(b, vis, "do not fit");
  b = good;
  put32(b, vis + 4, 1);  // rows too short for the clusters
  expect_refused(b, vis, "bad bits length");
  b = good;
  put32(b, 12 + 8 * kVisLump, 4);  // shorter than its header
  expect_refused(b, 12 + 8 * kVisLump, "no header");
  b = good;
  put32(b, nodes, planes);  // node 0's plane
  expect_refused(b, nodes, "plane");
  b = good;
  put32(b, nodes + 4, -1 - leaf_count);  // node 0's front: a leaf past the lump
  expect_refused(b, nodes + 4, "leaf");
  b = good;
  put32(b, nodes + 8, std::numeric_limits<std::int32_t>::min());  // the most negative leaf
  expect_refused(b, nodes + 8, "leaf");
  b = good;
  put32(b, nodes + 4, 0);  // node 0's front is node 0
  expect_refused(b, vis, "cycle");
  b = good;
  put32(b, nodes + 4, get32(b, 12 + 8 * kNodesLump) / 36);  // a node past the lump
  expect_refused(b, vis, "bad child");
  b = good;
  put32(b, leafs, clusters);  // leaf 0's cluster
  // Leaf 0 is only read when a node names it; find the node that does, or skip.
  bool leaf0_named = false;
  for (std::int32_t i = 0; i < get32(good, 12 + 8 * kNodesLump) / 36 && !leaf0_named; ++i)
    leaf0_named = get32(good, nodes + 36 * std::size_t(i) + 4) == -1 ||
                  get32(good, nodes + 36 * std::size_t(i) + 8) == -1;
  if (leaf0_named) expect_refused(b, leafs, "cluster");
  b = good;
  put32(b, leafs, -2);
  if (leaf0_named) expect_refused(b, leafs, "cluster");
}

TEST(Q3Visibility, RandomFlipsInItsLumpsNeverCrash) {
  const std::vector<std::uint8_t> good = dm1_bytes();
  SKIP_WITHOUT_DM1(good);
  std::mt19937 rng(15);
  int refused = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<std::uint8_t> b = good;
    const int lump = std::array{kNodesLump, kLeafsLump, kVisLump}[rng() % 3];
    const std::size_t offset = lump_offset(b, lump);
    const std::size_t length = std::size_t(get32(b, 12 + 8 * lump));
    // Flips in the first 4 KiB of the lump, where the header, the root and the first leaves are.
    for (int f = 0; f < 4; ++f)
      b[offset + rng() % std::min<std::size_t>(length, 4096)] ^= std::uint8_t(1u << (rng() % 8));
    const LevelResult r = import_q3_bsp(b, "corrupt.bsp");
    if (!r.ok()) {
      ++refused;
      continue;
    }
    const PotentiallyVisibleSet& set = r.level.imported_visibility;
    for (int q = 0; q < 20; ++q) {
      const Vec3 p{float(int(rng() % 4096) - 2048), float(int(rng() % 4096) - 2048),
                   float(int(rng() % 1024) - 256)};
      const std::int32_t c = set.cluster_at(p);
      EXPECT_TRUE(c == kNoCluster || (c >= 0 && c < set.cluster_count()));
      (void)set.sees_segment(c, p, p + Vec3{300, 200, 10});
      (void)set.sees_box(c, Aabb{p, p + Vec3{64, 64, 64}});
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace shiftcast
