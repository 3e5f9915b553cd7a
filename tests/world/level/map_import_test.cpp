// The .map importer: plane orientation on TrenchBroom's own default box in both face forms, exact planes of
// a 45-degree ramp, the authored levels in configs/levels (counts checked against an independent line scan
// of the text, BSP against brute force, spawns free and grounded), and malformed input that must come back
// as an error on the right line and never crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "collision/bsp_build.hpp"
#include "tests/support/brush_oracle.hpp"
#include "tests/support/seeded_random.hpp"
#include "world/level/map_import.hpp"

namespace shiftcast {
namespace {

std::string source_path(const std::string& relative) {
  return std::string(SHIFTCAST_SOURCE_DIR) + "/" + relative;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// TrenchBroom's default brush (its own reader tests use these points): x, y in [-64, 64], z in [-16, 16].
const char* const kStandardBoxFaces[6] = {
    "( -64 -64 -16 ) ( -64 -63 -16 ) ( -64 -64 -15 ) __TB_empty 0 0 0 1 1",
    "( -64 -64 -16 ) ( -64 -64 -15 ) ( -63 -64 -16 ) __TB_empty 0 0 0 1 1",
    "( -64 -64 -16 ) ( -63 -64 -16 ) ( -64 -63 -16 ) __TB_empty 0 0 0 1 1",
    "( 64 64 16 ) ( 64 65 16 ) ( 65 64 16 ) __TB_empty 0 0 0 1 1",
    "( 64 64 16 ) ( 65 64 16 ) ( 64 64 17 ) __TB_empty 0 0 0 1 1",
    "( 64 64 16 ) ( 64 64 17 ) ( 64 65 16 ) __TB_empty 0 0 0 1 1",
};
const char* const kValveBoxFaces[6] = {
    "( -64 -64 -16 ) ( -64 -63 -16 ) ( -64 -64 -15 ) __TB_empty [ 0 -1 0 0 ] [ 0 0 -1 0 ] 0 1 1",
    "( -64 -64 -16 ) ( -64 -64 -15 ) ( -63 -64 -16 ) __TB_empty [ 1 0 0 0 ] [ 0 0 -1 0 ] 0 1 1",
    "( -64 -64 -16 ) ( -63 -64 -16 ) ( -64 -63 -16 ) __TB_empty [ -1 0 0 0 ] [ 0 -1 0 0 ] 0 1 1",
    "( 64 64 16 ) ( 64 65 16 ) ( 65 64 16 ) __TB_empty [ 1 0 0 0 ] [ 0 -1 0 0 ] 0 1 1",
    "( 64 64 16 ) ( 65 64 16 ) ( 64 64 17 ) __TB_empty [ -1 0 0 0 ] [ 0 0 -1 0 ] 0 1 1",
    "( 64 64 16 ) ( 64 64 17 ) ( 64 65 16 ) __TB_empty [ 0 1 0 0 ] [ 0 0 -1 0 ] 0 1 1",
};

// A worldspawn holding one brush made of `faces`; the first face is on line 5.
std::string one_brush_map(const std::vector<std::string>& faces, const std::string& worldspawn_extra = "") {
  std::string text = "// entity 0\n{\n\"classname\" \"worldspawn\"\n{\n";
  for (const std::string& f : faces)
    text += f + "\n";
  return text + "}\n" + worldspawn_extra + "}\n";
}
constexpr std::uint64_t kFirstFaceLine = 5;

std::vector<std::string> box_faces(const char* const (&faces)[6]) {
  return {std::begin(faces), std::end(faces)};
}

void expect_tb_box(const LevelResult& r) {
  ASSERT_TRUE(r.ok()) << r.error.describe();
  ASSERT_EQ(r.level.brushes.size(), 1u);
  const Brush& b = r.level.brushes[0];
  EXPECT_TRUE(brush_contains(b, {0, 0, 0}));
  EXPECT_TRUE(brush_contains(b, {-63.5f, 63.5f, 15.5f}));
  EXPECT_TRUE(brush_contains(b, {63.9f, -63.9f, -15.9f}));
  for (const Vec3 outside : {Vec3{0, 0, 17}, Vec3{0, 0, -17}, Vec3{65, 0, 0}, Vec3{-65, 0, 0}, Vec3{0, 65, 0},
                             Vec3{0, -65, 0}, Vec3{64, 0, 0}, Vec3{0, 0, 16}}) {
    EXPECT_FALSE(brush_contains(b, outside)) << outside.x << " " << outside.y << " " << outside.z;
  }
  // Every plane is an exact axis with its outward side away from the box centre.
  for (const Plane& p : b.planes) {
    int axes = 0;
    for (int i = 0; i < 3; ++i)
      axes += p.normal[i] != 0;
    EXPECT_EQ(axes, 1);
    EXPECT_FLOAT_EQ(length(p.normal), 1.0f);
    EXPECT_GT(p.d, 0.0f);  // the centre (origin) is behind every plane
  }
  EXPECT_EQ(r.level.bounds.min, (Vec3{-64, -64, -16}));
  EXPECT_EQ(r.level.bounds.max, (Vec3{64, 64, 16}));
}

TEST(MapImport, PlaneFromThreePointsPointsOutOfTheBrushInStandardForm) {
  expect_tb_box(import_map(one_brush_map(box_faces(kStandardBoxFaces)), "box.map"));
}

TEST(MapImport, PlaneFromThreePointsPointsOutOfTheBrushInValveForm) {
  expect_tb_box(import_map(one_brush_map(box_faces(kValveBoxFaces), "\"mapversion\" \"220\"\n"), "box.map"));
}

TEST(MapImport, PlaneFromPointsIsTheEditorsCrossProduct) {
  // normal = normalize(cross(p0 - p1, p2 - p1)): for TrenchBroom's first face that is -x at x = -64.
  const auto p = plane_from_points({-64, -64, -16}, {-64, -63, -16}, {-64, -64, -15});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->normal, (Vec3d{-1, 0, 0}));
  EXPECT_EQ(p->d, 64.0);
  // Swapping two points flips it; collinear or non-finite points give no plane.
  const auto flipped = plane_from_points({-64, -64, -15}, {-64, -63, -16}, {-64, -64, -16});
  ASSERT_TRUE(flipped.has_value());
  EXPECT_EQ(flipped->normal, (Vec3d{1, 0, 0}));
  EXPECT_FALSE(plane_from_points({0, 0, 0}, {1, 1, 1}, {2, 2, 2}).has_value());
  EXPECT_FALSE(plane_from_points({0, 0, 0}, {0, 0, 0}, {2, 0, 0}).has_value());
  EXPECT_FALSE(plane_from_points({NAN, 0, 0}, {1, 0, 0}, {0, 1, 0}).has_value());
}

TEST(MapImport, ReversedWindingIsAnErrorNotAnInsideOutBrush) {
  std::vector<std::string> faces;
  for (const char* f : kStandardBoxFaces) {
    // Swap the first and third point of every face.
    std::istringstream in(f);
    std::string t[15];
    for (std::string& s : t)
      in >> s;
    std::string rest;
    std::getline(in, rest);
    faces.push_back("( " + t[11] + " " + t[12] + " " + t[13] + " ) ( " + t[6] + " " + t[7] + " " + t[8] +
                    " ) ( " + t[1] + " " + t[2] + " " + t[3] + " ) __TB_empty 0 0 0 1 1");
  }
  const LevelResult r = import_map(one_brush_map(faces), "flipped.map");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error.is_line);
  EXPECT_EQ(r.error.offset, kFirstFaceLine - 1);  // the brush's opening brace
  EXPECT_NE(r.error.what.find("no volume"), std::string::npos) << r.error.what;
}

TEST(MapImport, FortyFiveDegreeRampHasExactPlanes) {
  // Wedge rising along +x from (0, z = 0) to (128, z = 128), y in [0, 64]; written as the generator of
  // configs/levels writes it (Quake III standard form with flags).
  const std::vector<std::string> faces = {
      "( 0 0 0 ) ( 128 0 0 ) ( 0 64 0 ) common/caulk 0 0 0 0.5 0.5 0 0 0",           // bottom, -z
      "( 128 0 0 ) ( 128 0 128 ) ( 128 64 0 ) common/caulk 0 0 0 0.5 0.5 0 0 0",     // back, +x
      "( 128 64 0 ) ( 128 64 128 ) ( 0 64 0 ) common/caulk 0 0 0 0.5 0.5 0 0 0",     // side, +y
      "( 0 0 0 ) ( 128 0 128 ) ( 128 0 0 ) common/caulk 0 0 0 0.5 0.5 0 0 0",        // side, -y
      "( 0 0 0 ) ( 0 64 0 ) ( 128 0 128 ) base_floor/pjgrate2 0 0 0 0.5 0.5 0 0 0",  // slope
  };
  const LevelResult r = import_map(one_brush_map(faces), "ramp.map");
  ASSERT_TRUE(r.ok()) << r.error.describe();
  ASSERT_EQ(r.level.brushes.size(), 1u);
  const std::vector<Plane>& planes = r.level.brushes[0].planes;
  ASSERT_EQ(planes.size(), 5u);
  EXPECT_EQ(planes[0], (Plane{{0, 0, -1}, 0}));
  EXPECT_EQ(planes[1], (Plane{{1, 0, 0}, 128}));
  EXPECT_EQ(planes[2], (Plane{{0, 1, 0}, 64}));
  EXPECT_EQ(planes[3], (Plane{{0, -1, 0}, 0}));
  const float s = static_cast<float>(std::sqrt(0.5));
  EXPECT_EQ(planes[4].normal, (Vec3{-s, 0, s}));
  EXPECT_EQ(planes[4].d, 0.0f);
  // Just under and just over the slope, halfway up.
  EXPECT_TRUE(brush_contains(r.level.brushes[0], {64, 32, 63.9f}));
  EXPECT_FALSE(brush_contains(r.level.brushes[0], {64, 32, 64.1f}));
}

TEST(MapImport, ContentsFromTextureNamesAndExplicitFlags) {
  EXPECT_EQ(contents_for_texture("common/clip"), kContentsPlayerClip);
  EXPECT_EQ(contents_for_texture("CLIP"), kContentsPlayerClip);
  EXPECT_EQ(contents_for_texture("mymod/playerclip"), kContentsPlayerClip);
  EXPECT_EQ(contents_for_texture("common/monsterclip"), kContentsMonsterClip);
  EXPECT_EQ(contents_for_texture("common/trigger"), kContentsTrigger);
  EXPECT_EQ(contents_for_texture("*water1"), kContentsWater);
  EXPECT_EQ(contents_for_texture("*teleport"), kContentsWater);
  EXPECT_EQ(contents_for_texture("*lava1"), kContentsLava);
  EXPECT_EQ(contents_for_texture("*slime0"), kContentsSlime);
  EXPECT_EQ(contents_for_texture("common/watercaulk"), kContentsWater);
  EXPECT_EQ(contents_for_texture("sfx/fog_dark"), kContentsFog);
  for (const char* none : {"common/hint", "common/skip", "common/areaportal", "common/origin", "skip"}) {
    EXPECT_EQ(contents_for_texture(none), 0u) << none;
  }
  for (const char* solid : {"common/caulk", "common/nodraw", "sky1", "__TB_empty", "base_wall/c_met5_2"}) {
    EXPECT_EQ(contents_for_texture(solid), kContentsSolid) << solid;
  }
  // Explicit flags win over the name when the contents value is non-zero; "0 0 0" defers to the name.
  std::vector<std::string> faces;
  for (const char* f : kStandardBoxFaces)
    faces.push_back(std::string(f) + " 0 0 0");
  faces[0] = "( -64 -64 -16 ) ( -64 -63 -16 ) ( -64 -64 -15 ) base/wall 0 0 0 1 1 65536 16 0";
  LevelResult r = import_map(one_brush_map(faces), "flags.map");
  ASSERT_TRUE(r.ok()) << r.error.describe();
  ASSERT_EQ(r.level.brush_contents.size(), 1u);
  EXPECT_EQ(r.level.brush_contents[0], kContentsPlayerClip | kContentsSolid);
  EXPECT_EQ(r.level.brush_surface_flags[0], 16u);
  for (std::string& f : faces)
    f = f.substr(0, f.rfind(" 1 1 ")) + " 1 1 64 0 0";  // all fog
  r = import_map(one_brush_map(faces), "fog.map");
  ASSERT_TRUE(r.ok()) << r.error.describe();
  EXPECT_TRUE(r.level.brushes.empty());
  EXPECT_EQ(r.level.skipped_nonsolid, 1);
  EXPECT_EQ(r.level.source_brushes, 1);
}

// ---------------------------------------------------------------------------------------------------------
// The authored levels.

// Counts from a plain line scan, sharing nothing with the importer: editors put every brace on a line of its
// own, so brace lines give entity and brush boundaries.
struct TextCounts {
  int brushes = 0;  // every brush, any entity
  int patches = 0;
  int entity_brushes = 0;  // in entities other than worldspawn / func_group / func_detail
  int nonsolid = 0;        // static brushes whose every face is water, hint, skip, or flagged 64 (fog)
  int spawns = 0;
};

TextCounts count_text(const std::string& text) {
  TextCounts c;
  std::istringstream in(text);
  std::string line;
  int depth = 0;
  std::string classname;
  std::vector<std::string> brush_lines;
  while (std::getline(in, line)) {
    if (line.starts_with("//")) continue;
    if (line == "{") {
      if (++depth == 2) brush_lines.clear();
      continue;
    }
    if (line == "}") {
      if (depth == 2) {
        const bool is_static = classname == "worldspawn" || classname == "func_group";
        if (!brush_lines.empty() && brush_lines[0] == "patchDef2") {
          ++c.patches;
        } else {
          ++c.brushes;
          bool nonsolid = true;
          for (const std::string& f : brush_lines) {
            nonsolid = nonsolid && (f.find(" liquids/pool_water ") != std::string::npos ||
                                    f.find(" common/hint ") != std::string::npos ||
                                    f.find(" common/skip ") != std::string::npos || f.ends_with(" 64 0 0"));
          }
          if (!is_static) ++c.entity_brushes;
          if (is_static && nonsolid) ++c.nonsolid;
        }
      }
      if (depth == 1 && (classname == "info_player_deathmatch" || classname == "info_player_start")) {
        ++c.spawns;
      }
      --depth;
      continue;
    }
    if (depth == 1 && line.starts_with("\"classname\" \"")) classname = line.substr(13, line.size() - 14);
    if (depth == 2) brush_lines.push_back(line);
  }
  return c;
}

struct LevelCase {
  const char* file;
  int kept;
  int nonsolid;
  int entity_brushes;
  int patches;
  int spawns;
};

class AuthoredLevel : public ::testing::TestWithParam<LevelCase> {};

TEST_P(AuthoredLevel, ImportsWithTheCountsOfItsText) {
  const LevelCase& want = GetParam();
  const std::string path = source_path(want.file);
  const std::string text = read_text(path);
  MapImportStats stats;
  const LevelResult r = import_map_file(path, &stats);
  ASSERT_TRUE(r.ok()) << r.error.describe();
  const Level& level = r.level;
  const TextCounts counted = count_text(text);

  EXPECT_EQ(level.source_brushes, counted.brushes);
  EXPECT_EQ(stats.skipped_patches, counted.patches);
  EXPECT_EQ(stats.skipped_entity_brushes, counted.entity_brushes);
  EXPECT_EQ(level.skipped_nonsolid, counted.nonsolid);
  EXPECT_EQ(int(level.spawns.size()), counted.spawns);
  EXPECT_EQ(int(level.brushes.size()), counted.brushes - counted.entity_brushes - counted.nonsolid);
  // And the numbers the level was authored with, in case the scan and the importer agree on a mistake.
  EXPECT_EQ(int(level.brushes.size()), want.kept);
  EXPECT_EQ(level.skipped_nonsolid, want.nonsolid);
  EXPECT_EQ(stats.skipped_entity_brushes, want.entity_brushes);
  EXPECT_EQ(stats.skipped_patches, want.patches);
  EXPECT_EQ(int(level.spawns.size()), want.spawns);
  EXPECT_EQ(stats.skipped_brushdef3, 0);

  EXPECT_EQ(level.brush_contents.size(), level.brushes.size());
  EXPECT_EQ(level.brush_surface_flags.size(), level.brushes.size());
  EXPECT_EQ(level.source_hash, fnv1a64(text.data(), text.size()));
  EXPECT_EQ(level.name, path);
  for (std::uint32_t contents : level.brush_contents)
    EXPECT_NE(contents & kContentsPlayerSolid, 0u);
  EXPECT_FALSE(level.bounds.empty());
}

TEST_P(AuthoredLevel, BspAgreesWithBruteForceOnRandomPoints) {
  const LevelResult r = import_map_file(source_path(GetParam().file));
  ASSERT_TRUE(r.ok()) << r.error.describe();
  const Level& level = r.level;
  const BspBuildResult built = build_bsp(level.brushes, {});
  ASSERT_EQ(built.error, BspBuildError::kNone);
  EXPECT_EQ(built.stats.brushes_empty, 0);

  constexpr int kPoints = 100000;
  constexpr double kNearPlane = 1e-3;  // points this close to a plane are float-rounding coin flips
  std::mt19937 rng(20240611);
  const Vec3 lo = level.bounds.min - Vec3{32, 32, 32};
  const Vec3 hi = level.bounds.max + Vec3{32, 32, 32};
  UniformReal<float> ux(lo.x, hi.x), uy(lo.y, hi.y), uz(lo.z, hi.z);
  int tested = 0, solid = 0;
  for (int i = 0; i < kPoints; ++i) {
    const Vec3 p{ux(rng), uy(rng), uz(rng)};
    bool near = false;
    bool inside = false;
    for (const Brush& b : level.brushes) {
      for (const Plane& plane : b.planes)
        near = near || std::fabs(to_double(plane).distance(to_double(p))) < kNearPlane;
      inside = inside || brush_contains(b, p);
    }
    if (near) continue;
    ++tested;
    solid += inside;
    const std::int32_t hit = built.tree.point_brush(p);
    ASSERT_EQ(hit != kNoBrush, inside) << "at " << p.x << " " << p.y << " " << p.z;
    if (hit != kNoBrush) {
      ASSERT_TRUE(brush_contains(level.brushes[std::size_t(hit)], p));
    }
  }
  EXPECT_GT(tested, kPoints * 9 / 10);
  EXPECT_GT(solid, 100);  // the sample reaches solid, not only the open room
}

TEST_P(AuthoredLevel, EverySpawnIsFreeForThePlayerAndStandsOnGround) {
  constexpr float kRadius = 15, kHeight = 56, kOriginAboveFeet = 24, kGroundProbe = 64;
  constexpr float kMinWalkNormalZ = 0.7f;
  const LevelResult r = import_map_file(source_path(GetParam().file));
  ASSERT_TRUE(r.ok()) << r.error.describe();
  const Level& level = r.level;
  const BspBuildResult built = build_bsp(level.brushes, {});
  ASSERT_EQ(built.error, BspBuildError::kNone);
  const BrushOracle oracle(level.brushes);
  const Shape player = Shape::cylinder(kRadius, kHeight);
  ASSERT_FALSE(level.spawns.empty());
  for (const SpawnPoint& s : level.spawns) {
    const Vec3 feet = s.origin - Vec3{0, 0, kOriginAboveFeet};
    SCOPED_TRACE(s.classname + " at " + std::to_string(s.origin.x) + " " + std::to_string(s.origin.y) + " " +
                 std::to_string(s.origin.z));
    // Exactly on the ground, against the exact oracle: touching, not overlapping.
    EXPECT_EQ(oracle.cylinder_overlaps(kRadius, kHeight, to_double(feet)), kNoBrush);
    EXPECT_GT(oracle.cylinder_gap(kRadius, kHeight, to_double(feet) + Vec3d{0, 0, 1}), 0.0);
    // The BSP is asked at the pose a resting player actually has, kSurfaceBackoff above the ground (see
    // BspSeesAPlayerExactlyOnTheFloorAsTouching for the exact pose).
    const Vec3 resting = feet + Vec3{0, 0, kSurfaceBackoff};
    EXPECT_FALSE(built.tree.overlap(player, resting).overlap);
    const TraceResult down = built.tree.trace(player, resting, resting - Vec3{0, 0, kGroundProbe});
    EXPECT_TRUE(down.hit);
    EXPECT_FALSE(down.start_solid);
    EXPECT_GT(down.normal.z, kMinWalkNormalZ);
    EXPECT_LT(down.fraction * kGroundProbe, 1.0f);  // standing on it, not dropping onto it
    // Head room: the player can stand up and jump a little.
    EXPECT_FALSE(built.tree.trace(player, resting, resting + Vec3{0, 0, 32}).hit);
  }
}

// Found by this importer's levels: a stair's bottom face at z = 0 chosen as a splitter faces down, with the
// floor in front of it, and the BSP once sent points exactly on it to the (solid) front side, so a player
// standing exactly on the floor overlapped it. Fixed in collision/ (points lying in a splitter are solid
// only where both sides are; splitters face away from the brushes whose faces lie on them).
TEST(MapImport, BspSeesAPlayerExactlyOnTheFloorAsTouching) {
  const LevelResult r = import_map_file(source_path("configs/levels/arena.map"));
  ASSERT_TRUE(r.ok()) << r.error.describe();
  const BspBuildResult built = build_bsp(r.level.brushes, {});
  ASSERT_EQ(built.error, BspBuildError::kNone);
  EXPECT_EQ(built.tree.point_brush({-767.5f, 0.5f, 0}), kNoBrush);
  EXPECT_FALSE(built.tree.overlap(Shape::cylinder(15, 56), {-768, 0, 0}).overlap);
}

INSTANTIATE_TEST_SUITE_P(ConfigLevels, AuthoredLevel,
                         ::testing::Values(LevelCase{"configs/levels/arena.map", 24, 3, 2, 1, 6},
                                           LevelCase{"configs/levels/valve220_room.map", 13, 0, 1, 0, 2}),
                         [](const ::testing::TestParamInfo<LevelCase>& info) {
                           return std::string(info.index == 0 ? "Arena" : "Valve220Room");
                         });

TEST(MapImport, ArenaDetails) {
  const LevelResult r = import_map_file(source_path("configs/levels/arena.map"));
  ASSERT_TRUE(r.ok()) << r.error.describe();
  const Level& level = r.level;
  EXPECT_EQ(level.bounds.min, (Vec3{-1040, -1040, -16}));
  EXPECT_EQ(level.bounds.max, (Vec3{1040, 1040, 528}));
  int clips = 0, sky = 0;
  for (std::size_t i = 0; i < level.brushes.size(); ++i) {
    clips += level.brush_contents[i] == kContentsPlayerClip;
    sky += level.brush_surface_flags[i] == 4;  // the ceiling's SURF_SKY face
  }
  EXPECT_EQ(clips, 1);
  EXPECT_EQ(sky, 1);
  int deathmatch = 0;
  for (const SpawnPoint& s : level.spawns)
    deathmatch += s.classname == "info_player_deathmatch";
  EXPECT_GE(deathmatch, 4);
  EXPECT_EQ(level.spawns[1].yaw_degrees, 135.0f);
}

// ---------------------------------------------------------------------------------------------------------
// Malformed input.

void expect_error_at(const std::string& text, std::uint64_t line, const std::string& what_part) {
  SCOPED_TRACE(text);
  const LevelResult r = import_map(text, "bad.map");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error.is_line);
  EXPECT_EQ(r.error.file, "bad.map");
  EXPECT_EQ(r.error.offset, line) << r.error.describe();
  EXPECT_NE(r.error.what.find(what_part), std::string::npos) << r.error.describe();
}

// The TrenchBroom box with face `index` replaced.
std::string box_with_face(int index, const std::string& face) {
  std::vector<std::string> faces = box_faces(kStandardBoxFaces);
  faces[std::size_t(index)] = face;
  return one_brush_map(faces);
}

TEST(MapImportErrors, UnterminatedBraces) {
  // The brush opened on line 4 is never closed.
  std::string text = one_brush_map(box_faces(kStandardBoxFaces));
  text = text.substr(0, text.find("}\n}\n"));
  expect_error_at(text, 4, "never closed");
  // The entity opened on line 2 is never closed.
  expect_error_at("// entity 0\n{\n\"classname\" \"worldspawn\"\n", 2, "never closed");
  // A stray closing brace at the top level.
  expect_error_at("{\n\"classname\" \"worldspawn\"\n}\n}\n", 4, "expected '{'");
}

TEST(MapImportErrors, BadFaces) {
  const std::uint64_t line = kFirstFaceLine + 2;
  expect_error_at(box_with_face(2, "( -64 -64 -16 ) ( -63 x -16 ) ( -64 -63 -16 ) t 0 0 0 1 1"), line,
                  "bad number 'x'");
  expect_error_at(box_with_face(2, "( -64 -64 -16 ) ( -63 -64 -16 ( -64 -63 -16 ) t 0 0 0 1 1"), line,
                  "expected ')'");
  expect_error_at(box_with_face(2, "( -64 -64 -16 ) ( -63 -64 -16 ) t 0 0 0 1 1"), line, "expected '('");
  expect_error_at(box_with_face(2, "( 0 0 0 ) ( 1 1 1 ) ( 2 2 2 ) t 0 0 0 1 1"), line, "collinear");
  expect_error_at(box_with_face(2, "( -64 -64 -16 ) ( -63 -64 -16 ) ( -64 -63 -16 ) t 0 0 0 1"), line + 1,
                  "expected a number");  // the '(' of the next face is where the number was missing
  expect_error_at(box_with_face(2, "( -64 -64 -16 ) ( -63 -64 -16 ) ( -64 -63 -16 ) t 0 0 0 1 1 5"), line + 1,
                  "expected an integer flag");
  expect_error_at(box_with_face(2, "( -64 -64 -16 ) ( -63 -64 -16 ) ( -64 -63 -16 ) t [ 1 0 0 0 ] 0 1 1"),
                  line, "expected '['");
  expect_error_at(box_with_face(2, "( -64 -64 -16 ) ( -63 -64 -16 ) ( -64 -63 -16 ) ( 0 0 0 1 1"), line,
                  "expected a texture name");
}

TEST(MapImportErrors, NonFiniteAndHugeNumbers) {
  const std::uint64_t line = kFirstFaceLine + 1;
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "infinity"}) {
    expect_error_at(
        box_with_face(1, std::string("( -64 -64 -16 ) ( -64 -64 -15 ) ( -63 ") + bad + " -16 ) t 0 0 0 1 1"),
        line, "not finite");
  }
  expect_error_at(box_with_face(1, "( -64 -64 -16 ) ( -64 -64 -15 ) ( -63 -64 1e400 ) t 0 0 0 1 1"), line,
                  "out of range");
  expect_error_at(box_with_face(1, "( -64 -64 -16 ) ( -64 -64 -15 ) ( -63 -64 1e30 ) t 0 0 0 1 1"), line,
                  "outside the world");
  expect_error_at(box_with_face(1, "( -64 -64 -16 ) ( -64 -64 -15 ) ( -63 -64 -16 ) t nan 0 0 1 1"), line,
                  "not finite");
  expect_error_at(
      box_with_face(1, "( -64 -64 -16 ) ( -64 -64 -15 ) ( -63 -64 -16 ) t 0 0 0 1 1 1 99999999999 0"), line,
      "32 bits");
}

TEST(MapImportErrors, DegenerateBrushesNameTheBrushLine) {
  // Three faces cannot close a brush.
  std::vector<std::string> faces = box_faces(kStandardBoxFaces);
  faces.resize(3);
  expect_error_at(one_brush_map(faces), kFirstFaceLine - 1, "at least 4");
  // Five faces leave it open towards +x.
  faces = box_faces(kStandardBoxFaces);
  faces.erase(faces.begin() + 5);
  expect_error_at(one_brush_map(faces), kFirstFaceLine - 1, "not closed");
  // Two opposite faces that exclude each other: the top below the bottom.
  faces = box_faces(kStandardBoxFaces);
  faces[3] = "( 64 64 -20 ) ( 64 65 -20 ) ( 65 64 -20 ) t 0 0 0 1 1";
  expect_error_at(one_brush_map(faces), kFirstFaceLine - 1, "no volume");
  // A degenerate brush in a skipped entity is still an error: the file is broken.
  const std::string door =
      "{\n\"classname\" \"func_door\"\n{\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) t 0 0 0 1 1\n}\n}\n";
  expect_error_at(one_brush_map(box_faces(kStandardBoxFaces)) + door, 15, "at least 4");
}

TEST(MapImportErrors, EntitiesAndStrings) {
  expect_error_at("{\n\"classname\" \"worldspawn\n}\n", 2, "unterminated string");
  expect_error_at("{\n\"classname\" \"worldspawn\"\n\"message\"\n}\n", 3, "has no value");
  const std::string world = "{\n\"classname\" \"worldspawn\"\n}\n";  // lines 1-3
  expect_error_at(world + "{\n\"classname\" \"info_player_deathmatch\"\n\"origin\" \"0 0\"\n}\n", 6,
                  "origin");
  expect_error_at(world + "{\n\"classname\" \"info_player_deathmatch\"\n\"origin\" \"0 0 nan\"\n}\n", 6,
                  "origin");
  expect_error_at(world + "{\n\"classname\" \"info_player_start\"\n}\n", 4, "no \"origin\"");
  expect_error_at(
      world + "{\n\"classname\" \"team_CTF_redspawn\"\n\"origin\" \"1 2 3\"\n\"angle\" \"east\"\n}\n", 7,
      "angle");
  expect_error_at("garbage\n", 1, "expected '{'");
}

TEST(MapImport, SkipsPatchesAndBrushDef3AndReadsBrushPrimitives) {
  const std::string text =
      "{\n\"classname\" \"worldspawn\"\n"
      "{\nbrushDef\n{\n"
      "( -64 -64 -16 ) ( -64 -63 -16 ) ( -64 -64 -15 ) ( ( 0.03125 0 0 ) ( 0 0.03125 0 ) ) common/caulk 0 0 "
      "0\n"
      "( -64 -64 -16 ) ( -64 -64 -15 ) ( -63 -64 -16 ) ( ( 0.03125 0 0 ) ( 0 0.03125 0 ) ) common/caulk 0 0 "
      "0\n"
      "( -64 -64 -16 ) ( -63 -64 -16 ) ( -64 -63 -16 ) ( ( 0.03125 0 0 ) ( 0 0.03125 0 ) ) common/caulk 0 0 "
      "0\n"
      "( 64 64 16 ) ( 64 65 16 ) ( 65 64 16 ) ( ( 0.03125 0 0 ) ( 0 0.03125 0 ) ) common/caulk 0 0 0\n"
      "( 64 64 16 ) ( 65 64 16 ) ( 64 64 17 ) ( ( 0.03125 0 0 ) ( 0 0.03125 0 ) ) common/caulk 0 0 0\n"
      "( 64 64 16 ) ( 64 64 17 ) ( 64 65 16 ) ( ( 0.03125 0 0 ) ( 0 0.03125 0 ) ) common/caulk 0 0 0\n"
      "}\n}\n"
      "{\npatchDef2\n{\nbase/metal\n( 3 3 0 0 0 )\n(\n"
      "( ( 0 0 0 0 0 ) ( 0 0 64 0 1 ) ( 64 0 64 1 1 ) )\n"
      "( ( 0 8 0 0 0 ) ( 0 8 64 0 1 ) ( 64 8 64 1 1 ) )\n"
      "( ( 0 16 0 0 0 ) ( 0 16 64 0 1 ) ( 64 16 64 1 1 ) )\n"
      ")\n}\n}\n"
      "{\nbrushDef3\n{\n( 0 0 -1 0 ) ( ( 0.03125 0 0 ) ( 0 0.03125 0 ) ) \"textures/common/caulk\" 0 0 "
      "0\n}\n}\n"
      "}\n";
  MapImportStats stats;
  const LevelResult r = import_map(text, "mixed.map", &stats);
  ASSERT_TRUE(r.ok()) << r.error.describe();
  EXPECT_EQ(r.level.brushes.size(), 1u);
  EXPECT_EQ(r.level.source_brushes, 2);
  EXPECT_EQ(stats.skipped_patches, 1);
  EXPECT_EQ(stats.skipped_brushdef3, 1);
  EXPECT_TRUE(brush_contains(r.level.brushes[0], {0, 0, 0}));
  EXPECT_FALSE(brush_contains(r.level.brushes[0], {0, 0, 17}));
  // An unterminated patch names the line its brush opened on.
  expect_error_at(text.substr(0, text.find("( ( 0 16")), 14, "never closed");
}

int line_count(const std::string& text) {
  return 1 + int(std::count(text.begin(), text.end(), '\n'));
}

TEST(MapImportErrors, TruncatedFilesFailOnALineOfTheTextOrParseCleanly) {
  constexpr std::size_t kStride = 97;
  for (const char* file : {"configs/levels/arena.map", "configs/levels/valve220_room.map"}) {
    const std::string text = read_text(source_path(file));
    int failures = 0;
    for (std::size_t cut = 0; cut < text.size(); cut += kStride) {
      const std::string part = text.substr(0, cut);
      const LevelResult r = import_map(part, file);
      if (r.ok()) continue;  // cut between entities, or inside a comment after the last one
      ++failures;
      EXPECT_TRUE(r.error.is_line);
      EXPECT_GE(r.error.offset, 1u);
      EXPECT_LE(r.error.offset, std::uint64_t(line_count(part))) << cut << ": " << r.error.describe();
    }
    EXPECT_GT(failures, int(text.size() / kStride) / 2) << file;
  }
}

TEST(MapImportErrors, RandomByteDamageNeverCrashes) {
  const std::string text = read_text(source_path("configs/levels/arena.map"));
  std::mt19937 rng(7);
  UniformInt<std::size_t> where(0, text.size() - 1);
  UniformInt<int> byte(0, 255);
  const char kTokens[] = "{}()[]\"/ \n0-.e";
  UniformInt<std::size_t> token(0, sizeof(kTokens) - 2);
  for (int i = 0; i < 2000; ++i) {
    std::string damaged = text;
    for (int k = 0; k < 1 + i % 3; ++k) {
      damaged[where(rng)] = i % 2 ? char(byte(rng)) : kTokens[token(rng)];
    }
    const LevelResult r = import_map(damaged, "damaged.map");
    if (!r.ok()) {
      EXPECT_GE(r.error.offset, 1u);
      EXPECT_LE(r.error.offset, std::uint64_t(line_count(damaged)));
    }
  }
}

TEST(MapImportErrors, MissingFileIsAnErrorValue) {
  const LevelResult r = import_map_file(source_path("configs/levels/no_such_level.map"));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.describe().find("no_such_level.map"), std::string::npos);
}

}  // namespace
}  // namespace shiftcast
