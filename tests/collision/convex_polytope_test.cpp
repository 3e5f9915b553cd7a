// Build-time clipping: a plane that only grazes a corner (its section narrower than the epsilon) must
// leave the whole polytope on one side, never drop it from both; a real cut keeps both pieces.
#include "collision/convex_polytope.hpp"

#include <gtest/gtest.h>

#include "collision/bsp_build.hpp"

namespace shiftcast {
namespace {

ConvexPolytope box(double size) {
  const Planed planes[] = {{{1, 0, 0}, size}, {{-1, 0, 0}, 0},   {{0, 1, 0}, size},
                           {{0, -1, 0}, 0},   {{0, 0, 1}, size}, {{0, 0, -1}, 0}};
  return polytope_from_planes(planes, kWorldExtent, kPlaneEpsilon);
}

// A needle: a pyramid 100 long on a 0.1 x 0.1 base, apex at (100, 0, 0).
ConvexPolytope needle() {
  const Vec3d apex{100, 0, 0};
  const Vec3d inside{50, 0, 0};
  const double s = 0.05;
  const Vec3d base[] = {{0, s, s}, {0, -s, s}, {0, -s, -s}, {0, s, -s}};
  std::vector<Planed> planes{{{-1, 0, 0}, 0}};
  for (int i = 0; i < 4; ++i) {
    Vec3d n = normalize(cross(base[i] - apex, base[(i + 1) % 4] - apex));
    if (dot(n, inside - apex) > 0) n = -n;
    planes.push_back(plane_through(n, apex));
  }
  return polytope_from_planes(planes, kWorldExtent, kPlaneEpsilon);
}

TEST(ConvexPolytope, APlaneGrazingASharpTipKeepsTheWholePolytopeOnOneSide) {
  const ConvexPolytope poly = needle();
  ASSERT_EQ(poly.faces.size(), 5u);
  // 2 eps short of the apex the needle is 2e-6 eps wide: the apex is more than eps in front, so the
  // polytope spans the plane, but the section merges to fewer than three distinct points.
  const Planed cut{{1, 0, 0}, 100 - 2 * kPlaneEpsilon};
  ASSERT_EQ(classify(poly, cut, kPlaneEpsilon), PlaneSide::kSpanning);
  const ConvexPolytope back = clip_behind(poly, cut, kPlaneEpsilon, kCutFace, true);
  const ConvexPolytope front = clip_behind(poly, cut.flipped(), kPlaneEpsilon, kCutFace, true);
  EXPECT_EQ(back.faces.size(), 5u);  // the whole needle, not lost from both sides
  EXPECT_TRUE(front.empty());
}

TEST(ConvexPolytope, ARealCutKeepsBothPiecesWithACap) {
  const ConvexPolytope cube = box(100);
  const Planed cut{{1, 0, 0}, 30};
  const ConvexPolytope back = clip_behind(cube, cut, kPlaneEpsilon, kCutFace, true);
  const ConvexPolytope front = clip_behind(cube, cut.flipped(), kPlaneEpsilon, kCutFace, true);
  ASSERT_EQ(back.faces.size(), 6u);
  ASSERT_EQ(front.faces.size(), 6u);
  EXPECT_DOUBLE_EQ(back.bounds().max.x, 30.0);
  EXPECT_DOUBLE_EQ(front.bounds().min.x, 30.0);
  EXPECT_TRUE(back.faces.back().on_splitter);
  EXPECT_EQ(back.faces.back().source, kCutFace);
}

}  // namespace
}  // namespace shiftcast
