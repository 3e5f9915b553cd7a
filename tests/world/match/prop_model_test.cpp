// PropModel construction against independent oracles: known solids (cube, octahedron, icosahedron,
// dodecahedron) for vertex and face counts, and for random points a brute-force hull (every triple of
// points whose plane has all others on one side is a hull face), which shares nothing with the
// incremental hull in world/match/prop_model.cpp.
#include "world/match/prop_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "collision/brush.hpp"
#include "tests/support/seeded_random.hpp"

namespace shiftcast {
namespace {

Vec3 random_point(std::mt19937& rng, double half) {
  return {float(uniform_double(rng, -half, half)), float(uniform_double(rng, -half, half)),
          float(uniform_double(rng, -half, half))};
}

// The brute-force hull of points in general position: all triangles (i, j, k) with every other point
// strictly on one side of their plane. Returns the number of such faces and marks the vertices used.
int brute_force_hull(const std::vector<Vec3>& points, std::vector<bool>& vertex) {
  const std::size_t n = points.size();
  vertex.assign(n, false);
  int faces = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      for (std::size_t k = j + 1; k < n; ++k) {
        const Vec3d a = to_double(points[i]);
        const Vec3d nrm = cross(to_double(points[j]) - a, to_double(points[k]) - a);
        int above = 0, below = 0;
        for (std::size_t m = 0; m < n; ++m) {
          if (m == i || m == j || m == k) continue;
          const double s = dot(nrm, to_double(points[m]) - a);
          above += s > 0.0;
          below += s < 0.0;
        }
        if (above == 0 || below == 0) {
          ++faces;
          vertex[i] = vertex[j] = vertex[k] = true;
        }
      }
    }
  }
  return faces;
}

double max_along(const std::vector<Vec3>& points, Vec3d u) {
  double best = -std::numeric_limits<double>::infinity();
  for (Vec3 p : points)
    best = std::max(best, dot(u, to_double(p)));
  return best;
}

// Every input point is inside the model's hull: no direction finds one beyond the hull's support.
void expect_contains(const PropModel& model, const std::vector<Vec3>& points, std::mt19937& rng) {
  const Shape shape = model_shape(model);
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3d u =
        normalize(Vec3d{uniform_double(rng, -1, 1), uniform_double(rng, -1, 1), uniform_double(rng, -1, 1)});
    EXPECT_LE(max_along(points, u), shape.support(u) + 1e-9);
  }
  for (Vec3 v : model.vertices)
    EXPECT_NE(std::find(points.begin(), points.end(), v), points.end()) << "vertex not from the input";
}

TEST(PropModel, BoxModel) {
  const PropModelResult r = make_box_model("crate", {16, 8, 4});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_FALSE(r.model->concave);
  EXPECT_EQ(r.model->shape.kind, ShapeKind::kBox);
  EXPECT_EQ(r.model->face_count, 6);
  EXPECT_EQ(r.model->local_box.min, (Vec3{-16, -8, -4}));
  EXPECT_EQ(r.model->local_box.max, (Vec3{16, 8, 4}));
  const float inf = std::numeric_limits<float>::infinity();
  for (Vec3 bad : {Vec3{0, 1, 1}, Vec3{1, -1, 1}, Vec3{1, 1, std::nanf("")}, Vec3{inf, 1, 1}}) {
    const PropModelResult e = make_box_model("bad", bad);
    EXPECT_FALSE(e.ok());
    EXPECT_NE(e.error.find("bad"), std::string::npos) << e.error;
  }
}

TEST(PropModel, CubeWithInteriorAndFacePointsHasEightVerticesSixFaces) {
  std::vector<Vec3> points;
  for (int i = 0; i < 8; ++i)
    points.push_back({i & 1 ? 10.f : -10.f, i & 2 ? 10.f : -10.f, i & 4 ? 10.f : -10.f});
  // Face centres and edge midpoints (on the hull, not vertices) and interior points.
  for (int axis = 0; axis < 3; ++axis) {
    for (float s : {-10.f, 10.f}) {
      Vec3 c{};
      c[axis] = s;
      points.push_back(c);
      Vec3 e{10, 10, 10};
      e[axis] = 0;
      e[(axis + 1) % 3] = s;
      points.push_back(e);
    }
  }
  points.push_back({1, 2, 3});
  points.push_back({-9, 9, -9});
  const PropModelResult r = make_hull_model("cube", points);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.model->vertices.size(), 8u);
  EXPECT_EQ(r.model->face_count, 6);
  EXPECT_EQ(r.model->local_box.min, (Vec3{-10, -10, -10}));
  EXPECT_EQ(r.model->local_box.max, (Vec3{10, 10, 10}));
  EXPECT_EQ(r.model->shape.kind, ShapeKind::kHull);
  std::mt19937 rng(11);
  expect_contains(*r.model, points, rng);
}

TEST(PropModel, PointsJustOutsideAFaceStayInTheHull) {
  // Bumps 5e-4 above two faces (less than the hull's coplanarity tolerance): the faces still count as
  // flat, but the hull of the vertices must contain the bumps exactly, or a filter using it as a bound
  // could call a touching pair apart.
  std::vector<Vec3> points;
  for (int i = 0; i < 8; ++i)
    points.push_back({i & 1 ? 10.f : -10.f, i & 2 ? 10.f : -10.f, i & 4 ? 10.f : -10.f});
  points.push_back({0, 0, 10.0005f});
  points.push_back({3, 10.0005f, -2});
  const PropModelResult r = make_hull_model("bumpy", points);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.model->face_count, 6);
  EXPECT_EQ(model_shape(*r.model).support({0, 0, 1}), double(10.0005f));
  EXPECT_EQ(model_shape(*r.model).support({0, 1, 0}), double(10.0005f));
  std::mt19937 rng(12);
  expect_contains(*r.model, points, rng);
}

TEST(PropModel, PlatonicSolidsFaceCounts) {
  const float phi = float((1 + std::sqrt(5.0)) / 2);
  const float s = 20;
  std::vector<Vec3> octa = {{s, 0, 0}, {-s, 0, 0}, {0, s, 0}, {0, -s, 0}, {0, 0, s}, {0, 0, -s}};
  std::vector<Vec3> icosa, dodeca;
  for (float a : {-1.f, 1.f}) {
    for (float b : {-1.f, 1.f}) {
      icosa.push_back(Vec3{0, a, b * phi} * s);
      icosa.push_back(Vec3{a, b * phi, 0} * s);
      icosa.push_back(Vec3{b * phi, 0, a} * s);
      dodeca.push_back(Vec3{0, a / phi, b * phi} * s);
      dodeca.push_back(Vec3{a / phi, b * phi, 0} * s);
      dodeca.push_back(Vec3{b * phi, 0, a / phi} * s);
      for (float c : {-1.f, 1.f})
        dodeca.push_back(Vec3{a, b, c} * s);
    }
  }
  struct Case {
    std::vector<Vec3> points;
    std::size_t vertices;
    int faces;
  };
  for (const Case& c : {Case{octa, 6, 8}, Case{icosa, 12, 20}, Case{dodeca, 20, 12}}) {
    const PropModelResult r = make_hull_model("solid", c.points);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.model->vertices.size(), c.vertices);
    EXPECT_EQ(r.model->face_count, c.faces);
  }
}

TEST(PropModel, RandomHullsMatchBruteForce) {
  std::mt19937 rng(20240611);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 4 + int(rng() % 22);
    std::vector<Vec3> points;
    for (int i = 0; i < n; ++i)
      points.push_back(random_point(rng, uniform_double(rng, 4, 200)));
    std::vector<bool> vertex;
    const int faces = brute_force_hull(points, vertex);
    const PropModelResult r = make_hull_model("random", points);
    ASSERT_TRUE(r.ok()) << r.error;
    std::vector<Vec3> want;
    for (int i = 0; i < n; ++i) {
      if (vertex[std::size_t(i)]) want.push_back(points[std::size_t(i)]);
    }
    EXPECT_EQ(r.model->vertices, want) << "trial " << trial;
    EXPECT_EQ(r.model->face_count, faces) << "trial " << trial;
    expect_contains(*r.model, points, rng);
    ++checked;
  }
  EXPECT_EQ(checked, 300);
}

// Integer points are exact in double, so the brute-force hull can be exact too, degeneracies and all:
// facets are the distinct planes through three points with every point on one side, a vertex is a point
// on three or more facets (on two it lies on an edge, on one inside a face).
TEST(PropModel, DegenerateIntegerHullsMatchExactBruteForce) {
  std::mt19937 rng(99);
  int extra = 0, total = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const int n = 5 + int(rng() % 40);
    const int span = 1 + int(rng() % 4);
    std::vector<Vec3> points;
    for (int i = 0; i < n; ++i) {
      points.push_back({float(int(rng() % (2 * span + 1)) - span), float(int(rng() % (2 * span + 1)) - span),
                        float(int(rng() % (2 * span + 1)) - span)});
    }
    std::set<std::array<double, 4>> facets;  // normal scaled to unit max component, and offset
    for (std::size_t i = 0; i < points.size(); ++i) {
      for (std::size_t j = i + 1; j < points.size(); ++j) {
        for (std::size_t k = j + 1; k < points.size(); ++k) {
          const Vec3d a = to_double(points[i]);
          Vec3d nrm = cross(to_double(points[j]) - a, to_double(points[k]) - a);
          if (nrm == Vec3d{}) continue;
          int above = 0, below = 0;
          for (Vec3 q : points) {
            above += dot(nrm, to_double(q) - a) > 0;
            below += dot(nrm, to_double(q) - a) < 0;
          }
          if (above > 0 && below > 0) continue;
          if (above > 0) nrm = -nrm;
          // Integer components (exact in double): divide by their gcd for one key per plane.
          const long long g = std::gcd(std::gcd(std::llabs((long long)nrm.x), std::llabs((long long)nrm.y)),
                                       std::llabs((long long)nrm.z));
          nrm = {nrm.x / double(g), nrm.y / double(g), nrm.z / double(g)};
          facets.insert({nrm.x, nrm.y, nrm.z, dot(nrm, a)});
        }
      }
    }
    const auto facets_through = [&](Vec3 q) {
      int on = 0;
      for (const auto& f : facets)
        on += f[0] * q.x + f[1] * q.y + f[2] * q.z == f[3];
      return on;
    };
    const PropModelResult r = make_hull_model("lattice", points);
    if (facets.size() < 4) {
      EXPECT_FALSE(r.ok()) << "trial " << trial;  // flat: no volume
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.error << " trial " << trial;
    EXPECT_EQ(r.model->face_count, int(facets.size())) << "trial " << trial;
    // Every corner is a vertex. A point on an edge or inside a face may be kept too, when rounding of
    // the face planes cannot rule out that it sticks out (see keep_points_outside), but nothing inside.
    const std::vector<Vec3>& got = r.model->vertices;
    for (Vec3 q : points) {
      if (facets_through(q) < 3) continue;
      EXPECT_NE(std::find(got.begin(), got.end(), q), got.end()) << "trial " << trial;
    }
    for (Vec3 v : got)
      EXPECT_GE(facets_through(v), 1) << "trial " << trial;
    extra += int(got.size()) -
             int(std::count_if(got.begin(), got.end(), [&](Vec3 v) { return facets_through(v) >= 3; }));
    total += int(got.size());
    expect_contains(*r.model, points, rng);
  }
  // Kept boundary points are the exception, not the rule.
  EXPECT_LT(extra, total / 10);
}

TEST(PropModel, DenseSphereHullContainsEveryPoint) {
  std::mt19937 rng(7);
  std::vector<Vec3> points;
  for (int i = 0; i < 400; ++i) {
    const Vec3d u =
        normalize(Vec3d{uniform_double(rng, -1, 1), uniform_double(rng, -1, 1), uniform_double(rng, -1, 1)});
    points.push_back(to_float(u * uniform_double(rng, 30, 32)));
  }
  const PropModelResult r = make_hull_model("ball", points);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_GT(r.model->vertices.size(), 40u);
  // Euler for a triangulated sphere with V vertices: F = 2V − 4; merged coplanar pairs only lower it.
  EXPECT_LE(r.model->face_count, 2 * int(r.model->vertices.size()) - 4);
  expect_contains(*r.model, points, rng);
}

TEST(PropModel, HullErrors) {
  EXPECT_FALSE(make_hull_model("three", {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}).ok());
  EXPECT_FALSE(make_hull_model("same", {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}).ok());
  EXPECT_FALSE(make_hull_model("line", {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}}).ok());
  std::mt19937 rng(3);
  std::vector<Vec3> flat;
  for (int i = 0; i < 50; ++i)
    flat.push_back({float(uniform_double(rng, -50, 50)), float(uniform_double(rng, -50, 50)), 12});
  const PropModelResult coplanar = make_hull_model("flat", flat);
  EXPECT_FALSE(coplanar.ok());
  EXPECT_NE(coplanar.error.find("coplanar"), std::string::npos) << coplanar.error;
  EXPECT_FALSE(make_hull_model("nan", {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, std::nanf("")}}).ok());
}

std::vector<Brush> u_pad() {
  return {brush_from_box({-64, -48, 0}, {64, 48, 8}), brush_from_box({-64, -48, 8}, {-52, 48, 40}),
          brush_from_box({52, -48, 8}, {64, 48, 40})};
}

TEST(PropModel, BrushModel) {
  const PropModelResult r = make_brush_model("pad", u_pad());
  ASSERT_TRUE(r.ok()) << r.error;
  const PropModel& m = *r.model;
  EXPECT_TRUE(m.concave);
  EXPECT_EQ(m.brushes.size(), 3u);
  EXPECT_EQ(m.face_count, 18);
  EXPECT_EQ(m.local_box.min, (Vec3{-64, -48, 0}));
  EXPECT_EQ(m.local_box.max, (Vec3{64, 48, 40}));
  ASSERT_EQ(m.brush_vertices.size(), 3u);
  std::vector<Vec3> corners;
  for (std::size_t i = 0; i < 3; ++i) {
    const Brush& b = m.brushes[i];
    const Vec3 lo{-b.planes[1].d, -b.planes[3].d, -b.planes[5].d};
    const Vec3 hi{b.planes[0].d, b.planes[2].d, b.planes[4].d};
    std::set<std::array<float, 3>> want, got;
    for (int c = 0; c < 8; ++c)
      want.insert({c & 1 ? hi.x : lo.x, c & 2 ? hi.y : lo.y, c & 4 ? hi.z : lo.z});
    for (Vec3 v : m.brush_vertices[i]) {
      got.insert({v.x, v.y, v.z});
      corners.push_back(v);
    }
    EXPECT_EQ(got, want) << "brush " << i;
    EXPECT_EQ(m.brush_boxes[i].min, lo);
    EXPECT_EQ(m.brush_boxes[i].max, hi);
  }
  // The bound is the hull of all corners: the 8 corners of the overall box (the wall tops' inner corners
  // lie on its top face).
  EXPECT_EQ(m.vertices.size(), 8u);
  std::mt19937 rng(5);
  expect_contains(m, corners, rng);
  // The model's tree holds exactly the brushes' interiors (brute force over the brushes).
  for (int i = 0; i < 2000; ++i) {
    const Vec3 p{float(uniform_double(rng, -70, 70)), float(uniform_double(rng, -55, 55)),
                 float(uniform_double(rng, -5, 45))};
    std::int32_t want = kNoBrush;
    for (std::size_t b = 0; b < m.brushes.size(); ++b) {
      if (brush_contains(m.brushes[b], p)) want = std::int32_t(b);
    }
    EXPECT_EQ(m.tree.point_brush(p), want);
  }
}

TEST(PropModel, BrushModelErrorsNameTheBrush) {
  EXPECT_FALSE(make_brush_model("none", {}).ok());
  std::vector<Brush> unbounded = u_pad();
  unbounded[1].planes.pop_back();
  const PropModelResult a = make_brush_model("pad", unbounded);
  EXPECT_FALSE(a.ok());
  EXPECT_NE(a.error.find("brush 1"), std::string::npos) << a.error;
  std::vector<Brush> empty = u_pad();
  empty[2].planes.push_back({{1, 0, 0}, 0});  // x <= 0, but the brush is at x >= 52
  const PropModelResult b = make_brush_model("pad", empty);
  EXPECT_FALSE(b.ok());
  EXPECT_NE(b.error.find("brush 2"), std::string::npos) << b.error;
  std::vector<Brush> bad_normal = u_pad();
  bad_normal[0].planes[0].normal = {2, 0, 0};
  const PropModelResult c = make_brush_model("pad", bad_normal);
  EXPECT_FALSE(c.ok());
  EXPECT_NE(c.error.find("brush 0"), std::string::npos) << c.error;
}

}  // namespace
}  // namespace shiftcast
