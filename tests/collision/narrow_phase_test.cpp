// The narrow phase against oracles that share none of its algorithms:
//   - polytope pairs (boxes, hulls, and points/spheres as a centre plus a radius): the exact distance by
//     brute force over every vertex–triangle and segment–segment pair, certified by a separating plane,
//     and the exact depth from the supporting planes of the Minkowski difference's point set;
//   - every pair: a duality certificate from the reported result itself (the witnesses lie in their
//     shapes by closed-form membership tests, and Shape::support shows the normal separates them by the
//     reported distance), and for overlaps a sampled point deep inside both shapes;
//   - round pairs: closed forms against GJK on the same shapes, and dense surface sampling.
#include "collision/narrow_phase.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "collision/gjk.hpp"

namespace shiftcast {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// GJK's distance is exact to kGjkTolerance; twice that absorbs the float geometry's double rounding.
constexpr double kDistanceSlack = 2 * kGjkTolerance;
// Double rounding of the test geometry (float coordinates within ~100 units) is ~1e-13; exact answers
// (closed forms, probed axes, oracle plane sides) are compared with this much room.
constexpr double kRounding = 1e-9;
// The oracle's 2x2 systems count as singular below this relative determinant (sine² of the angle).
constexpr double kSingular = 1e-12;
// GJK witnesses are barycentric sums of rotated float vertices: on their shapes to about this.
constexpr double kWitnessSlack = 1e-6;
// Certificates (a separating gap, a common interior point) must beat rounding by this much to count.
constexpr double kCertifyMargin = 1e-3;

class Rng {
 public:
  explicit Rng(unsigned seed) : gen_(seed) {}
  double uniform(double lo, double hi) { return lo + (hi - lo) * (double(gen_()) / 4294967296.0); }
  int index(int n) { return int(gen_() % unsigned(n)); }

 private:
  std::mt19937 gen_;
};

// ---- Closest points by explicit minimisation (no Voronoi regions, no simplices).

Vec3d closest_on_segment(Vec3d p, Vec3d a, Vec3d b) {
  const Vec3d e = b - a;
  const double ee = dot(e, e);
  return ee > 0 ? a + e * std::clamp(dot(p - a, e) / ee, 0.0, 1.0) : a;
}

Vec3d closest_on_triangle(Vec3d p, Vec3d a, Vec3d b, Vec3d c) {
  // Normal equations of min |a + s e1 + t e2 − p|²; if the minimiser is outside, an edge holds the answer.
  const Vec3d e1 = b - a, e2 = c - a, r = p - a;
  const double m11 = dot(e1, e1), m12 = dot(e1, e2), m22 = dot(e2, e2), det = m11 * m22 - m12 * m12;
  if (det > kSingular * m11 * m22) {
    const double s = (m22 * dot(e1, r) - m12 * dot(e2, r)) / det;
    const double t = (m11 * dot(e2, r) - m12 * dot(e1, r)) / det;
    if (s >= 0 && t >= 0 && s + t <= 1) return a + e1 * s + e2 * t;
  }
  Vec3d best = closest_on_segment(p, a, b);
  for (Vec3d q : {closest_on_segment(p, b, c), closest_on_segment(p, c, a)})
    if (length(q - p) < length(best - p)) best = q;
  return best;
}

struct Pair {
  Vec3d p, q;
  double distance() const { return length(q - p); }
};

// A convex quadratic on [0,1]² has its minimum at the interior critical point or on the square's edge.
Pair closest_segments(Vec3d a0, Vec3d a1, Vec3d b0, Vec3d b1) {
  Pair best{a0, closest_on_segment(a0, b0, b1)};
  const auto consider = [&](Pair c) {
    if (c.distance() < best.distance()) best = c;
  };
  consider({a1, closest_on_segment(a1, b0, b1)});
  consider({closest_on_segment(b0, a0, a1), b0});
  consider({closest_on_segment(b1, a0, a1), b1});
  const Vec3d u = a1 - a0, v = b1 - b0, w = a0 - b0;
  const double uu = dot(u, u), uv = dot(u, v), vv = dot(v, v), det = uu * vv - uv * uv;
  if (det > kSingular * uu * vv) {
    const double s = (uv * dot(v, w) - vv * dot(u, w)) / det, t = (uu * dot(v, w) - uv * dot(u, w)) / det;
    if (s > 0 && s < 1 && t > 0 && t < 1) consider({a0 + u * s, b0 + v * t});
  }
  return best;
}

// Closest pair of two convex polytopes given by points, over every vertex–triangle and segment–segment
// pair (the closest features of disjoint polytopes are always among them).
Pair brute_closest(const std::vector<Vec3d>& P, const std::vector<Vec3d>& Q) {
  Pair best{P[0], Q[0]};
  const auto consider = [&](Pair c) {
    if (c.distance() < best.distance()) best = c;
  };
  const auto vertex_triangles = [&](const std::vector<Vec3d>& V, const std::vector<Vec3d>& T, bool flip) {
    for (Vec3d v : V)
      for (size_t i = 0; i < T.size(); ++i)
        for (size_t j = i; j < T.size(); ++j)
          for (size_t k = j; k < T.size(); ++k) {
            const Vec3d c = closest_on_triangle(v, T[i], T[j], T[k]);
            consider(flip ? Pair{c, v} : Pair{v, c});
          }
  };
  vertex_triangles(P, Q, false);
  vertex_triangles(Q, P, true);
  for (size_t i = 0; i < P.size(); ++i)
    for (size_t j = i + 1; j < P.size(); ++j)
      for (size_t k = 0; k < Q.size(); ++k)
        for (size_t l = k + 1; l < Q.size(); ++l)
          consider(closest_segments(P[i], P[j], Q[k], Q[l]));
  return best;
}

// True when the plane through the closest pair, normal to it, has P behind and Q in front.
bool separated_by_pair(const std::vector<Vec3d>& P, const std::vector<Vec3d>& Q, const Pair& c) {
  const double d = c.distance();
  if (!(d > kRounding)) return false;
  const Vec3d n = (c.q - c.p) * (1.0 / d);
  for (Vec3d x : P)
    if (dot(n, x - c.p) > kRounding) return false;
  for (Vec3d x : Q)
    if (dot(n, x - c.q) < -kRounding) return false;
  return true;
}

// Supporting planes n·x = d (unit n, every point with n·x <= d) through triples of `points`.
struct FacetPlane {
  Vec3d n;
  double d;
};
std::vector<FacetPlane> supporting_planes(const std::vector<Vec3d>& pts, bool* full_dimensional) {
  std::vector<FacetPlane> out;
  *full_dimensional = false;
  for (size_t i = 0; i < pts.size(); ++i)
    for (size_t j = i + 1; j < pts.size(); ++j)
      for (size_t k = j + 1; k < pts.size(); ++k) {
        const Vec3d n = normalize(cross(pts[j] - pts[i], pts[k] - pts[i]));
        if (length(n) == 0) continue;
        const double d = dot(n, pts[i]);
        double lo = 0, hi = 0;
        for (Vec3d p : pts) {
          lo = std::min(lo, dot(n, p) - d), hi = std::max(hi, dot(n, p) - d);
          if (lo < -kRounding && hi > kRounding) break;
        }
        if (hi <= kRounding) out.push_back({n, d});
        if (lo >= -kRounding) out.push_back({-n, -d});
        *full_dimensional = *full_dimensional || lo < -kRounding || hi > kRounding;
      }
  return out;
}

// Depth of the origin inside conv(points): the distance to the nearest supporting plane.
double depth_of_origin(const std::vector<Vec3d>& pts) {
  bool full = false;
  double depth = kInf;
  for (const FacetPlane& f : supporting_planes(pts, &full))
    depth = std::min(depth, f.d);
  return full ? depth : 0.0;
}

// ---- Shapes, their world points, and closed-form membership.

struct HullInfo {
  std::vector<Vec3> vertices;
  std::vector<FacetPlane> facets;  // local frame
  bool full = false;               // has an interior
};
struct World {
  std::deque<HullInfo> hulls;  // hull vertices outlive the shapes that point at them
  Shape add_hull(std::vector<Vec3> v) {
    HullInfo& h = hulls.emplace_back();
    h.vertices = std::move(v);
    std::vector<Vec3d> d;
    for (Vec3 q : h.vertices)
      d.push_back(to_double(q));
    h.facets = supporting_planes(d, &h.full);
    return Shape::hull(h.vertices);
  }
  const HullInfo& info(const Shape& s) const {
    for (const HullInfo& h : hulls)
      if (h.vertices.data() == s.hull_vertices.data()) return h;
    ADD_FAILURE() << "hull not owned by this world";
    return hulls.front();
  }
};

Shape random_shape(Rng& rng, World& w, int kind) {
  const Vec3 off{float(rng.uniform(-4, 4)), float(rng.uniform(-4, 4)), float(rng.uniform(-4, 4))};
  switch (kind) {
    case 0:
      return Shape::point();
    case 1:
      return Shape::sphere(float(rng.uniform(0.5, 20)), off);
    case 2:
      return Shape::cylinder(float(rng.uniform(1, 20)), float(rng.uniform(1, 60)), off);
    case 3:
      return Shape::box(
          {float(rng.uniform(0.5, 20)), float(rng.uniform(0.5, 20)), float(rng.uniform(0.5, 20))}, off);
    default: {
      std::vector<Vec3> v(4 + rng.index(7));
      const Vec3d r{rng.uniform(2, 15), rng.uniform(2, 15), rng.uniform(2, 15)};
      for (Vec3& x : v) {
        const Vec3d u = normalize(Vec3d{rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1)});
        x = to_float(Vec3d{u.x * r.x, u.y * r.y, u.z * r.z} + to_double(off));
      }
      return w.add_hull(std::move(v));
    }
  }
}

Pose random_pose(Rng& rng, double spread) {
  return {{float(rng.uniform(-spread, spread)), float(rng.uniform(-spread, spread)),
           float(rng.uniform(-spread, spread))},
          float(rng.uniform(-kPi, kPi))};
}

// The polytope part of a point, sphere, box or hull in world space; spheres add their radius.
std::vector<Vec3d> core_points(const Shape& s, const Pose& p) {
  const Vec3d o = to_double(s.offset), h = to_double(s.half_extents);
  std::vector<Vec3d> out;
  if (s.kind == ShapeKind::kBox)
    for (int c = 0; c < 8; ++c)
      out.push_back(to_world(p, o + Vec3d{c & 1 ? h.x : -h.x, c & 2 ? h.y : -h.y, c & 4 ? h.z : -h.z}));
  else if (s.kind == ShapeKind::kHull)
    for (Vec3 v : s.hull_vertices)
      out.push_back(to_world(p, to_double(v)));
  else
    out.push_back(to_world(p, s.kind == ShapeKind::kPoint ? Vec3d{} : o));
  return out;
}
double core_margin(const Shape& s) {
  return s.kind == ShapeKind::kSphere ? s.radius : 0.0;
}

// Signed depth of x inside the shape: the radius of the largest ball around x inside it (negative or
// -inf outside; for hulls, the nearest supporting plane).
double inside_margin(const World& w, const Shape& s, const Pose& p, Vec3d x) {
  const Vec3d l = to_local(p, x) - to_double(s.offset);
  switch (s.kind) {
    case ShapeKind::kPoint:
      return -length(to_local(p, x));
    case ShapeKind::kSphere:
      return s.radius - length(l);
    case ShapeKind::kCylinder:
      return std::min({s.radius - std::sqrt(l.x * l.x + l.y * l.y), l.z, s.height - l.z});
    case ShapeKind::kBox:
      return std::min({s.half_extents.x - std::abs(l.x), s.half_extents.y - std::abs(l.y),
                       s.half_extents.z - std::abs(l.z)});
    case ShapeKind::kHull: {
      const HullInfo& h = w.info(s);
      double m = kInf;
      for (const FacetPlane& f : h.facets)
        m = std::min(m, f.d - dot(f.n, to_local(p, x)));
      return h.full ? m : -kInf;
    }
  }
  return -kInf;
}

// Distance from x to the shape (0 inside): closed forms, or brute force over a hull's triangles.
double outside_distance(const World& w, const Shape& s, const Pose& p, Vec3d x) {
  const Vec3d l = to_local(p, x) - to_double(s.offset);
  switch (s.kind) {
    case ShapeKind::kPoint:
    case ShapeKind::kSphere:
      return std::max(0.0, length(l) - (s.kind == ShapeKind::kSphere ? s.radius : 0.0f));
    case ShapeKind::kCylinder: {
      const double rho = std::sqrt(l.x * l.x + l.y * l.y);
      const double dz = l.z < 0 ? -l.z : std::max(0.0, l.z - s.height);
      return std::hypot(std::max(0.0, rho - s.radius), dz);
    }
    case ShapeKind::kBox: {
      const Vec3d h = to_double(s.half_extents);
      const Vec3d e{std::max(0.0, std::abs(l.x) - h.x), std::max(0.0, std::abs(l.y) - h.y),
                    std::max(0.0, std::abs(l.z) - h.z)};
      return length(e);
    }
    case ShapeKind::kHull: {
      if (inside_margin(w, s, p, x) >= 0) return 0;
      const std::vector<Vec3d> v = core_points(s, p);
      return brute_closest({x}, v).distance();
    }
  }
  return kInf;
}

// h_A(n) + h_B(−n) from Shape::support: > 0 is overlap along n, its negative the gap.
double overlap_along(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, Vec3d n) {
  return support_posed(a, pa, n) + support_posed(b, pb, -n);
}

// ---- Status, conventions, touching.

TEST(NarrowPhase, RefusesNonFinitePosesAndInvalidShapes) {
  const Shape box = Shape::box({1, 1, 1}), ball = Shape::sphere(1);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const Shape& other : {box, ball}) {
    for (Pose bad : {Pose{{nan, 0, 0}, 0}, Pose{{0, 0, inf}, 0}, Pose{{}, nan}, Pose{{}, inf}}) {
      for (const ShapeDistance& d :
           {shape_distance(other, bad, ball, {}), shape_distance(ball, {}, other, bad)}) {
        EXPECT_EQ(d.status, QueryStatus::kNonFiniteInput);
        EXPECT_FALSE(d.overlapping);
        EXPECT_EQ(d.iterations, 0);
      }
      EXPECT_FALSE(separated_along(other, bad, ball, {{100, 0, 0}, 0}, {1, 0, 0}, 0));
    }
    for (const Shape& bad : {Shape::sphere(-1), Shape::cylinder(nan, 1), Shape::box({1, -1, 1}),
                             Shape::hull({}), Shape::sphere(1, {inf, 0, 0})}) {
      EXPECT_EQ(shape_distance(bad, {}, other, {}).status, QueryStatus::kInvalidShape);
      EXPECT_EQ(shape_distance(other, {}, bad, {}).status, QueryStatus::kInvalidShape);
    }
  }
  EXPECT_TRUE(is_round(Shape::point()) && is_round(ball) && is_round(Shape::cylinder(1, 1)));
  EXPECT_FALSE(is_round(box) || is_round(Shape::hull(std::span<const Vec3>(&box.offset, 1))));
}

TEST(NarrowPhase, ClosedFormsKnownValues) {
  const ShapeDistance ss =
      shape_distance(Shape::sphere(2), {{0, 0, 0}, 0}, Shape::sphere(3), {{10, 0, 0}, 0});
  EXPECT_DOUBLE_EQ(ss.distance, 5);
  EXPECT_EQ(ss.normal, (Vec3d{1, 0, 0}));
  EXPECT_EQ(ss.point_a, (Vec3d{2, 0, 0}));
  EXPECT_EQ(ss.point_b, (Vec3d{7, 0, 0}));
  // Coincident centres: a fixed normal (+z), full depth.
  const ShapeDistance co = shape_distance(Shape::sphere(2), {}, Shape::sphere(3), {});
  EXPECT_TRUE(co.overlapping);
  EXPECT_DOUBLE_EQ(co.distance, -5);
  EXPECT_EQ(co.normal, (Vec3d{0, 0, 1}));
  // Sphere centre inside a player cylinder near its top: out through the top cap.
  const ShapeDistance sc = shape_distance(Shape::sphere(4), {{3, 0, 50}, 0}, Shape::cylinder(15, 56), {});
  EXPECT_DOUBLE_EQ(sc.distance, -10);
  EXPECT_EQ(sc.normal, (Vec3d{0, 0, -1}));  // from the sphere towards the cylinder: b moves down
  // Cylinder offsets rotate with yaw: offset (10,0,0) at yaw pi/2 puts the cylinder at y = 10.
  const ShapeDistance cc = shape_distance(Shape::cylinder(2, 10, {10, 0, 0}), {{0, 0, 0}, kPi / 2},
                                          Shape::cylinder(3, 10), {{0, 20, 0}, 0});
  EXPECT_NEAR(cc.distance, 5, 1e-5);  // float pi/2 is a quarter turn only to ~4e-8
  EXPECT_NEAR(cc.normal.y, 1, 1e-9);
  // Rim to rim: both gaps positive.
  const ShapeDistance rim = shape_distance(Shape::cylinder(1, 1), {}, Shape::cylinder(1, 1), {{5, 0, 5}, 0});
  EXPECT_DOUBLE_EQ(rim.distance, 5);
  EXPECT_NEAR(rim.normal.x, 0.6, 1e-15);
  EXPECT_NEAR(rim.normal.z, 0.8, 1e-15);
}

TEST(NarrowPhase, TouchingIsNotOverlapping) {
  struct Case {
    Shape a, b;
    Pose pb;
    Vec3d inward;  // moving b this way makes them overlap
  };
  World world;
  const Shape tetra = world.add_hull({{16, -4, -4}, {16, 4, -4}, {16, 0, 4}, {24, 0, 0}});
  const Shape player = Shape::cylinder(15, 56), crate = Shape::box({16, 16, 16});
  const Case cases[] = {
      {Shape::sphere(2), Shape::sphere(3), {{5, 0, 0}, 0}, {-1, 0, 0}},
      {Shape::point(), Shape::sphere(2), {{0, 0, 2}, 0}, {0, 0, -1}},
      {player, player, {{0, 0, 56}, 0}, {0, 0, -1}},             // stacked caps
      {player, player, {{18, 24, 10}, 0}, {-0.6, -0.8, 0}},      // sides, |dxy| = 30
      {player, Shape::sphere(5), {{3, 4, 61}, 0}, {0, 0, -1}},   // ball on the cap
      {player, Shape::sphere(5), {{20, 0, 30}, 0}, {-1, 0, 0}},  // ball on the side
      {crate, crate, {{32, 5, 3}, 0}, {-1, 0, 0}},               // box faces (GJK)
      {crate, crate, {{0, 0, 32}, 0}, {0, 0, -1}},
      {crate, Shape::sphere(5), {{21, 0, 0}, 0}, {-1, 0, 0}},  // sphere on a box face
      {crate, player, {{0, 0, 16}, 0}, {0, 0, -1}},            // player standing on a crate
      {crate, tetra, {{0, 0, 0}, 0}, {-1, 0, 0}},              // hull face on a box face
  };
  for (const Case& c : cases) {
    const ShapeDistance d = shape_distance(c.a, {}, c.b, c.pb);
    EXPECT_FALSE(d.overlapping) << int(c.a.kind) << " " << int(c.b.kind);
    EXPECT_NEAR(d.distance, 0, 1e-12);
    // The witnesses are the contact: each lies on the other shape too.
    EXPECT_LT(outside_distance(world, c.b, c.pb, d.point_a), kRounding);
    EXPECT_LT(outside_distance(world, c.a, {}, d.point_b), kRounding);
    Pose in = c.pb, out = c.pb;
    in.position = to_float(to_double(c.pb.position) + c.inward * 1e-3);
    out.position = to_float(to_double(c.pb.position) - c.inward * 1e-3);
    const ShapeDistance di = shape_distance(c.a, {}, c.b, in), dout = shape_distance(c.a, {}, c.b, out);
    EXPECT_TRUE(di.overlapping);
    EXPECT_NEAR(di.distance, -1e-3, 1e-5);
    EXPECT_FALSE(dout.overlapping);
    EXPECT_NEAR(dout.distance, 1e-3, 1e-5);
  }
}

// ---- Random pairs.

constexpr const char* kKindName[] = {"point", "sphere", "cylinder", "box", "hull"};

struct Sample {
  World world;
  Shape a, b;
  Pose pa, pb;
};

// A pair about as likely to overlap as not: b within ~30 units of a.
void random_pair(Rng& rng, int kind_a, int kind_b, Sample& s, double spread = 30) {
  s.world.hulls.clear();
  s.a = random_shape(rng, s.world, kind_a);
  s.b = random_shape(rng, s.world, kind_b);
  s.pa = random_pose(rng, 5);
  s.pb = random_pose(rng, spread);
}

TEST(NarrowPhase, PolytopePairsMatchBruteForce) {
  Rng rng(20240601);
  const int kinds[] = {0, 1, 3, 4};
  Sample s;
  int apart = 0, overlapping = 0;
  for (int ka : kinds)
    for (int kb : kinds)
      for (int i = 0; i < 60; ++i) {
        random_pair(rng, ka, kb, s, 18);
        const ShapeDistance d = shape_distance(s.a, s.pa, s.b, s.pb);
        ASSERT_EQ(d.status, QueryStatus::kOk);
        const std::vector<Vec3d> P = core_points(s.a, s.pa), Q = core_points(s.b, s.pb);
        const double margins = core_margin(s.a) + core_margin(s.b);
        const Pair c = brute_closest(P, Q);
        SCOPED_TRACE(testing::Message() << kKindName[ka] << " vs " << kKindName[kb] << " #" << i);
        if (separated_by_pair(P, Q, c)) {
          // Cores apart: exact distance, or a sphere's exact depth.
          const double truth = c.distance() - margins;
          if (std::abs(truth) > kDistanceSlack) {
            EXPECT_EQ(d.overlapping, truth < 0);
          }
          EXPECT_NEAR(d.distance, truth, kDistanceSlack);
          ++(truth < 0 ? overlapping : apart);
          continue;
        }
        std::vector<Vec3d> diff;
        for (Vec3d p : P)
          for (Vec3d q : Q)
            diff.push_back(q - p);
        const double depth = depth_of_origin(diff) + margins;
        if (depth > kDistanceSlack) {
          EXPECT_TRUE(d.overlapping);
        }
        if (!d.overlapping) continue;
        ++overlapping;
        // The depth is an upper bound: exact for boxes, points and spheres (their axes are probed), within
        // EPA's tolerance with hulls.
        EXPECT_GE(-d.distance, depth - kRounding);
        EXPECT_NEAR(-d.distance, depth, ka != 4 && kb != 4 ? kRounding : kDistanceSlack);
      }
  EXPECT_GT(apart, 300);
  EXPECT_GT(overlapping, 300);
}

TEST(NarrowPhase, ClosedFormsAgreeWithGjk) {
  Rng rng(77);
  Sample s;
  for (int ka = 0; ka < 3; ++ka)
    for (int kb = 0; kb < 3; ++kb)
      for (int i = 0; i < 300; ++i) {
        random_pair(rng, ka, kb, s);
        SCOPED_TRACE(testing::Message() << kKindName[ka] << " vs " << kKindName[kb] << " #" << i);
        const ShapeDistance c = shape_distance(s.a, s.pa, s.b, s.pb);
        EXPECT_EQ(c.iterations, 0);
        EXPECT_NEAR(length(c.normal), 1, kRounding);
        // Witnesses differ by exactly distance · normal, apart or overlapping.
        const Vec3d gap = c.point_b - c.point_a - c.normal * c.distance;
        EXPECT_LT(length(gap), kRounding);
        for (gjk::Margins m : {gjk::Margins::kSphereAsMargin, gjk::Margins::kFullSupport}) {
          const ShapeDistance g = gjk::shape_distance(s.a, s.pa, s.b, s.pb, m);
          if (std::abs(c.distance) > kDistanceSlack) {
            EXPECT_EQ(g.overlapping, c.overlapping);
          }
          if (c.distance >= 0) {
            EXPECT_NEAR(g.distance, c.distance, kDistanceSlack);
          } else if (m == gjk::Margins::kSphereAsMargin) {
            EXPECT_NEAR(g.distance, c.distance, kRounding);  // the probe holds every round pair's axis
          } else {
            EXPECT_LE(g.distance, c.distance + kRounding);  // an upper bound on the depth
          }
        }
      }
}

// Unit directions spread over the sphere (Fibonacci lattice) for the separating-plane certificate.
std::vector<Vec3d> sphere_directions(int n) {
  std::vector<Vec3d> out;
  const double golden = std::numbers::pi * (3 - std::sqrt(5.0));
  for (int i = 0; i < n; ++i) {
    const double z = 1 - (i + 0.5) * 2 / n, r = std::sqrt(1 - z * z);
    out.push_back({r * std::cos(golden * i), r * std::sin(golden * i), z});
  }
  return out;
}

struct Certified {
  double gap = -kInf;    // a proven lower bound on the distance (from a separating plane)
  double depth = -kInf;  // a proven lower bound on the depth (two balls around one point)
};

Certified certify(const Sample& s, const ShapeDistance& d, const std::vector<Vec3d>& dirs) {
  Certified c;
  std::vector<Vec3d> axes = dirs;
  axes.push_back(d.normal);
  for (Vec3d n : axes)
    if (length(n) > 0) c.gap = std::max(c.gap, -overlap_along(s.a, s.pa, s.b, s.pb, normalize(n)));
  if (c.gap > 0) return c;
  // Common interior points: a grid over the intersection of the bounding boxes, and the witnesses' middle.
  Vec3d lo, hi;
  for (int i = 0; i < 3; ++i) {
    Vec3d e{};
    e[i] = 1;
    lo[i] = std::max(-support_posed(s.a, s.pa, -e), -support_posed(s.b, s.pb, -e));
    hi[i] = std::min(support_posed(s.a, s.pa, e), support_posed(s.b, s.pb, e));
  }
  const auto consider = [&](Vec3d x) {
    const double ma = inside_margin(s.world, s.a, s.pa, x), mb = inside_margin(s.world, s.b, s.pb, x);
    // A point (margin 0) in the other's interior is an overlap too: a closed ball of radius 0.
    if (ma >= 0 && mb >= 0) c.depth = std::max(c.depth, ma + mb);
  };
  for (int i = 0; i <= 8; ++i)
    consider(lerp(d.point_a, d.point_b, i / 8.0));
  consider(to_world(s.pa, to_double(s.a.offset)));
  consider(to_world(s.pb, to_double(s.b.offset)));
  constexpr int kGrid = 9;
  for (int i = 0; i < kGrid; ++i)
    for (int j = 0; j < kGrid; ++j)
      for (int k = 0; k < kGrid; ++k)
        consider(lo + Vec3d{(hi.x - lo.x) * (i + 0.5) / kGrid, (hi.y - lo.y) * (j + 0.5) / kGrid,
                            (hi.z - lo.z) * (k + 0.5) / kGrid});
  return c;
}

TEST(NarrowPhase, EveryKindPairIsCertified) {
  Rng rng(4242);
  const std::vector<Vec3d> dirs = sphere_directions(400);
  Sample s;
  int ambiguous = 0, total = 0;
  for (int ka = 0; ka < 5; ++ka)
    for (int kb = 0; kb < 5; ++kb)
      for (int i = 0; i < 200; ++i, ++total) {
        random_pair(rng, ka, kb, s);
        SCOPED_TRACE(testing::Message() << kKindName[ka] << " vs " << kKindName[kb] << " #" << i);
        const ShapeDistance d = shape_distance(s.a, s.pa, s.b, s.pb);
        ASSERT_EQ(d.status, QueryStatus::kOk);
        ASSERT_NEAR(length(d.normal), 1, kRounding);
        if (!d.overlapping) {
          // Duality: witnesses in the shapes bound the distance above, the normal's plane below.
          EXPECT_LT(outside_distance(s.world, s.a, s.pa, d.point_a), kWitnessSlack);
          EXPECT_LT(outside_distance(s.world, s.b, s.pb, d.point_b), kWitnessSlack);
          EXPECT_NEAR(length(d.point_b - d.point_a), d.distance, kWitnessSlack);
          EXPECT_GE(-overlap_along(s.a, s.pa, s.b, s.pb, d.normal), d.distance - kDistanceSlack);
        } else {
          // Moving b by the reported depth along the normal leaves them at most touching (up to the
          // float rounding of the moved position, ~4e-6 at these coordinates).
          Pose moved = s.pb;
          moved.position = to_float(to_double(s.pb.position) + d.normal * (-d.distance));
          EXPECT_LE(overlap_along(s.a, s.pa, s.b, moved, d.normal), 1e-5);
        }
        const Certified c = certify(s, d, dirs);
        if (c.gap > kCertifyMargin) {
          EXPECT_FALSE(d.overlapping);
          EXPECT_GE(d.distance, c.gap - kDistanceSlack);
        } else if (c.depth > kCertifyMargin) {
          EXPECT_TRUE(d.overlapping);
          EXPECT_GE(-d.distance, c.depth - kRounding);
        } else {
          ++ambiguous;  // shallow overlaps the grid missed, or grazing pairs
        }
      }
  std::printf("certified %d of %d random pairs\n", total - ambiguous, total);
  EXPECT_LT(ambiguous, total / 50);
}

TEST(NarrowPhase, DegenerateHullsMatchBruteForce) {
  World world;
  const Shape hulls[] = {
      world.add_hull({{-8, -8, 0}, {8, -8, 0}, {8, 8, 0}, {-8, 8, 0}}),  // flat square
      world.add_hull({{-8, -8, 0}, {-8, -8, 0}, {8, -8, 0}, {8, 8, 0}, {8, 8, 0}, {-8, 8, 0}, {0, 0, 0}}),
      world.add_hull({{-10, 0, 0}, {0, 0, 0}, {10, 0, 0}}),  // collinear: a segment
      world.add_hull({{3, 1, 2}, {3, 1, 2}, {3, 1, 2}}),     // one point, three times
      world.add_hull({{0, 0, 0}, {10, 0, 0}, {0, 10, 0}, {0, 0, 10}, {0, 0, 0}, {10, 0, 0}, {0, 10, 0}}),
      world.add_hull({{-8, -8, 0}, {8, -8, 0}, {8, 8, 0}, {-8, 8, 0}, {0, 0, 1e-4f}}),  // almost flat
  };
  const Shape others[] = {
      Shape::box({6, 4, 5}), Shape::box({6, 4, 0}), Shape::sphere(3), Shape::point(), hulls[0], hulls[2]};
  Rng rng(555);
  for (const Shape& h : hulls)
    for (const Shape& o : others)
      for (int i = 0; i < 40; ++i) {
        const Pose ph = random_pose(rng, 3), po = random_pose(rng, 16);
        SCOPED_TRACE(testing::Message()
                     << "hull " << (&h - hulls) << " other " << (&o - others) << " #" << i);
        const ShapeDistance d = shape_distance(h, ph, o, po);
        ASSERT_EQ(d.status, QueryStatus::kOk);
        EXPECT_LT(d.iterations, kGjkMaxIterations);
        const std::vector<Vec3d> P = core_points(h, ph), Q = core_points(o, po);
        const Pair c = brute_closest(P, Q);
        if (separated_by_pair(P, Q, c)) {
          EXPECT_NEAR(d.distance, c.distance() - core_margin(o), kDistanceSlack);
          continue;
        }
        std::vector<Vec3d> diff;
        for (Vec3d p : P)
          for (Vec3d q : Q)
            diff.push_back(q - p);
        const double depth = depth_of_origin(diff) + core_margin(o);
        EXPECT_EQ(d.overlapping, depth > 0);
        EXPECT_NEAR(d.distance, -depth, depth > 0 ? kInf : kDistanceSlack);
      }
  // Coplanar flat shapes overlapping in their plane share no interior: touching at distance 0.
  for (const Shape& o : {hulls[0], hulls[1], Shape::box({6, 4, 0})}) {
    const ShapeDistance d = shape_distance(hulls[0], {{0, 0, 5}, 0.3f}, o, {{2, 3, 5}, -1.1f});
    EXPECT_FALSE(d.overlapping);
    EXPECT_NEAR(d.distance, 0, 1e-12);
  }
  const ShapeDistance discs =
      shape_distance(Shape::cylinder(5, 0), {}, Shape::cylinder(5, 0), {{3, 0, 0}, 0});
  EXPECT_FALSE(discs.overlapping);
  EXPECT_EQ(discs.distance, 0);
}

TEST(NarrowPhase, AgreesWithDenseSurfaceSampling) {
  // Samples on a's surface; the least exact distance from them to b approaches the distance from above.
  const auto samples = [](const Shape& s, const Pose& p) {
    std::vector<Vec3d> out;
    const Vec3d o = to_double(s.offset);
    for (int i = 0; i < 720; ++i) {
      const double phi = 2 * std::numbers::pi * i / 720;
      const Vec3d u{std::cos(phi), std::sin(phi), 0};
      if (s.kind == ShapeKind::kSphere) {
        for (int j = 0; j <= 360; ++j) {
          const double theta = std::numbers::pi * j / 360;
          out.push_back(
              to_world(p, o + (u * std::sin(theta) + Vec3d{0, 0, std::cos(theta)}) * double(s.radius)));
        }
        continue;
      }
      for (int j = 0; j <= 240; ++j)
        out.push_back(to_world(p, o + u * double(s.radius) + Vec3d{0, 0, s.height * j / 240.0}));
      for (int j = 0; j < 60; ++j)
        for (double z : {0.0, double(s.height)})
          out.push_back(to_world(p, o + u * (s.radius * j / 60.0) + Vec3d{0, 0, z}));
    }
    return out;
  };
  Rng rng(31337);
  World world;
  const int pairs[][2] = {{2, 2}, {1, 2}, {2, 1}, {2, 3}, {1, 3}};
  double worst = 0;
  for (const auto& k : pairs)
    for (int n = 0; n < 8;) {
      const Shape a = random_shape(rng, world, k[0]), b = random_shape(rng, world, k[1]);
      const Pose pa = random_pose(rng, 5), pb = random_pose(rng, 40);
      const ShapeDistance d = shape_distance(a, pa, b, pb);
      if (d.overlapping || d.distance < 0.5) continue;
      ++n;
      double sampled = kInf;
      for (Vec3d x : samples(a, pa))
        sampled = std::min(sampled, outside_distance(world, b, pb, x));
      EXPECT_LE(d.distance, sampled + kDistanceSlack) << k[0] << " " << k[1];
      worst = std::max(worst, sampled - d.distance);
    }
  // Spacing is ~0.17 units on a radius-20 rim and 0.25 in height; the minimum is smooth, so the error
  // is second order in it.
  EXPECT_LT(worst, 0.01);
  std::printf("dense sampling: worst sampled - reported = %.2e\n", worst);
}

TEST(NarrowPhase, DeterministicAndSymmetric) {
  Sample s;
  const auto same_bits = [](const ShapeDistance& x, const ShapeDistance& y) {
    const double fx[] = {x.distance,  x.point_a.x, x.point_a.y, x.point_a.z, x.point_b.x,
                         x.point_b.y, x.point_b.z, x.normal.x,  x.normal.y,  x.normal.z};
    const double fy[] = {y.distance,  y.point_a.x, y.point_a.y, y.point_a.z, y.point_b.x,
                         y.point_b.y, y.point_b.z, y.normal.x,  y.normal.y,  y.normal.z};
    return std::memcmp(fx, fy, sizeof fx) == 0 && x.overlapping == y.overlapping &&
           x.iterations == y.iterations && x.status == y.status;
  };
  std::vector<ShapeDistance> first;
  for (int pass = 0; pass < 2; ++pass) {
    Rng replay(8080);
    for (int i = 0; i < 1000; ++i) {
      random_pair(replay, i % 5, (i / 5) % 5, s);
      const ShapeDistance d = shape_distance(s.a, s.pa, s.b, s.pb);
      if (pass == 0) {
        first.push_back(d);
        // Swapping the arguments mirrors the answer.
        const ShapeDistance m = shape_distance(s.b, s.pb, s.a, s.pa);
        if (std::abs(d.distance) > kDistanceSlack) {
          EXPECT_EQ(m.overlapping, d.overlapping) << i;
        }
        if (!d.overlapping) {
          EXPECT_NEAR(m.distance, d.distance, kDistanceSlack) << i;
        }
      } else {
        EXPECT_TRUE(same_bits(first[i], d)) << i;
      }
    }
  }
}

TEST(NarrowPhase, SeparatedAlongMatchesVertexExtremes) {
  Rng rng(2718);
  Sample s;
  int checked = 0;
  for (int i = 0; i < 3000; ++i) {
    random_pair(rng, 3 + i % 2, (i / 2) % 2 == 0 ? 3 : 4, s, 40);
    const Vec3d axis{rng.uniform(-5, 5), rng.uniform(-5, 5), rng.uniform(-5, 5)};
    const double gap = rng.uniform(-3, 3);
    const Vec3d n = normalize(axis);
    double max_a = -kInf, min_b = kInf;
    for (Vec3d x : core_points(s.a, s.pa))
      max_a = std::max(max_a, dot(n, x));
    for (Vec3d x : core_points(s.b, s.pb))
      min_b = std::min(min_b, dot(n, x));
    if (std::abs(max_a + gap - min_b) < kRounding) continue;
    ++checked;
    EXPECT_EQ(separated_along(s.a, s.pa, s.b, s.pb, axis, gap), max_a + gap < min_b) << i;
    EXPECT_EQ(separated_along(s.a, s.pa, s.b, s.pb, axis * 1e6, gap), max_a + gap < min_b) << i;
  }
  EXPECT_GT(checked, 2900);
  const Shape ball = Shape::sphere(1);
  const Pose far{{10, 0, 0}, 0};
  EXPECT_TRUE(separated_along(ball, {}, ball, far, {1, 0, 0}, 7.9));
  EXPECT_FALSE(separated_along(ball, {}, ball, far, {1, 0, 0}, 8));  // exactly 8 to spare is not "more"
  EXPECT_FALSE(separated_along(ball, {}, ball, far, {-1, 0, 0}, 0));
  EXPECT_FALSE(separated_along(ball, {}, ball, far, {0, 0, 0}, -100));
  EXPECT_FALSE(separated_along(ball, {}, ball, far, {std::nan(""), 1, 0}, -100));
  EXPECT_FALSE(separated_along(ball, {}, ball, far, {kInf, 0, 0}, -100));
}

TEST(NarrowPhase, GjkIterationCounts) {
  Rng rng(1234);
  Sample s;
  std::printf("GJK iterations (mean / max over 400 random pairs, b within 30 units):\n");
  for (int ka = 0; ka < 5; ++ka)
    for (int kb = ka; kb < 5; ++kb) {
      if (ka < 3 && kb < 3) continue;  // closed forms
      int total = 0, most = 0;
      for (int i = 0; i < 400; ++i) {
        random_pair(rng, ka, kb, s);
        const int it = shape_distance(s.a, s.pa, s.b, s.pb).iterations;
        total += it, most = std::max(most, it);
      }
      std::printf("  %-8s %-8s %5.2f / %d\n", kKindName[ka], kKindName[kb], total / 400.0, most);
      EXPECT_LT(most, kGjkMaxIterations);
    }
}

}  // namespace
}  // namespace shiftcast
