// The Quake III map importer on real maps (OpenArena 0.8.1, fetched by scripts/fetch-openarena-maps.sh
// into data/openarena/maps; the suite skips when that folder is absent, and CI fetches it first):
//   - brush, patch and spawn counts agree with the file, read here independently with a minimal lump
//     reader, and every world brush is accounted for exactly once (kept, non-solid, or degenerate);
//   - the BSP built from the import answers point-in-solid like brute force over the imported brushes on
//     100,000 random points per map;
//   - every spawn point has room for the player cylinder and ground under it;
//   - curved patches become thin closed brushes, one per triangle;
//   - corrupt files (truncated, wrong magic or version, lumps out of range, bad indices, non-unit planes,
//     random bit flips) give an error with a byte offset and never crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "collision/bsp_build.hpp"
#include "collision/convex_polytope.hpp"
#include "tests/support/seeded_random.hpp"
#include "world/level/q3_bsp_import.hpp"

#ifndef SHIFTCAST_SOURCE_DIR
#error \
    "SHIFTCAST_SOURCE_DIR must name the repository root (target_compile_definitions in tests/CMakeLists.txt)"
#endif

namespace shiftcast {
namespace {

// Maps every test imports: a small one without patches, a mid-size one, two with many patches, and the
// largest brush count of the set.
const char* const kImportMaps[] = {"oa_dm1", "oa_dm4", "oa_rpg3dm2", "oa_ctf2", "wrackdm17"};
// Maps whose BSP is built and queried (all of them, since the build drops fragments thinner than
// kPlaneEpsilon; wrackdm17 made it recurse without end before).
const char* const kBspMaps[] = {"oa_dm1", "oa_dm4", "oa_rpg3dm2", "oa_ctf2", "wrackdm17"};

constexpr int kPoints = 100000;
// Points closer than this to a brush surface may be classified either way by float planes; skipped, as
// in tests/collision/bsp_oracle_test.cpp.
constexpr double kSurfaceSkip = 1e-3;
// The player: Quake's 30x30x56 box as an upright cylinder, feet 24 below the entity origin.
constexpr float kPlayerRadius = 15;
constexpr float kPlayerHeight = 56;
constexpr float kOriginAboveFeet = 24;
// The game spawns a player 9 units above the spawn entity (g_client.c SelectSpawnPoint: origin[2] += 9),
// because mappers put spawn origins on the floor or slightly into it: oa_dm1 has one 0.8 units deep in
// a floor brush, and several stock spawns have their feet exactly on the floor.
constexpr float kSpawnLift = 9;
// Ground must be within this far below a spawned player's feet, and walkable (Quake's MIN_WALK_NORMAL).
// Players fall to the floor after spawning, and maps place some spawns that way: oa_ctf2's feet up to 85
// units above the floor, wrackdm17's info_player_start 385. What the check rules out is a spawn over a
// pit with no floor at all.
constexpr float kGroundProbe = 1024;
constexpr float kMinWalkNormalZ = 0.7f;

std::filesystem::path maps_dir() {
  return std::filesystem::path(SHIFTCAST_SOURCE_DIR) / "data" / "openarena" / "maps";
}

#define SKIP_WITHOUT_MAPS()                                                       \
  do {                                                                            \
    if (!std::filesystem::is_directory(maps_dir())) {                             \
      GTEST_SKIP() << maps_dir().string()                                         \
                   << " is absent: run scripts/fetch-openarena-maps.sh to fetch " \
                      "the OpenArena maps";                                       \
    }                                                                             \
  } while (false)

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// ---- A minimal, independent reader of the few IBSP fields the counts are checked against. ----

struct FileCounts {
  std::int64_t world_brushes = 0;
  std::int64_t world_solid_brushes = 0;  // brush shader contents include SOLID or PLAYERCLIP
  std::int64_t world_solid_patches = 0;  // MST_PATCH surfaces of the world model with such a shader
  std::int64_t spawn_entities = 0;       // "classname" "<player spawn>" occurrences in the entity text
  std::int64_t last_lump_end = 0;
};

std::int32_t le32(const std::vector<std::uint8_t>& b, std::size_t at) {
  std::int32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

FileCounts count_file(const std::vector<std::uint8_t>& b) {
  FileCounts c;
  const auto lump_offset = [&](int i) { return std::size_t(le32(b, 8 + 8 * std::size_t(i))); };
  const auto lump_length = [&](int i) { return std::size_t(le32(b, 12 + 8 * std::size_t(i))); };
  for (int i = 0; i < 17; ++i) {
    c.last_lump_end = std::max<std::int64_t>(c.last_lump_end, std::int64_t(lump_offset(i) + lump_length(i)));
  }
  const std::size_t shaders = lump_offset(1), models = lump_offset(7), brushes = lump_offset(8),
                    surfaces = lump_offset(13);
  const auto contents_of = [&](std::int32_t shader) {
    return std::uint32_t(le32(b, shaders + 72 * shader + 68));
  };
  const std::int32_t first_surface = le32(b, models + 24), surface_count = le32(b, models + 28);
  const std::int32_t first_brush = le32(b, models + 32), brush_count = le32(b, models + 36);
  c.world_brushes = brush_count;
  for (std::int32_t i = first_brush; i < first_brush + brush_count; ++i) {
    if (contents_of(le32(b, brushes + 12 * i + 8)) & (0x1 | 0x10000)) ++c.world_solid_brushes;
  }
  for (std::int32_t i = first_surface; i < first_surface + surface_count; ++i) {
    const std::size_t s = surfaces + 104 * std::size_t(i);
    if (le32(b, s + 8) == 2 && (contents_of(le32(b, s)) & (0x1 | 0x10000))) ++c.world_solid_patches;
  }
  const std::string text(reinterpret_cast<const char*>(b.data() + lump_offset(0)), lump_length(0));
  for (const char* cls : {"info_player_deathmatch", "info_player_start", "team_CTF_redspawn",
                          "team_CTF_bluespawn", "team_CTF_redplayer", "team_CTF_blueplayer"}) {
    const std::string needle = std::string("\"classname\" \"") + cls + "\"";
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++c.spawn_entities;
    }
  }
  return c;
}

// ---- Imported maps and their trees, made once per test process. ----

struct LoadedMap {
  std::vector<std::uint8_t> bytes;
  Level level;
  Q3ImportStats stats;
  double import_ms = 0;
};

const LoadedMap& loaded(const std::string& name) {
  static std::map<std::string, std::unique_ptr<LoadedMap>> cache;
  std::unique_ptr<LoadedMap>& slot = cache[name];
  if (!slot) {
    slot = std::make_unique<LoadedMap>();
    slot->bytes = read_bytes(maps_dir() / (name + ".bsp"));
    const auto t0 = std::chrono::steady_clock::now();
    LevelResult r = import_q3_bsp(slot->bytes, name + ".bsp", {}, &slot->stats);
    slot->import_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(r.ok()) << r.error.describe();
    slot->level = std::move(r.level);
  }
  return *slot;
}

const BspTree& tree_of(const std::string& name) {
  static std::map<std::string, std::unique_ptr<BspTree>> cache;
  std::unique_ptr<BspTree>& slot = cache[name];
  if (!slot) {
    BspBuildResult built = build_bsp(loaded(name).level.brushes, {});
    EXPECT_EQ(built.error, BspBuildError::kNone) << name << ": brush " << built.error_brush;
    std::printf("%s: %s\n", name.c_str(), format_stats(built.stats).c_str());
    slot = std::make_unique<BspTree>(std::move(built.tree));
  }
  return *slot;
}

// Deterministic on every platform: no std distributions.
class Random {
 public:
  explicit Random(std::uint32_t seed) : rng_(seed) {}
  float uniform(float lo, float hi) { return uniform_float(rng_, lo, hi); }
  std::uint32_t below(std::uint32_t n) { return std::uint32_t(std::uint64_t(rng_()) * n >> 32); }

 private:
  std::mt19937 rng_;
};

TEST(Q3BspImport, EveryWorldBrushIsAccountedForAndCountsMatchTheFile) {
  SKIP_WITHOUT_MAPS();
  for (const char* name : kImportMaps) {
    SCOPED_TRACE(name);
    const LoadedMap& m = loaded(name);
    const Level& level = m.level;
    const FileCounts file = count_file(m.bytes);
    const std::int64_t kept = std::int64_t(level.brushes.size()) - level.patch_brushes;
    std::printf(
        "%-11s source %5d kept %5lld (playerclip %3d) nonsolid %3d degenerate %2d | patches %3d -> %5d "
        "brushes (%d triangles, %d slivers) | spawns %2zu | import %.1f ms\n",
        name, level.source_brushes, static_cast<long long>(kept), m.stats.playerclip_brushes,
        level.skipped_nonsolid, m.stats.degenerate_brushes, level.patches, level.patch_brushes,
        m.stats.patch_triangles, m.stats.degenerate_triangles, level.spawns.size(), m.import_ms);

    EXPECT_EQ(level.source_brushes, file.world_brushes);
    EXPECT_EQ(level.skipped_nonsolid, file.world_brushes - file.world_solid_brushes);
    // The documented accounting: kept + non-solid + degenerate = every world brush.
    EXPECT_EQ(kept + level.skipped_nonsolid + m.stats.degenerate_brushes, level.source_brushes);
    // Degenerate brushes are rare accidents of the map compiler, not a way to lose geometry.
    EXPECT_LE(m.stats.degenerate_brushes * 200, level.source_brushes);
    EXPECT_EQ(level.patches, file.world_solid_patches);
    EXPECT_EQ(level.patch_brushes, m.stats.patch_triangles - m.stats.degenerate_triangles);
    EXPECT_EQ(std::int64_t(level.spawns.size()), file.spawn_entities);
    EXPECT_GT(level.spawns.size(), 0u);

    ASSERT_EQ(level.brush_contents.size(), level.brushes.size());
    ASSERT_EQ(level.brush_surface_flags.size(), level.brushes.size());
    for (std::size_t i = 0; i < level.brushes.size(); ++i) {
      ASSERT_NE(level.brush_contents[i] & kContentsPlayerSolid, 0u) << "brush " << i;
      for (const Plane& p : level.brushes[i].planes) {
        ASSERT_NEAR(length(to_double(p.normal)), 1.0, 1e-6) << "brush " << i;
      }
    }
    EXPECT_EQ(level.name, std::string(name) + ".bsp");
    EXPECT_EQ(level.source_hash, fnv1a64(m.bytes.data(), m.bytes.size()));
    EXPECT_FALSE(level.bounds.empty());
  }
}

TEST(Q3BspImport, ImportFileReadsTheSameLevelAndNamesTheFileInErrors) {
  SKIP_WITHOUT_MAPS();
  const std::string path = (maps_dir() / "oa_dm1.bsp").string();
  const LevelResult r = import_q3_bsp_file(path);
  ASSERT_TRUE(r.ok()) << r.error.describe();
  EXPECT_EQ(r.level.brushes.size(), loaded("oa_dm1").level.brushes.size());
  EXPECT_EQ(r.level.source_hash, loaded("oa_dm1").level.source_hash);
  const LevelResult missing = import_q3_bsp_file(path + ".missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error.file, path + ".missing");
}

// Brute force with a box per brush to skip the far ones; the per-brush test is brush_contains itself.
struct BruteForce {
  explicit BruteForce(const std::vector<Brush>& brushes) : brushes_(brushes) {
    for (const Brush& b : brushes) {
      std::vector<Planed> planes;
      for (const Plane& p : b.planes)
        planes.push_back(to_double(p));
      boxes_.push_back(polytope_from_planes(planes, kWorldExtent, kPlaneEpsilon).bounds());
    }
  }
  // Whether p lies within kSurfaceSkip of some brush's surface (inside or out).
  bool near_surface(Vec3 p) const {
    const Vec3d pd = to_double(p);
    for (std::size_t i = 0; i < brushes_.size(); ++i) {
      if (!in_box(i, pd, kSurfaceSkip * 2)) continue;
      bool inside_grown = true;
      bool near_plane = false;
      for (const Plane& plane : brushes_[i].planes) {
        const double d = to_double(plane).distance(pd);
        if (d >= kSurfaceSkip) inside_grown = false;
        if (std::abs(d) < kSurfaceSkip) near_plane = true;
      }
      if (inside_grown && near_plane) return true;
    }
    return false;
  }
  bool solid(Vec3 p) const {
    const Vec3d pd = to_double(p);
    for (std::size_t i = 0; i < brushes_.size(); ++i) {
      if (in_box(i, pd, kSurfaceSkip * 2) && brush_contains(brushes_[i], p)) return true;
    }
    return false;
  }

 private:
  bool in_box(std::size_t i, Vec3d p, double margin) const {
    const Aabbd& b = boxes_[i];
    return p.x >= b.min.x - margin && p.x <= b.max.x + margin && p.y >= b.min.y - margin &&
           p.y <= b.max.y + margin && p.z >= b.min.z - margin && p.z <= b.max.z + margin;
  }
  const std::vector<Brush>& brushes_;
  std::vector<Aabbd> boxes_;
};

TEST(Q3BspImport, BspPointInSolidAgreesWithBruteForce) {
  SKIP_WITHOUT_MAPS();
  for (const char* name : kBspMaps) {
    SCOPED_TRACE(name);
    const Level& level = loaded(name).level;
    const BspTree& tree = tree_of(name);
    const BruteForce brute(level.brushes);
    Random random(7);
    int checked = 0;
    int solid = 0;
    for (int i = 0; i < kPoints; ++i) {
      const Aabb& b = level.bounds;
      const Vec3 p{random.uniform(b.min.x - 32, b.max.x + 32), random.uniform(b.min.y - 32, b.max.y + 32),
                   random.uniform(b.min.z - 32, b.max.z + 32)};
      if (brute.near_surface(p)) continue;
      ++checked;
      const bool want = brute.solid(p);
      const std::int32_t got = tree.point_brush(p);
      ASSERT_EQ(got != kNoBrush, want) << "at " << p.x << ", " << p.y << ", " << p.z;
      if (got != kNoBrush) {
        ++solid;
        ASSERT_TRUE(brush_contains(level.brushes[std::size_t(got)], p)) << "brush " << got;
      }
    }
    std::printf("%s: %d points checked, %d solid\n", name, checked, solid);
    EXPECT_GT(checked, kPoints * 99 / 100);
    EXPECT_GT(solid, checked / 50);  // the points do reach into the geometry (2.8% solid on oa_ctf2)
  }
}

TEST(Q3BspImport, EverySpawnHasRoomForThePlayerAndGroundUnderIt) {
  SKIP_WITHOUT_MAPS();
  const Shape player = Shape::cylinder(kPlayerRadius, kPlayerHeight);
  for (const char* name : kBspMaps) {
    SCOPED_TRACE(name);
    const Level& level = loaded(name).level;
    const BspTree& tree = tree_of(name);
    for (const SpawnPoint& spawn : level.spawns) {
      const Vec3 feet = spawn.origin + Vec3{0, 0, kSpawnLift - kOriginAboveFeet};
      const std::string where = spawn.classname + " at " + std::to_string(spawn.origin.x) + " " +
                                std::to_string(spawn.origin.y) + " " + std::to_string(spawn.origin.z);
      const OverlapResult overlap = tree.overlap(player, feet);
      EXPECT_FALSE(overlap.overlap) << where << " overlaps brush " << overlap.brush;
      const TraceResult down = tree.trace(player, feet, feet - Vec3{0, 0, kGroundProbe});
      EXPECT_TRUE(down.hit) << where << ": no ground within " << kGroundProbe;
      EXPECT_FALSE(down.start_solid) << where;
      EXPECT_GT(down.normal.z, kMinWalkNormalZ) << where;
    }
  }
}

TEST(Q3BspImport, PatchesBecomeThinBrushesBehindTheirTriangles) {
  SKIP_WITHOUT_MAPS();
  int maps_with_patches = 0;
  for (const char* name : kImportMaps) {
    const Level& level = loaded(name).level;
    if (level.patches == 0) continue;
    ++maps_with_patches;
    SCOPED_TRACE(name);
    EXPECT_GT(level.patch_brushes, level.patches);
    // Patch brushes follow the kept brushes: the surface plane, its back offset by the thickness, and three
    // edge planes perpendicular to the triangle.
    const float thickness = Q3ImportOptions{}.patch_thickness;
    for (std::size_t i = level.brushes.size() - std::size_t(level.patch_brushes); i < level.brushes.size();
         ++i) {
      const Brush& brush = level.brushes[i];
      ASSERT_EQ(brush.planes.size(), 5u) << "brush " << i;
      const Plane& front = brush.planes[0];
      const Plane& back = brush.planes[1];
      EXPECT_NEAR(dot(front.normal, back.normal), -1.0f, 1e-5f);
      EXPECT_NEAR(front.d + back.d, thickness, 1e-2f);
      for (int e = 2; e < 5; ++e)
        EXPECT_NEAR(dot(front.normal, brush.planes[std::size_t(e)].normal), 0.0f, 1e-4f);
      // Closed, with volume: the average of its corners lies inside.
      std::vector<Planed> planes;
      for (const Plane& p : brush.planes)
        planes.push_back(to_double(p));
      const ConvexPolytope poly = polytope_from_planes(planes, kWorldExtent, kPlaneEpsilon);
      ASSERT_FALSE(poly.empty()) << "brush " << i;
      Vec3d centre{};
      const std::vector<Vec3d> corners = poly.vertices(kPlaneEpsilon);
      for (Vec3d v : corners)
        centre += v;
      EXPECT_TRUE(brush_contains(brush, to_float(centre * (1.0 / double(corners.size()))))) << "brush " << i;
    }
  }
  EXPECT_GE(maps_with_patches, 2);
}

TEST(Q3BspImport, CoarserFlatnessMakesFewerPatchBrushesAndNoPatchesMakesNone) {
  SKIP_WITHOUT_MAPS();
  const LoadedMap& m = loaded("oa_ctf2");
  Q3ImportOptions coarse;
  coarse.patch_flatness = 16;  // cm_patch.c's SUBDIVIDE_DISTANCE
  const LevelResult c = import_q3_bsp(m.bytes, "oa_ctf2.bsp", coarse);
  ASSERT_TRUE(c.ok()) << c.error.describe();
  EXPECT_LT(c.level.patch_brushes, m.level.patch_brushes);
  EXPECT_EQ(c.level.patches, m.level.patches);
  Q3ImportOptions none;
  none.import_patches = false;
  const LevelResult n = import_q3_bsp(m.bytes, "oa_ctf2.bsp", none);
  ASSERT_TRUE(n.ok()) << n.error.describe();
  EXPECT_EQ(n.level.patch_brushes, 0);
  EXPECT_EQ(n.level.brushes.size(), m.level.brushes.size() - std::size_t(m.level.patch_brushes));
  Q3ImportOptions bad;
  bad.patch_thickness = 0;
  EXPECT_FALSE(import_q3_bsp(m.bytes, "oa_ctf2.bsp", bad).ok());
}

// ---- Corrupt input ----

void put32(std::vector<std::uint8_t>& b, std::size_t at, std::int32_t v) {
  std::memcpy(b.data() + at, &v, 4);
}
void putf(std::vector<std::uint8_t>& b, std::size_t at, float v) {
  std::memcpy(b.data() + at, &v, 4);
}

// An error must name what is wrong and a byte offset inside the file (0 is a real offset: the magic).
void expect_error_with_offset(const LevelResult& r, std::size_t size, const std::string& what) {
  ASSERT_FALSE(r.ok()) << what;
  EXPECT_FALSE(r.error.what.empty()) << what;
  EXPECT_FALSE(r.error.is_line) << what;
  EXPECT_LE(r.error.offset, size) << what;
  EXPECT_EQ(r.error.file, "corrupt.bsp");
}

TEST(Q3BspImport, HeaderErrorsNameTheirOffset) {
  SKIP_WITHOUT_MAPS();
  const std::vector<std::uint8_t>& good = loaded("oa_ctf2").bytes;
  {
    std::vector<std::uint8_t> b = good;
    b[0] = 'X';
    const LevelResult r = import_q3_bsp(b, "corrupt.bsp");
    expect_error_with_offset(r, b.size(), "magic");
    EXPECT_EQ(r.error.offset, 0u);
  }
  {
    std::vector<std::uint8_t> b = good;
    put32(b, 4, 47);
    const LevelResult r = import_q3_bsp(b, "corrupt.bsp");
    expect_error_with_offset(r, b.size(), "version");
    EXPECT_EQ(r.error.offset, 4u);
  }
  for (int lump = 0; lump < 17; ++lump) {
    std::vector<std::uint8_t> b = good;
    put32(b, 8 + 8 * std::size_t(lump), std::int32_t(b.size()) + 16);  // offset past the end
    LevelResult r = import_q3_bsp(b, "corrupt.bsp");
    expect_error_with_offset(r, b.size(), "lump offset");
    EXPECT_EQ(r.error.offset, 8u + 8u * std::size_t(lump));
    b = good;
    put32(b, 12 + 8 * std::size_t(lump), -4);  // negative length
    r = import_q3_bsp(b, "corrupt.bsp");
    expect_error_with_offset(r, b.size(), "lump length");
    EXPECT_EQ(r.error.offset, 8u + 8u * std::size_t(lump));
  }
  {
    std::vector<std::uint8_t> b = good;
    put32(b, 12 + 8 * 8, le32(b, 12 + 8 * 8) - 4);  // brushes lump not a whole number of records
    const LevelResult r = import_q3_bsp(b, "corrupt.bsp");
    expect_error_with_offset(r, b.size(), "lump size");
    EXPECT_EQ(r.error.offset, 12u + 8u * 8u);
  }
}

TEST(Q3BspImport, BadIndicesAndPlanesNameTheRecord) {
  SKIP_WITHOUT_MAPS();
  const std::vector<std::uint8_t>& good = loaded("oa_ctf2").bytes;
  const Level& level = loaded("oa_ctf2").level;
  const std::size_t shaders = std::size_t(le32(good, 8 + 8 * 1));
  const std::size_t planes = std::size_t(le32(good, 8 + 8 * 2));
  const std::size_t brushes = std::size_t(le32(good, 8 + 8 * 8));
  const std::size_t sides = std::size_t(le32(good, 8 + 8 * 9));
  // The first solid world brush (the world model starts at brush 0 in every q3map file).
  std::int32_t first_solid = -1;
  for (std::int32_t i = 0; first_solid < 0; ++i) {
    const std::int32_t shader = le32(good, brushes + 12 * std::size_t(i) + 8);
    if (le32(good, shaders + 72 * std::size_t(shader) + 68) & kContentsPlayerSolid) first_solid = i;
  }
  const std::size_t brush_at = brushes + 12 * std::size_t(first_solid);
  const std::size_t side_at = sides + 8 * std::size_t(le32(good, brush_at));
  const std::size_t plane_at = planes + 16 * std::size_t(le32(good, side_at));
  {
    std::vector<std::uint8_t> b = good;
    put32(b, brush_at + 4, 1 << 30);  // side count past the lump
    const LevelResult r = import_q3_bsp(b, "corrupt.bsp");
    expect_error_with_offset(r, b.size(), "brush sides");
    EXPECT_EQ(r.error.offset, brush_at);
  }
  {
    std::vector<std::uint8_t> b = good;
    put32(b, brush_at + 8, -1);  // shader
    const LevelResult r = import_q3_bsp(b, "corrupt.bsp");
    expect_error_with_offset(r, b.size(), "brush shader");
    EXPECT_EQ(r.error.offset, brush_at + 8);
  }
  {
    std::vector<std::uint8_t> b = good;
    put32(b, side_at, 1 << 29);  // plane index
    const LevelResult r = import_q3_bsp(b, "corrupt.bsp");
    expect_error_with_offset(r, b.size(), "side plane");
    EXPECT_EQ(r.error.offset, side_at);
  }
  {
    std::vector<std::uint8_t> b = good;
    putf(b, plane_at, std::nanf(""));
    const LevelResult r = import_q3_bsp(b, "corrupt.bsp");
    expect_error_with_offset(r, b.size(), "nan plane");
    EXPECT_EQ(r.error.offset, plane_at);
  }
  {
    std::vector<std::uint8_t> b = good;
    for (int k = 0; k < 3; ++k) {
      float v;
      std::memcpy(&v, b.data() + plane_at + 4 * std::size_t(k), 4);
      putf(b, plane_at + 4 * std::size_t(k), v * 1.5f);
    }
    const LevelResult r = import_q3_bsp(b, "corrupt.bsp");
    expect_error_with_offset(r, b.size(), "non-unit plane");
    EXPECT_EQ(r.error.offset, plane_at);
  }
  {
    // Within 1e-3 of unit: normalised (with its distance), so the level is the same.
    std::vector<std::uint8_t> b = good;
    for (int k = 0; k < 4; ++k) {
      float v;
      std::memcpy(&v, b.data() + plane_at + 4 * std::size_t(k), 4);
      putf(b, plane_at + 4 * std::size_t(k), v * 1.0005f);
    }
    const LevelResult r = import_q3_bsp(b, "corrupt.bsp");
    ASSERT_TRUE(r.ok()) << r.error.describe();
    ASSERT_EQ(r.level.brushes.size(), level.brushes.size());
    for (std::size_t i = 0; i < level.brushes.size(); ++i) {
      for (std::size_t k = 0; k < level.brushes[i].planes.size(); ++k) {
        const Plane& p = r.level.brushes[i].planes[k];
        const Plane& q = level.brushes[i].planes[k];
        ASSERT_NEAR(p.d, q.d, 1e-3f * std::max(1.0f, std::abs(q.d)));
        ASSERT_NEAR(dot(p.normal, q.normal), 1.0f, 1e-6f);
      }
    }
  }
}

TEST(Q3BspImport, TruncatedFilesAreErrorsAtEveryLength) {
  SKIP_WITHOUT_MAPS();
  const std::vector<std::uint8_t>& good = loaded("oa_ctf2").bytes;
  const FileCounts counts = count_file(good);
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n <= 160; ++n)
    lengths.push_back(n);  // through the header, byte by byte
  Random random(11);
  for (int i = 0; i < 200; ++i)
    lengths.push_back(160 + random.below(std::uint32_t(counts.last_lump_end - 160)));
  lengths.push_back(std::size_t(counts.last_lump_end) - 1);
  for (std::size_t n : lengths) {
    const std::span<const std::uint8_t> cut(good.data(), n);
    const LevelResult r = import_q3_bsp(cut, "corrupt.bsp");
    expect_error_with_offset(r, n, "truncated to " + std::to_string(n));
  }
}

TEST(Q3BspImport, RandomBitFlipsNeverCrash) {
  SKIP_WITHOUT_MAPS();
  const std::vector<std::uint8_t>& good = loaded("oa_ctf2").bytes;
  // Flips aimed at the lumps the importer reads (header, entities, shaders, planes, models, brushes,
  // sides, draw vertices, surfaces), and some anywhere in the file.
  std::vector<std::pair<std::size_t, std::size_t>> regions = {{0, 144}};
  for (int lump : {0, 1, 2, 7, 8, 9, 10, 13}) {
    const std::size_t offset = std::size_t(le32(good, 8 + 8 * std::size_t(lump)));
    const std::size_t length = std::size_t(le32(good, 12 + 8 * std::size_t(lump)));
    if (length > 0) regions.push_back({offset, length});
  }
  regions.push_back({0, good.size()});
  Random random(2026);
  int errors = 0;
  constexpr int kTrials = 120;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<std::uint8_t> b = good;
    const auto [offset, length] = regions[random.below(std::uint32_t(regions.size()))];
    const int flips = 1 + int(random.below(8));
    for (int f = 0; f < flips; ++f) {
      b[offset + random.below(std::uint32_t(length))] ^= std::uint8_t(1u << random.below(8));
    }
    const LevelResult r = import_q3_bsp(b, "corrupt.bsp");
    if (!r.ok()) {
      ++errors;
      expect_error_with_offset(r, b.size(), "trial " + std::to_string(trial));
    } else {
      ASSERT_EQ(r.level.brush_contents.size(), r.level.brushes.size());
    }
  }
  std::printf("bit flips: %d of %d trials rejected\n", errors, kTrials);
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace shiftcast
