// The solid cut of a level (world/level/level_slice.hpp) against the BSP's own point query: on real
// Quake III maps and a hand-made one, at several heights, a point strictly inside a slice polygon is in a
// brush (BspTree::point_brush) and a point strictly outside every polygon is not. Points within
// kEdgeBand of a polygon's edge are left out: there the answer may go either way (the documented
// boundary rule). Also: polygons are convex and counter-clockwise, and none overlaps another.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "collision/bsp_build.hpp"
#include "tests/support/seeded_random.hpp"
#include "world/level/level_slice.hpp"
#include "world/level/map_import.hpp"
#include "world/level/q3_bsp_import.hpp"

namespace shiftcast {
namespace {

// A point this close to an edge (units) is on the boundary for this test's purpose: the cut's
// crossings are computed in double from float planes, the point query evaluates the same planes.
constexpr double kEdgeBand = 1e-3;
constexpr int kSamplesPerHeight = 4000;

using Point = std::array<double, 2>;

double cross(const Point& o, const Point& a, const Point& b) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

double segment_distance(const Point& p, const Point& a, const Point& b) {
  const double dx = b[0] - a[0], dy = b[1] - a[1];
  const double len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2 : 0;
  t = std::clamp(t, 0.0, 1.0);
  return std::hypot(p[0] - (a[0] + t * dx), p[1] - (a[1] + t * dy));
}

// 1: strictly inside, 0: strictly outside, -1: within kEdgeBand of the boundary.
int classify(const SlicePolygon& polygon, const Point& p) {
  const auto& v = polygon.points;
  bool inside = true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Point& a = v[i];
    const Point& b = v[(i + 1) % v.size()];
    if (segment_distance(p, a, b) < kEdgeBand) return -1;
    if (cross(a, b, p) < 0) inside = false;
  }
  return inside ? 1 : 0;
}

double signed_area(const SlicePolygon& polygon) {
  double twice = 0;
  const auto& v = polygon.points;
  for (std::size_t i = 0; i < v.size(); ++i)
    twice += cross({0, 0}, v[i], v[(i + 1) % v.size()]);
  return twice / 2;
}

struct SliceCounts {
  int solid = 0, empty = 0, boundary = 0, wrong = 0;
};

SliceCounts check_slices(const BspTree& tree, std::uint32_t seed) {
  SliceCounts counts;
  std::mt19937 rng(seed);
  const Aabb& b = tree.bounds();
  for (int h = 0; h < 5; ++h) {
    const double z = double(float(b.min.z + (b.max.z - b.min.z) * (h + 0.5) / 5.0));
    const std::vector<SlicePolygon> slice = slice_solid(tree, z);
    for (const SlicePolygon& p : slice) {
      EXPECT_GT(signed_area(p), 0) << "counter-clockwise, not degenerate";
      for (std::size_t i = 0; i < p.points.size(); ++i) {
        EXPECT_GE(
            cross(p.points[i], p.points[(i + 1) % p.points.size()], p.points[(i + 2) % p.points.size()]),
            -1e-6)
            << "convex";
      }
    }
    for (int s = 0; s < kSamplesPerHeight; ++s) {
      const Point p{uniform_float(rng, b.min.x, b.max.x), uniform_float(rng, b.min.y, b.max.y)};
      int inside = 0;
      bool boundary = false;
      for (const SlicePolygon& polygon : slice) {
        const int c = classify(polygon, p);
        if (c < 0) boundary = true;
        inside += c > 0 ? 1 : 0;
      }
      if (boundary) {
        ++counts.boundary;
        continue;
      }
      EXPECT_LE(inside, 1) << "cells of a BSP never overlap";
      const Vec3 q{float(p[0]), float(p[1]), float(z)};  // exact: sampled as floats
      const bool solid = tree.point_brush(q) != kNoBrush;
      if (solid != (inside > 0)) ++counts.wrong;
      ++(solid ? counts.solid : counts.empty);
    }
  }
  return counts;
}

TEST(LevelSlice, AgreesWithThePointQueryOnAHandMadeLevel) {
  LevelResult imported = import_map_file(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map");
  ASSERT_TRUE(imported.ok()) << imported.error.describe();
  BspBuildResult built = build_bsp(imported.level.brushes, {});
  ASSERT_EQ(built.error, BspBuildError::kNone);
  const SliceCounts c = check_slices(built.tree, 7);
  EXPECT_EQ(c.wrong, 0);
  EXPECT_GT(c.solid, 0);
  EXPECT_GT(c.empty, 0);
}

class RealMapSlice : public ::testing::TestWithParam<const char*> {};

TEST_P(RealMapSlice, AgreesWithThePointQuery) {
  const std::filesystem::path path = std::filesystem::path(SHIFTCAST_SOURCE_DIR) / "data" / "openarena" /
                                     "maps" / (std::string(GetParam()) + ".bsp");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path.string() << " is absent: run scripts/fetch-openarena-maps.sh";
  LevelResult imported = import_q3_bsp_file(path.string());
  ASSERT_TRUE(imported.ok()) << imported.error.describe();
  BspBuildResult built = build_bsp(imported.level.brushes, {});
  ASSERT_EQ(built.error, BspBuildError::kNone);
  const SliceCounts c = check_slices(built.tree, 1616);
  std::printf("[ slice    ] %s: %d solid, %d empty, %d on a boundary, %d wrong\n", GetParam(), c.solid,
              c.empty, c.boundary, c.wrong);
  EXPECT_EQ(c.wrong, 0);
  EXPECT_GT(c.solid, 0);
  EXPECT_GT(c.empty, 0);
}

INSTANTIATE_TEST_SUITE_P(OpenArena, RealMapSlice, ::testing::Values("oa_dm1", "oa_dm4"));

}  // namespace
}  // namespace shiftcast
