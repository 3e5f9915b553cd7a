// OBJ import: triangles become thin brushes with the right planes in the z-up frame (checked against
// hand-computed planes and by point containment), every face syntax and index form, errors with their
// line, and no crash on any truncation or byte mutation of a valid file.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "collision/bsp_build.hpp"
#include "world/level/obj_import.hpp"

namespace shiftcast {
namespace {

constexpr float kPlaneTolerance = 1e-5f;

bool has_plane(const Brush& brush, Vec3 normal, float d) {
  for (const Plane& p : brush.planes) {
    if (length(p.normal - normal) < kPlaneTolerance &&
        std::fabs(p.d - d) < kPlaneTolerance * (1 + std::fabs(d))) {
      return true;
    }
  }
  return false;
}

bool level_contains(const Level& level, Vec3 p) {
  for (const Brush& b : level.brushes) {
    if (brush_contains(b, p)) return true;
  }
  return false;
}

LevelResult import(std::string_view text, ObjImportOptions options = {}) {
  return import_obj(text, "test.obj", options);
}

TEST(ObjImport, UnitTriangleMakesFivePlanesBehindItsFront) {
  const std::string text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
  const LevelResult r = import(text);
  ASSERT_TRUE(r.ok()) << r.error.describe();
  ASSERT_EQ(r.level.brushes.size(), 1u);
  const Brush& b = r.level.brushes[0];
  EXPECT_EQ(b.planes.size(), 5u);
  const float s = std::sqrt(0.5f);
  EXPECT_TRUE(has_plane(b, {0, 0, 1}, 0));   // front: counter-clockwise seen from +z
  EXPECT_TRUE(has_plane(b, {0, 0, -1}, 2));  // default thickness 2 behind
  EXPECT_TRUE(has_plane(b, {0, -1, 0}, 0));
  EXPECT_TRUE(has_plane(b, {-1, 0, 0}, 0));
  EXPECT_TRUE(has_plane(b, {s, s, 0}, s));

  EXPECT_TRUE(brush_contains(b, {0.2f, 0.2f, -0.01f}));
  EXPECT_TRUE(brush_contains(b, {0.2f, 0.2f, -1.99f}));
  EXPECT_FALSE(brush_contains(b, {0.2f, 0.2f, 0.01f}));   // in front
  EXPECT_FALSE(brush_contains(b, {0.2f, 0.2f, -2.01f}));  // beyond the thickness
  EXPECT_FALSE(brush_contains(b, {0.6f, 0.6f, -1.0f}));   // beside the hypotenuse

  EXPECT_EQ(r.level.name, "test.obj");
  EXPECT_EQ(r.level.source_hash, fnv1a64(text.data(), text.size()));
  ASSERT_EQ(r.level.brush_contents.size(), 1u);
  EXPECT_EQ(r.level.brush_contents[0], kContentsSolid);
  EXPECT_EQ(r.level.brush_surface_flags.size(), 1u);
  EXPECT_NEAR(r.level.bounds.min.z, -2.0f, 1e-4f);
  EXPECT_NEAR(r.level.bounds.max.x, 1.0f, 1e-4f);
}

TEST(ObjImport, ClockwiseTriangleFacesDown) {
  const LevelResult r = import("v 0 0 0\nv 0 1 0\nv 1 0 0\nf 1 2 3\n");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.level.brushes.size(), 1u);
  EXPECT_TRUE(has_plane(r.level.brushes[0], {0, 0, -1}, 0));
  EXPECT_TRUE(brush_contains(r.level.brushes[0], {0.2f, 0.2f, 1.0f}));
  EXPECT_FALSE(brush_contains(r.level.brushes[0], {0.2f, 0.2f, -1.0f}));
}

TEST(ObjImport, YUpTriangleTurnsIntoZUpWithItsNormal) {
  // Facing +z in a y-up file, i.e. towards the viewer: (x, y, z) → (x, −z, y) turns that into −y.
  const LevelResult r = import("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", {.up_axis = 'y', .scale = 10});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.level.brushes.size(), 1u);
  EXPECT_TRUE(has_plane(r.level.brushes[0], {0, -1, 0}, 0));
  EXPECT_TRUE(has_plane(r.level.brushes[0], {0, 1, 0}, 2));    // thickness is in output units
  EXPECT_TRUE(brush_contains(r.level.brushes[0], {2, 1, 2}));  // behind (+y), inside the triangle
  EXPECT_FALSE(brush_contains(r.level.brushes[0], {2, -1, 2}));
  EXPECT_NEAR(r.level.bounds.max.z, 10.0f, 1e-4f);
}

TEST(ObjImport, YUpQuadIsAScaledFloorOfTwoBrushes) {
  // A floor in a y-up file, counter-clockwise seen from above (+y).
  const std::string text =
      "o floor\ng g0\nusemtl stone\ns off\nvt 0 0\nvn 0 1 0\n"
      "v 0 0 0\nv 1 0 0\nv 1 0 -1\nv 0 0 -1\nf 1/1/1 2/1/1 3/1/1 4/1/1\n";
  const LevelResult r = import(text, {.up_axis = 'y', .scale = 39.37f, .thickness = 4});
  ASSERT_TRUE(r.ok()) << r.error.describe();
  ASSERT_EQ(r.level.brushes.size(), 2u);
  EXPECT_EQ(r.level.source_brushes, 2);
  for (const Brush& b : r.level.brushes) {
    EXPECT_TRUE(has_plane(b, {0, 0, 1}, 0));
    EXPECT_TRUE(has_plane(b, {0, 0, -1}, 4));
  }
  // Fanned from the first corner: (0,0)-(L,0)-(L,L) and (0,0)-(L,L)-(0,L) with L = 39.37.
  EXPECT_TRUE(brush_contains(r.level.brushes[0], {30, 5, -1}));
  EXPECT_TRUE(brush_contains(r.level.brushes[1], {5, 30, -1}));
  EXPECT_TRUE(level_contains(r.level, {39, 38, -3.9f}));
  EXPECT_FALSE(level_contains(r.level, {20, 20, 0.5f}));
  EXPECT_FALSE(level_contains(r.level, {20, 20, -4.1f}));
  EXPECT_FALSE(level_contains(r.level, {40, 20, -1}));
  EXPECT_NEAR(r.level.bounds.max.x, 39.37f, 1e-3f);
  EXPECT_NEAR(r.level.bounds.max.y, 39.37f, 1e-3f);
}

TEST(ObjImport, AllFaceFormsAndNegativeIndicesAgree) {
  const std::string verts = "v 0 0 0\nv 4 0 0\nv 0 4 0\nvt 0 0\nvn 0 0 1\n";
  const char* faces[] = {"f 1 2 3",    "f 1/1 2/1 3/1",       "f 1/1/1 2/1/1 3/1/1",   "f 1//1 2//1 3//1",
                         "f -3 -2 -1", "f -3/-1 -2/-1 -1/-1", "f -3//-1 -2//-1 -1//-1"};
  const LevelResult reference = import(verts + "f 1 2 3\n");
  ASSERT_TRUE(reference.ok());
  for (const char* face : faces) {
    const LevelResult r = import(verts + face + "\n");
    ASSERT_TRUE(r.ok()) << face << ": " << r.error.describe();
    ASSERT_EQ(r.level.brushes.size(), 1u) << face;
    EXPECT_EQ(r.level.brushes[0].planes, reference.level.brushes[0].planes) << face;
  }
  // Negative indices count back from the vertices read so far, not from the end of the file.
  const LevelResult r = import(verts + "f -3 -2 -1\nv 0 0 10\nv 4 0 10\nv 0 4 10\nf -3 -2 -1\n");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.level.brushes.size(), 2u);
  EXPECT_TRUE(has_plane(r.level.brushes[0], {0, 0, 1}, 0));
  EXPECT_TRUE(has_plane(r.level.brushes[1], {0, 0, 1}, 10));
}

TEST(ObjImport, DegenerateTrianglesAreSkipped) {
  const LevelResult r = import("v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 1 0\nf 1 2 3\nf 1 1 4\nf 1 2 4\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.level.source_brushes, 3);
  EXPECT_EQ(r.level.brushes.size(), 1u);
}

TEST(ObjImport, ClosedCubeBuildsABspWhoseShellIsSolid) {
  // Outward counter-clockwise faces of [0,64]^3; the shell is `thickness` deep inside each face.
  const std::string text =
      "v 0 0 0\nv 64 0 0\nv 64 64 0\nv 0 64 0\nv 0 0 64\nv 64 0 64\nv 64 64 64\nv 0 64 64\n"
      "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n";
  const LevelResult r = import(text);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.level.brushes.size(), 12u);
  const BspBuildResult built = build_bsp(r.level.brushes, {});
  ASSERT_EQ(built.error, BspBuildError::kNone);
  EXPECT_NE(built.tree.point_brush({32, 32, 63}), kNoBrush);  // just behind the top face
  EXPECT_NE(built.tree.point_brush({1, 32, 32}), kNoBrush);   // just behind a side
  EXPECT_EQ(built.tree.point_brush({32, 32, 65}), kNoBrush);  // in front of the top
  EXPECT_EQ(built.tree.point_brush({32, 32, 32}), kNoBrush);  // thin shell: the middle is empty
  const TraceResult down = built.tree.raycast({32, 32, 100}, {0, 0, -1}, 100);
  EXPECT_TRUE(down.hit);
  EXPECT_NEAR(down.fraction * 100, 36.0f, 1e-3f);
}

struct BadCase {
  const char* text;
  std::uint64_t line;
};

TEST(ObjImport, MalformedLinesReportTheirLine) {
  const BadCase cases[] = {
      {"v 0 0 0\nv 1 0 x\n", 2},
      {"# comment\n\nv 1 2\n", 3},
      {"v 0 0 0\r\nv 1 0 0\r\nv 0 1 0\r\nf 1 2\r\n", 4},
      {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 0\n", 4},
      {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\nv 5 5 5\n", 4},
      {"v 0 0 0\nv 1 0 0\nf -3 -2 -1\nv 0 1 0\n", 3},
      {"v nan 0 0\n", 1},
      {"v 0 inf 0\n", 1},
      {"v 0 0 1e999\n", 1},
      {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3x\n", 4},
      {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf a/1 2 3\n", 4},
      {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99999999999999999999999\n", 4},
      {"v 0 0 0\nv 1 0 0\nv 0 1 0\n\n\nf\n", 6},
      {"v 1e300 0 0\n", 1},
  };
  for (const BadCase& c : cases) {
    const LevelResult r = import(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_TRUE(r.error.is_line) << c.text;
    EXPECT_EQ(r.error.offset, c.line) << c.text << " → " << r.error.describe();
    EXPECT_EQ(r.error.file, "test.obj");
    EXPECT_FALSE(r.error.what.empty());
  }
  // A later vertex does make a forward positive index valid.
  EXPECT_TRUE(import("v 0 0 0\nv 1 0 0\nf 1 2 3\nv 0 1 0\n").ok());
}

TEST(ObjImport, BadOptionsAndMissingFilesAreErrors) {
  const std::string tri = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
  EXPECT_FALSE(import(tri, {.up_axis = 'x'}).ok());
  EXPECT_FALSE(import(tri, {.scale = 0}).ok());
  EXPECT_FALSE(import(tri, {.scale = -1}).ok());
  EXPECT_FALSE(import(tri, {.scale = NAN}).ok());
  EXPECT_FALSE(import(tri, {.thickness = 0}).ok());
  const LevelResult missing = import_obj_file("/nonexistent/dir/level.obj", {});
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.error.file, "/nonexistent/dir/level.obj");
  EXPECT_TRUE(import("").ok());
  EXPECT_TRUE(import("").level.brushes.empty());
}

TEST(ObjImport, EveryTruncationAndMutationIsHandled) {
  const std::string text =
      "mtllib x.mtl\no cube\nv 0 0 0\nv 64 0 0\nv 64 64 0\nv 0 64 0\nv 0 0 64\nv 64 0 64\nv 64 64 64\n"
      "v 0 64 64\nvt 0.5 0.5\nvn 0 0 1\ns 1\nf 1/1/1 4/1/1 3/1/1 2/1/1\nf 5//1 6//1 7//1 8//1\nf -8 -7 -3 "
      "-4\n"
      "f 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n";
  const auto lines_in = [](std::string_view s) {
    return std::uint64_t(std::count(s.begin(), s.end(), '\n') + 1);
  };
  for (std::size_t n = 0; n <= text.size(); ++n) {
    const std::string_view prefix(text.data(), n);
    const LevelResult r = import(prefix);
    if (!r.ok()) {
      EXPECT_LE(r.error.offset, lines_in(prefix)) << n;
    }
    for (const Brush& b : r.level.brushes)
      EXPECT_EQ(b.planes.size(), 5u);
  }
  std::mt19937 rng(7);
  const char alphabet[] = "0123456789-+/.eE \n\rfvnaix#";
  for (int trial = 0; trial < 2000; ++trial) {
    std::string mutated = text;
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      mutated[rng() % mutated.size()] = alphabet[rng() % (sizeof(alphabet) - 1)];
    }
    const LevelResult r = import(mutated);
    if (!r.ok()) {
      EXPECT_GE(r.error.offset, 1u);
      EXPECT_LE(r.error.offset, lines_in(mutated));
    }
  }
}

}  // namespace
}  // namespace shiftcast
