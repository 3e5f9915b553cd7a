// Compiled levels: a round trip keeps every array bit for bit and every trace answer, on a procedural
// level and on the authored maps in configs/levels; corrupt bytes (truncations, flipped bytes, a wrong
// identifier or version, inconsistent arrays) are rejected with the right LevelLoadError and never crash.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>

#include "tests/support/seeded_random.hpp"
#include "world/level/compiled_level.hpp"
#include "world/level/level_generated.h"
#include "world/level/procedural_level.hpp"

namespace shiftcast {
namespace {

constexpr std::uint32_t kQuerySeed = 20240611;
constexpr int kRoundTripQueries = 10000;

// A Level as an importer would produce it, from a procedural level, with every field set to something
// distinguishable so that a field lost or swapped in the round trip shows.
Level procedural_level(std::uint32_t seed, std::int32_t brushes) {
  ProceduralLevel p = make_procedural_level({.seed = seed, .target_brushes = brushes});
  Level level;
  level.name = "procedural-" + std::to_string(seed) + ".map";
  level.source_hash = 0x0123456789abcdefull ^ seed;
  level.brushes = std::move(p.brushes);
  for (std::size_t i = 0; i < level.brushes.size(); ++i) {
    level.brush_contents.push_back(i % 5 == 0 ? kContentsPlayerClip : kContentsSolid);
    level.brush_surface_flags.push_back(std::uint32_t(i * 2654435761u));
  }
  level.spawns = {{{0, 0, 24}, 90, "info_player_deathmatch"},
                  {{-512.5f, 300.25f, 88}, -45.5f, "info_player_start"},
                  {{1, 2, 3}, 0, ""}};
  compute_level_bounds(level);
  level.source_brushes = std::int32_t(level.brushes.size()) + 7;
  level.skipped_nonsolid = 7;
  level.patches = 2;
  level.patch_brushes = 11;
  return level;
}

// Builds the BSP directly and stands in for the navmesh with pseudo-random bytes: the format stores
// navmesh bytes without interpreting them, and a Recast build would only slow these tests down.
CompiledLevel compile_without_navmesh(Level level, std::size_t navmesh_bytes = 4099) {
  BspBuildResult built = build_bsp(level.brushes, {});
  EXPECT_EQ(built.error, BspBuildError::kNone);
  CompiledLevel c;
  c.level = std::move(level);
  c.tree = std::move(built.tree);
  c.bsp_stats = built.stats;
  std::mt19937 rng(7);
  c.navmesh.resize(navmesh_bytes);
  for (std::uint8_t& b : c.navmesh)
    b = std::uint8_t(rng());
  c.navmesh_polygons = 123;
  c.navmesh_build_ms = 45.25;
  return c;
}

void expect_planes_equal(std::span<const Plane> a, std::span<const Plane> b) {
  ASSERT_EQ(a.size(), b.size());
  // Byte comparison: -0.0 and 0.0 or two NaN payloads must survive too.
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size_bytes()), 0);
}

void expect_aabb_equal(const Aabb& a, const Aabb& b) {
  EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0);
}

void expect_same_level(const CompiledLevel& a, const CompiledLevel& b) {
  const Level& la = a.level;
  const Level& lb = b.level;
  EXPECT_EQ(la.name, lb.name);
  EXPECT_EQ(la.source_hash, lb.source_hash);
  ASSERT_EQ(la.brushes.size(), lb.brushes.size());
  for (std::size_t i = 0; i < la.brushes.size(); ++i) {
    SCOPED_TRACE("brush " + std::to_string(i));
    expect_planes_equal(la.brushes[i].planes, lb.brushes[i].planes);
  }
  EXPECT_EQ(la.brush_contents, lb.brush_contents);
  EXPECT_EQ(la.brush_surface_flags, lb.brush_surface_flags);
  ASSERT_EQ(la.spawns.size(), lb.spawns.size());
  for (std::size_t i = 0; i < la.spawns.size(); ++i) {
    EXPECT_EQ(la.spawns[i].origin, lb.spawns[i].origin);
    EXPECT_EQ(la.spawns[i].yaw_degrees, lb.spawns[i].yaw_degrees);
    EXPECT_EQ(la.spawns[i].classname, lb.spawns[i].classname);
  }
  expect_aabb_equal(la.bounds, lb.bounds);
  EXPECT_EQ(la.source_brushes, lb.source_brushes);
  EXPECT_EQ(la.skipped_nonsolid, lb.skipped_nonsolid);
  EXPECT_EQ(la.patches, lb.patches);
  EXPECT_EQ(la.patch_brushes, lb.patch_brushes);

  const BspTree& ta = a.tree;
  const BspTree& tb = b.tree;
  ASSERT_EQ(ta.nodes().size(), tb.nodes().size());
  EXPECT_EQ(std::memcmp(ta.nodes().data(), tb.nodes().data(), ta.nodes().size_bytes()), 0);
  ASSERT_EQ(ta.leaves().size(), tb.leaves().size());
  EXPECT_EQ(std::memcmp(ta.leaves().data(), tb.leaves().data(), ta.leaves().size_bytes()), 0);
  expect_planes_equal(ta.bevels(), tb.bevels());
  EXPECT_EQ(ta.root(), tb.root());
  EXPECT_EQ(ta.brush_count(), tb.brush_count());
  expect_aabb_equal(ta.bounds(), tb.bounds());

  const BspBuildStats& sa = a.bsp_stats;
  const BspBuildStats& sb = b.bsp_stats;
  EXPECT_EQ(sa.brushes, sb.brushes);
  EXPECT_EQ(sa.brushes_empty, sb.brushes_empty);
  EXPECT_EQ(sa.brush_splits, sb.brush_splits);
  EXPECT_EQ(sa.nodes, sb.nodes);
  EXPECT_EQ(sa.bevel_planes, sb.bevel_planes);
  EXPECT_EQ(sa.solid_leaves, sb.solid_leaves);
  EXPECT_EQ(sa.empty_leaves, sb.empty_leaves);
  EXPECT_EQ(sa.max_depth, sb.max_depth);
  EXPECT_EQ(sa.build_ms, sb.build_ms);
  EXPECT_EQ(a.navmesh, b.navmesh);
  EXPECT_EQ(a.navmesh_polygons, b.navmesh_polygons);
  EXPECT_EQ(a.navmesh_build_ms, b.navmesh_build_ms);
}

bool same_answer(const TraceResult& a, const TraceResult& b) {
  return a.status == b.status && a.hit == b.hit && a.start_solid == b.start_solid &&
         a.all_solid == b.all_solid && std::memcmp(&a.fraction, &b.fraction, sizeof a.fraction) == 0 &&
         std::memcmp(&a.end_position, &b.end_position, sizeof a.end_position) == 0 &&
         std::memcmp(&a.normal, &b.normal, sizeof a.normal) == 0 && a.brush == b.brush;
}

// Random rays, spheres and player cylinders over the level's bounds (a margin around them included), of
// every length from zero to across the level; returns how many answers differ.
int differing_traces(const BspTree& a, const BspTree& b, int queries) {
  std::mt19937 rng(kQuerySeed);
  const Aabb box = a.bounds();
  UniformReal<float> unit(0.0f, 1.0f);
  const auto random_point = [&] {
    const Vec3 size = box.size();
    return Vec3{box.min.x - 32 + unit(rng) * (size.x + 64), box.min.y - 32 + unit(rng) * (size.y + 64),
                box.min.z - 32 + unit(rng) * (size.z + 64)};
  };
  const Shape shapes[] = {Shape::point(), Shape::sphere(8), Shape::cylinder(15, 56)};
  int differing = 0;
  for (int i = 0; i < queries; ++i) {
    const Shape& shape = shapes[i % 3];
    const Vec3 from = random_point();
    const Vec3 to = (i % 7 == 0) ? from : from + (random_point() - from) * unit(rng);
    if (!same_answer(a.trace(shape, from, to), b.trace(shape, from, to))) ++differing;
  }
  return differing;
}

class CompiledLevelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    original_ = new CompiledLevel(compile_without_navmesh(procedural_level(3, 240)));
    bytes_ = new std::vector<std::uint8_t>(serialize_compiled_level(*original_));
    // A small level for the byte-by-byte corruption tests, where every load reads the whole buffer.
    small_bytes_ = new std::vector<std::uint8_t>(
        serialize_compiled_level(compile_without_navmesh(procedural_level(5, 12), 61)));
  }
  static void TearDownTestSuite() {
    delete original_;
    delete bytes_;
    delete small_bytes_;
  }

  static const CompiledLevel* original_;
  static const std::vector<std::uint8_t>* bytes_;
  static const std::vector<std::uint8_t>* small_bytes_;
};

const CompiledLevel* CompiledLevelTest::original_ = nullptr;
const std::vector<std::uint8_t>* CompiledLevelTest::bytes_ = nullptr;
const std::vector<std::uint8_t>* CompiledLevelTest::small_bytes_ = nullptr;

TEST_F(CompiledLevelTest, RoundTripKeepsEveryArrayBitForBit) {
  const LevelLoadResult loaded = load_compiled_level(*bytes_);
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  EXPECT_TRUE(loaded.message.empty());
  expect_same_level(*original_, loaded.level);
}

TEST_F(CompiledLevelTest, RoundTripGivesIdenticalTraceAnswers) {
  const LevelLoadResult loaded = load_compiled_level(*bytes_);
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  EXPECT_EQ(differing_traces(original_->tree, loaded.level.tree, kRoundTripQueries), 0);
}

TEST_F(CompiledLevelTest, SerializingIsDeterministicAndIdempotent) {
  EXPECT_EQ(serialize_compiled_level(*original_), *bytes_);
  const LevelLoadResult loaded = load_compiled_level(*bytes_);
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  EXPECT_EQ(serialize_compiled_level(loaded.level), *bytes_);
}

TEST_F(CompiledLevelTest, FileStartsWithTheIdentifierAndFileRoundTrips) {
  ASSERT_GE(bytes_->size(), 8u);
  EXPECT_EQ(std::string(bytes_->begin() + 4, bytes_->begin() + 8), "SCLV");
  const std::string path = ::testing::TempDir() + "/compiled_level_test_roundtrip.level";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes_->data()), std::streamsize(bytes_->size()));
  const LevelLoadResult loaded = load_compiled_level_file(path);
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  expect_same_level(*original_, loaded.level);
  std::filesystem::remove(path);
}

TEST_F(CompiledLevelTest, UnalignedInputIsCopiedNotMisread) {
  std::vector<std::uint8_t> shifted(bytes_->size() + 1);
  std::memcpy(shifted.data() + 1, bytes_->data(), bytes_->size());
  const LevelLoadResult loaded = load_compiled_level(std::span(shifted).subspan(1));
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  expect_same_level(*original_, loaded.level);
}

TEST_F(CompiledLevelTest, EmptyLevelRoundTrips) {
  const CompiledLevel empty;
  const LevelLoadResult loaded = load_compiled_level(serialize_compiled_level(empty));
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  EXPECT_TRUE(loaded.level.level.brushes.empty());
  EXPECT_EQ(loaded.level.tree.root(), kEmptyLeaf);
  EXPECT_FALSE(loaded.level.tree.trace(Shape::sphere(8), {0, 0, 0}, {100, 0, 0}).hit);
}

TEST_F(CompiledLevelTest, TruncatedBuffersAreRejected) {
  const std::vector<std::uint8_t>& bytes = *small_bytes_;
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n < 512 && n < bytes.size(); ++n)
    lengths.push_back(n);
  for (std::size_t n = 512; n < bytes.size(); n += 97)
    lengths.push_back(n);
  lengths.push_back(bytes.size() - 1);
  for (std::size_t n : lengths) {
    // A fresh allocation of exactly n bytes, so AddressSanitizer sees any read past the end.
    const std::vector<std::uint8_t> truncated(bytes.begin(), bytes.begin() + std::ptrdiff_t(n));
    const LevelLoadResult r = load_compiled_level(truncated);
    if (n < 8) {
      EXPECT_EQ(r.error, LevelLoadError::kTooSmall) << n;
    } else {
      // The identifier survives, and the root table sits near the front: the verifier or the
      // checksum (over a shorter buffer) must notice.
      EXPECT_TRUE(r.error == LevelLoadError::kVerifyFailed || r.error == LevelLoadError::kBadChecksum)
          << n << " bytes: " << to_string(r.error) << ": " << r.message;
    }
    EXPECT_FALSE(r.message.empty());
  }
}

TEST_F(CompiledLevelTest, EveryFlippedByteIsRejectedWithAReason) {
  const std::vector<std::uint8_t>& bytes = *small_bytes_;
  RecordProperty("bytes", int(bytes.size()));
  std::set<LevelLoadError> seen;
  // Every byte of the first kilobyte (header, vtables, root table, statistics) and every fifth byte of
  // the arrays after it, two ways: all bits, and one bit (which keeps most floats valid, so only the
  // checksum can tell).
  for (std::size_t i = 0; i < bytes.size(); i += i < 1024 ? 1 : 5) {
    for (const std::uint8_t mask : {std::uint8_t(0xff), std::uint8_t(1u << (i % 8))}) {
      std::vector<std::uint8_t> corrupt = bytes;
      corrupt[i] ^= mask;
      const LevelLoadResult r = load_compiled_level(corrupt);
      ASSERT_NE(r.error, LevelLoadError::kNone) << "byte " << i << " mask " << int(mask);
      EXPECT_FALSE(r.message.empty());
      if (i >= 4 && i < 8) {
        EXPECT_EQ(r.error, LevelLoadError::kBadIdentifier) << i;
      }
      seen.insert(r.error);
    }
  }
  EXPECT_TRUE(seen.count(LevelLoadError::kBadIdentifier));
  EXPECT_TRUE(seen.count(LevelLoadError::kVerifyFailed));
  EXPECT_TRUE(seen.count(LevelLoadError::kBadChecksum));
}

TEST_F(CompiledLevelTest, FlipsInTheBigLevelAreRejectedToo) {
  const std::vector<std::uint8_t>& bytes = *bytes_;
  std::mt19937 rng(kQuerySeed);
  std::vector<std::uint8_t> corrupt = bytes;
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t i = rng() % bytes.size();
    const auto mask = std::uint8_t(1u << (rng() % 8));
    corrupt[i] ^= mask;
    const LevelLoadResult r = load_compiled_level(corrupt);
    EXPECT_NE(r.error, LevelLoadError::kNone) << "byte " << i;
    corrupt[i] ^= mask;
  }
}

TEST_F(CompiledLevelTest, WrongIdentifierIsNamed) {
  std::vector<std::uint8_t> bytes = *bytes_;
  std::memcpy(bytes.data() + 4, "IBSP", 4);
  const LevelLoadResult r = load_compiled_level(bytes);
  EXPECT_EQ(r.error, LevelLoadError::kBadIdentifier);
  EXPECT_NE(r.message.find("\"IBSP\""), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("SCLV"), std::string::npos) << r.message;
}

TEST_F(CompiledLevelTest, OtherFormatVersionsAreRejectedBeforeAnythingElse) {
  for (const std::uint32_t version : {0u, kCompiledLevelVersion + 1, 0xffffffffu}) {
    std::vector<std::uint8_t> bytes = *bytes_;
    auto* root = flatbuffers::GetMutableRoot<flatbuffers::Table>(bytes.data());
    ASSERT_TRUE(root->SetField<std::uint32_t>(fb::CompiledLevel::VT_FORMAT_VERSION, version, 0));
    const LevelLoadResult r = load_compiled_level(bytes);
    EXPECT_EQ(r.error, LevelLoadError::kWrongVersion);
    EXPECT_NE(r.message.find("version " + std::to_string(version)), std::string::npos) << r.message;
  }
}

TEST_F(CompiledLevelTest, TooSmallAndMissingFiles) {
  EXPECT_EQ(load_compiled_level({}).error, LevelLoadError::kTooSmall);
  const std::uint8_t seven[7] = {};
  EXPECT_EQ(load_compiled_level(seven).error, LevelLoadError::kTooSmall);
  const std::string missing = ::testing::TempDir() + "/no_such_dir/no_such.level";
  const LevelLoadResult r = load_compiled_level_file(missing);
  EXPECT_EQ(r.error, LevelLoadError::kIo);
  EXPECT_NE(r.message.find(missing), std::string::npos) << r.message;
}

TEST_F(CompiledLevelTest, ATreeThatFailsCheckIsRejectedAsBadTree) {
  CompiledLevel bad = compile_without_navmesh(procedural_level(5, 12));
  std::vector<BspNode> nodes(bad.tree.nodes().begin(), bad.tree.nodes().end());
  nodes.back().child[1] = std::int32_t(nodes.size()) + 5;  // past the end: a walk would read garbage
  bad.tree = BspTree(std::move(nodes), {bad.tree.leaves().begin(), bad.tree.leaves().end()},
                     {bad.tree.bevels().begin(), bad.tree.bevels().end()}, bad.tree.root(), bad.level.brushes,
                     bad.tree.bounds());
  const LevelLoadResult r = load_compiled_level(serialize_compiled_level(bad));
  EXPECT_EQ(r.error, LevelLoadError::kBadTree);
  EXPECT_NE(r.message.find("bad child"), std::string::npos) << r.message;
}

TEST_F(CompiledLevelTest, ATreeNamingOtherBrushesThanTheLevelIsRejectedAsBadLevel) {
  CompiledLevel bad = compile_without_navmesh(procedural_level(5, 12));
  bad.level.brushes.pop_back();
  const LevelLoadResult r = load_compiled_level(serialize_compiled_level(bad));
  EXPECT_EQ(r.error, LevelLoadError::kBadLevel);
  EXPECT_NE(r.message.find("brushes"), std::string::npos) << r.message;
}

TEST_F(CompiledLevelTest, BrushPlaneRangesOutsideThePlaneArrayAreRejectedAsBadLevel) {
  // Only a hand-made buffer can say this: the serializer always writes consistent ranges.
  flatbuffers::FlatBufferBuilder fbb;
  const std::vector<fb::BrushRecord> brushes = {{0, 6, kContentsSolid, 0}, {6, 3, kContentsSolid, 0}};
  const std::vector<fb::Plane> planes(7, fb::Plane(1, 0, 0, 0));
  const std::vector<fb::Node> nodes;
  const std::vector<fb::SolidLeaf> leaves;
  const std::vector<fb::Plane> bevels;
  const auto root = fb::CreateCompiledLevelDirect(fbb, kCompiledLevelVersion, 1, "hand-made", 0, &brushes,
                                                  &planes, nullptr, nullptr, &nodes, &leaves, &bevels, -1, 2);
  fb::FinishCompiledLevelBuffer(fbb, root);
  std::vector<std::uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  EXPECT_EQ(load_compiled_level(bytes).error, LevelLoadError::kBadChecksum);
  ASSERT_EQ(reseal_compiled_level(bytes), LevelLoadError::kNone);
  const LevelLoadResult r = load_compiled_level(bytes);
  EXPECT_EQ(r.error, LevelLoadError::kBadLevel);
  EXPECT_NE(r.message.find("brush 1 has planes [6, +3) outside the 7 stored planes"), std::string::npos)
      << r.message;
}

TEST_F(CompiledLevelTest, ResealingAfterAnEditMakesTheBufferLoadAgain) {
  std::vector<std::uint8_t> bytes = *bytes_;
  auto* root = flatbuffers::GetMutableRoot<flatbuffers::Table>(bytes.data());
  ASSERT_TRUE(root->SetField<std::uint64_t>(fb::CompiledLevel::VT_SOURCE_HASH, 42, 0));
  EXPECT_EQ(load_compiled_level(bytes).error, LevelLoadError::kBadChecksum);
  ASSERT_EQ(reseal_compiled_level(bytes), LevelLoadError::kNone);
  const LevelLoadResult r = load_compiled_level(bytes);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.level.level.source_hash, 42u);
}

// Found by fuzz/fuzz_compiled_level (fuzz/corpus/compiled_level/regression-tree-bounds-6e20): the tree's
// start-cell grids are sized from its bounds, so bounds far beyond the world (or not finite) overflowed
// the grid size (float to int) before anything checked them.
TEST_F(CompiledLevelTest, BoundsBeyondTheWorldOrNotFiniteAreRejected) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const float bad :
       {6.0e20f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), float(2 * kWorldExtent)}) {
    for (const auto field : {fb::CompiledLevel::VT_TREE_BOUNDS, fb::CompiledLevel::VT_BOUNDS}) {
      std::vector<std::uint8_t> bytes = *bytes_;
      auto* root = flatbuffers::GetMutableRoot<flatbuffers::Table>(bytes.data());
      auto* bounds = root->GetStruct<fb::Bounds*>(field);
      ASSERT_NE(bounds, nullptr);
      std::memcpy(reinterpret_cast<std::uint8_t*>(bounds) + 12, &bad, sizeof bad);  // max.x
      ASSERT_EQ(reseal_compiled_level(bytes), LevelLoadError::kNone);
      const LevelLoadResult r = load_compiled_level(bytes);
      const bool tree = field == fb::CompiledLevel::VT_TREE_BOUNDS;
      EXPECT_EQ(r.error, tree ? LevelLoadError::kBadTree : LevelLoadError::kBadLevel) << bad;
      EXPECT_NE(r.message.find("beyond the world extent"), std::string::npos) << r.message;
    }
  }
}

TEST(CompileLevel, BuildsTreeAndNavmeshAndReportsProgress) {
  Level level = procedural_level(9, 24);
  std::vector<std::string> steps;
  const CompiledLevelResult r =
      compile_level(level, {}, {}, [&](std::string_view step) { steps.emplace_back(step); });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(steps, (std::vector<std::string>{"building BSP", "building navmesh", "computing visibility"}));
  EXPECT_EQ(r.level.visibility_origin, VisibilityOrigin::kComputed);
  EXPECT_EQ(r.level.tree.brush_count(), std::int32_t(level.brushes.size()));
  EXPECT_EQ(r.level.bsp_stats.brushes, std::int32_t(level.brushes.size()));
  EXPECT_FALSE(r.level.navmesh.empty());
  EXPECT_GT(r.level.navmesh_polygons, 0);
  const LevelLoadResult loaded = load_compiled_level(serialize_compiled_level(r.level));
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  expect_same_level(r.level, loaded.level);
  std::string error;
  EXPECT_NE(NavMesh::from_data(loaded.level.navmesh, &error), nullptr) << error;
}

TEST(CompileLevel, BspFailureNamesTheBrush) {
  Level level = procedural_level(9, 24);
  level.brushes[3].planes[0].d = std::numeric_limits<float>::quiet_NaN();
  const CompiledLevelResult r = compile_level(std::move(level), {}, {});
  EXPECT_EQ(r.error, CompileError::kBsp);
  EXPECT_NE(r.message.find("brush 3"), std::string::npos) << r.message;
}

TEST(ImportLevelFile, UnknownExtensionIsAnError) {
  const LevelResult r = import_level_file("level.fbx");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.describe().find(".fbx"), std::string::npos) << r.error.describe();
}

TEST(ImportLevelFile, DispatchesOnTheExtensionCaseInsensitively) {
  // A missing file of each kind reaches its importer, whose error names the file.
  for (const char* name : {"missing.MAP", "missing.bsp", "missing.Obj"}) {
    const LevelResult r = import_level_file(::testing::TempDir() + "/" + name);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.error.describe().find("unknown level source extension"), std::string::npos) << name;
  }
}

// Every authored map in configs/levels: import, compile (with the real navmesh), round trip.
TEST(CompiledLevelMaps, AuthoredMapsRoundTripWithIdenticalAnswers) {
  const std::filesystem::path dir = std::filesystem::path(SHIFTCAST_SOURCE_DIR) / "configs" / "levels";
  int maps = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".map") continue;
    SCOPED_TRACE(entry.path().string());
    ++maps;
    LevelResult imported = import_level_file(entry.path().string());
    ASSERT_TRUE(imported.ok()) << imported.error.describe();
    const CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {});
    ASSERT_TRUE(compiled.ok()) << compiled.message;
    const LevelLoadResult loaded = load_compiled_level(serialize_compiled_level(compiled.level));
    ASSERT_TRUE(loaded.ok()) << loaded.message;
    expect_same_level(compiled.level, loaded.level);
    EXPECT_EQ(differing_traces(compiled.level.tree, loaded.level.tree, kRoundTripQueries), 0);
  }
  if (maps == 0) GTEST_SKIP() << "no .map files in " << dir;
}

}  // namespace
}  // namespace shiftcast
