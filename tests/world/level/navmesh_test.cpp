// Navmesh build and queries on a level made in code (floor, a wall with a gap, a 45-degree ramp to a
// platform, a pillar, a closed room), checked against the collision BSP as the independent oracle: path
// corners and random points stand on ground the BSP finds under them and are not in solid. Then the
// procedural level, corrupt navmesh data, several threads sharing one mesh, and the Recast demo meshes.
#include <DetourNavMesh.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "collision/bsp_build.hpp"
#include "world/level/navmesh.hpp"
#include "world/level/obj_import.hpp"
#include "world/level/procedural_level.hpp"

namespace shiftcast {
namespace {

const NavmeshSettings kSettings{};

// A path corner counts as standing on ground when a ray cast down from kGroundProbeLift above it meets
// solid within kGroundProbeLength (8 units below the corner).
constexpr float kGroundProbeLift = 32.0f;
constexpr float kGroundProbeLength = 40.0f;
// Random points take their height from Recast's detail mesh, which approximates the voxels: on a
// 45-degree ramp the voxel tops are cell_size above the lowest point of their cell, and on stairs the
// detail surface bridges steps up to agent_climb. Measured on the procedural level: up to 13.4 units
// above and 11.3 below the brush surface. So a random point is on ground within one step either way.
const float kDetailHeightTolerance = kSettings.agent_climb;

Brush ramp45(float x0, float x1, float y0, float y1) {
  // The plane z = x − x0 rising to +x, on a base at z = 0.
  const float s = std::sqrt(0.5f);
  Brush b;
  b.planes = {{{-s, 0, s}, -x0 * s}, {{0, 0, -1}, 0}, {{1, 0, 0}, x1}, {{0, 1, 0}, y1}, {{0, -1, 0}, -y0}};
  return b;
}

// The test arena. Floor top at z = 0.
//   wall     x ∈ [−8, 8], y ∈ [−1024, 512], 128 high: the only way across is the gap at y > 512
//   ramp     45 degrees from x = 256 to 384 (y ∈ [−800, −672]) up to a platform 128 high at x ∈ [384, 640]
//   block    192 × 192 × 128 at (−512, 512): big enough that the floor under it would be a region
//   room     closed box around [−800, −500]², walls and roof 16 thick: a sealed island inside
Level make_arena() {
  Level level;
  level.name = "arena";
  level.brushes = {
      brush_from_box({-1024, -1024, -16}, {1024, 1024, 0}),
      brush_from_box({-8, -1024, 0}, {8, 512, 128}),
      ramp45(256, 384, -800, -672),
      brush_from_box({384, -800, 0}, {640, -544, 128}),
      brush_from_box({-608, 416, 0}, {-416, 608, 128}),
      brush_from_box({-816, -816, 0}, {-484, -800, 160}),
      brush_from_box({-816, -500, 0}, {-484, -484, 160}),
      brush_from_box({-816, -800, 0}, {-800, -500, 160}),
      brush_from_box({-500, -800, 0}, {-484, -500, 160}),
      brush_from_box({-816, -816, 160}, {-484, -484, 176}),
  };
  level.brush_contents.assign(level.brushes.size(), kContentsSolid);
  level.brush_surface_flags.assign(level.brushes.size(), 0);
  compute_level_bounds(level);
  return level;
}

struct Built {
  Level level;
  BspTree tree;
  NavmeshBuild build;
  std::unique_ptr<NavMesh> mesh;
};

Built build_all(Level level) {
  Built b;
  b.level = std::move(level);
  BspBuildResult bsp = build_bsp(b.level.brushes, {});
  EXPECT_EQ(bsp.error, BspBuildError::kNone);
  b.tree = std::move(bsp.tree);
  b.build = build_navmesh(b.level, kSettings);
  EXPECT_TRUE(b.build.ok()) << b.build.error;
  std::printf("[ navmesh ] %s: %d polygons, %d vertices, grid %d x %d, %.1f ms\n", b.level.name.c_str(),
              b.build.polygons, b.build.vertices, b.build.grid_width, b.build.grid_height, b.build.build_ms);
  std::string error;
  b.mesh = NavMesh::from_data(b.build.data, &error);
  EXPECT_NE(b.mesh, nullptr) << error;
  return b;
}

const Built& arena() {
  static const Built built = build_all(make_arena());
  return built;
}

const Built& procedural() {
  static const Built built = [] {
    const ProceduralLevel p = make_procedural_level({.seed = 3, .target_brushes = 60});
    Level level;
    level.name = "procedural seed 3";
    level.brushes = p.brushes;
    level.brush_contents.assign(level.brushes.size(), kContentsSolid);
    level.brush_surface_flags.assign(level.brushes.size(), 0);
    compute_level_bounds(level);
    return build_all(std::move(level));
  }();
  return built;
}

bool on_ground(const BspTree& tree, Vec3 p, float probe_length = kGroundProbeLength) {
  const TraceResult down = tree.raycast(p + Vec3{0, 0, kGroundProbeLift}, {0, 0, -1}, probe_length);
  return down.hit && !down.start_solid;
}

// Standing there is possible: the point, lifted by `lift`, is not inside any brush.
bool in_empty_space(const BspTree& tree, Vec3 p, float lift = 1) {
  return tree.point_brush(p + Vec3{0, 0, lift}) == kNoBrush;
}

TEST(Navmesh, ArenaBuilds) {
  const Built& a = arena();
  ASSERT_TRUE(a.build.ok());
  ASSERT_NE(a.mesh, nullptr);
  EXPECT_GT(a.build.polygons, 0);
  EXPECT_EQ(a.mesh->polygon_count(), a.build.polygons);
  RecordProperty("polygons", a.build.polygons);
}

TEST(Navmesh, NearestPointAboveTheFloorIsOnTheFloor) {
  const Built& a = arena();
  ASSERT_NE(a.mesh, nullptr);
  NavQuery query(*a.mesh);
  ASSERT_TRUE(query.ok());
  for (const Vec3 p : {Vec3{-300, 100, 40}, Vec3{600, 300, 90}, Vec3{200, -300, 10}}) {
    const std::optional<Vec3> q = query.nearest_point(p);
    ASSERT_TRUE(q.has_value()) << p.x << " " << p.y;
    EXPECT_NEAR(q->z, 0.0f, kSettings.cell_height);
    EXPECT_NEAR(q->x, p.x, 1e-2f);
    EXPECT_NEAR(q->y, p.y, 1e-2f);
  }
  // On the platform, 128 up.
  const std::optional<Vec3> top = query.nearest_point({512, -672, 150});
  ASSERT_TRUE(top.has_value());
  EXPECT_NEAR(top->z, 128.0f, kSettings.cell_height);
  // Nothing within the box: far above the arena, or outside it.
  EXPECT_FALSE(query.nearest_point({0, -300, 600}).has_value());
  EXPECT_FALSE(query.nearest_point({5000, 0, 0}).has_value());
  EXPECT_FALSE(query.nearest_point({NAN, 0, 0}).has_value());
  EXPECT_FALSE(query.nearest_point({0, 0, 0}, {INFINITY, 1, 1}).has_value());
  // At the arena's minimum corner, where Detour's unused last BV node would match polygon 0.
  EXPECT_FALSE(query.nearest_point(a.level.bounds.min - Vec3{200, 200, 200}, {1, 1, 1}).has_value());
}

TEST(Navmesh, NoNavmeshInsideSolidBrushes) {
  const Built& a = arena();
  ASSERT_NE(a.mesh, nullptr);
  NavQuery query(*a.mesh);
  // Under the block and inside the wall: Recast voxelises surfaces only and would leave the floor under
  // the block as a sealed island.
  EXPECT_FALSE(query.nearest_point({-512, 512, 4}, {48, 48, 16}).has_value());
  EXPECT_FALSE(query.nearest_point({0, -500, 4}, {4, 24, 16}).has_value());
}

TEST(Navmesh, PathAroundTheWallStandsOnGround) {
  const Built& a = arena();
  ASSERT_NE(a.mesh, nullptr);
  NavQuery query(*a.mesh);
  const Vec3 from{-512, 0, 0};
  const Vec3 to{512, 0, 0};
  std::vector<Vec3> path;
  ASSERT_TRUE(query.find_path(from, to, path));
  ASSERT_GE(path.size(), 3u);  // it must bend through the gap
  EXPECT_LT(length(path.front() - from), 2 * kSettings.cell_height);
  EXPECT_LT(length(path.back() - to), 2 * kSettings.cell_height);
  float travelled = 0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const Vec3 c = path[i];
    EXPECT_TRUE(on_ground(a.tree, c)) << "corner " << i << " at " << c.x << " " << c.y << " " << c.z;
    EXPECT_TRUE(in_empty_space(a.tree, c)) << "corner " << i;
    // Corners keep the agent's radius from the wall.
    if (c.y < 512) {
      EXPECT_GE(std::fabs(c.x), 8 + kSettings.agent_radius - 1) << "corner " << i;
    }
    if (i > 0) travelled += length(path[i] - path[i - 1]);
  }
  EXPECT_GT(travelled, 2 * std::sqrt(512.0f * 512 + 512.0f * 512) - 32);
}

TEST(Navmesh, PathUpTheRampReachesThePlatform) {
  const Built& a = arena();
  ASSERT_NE(a.mesh, nullptr);
  NavQuery query(*a.mesh);
  std::vector<Vec3> path;
  ASSERT_TRUE(query.find_path({150, -736, 0}, {560, -640, 128}, path));
  EXPECT_NEAR(path.back().z, 128.0f, kSettings.cell_height);
  for (const Vec3 c : path)
    EXPECT_TRUE(on_ground(a.tree, c)) << c.x << " " << c.y << " " << c.z;
}

TEST(Navmesh, NoPathIntoAClosedRoom) {
  const Built& a = arena();
  ASSERT_NE(a.mesh, nullptr);
  NavQuery query(*a.mesh);
  const Vec3 inside{-650, -650, 0};
  const Vec3 inside2{-600, -700, 0};
  ASSERT_TRUE(query.nearest_point(inside).has_value());  // the room's floor is an island of its own
  std::vector<Vec3> path{{1, 2, 3}};
  EXPECT_FALSE(query.find_path({-300, -300, 0}, inside, path));
  EXPECT_TRUE(path.empty());
  EXPECT_FALSE(query.find_path(inside, {-300, -300, 0}, path));
  EXPECT_TRUE(query.find_path(inside, inside2, path));
}

void expect_random_points_on_ground(const Built& b, std::uint32_t seed, int count) {
  NavQuery query(*b.mesh);
  std::uint32_t rng = seed;
  for (int i = 0; i < count; ++i) {
    const std::optional<Vec3> p = query.random_point(rng);
    ASSERT_TRUE(p.has_value());
    // On the navmesh: its own nearest navmesh point, up to the flat polygon vs detail height.
    const std::optional<Vec3> back = query.nearest_point(*p, {1, 1, 2 * kSettings.cell_height});
    ASSERT_TRUE(back.has_value()) << i;
    EXPECT_LT(length(*back - *p), kSettings.cell_height) << i;
    EXPECT_TRUE(on_ground(b.tree, *p, kGroundProbeLift + kDetailHeightTolerance))
        << i << ": " << p->x << " " << p->y << " " << p->z;
    EXPECT_TRUE(in_empty_space(b.tree, *p, kDetailHeightTolerance))
        << i << ": " << p->x << " " << p->y << " " << p->z;
  }
}

TEST(Navmesh, RandomPointsAreOnGroundAndDeterministic) {
  const Built& a = arena();
  ASSERT_NE(a.mesh, nullptr);
  expect_random_points_on_ground(a, 12345, 500);

  NavQuery q1(*a.mesh);
  NavQuery q2(*a.mesh);
  std::uint32_t s1 = 99;
  std::uint32_t s2 = 99;
  std::uint32_t s3 = 100;
  int differ = 0;
  for (int i = 0; i < 50; ++i) {
    const std::optional<Vec3> a1 = q1.random_point(s1);
    const std::optional<Vec3> a2 = q2.random_point(s2);
    const std::optional<Vec3> a3 = q2.random_point(s3);
    ASSERT_TRUE(a1 && a2 && a3);
    EXPECT_EQ(*a1, *a2);
    if (!(*a1 == *a3)) ++differ;
  }
  EXPECT_EQ(s1, s2);
  EXPECT_GT(differ, 45);
}

TEST(Navmesh, ProceduralLevel) {
  const Built& p = procedural();
  ASSERT_TRUE(p.build.ok());
  ASSERT_NE(p.mesh, nullptr);
  EXPECT_GT(p.build.polygons, 0);
  expect_random_points_on_ground(p, 3, 300);
  // Paths between random points: when one exists, every corner stands on ground.
  NavQuery query(*p.mesh);
  std::uint32_t rng = 17;
  int found = 0;
  std::vector<Vec3> path;
  for (int i = 0; i < 50; ++i) {
    const std::optional<Vec3> a = query.random_point(rng);
    const std::optional<Vec3> b = query.random_point(rng);
    ASSERT_TRUE(a && b);
    if (!query.find_path(*a, *b, path)) continue;
    ++found;
    for (const Vec3 c : path)
      EXPECT_TRUE(on_ground(p.tree, c)) << c.x << " " << c.y << " " << c.z;
  }
  EXPECT_GT(found, 25);  // the arena floor is mostly one connected region
}

TEST(Navmesh, SharedMeshAnswersTheSameOnEveryThread) {
  const Built& a = arena();
  ASSERT_NE(a.mesh, nullptr);
  const auto run = [&](std::vector<Vec3>& out) {
    NavQuery query(*a.mesh);
    std::uint32_t rng = 5;
    std::vector<Vec3> path;
    for (int i = 0; i < 100; ++i) {
      const std::optional<Vec3> p = query.random_point(rng);
      const std::optional<Vec3> q = query.random_point(rng);
      if (p && q && query.find_path(*p, *q, path)) out.insert(out.end(), path.begin(), path.end());
    }
  };
  std::vector<Vec3> reference;
  run(reference);
  ASSERT_FALSE(reference.empty());
  std::vector<std::vector<Vec3>> results(4);
  std::vector<std::thread> threads;
  for (auto& r : results)
    threads.emplace_back([&run, &r] { run(r); });
  for (std::thread& t : threads)
    t.join();
  for (const auto& r : results)
    EXPECT_EQ(r, reference);
}

TEST(Navmesh, CorruptDataIsRejectedNotCrashedOn) {
  const Built& a = arena();
  ASSERT_TRUE(a.build.ok());
  const std::vector<std::uint8_t>& good = a.build.data;
  std::string error;

  for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(16), std::size_t(99),
                              good.size() / 2, good.size() - 4, good.size() - 1}) {
    error.clear();
    std::vector<std::uint8_t> cut(good.begin(), good.begin() + std::ptrdiff_t(n));
    EXPECT_EQ(NavMesh::from_data(cut, &error), nullptr) << n;
    EXPECT_FALSE(error.empty()) << n;
  }
  std::vector<std::uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_EQ(NavMesh::from_data(longer, &error), nullptr);

  // Targeted: magic, a count, and fields Detour would follow out of bounds.
  const auto patched = [&](std::size_t offset, const void* bytes, std::size_t size) {
    std::vector<std::uint8_t> d = good;
    std::memcpy(d.data() + offset, bytes, size);
    return d;
  };
  const std::uint32_t junk = 0xdeadbeef;
  EXPECT_EQ(NavMesh::from_data(patched(0, &junk, 4), &error), nullptr);
  EXPECT_NE(error.find("magic"), std::string::npos) << error;
  const int zero = 0;
  EXPECT_EQ(NavMesh::from_data(patched(offsetof(dtMeshHeader, maxLinkCount), &zero, 4), &error), nullptr);
  const int huge = 1 << 30;
  EXPECT_EQ(NavMesh::from_data(patched(offsetof(dtMeshHeader, polyCount), &huge, 4), &error), nullptr);
  dtMeshHeader header;
  std::memcpy(&header, good.data(), sizeof(header));
  const std::size_t first_poly =
      ((sizeof(dtMeshHeader) + 3) & ~std::size_t(3)) + 12 * std::size_t(header.vertCount);
  const std::uint8_t many = 200;  // Detour would copy 200 corners into a 6-corner stack array
  EXPECT_EQ(NavMesh::from_data(patched(first_poly + offsetof(dtPoly, vertCount), &many, 1), &error), nullptr);
  EXPECT_NE(error.find("vertex count"), std::string::npos) << error;
  const std::uint16_t far_vertex = 0xfff0;
  EXPECT_EQ(NavMesh::from_data(patched(first_poly + offsetof(dtPoly, verts), &far_vertex, 2), &error),
            nullptr);
  const std::uint16_t far_neighbour = 0x7ff0;
  EXPECT_EQ(NavMesh::from_data(patched(first_poly + offsetof(dtPoly, neis), &far_neighbour, 2), &error),
            nullptr);

  // Random damage anywhere: either an error, or a mesh whose queries stay in bounds (ASan checks).
  std::mt19937 rng(11);
  int rejected = 0;
  int accepted = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<std::uint8_t> d = good;
    const int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; ++f)
      d[rng() % d.size()] ^= std::uint8_t(1u << (rng() % 8));
    error.clear();
    std::unique_ptr<NavMesh> mesh = NavMesh::from_data(std::move(d), &error);
    if (!mesh) {
      EXPECT_FALSE(error.empty());
      ++rejected;
      continue;
    }
    ++accepted;
    NavQuery query(*mesh);
    std::uint32_t state = std::uint32_t(trial);
    std::vector<Vec3> path;
    for (int i = 0; i < 8; ++i) {
      const std::optional<Vec3> p = query.random_point(state);
      const std::optional<Vec3> q = query.random_point(state);
      if (p && q) query.find_path(*p, *q, path);
      query.nearest_point({float(i) * 100 - 400, -300, 20});
    }
  }
  std::printf("[ navmesh ] random byte flips: %d rejected, %d loaded and queried\n", rejected, accepted);
  EXPECT_GT(rejected, 0);
}

TEST(Navmesh, BadInputsAreErrors) {
  Level empty;
  EXPECT_FALSE(build_navmesh(empty, kSettings).ok());
  NavmeshSettings bad = kSettings;
  bad.cell_size = 0;
  EXPECT_FALSE(build_navmesh(make_arena(), bad).ok());
  bad = kSettings;
  bad.max_slope_degrees = 90;
  EXPECT_FALSE(build_navmesh(make_arena(), bad).ok());
  bad = kSettings;
  bad.max_grid_columns = 1000;
  const NavmeshBuild too_big = build_navmesh(make_arena(), bad);
  EXPECT_FALSE(too_big.ok());
  EXPECT_NE(too_big.error.find("too large"), std::string::npos) << too_big.error;
  // Only walls, nothing to stand on.
  Level wall;
  wall.brushes = {brush_from_box({0, 0, 0}, {8, 512, 512})};
  const NavmeshBuild none = build_navmesh(wall, kSettings);
  EXPECT_FALSE(none.ok());
  EXPECT_FALSE(none.error.empty());
}

TEST(Navmesh, RecastDemoMeshes) {
  const std::filesystem::path dir = SHIFTCAST_SOURCE_DIR "/../shared/data/recast-meshes";
  if (!std::filesystem::is_directory(dir)) {
    GTEST_SKIP()
        << "Recast demo meshes not found at " << dir.string()
        << " (they are not part of the project; place dungeon.obj, nav_test.obj and undulating.obj there)";
  }
  for (const char* name : {"dungeon.obj", "nav_test.obj", "undulating.obj"}) {
    const std::string path = (dir / name).string();
    if (!std::filesystem::exists(path)) {
      ADD_FAILURE() << "missing " << path;
      continue;
    }
    const LevelResult imported = import_obj_file(path, {.up_axis = 'y', .scale = 39.37f});
    ASSERT_TRUE(imported.ok()) << imported.error.describe();
    const NavmeshBuild built = build_navmesh(imported.level, kSettings);
    ASSERT_TRUE(built.ok()) << name << ": " << built.error;
    EXPECT_GT(built.polygons, 0) << name;
    std::printf("[ navmesh ] %s: %zu brushes, %d polygons, grid %d x %d, %.1f ms\n", name,
                imported.level.brushes.size(), built.polygons, built.grid_width, built.grid_height,
                built.build_ms);
    std::string error;
    const std::unique_ptr<NavMesh> mesh = NavMesh::from_data(built.data, &error);
    ASSERT_NE(mesh, nullptr) << name << ": " << error;
    NavQuery query(*mesh);
    std::uint32_t rng = 1;
    EXPECT_TRUE(query.random_point(rng).has_value()) << name;
  }
}

}  // namespace
}  // namespace shiftcast
