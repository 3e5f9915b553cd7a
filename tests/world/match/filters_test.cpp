// The filter cascade against two oracles.
//
// 1. The stages against the hard case, on many thousands of random pairs of every kind (players,
//    projectiles, boxes, hulls, concave pads) placed near each other with random yaws: no stage ever says
//    "apart" about a pair the hard case puts within reach, and FilterCascade::test answers exactly as
//    hard_case does, even with a per-pair axis cache full of stale axes from other pairs.
// 2. The hard case against an exact polytope oracle that shares no code with the narrow phase, the prop's
//    tree or the hull builder: every shape becomes convex polytopes (a sphere: its centre plus a margin; a
//    cylinder: inscribed and circumscribed 16-sided prisms, which bound its signed distance from both
//    sides; a pad: its boxes), and the signed distance of two polytopes is found by brute force — the
//    separating-axis theorem over face normals and edge cross products decides overlap and gives the
//    depth, vertex–triangle and edge–edge distances give the gap. Pairs within kOracleMargin of the
//    threshold (after the prism bounds) are not judged, and are counted so the test cannot pass vacuously.
#include "world/match/filters.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <numbers>
#include <random>
#include <vector>

#include "collision/brush.hpp"
#include "collision/narrow_phase.hpp"
#include "tests/support/seeded_random.hpp"
#include "world/match/prop_model.hpp"

namespace shiftcast {
namespace {

// Oracle and hard case must agree on pairs further than this from the threshold: far above GJK's
// tolerance and the float rounding of posed corners, far below any feature of the shapes.
constexpr double kOracleMargin = 1e-3;
constexpr int kPrismSides = 16;
// The world's kContactDistance (world/match/simulation.hpp), restated to keep this test off the simulation.
constexpr float kContactDistanceForTest = 0.25f;
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------------------
// The polytope oracle.

struct Poly {
  std::vector<Vec3d> v;
  std::vector<std::array<int, 3>> tris;  // cover the surface (orientation irrelevant)
  std::vector<std::array<int, 2>> edges;
  std::vector<Vec3d> normals;  // face normals (either sign)
  double margin = 0;           // the solid is the polytope grown by this (spheres)
};

Vec3d closest_on_segment(Vec3d p, Vec3d a, Vec3d b) {
  const Vec3d ab = b - a;
  const double t = std::clamp(dot(p - a, ab) / dot(ab, ab), 0.0, 1.0);
  return a + ab * t;
}

double point_triangle(Vec3d p, Vec3d a, Vec3d b, Vec3d c) {
  const Vec3d n = cross(b - a, c - a);
  const double area2 = dot(n, n);
  const double s = dot(cross(b - a, p - a), n) / area2;  // weight of c
  const double t = dot(cross(p - a, c - a), n) / area2;  // weight of b
  if (s >= 0 && t >= 0 && s + t <= 1) return std::abs(dot(p - a, n)) / std::sqrt(area2);
  return std::min({length(p - closest_on_segment(p, a, b)), length(p - closest_on_segment(p, b, c)),
                   length(p - closest_on_segment(p, c, a))});
}

// Distance between segments pq and rs by minimising over both parameters (Ericson 5.1.9).
double segment_segment(Vec3d p, Vec3d q, Vec3d r, Vec3d s) {
  const Vec3d d1 = q - p, d2 = s - r, w = p - r;
  const double a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, w), c = dot(d1, w), b = dot(d1, d2);
  const double denom = a * e - b * b;
  double u = denom > 1e-12 * a * e ? std::clamp((b * f - c * e) / denom, 0.0, 1.0) : 0.0;
  double t = (b * u + f) / e;
  if (t < 0 || t > 1) {
    t = std::clamp(t, 0.0, 1.0);
    u = std::clamp((t * b - c) / a, 0.0, 1.0);
  }
  return length((p + d1 * u) - (r + d2 * t));
}

std::pair<double, double> project(const Poly& poly, Vec3d u) {
  double lo = kInf, hi = -kInf;
  for (Vec3d p : poly.v) {
    lo = std::min(lo, dot(u, p));
    hi = std::max(hi, dot(u, p));
  }
  return {lo, hi};
}

double signed_distance(const Poly& a, const Poly& b) {
  std::vector<Vec3d> axes = a.normals;
  axes.insert(axes.end(), b.normals.begin(), b.normals.end());
  for (const auto& ea : a.edges) {
    for (const auto& eb : b.edges) {
      const Vec3d c = cross(a.v[std::size_t(ea[1])] - a.v[std::size_t(ea[0])],
                            b.v[std::size_t(eb[1])] - b.v[std::size_t(eb[0])]);
      if (length(c) > 1e-9) axes.push_back(normalize(c));
    }
  }
  if (a.v.size() == 1 && b.v.size() == 1) axes.push_back(normalize(b.v[0] - a.v[0]));
  double gap = -kInf;
  for (Vec3d u : axes) {
    const auto [alo, ahi] = project(a, u);
    const auto [blo, bhi] = project(b, u);
    gap = std::max(gap, std::max(blo - ahi, alo - bhi));
  }
  const double margins = a.margin + b.margin;
  if (gap <= 0) return gap - margins;  // overlap: minus the depth (SAT is exact for polytopes)
  double d = kInf;
  if (a.v.size() == 1 && b.v.size() == 1) d = length(b.v[0] - a.v[0]);
  for (int pass = 0; pass < 2; ++pass) {
    const Poly& p = pass == 0 ? a : b;
    const Poly& q = pass == 0 ? b : a;
    for (Vec3d x : p.v) {
      for (const auto& t : q.tris)
        d = std::min(
            d, point_triangle(x, q.v[std::size_t(t[0])], q.v[std::size_t(t[1])], q.v[std::size_t(t[2])]));
    }
  }
  for (const auto& ea : a.edges) {
    for (const auto& eb : b.edges) {
      d = std::min(d, segment_segment(a.v[std::size_t(ea[0])], a.v[std::size_t(ea[1])],
                                      b.v[std::size_t(eb[0])], b.v[std::size_t(eb[1])]));
    }
  }
  return d - margins;
}

Poly oracle_point(Vec3d c, double margin) {
  return {{c}, {}, {}, {}, margin};
}

// An axis-aligned box [lo, hi] in a frame placed at `pose`.
Poly oracle_box(Vec3 lo, Vec3 hi, const Pose& pose) {
  Poly p;
  for (int i = 0; i < 8; ++i) {
    p.v.push_back(to_world(pose, Vec3d{i & 1 ? hi.x : lo.x, i & 2 ? hi.y : lo.y, i & 4 ? hi.z : lo.z}));
  }
  const int quads[6][4] = {{0, 1, 3, 2}, {4, 5, 7, 6}, {0, 1, 5, 4},
                           {2, 3, 7, 6}, {0, 2, 6, 4}, {1, 3, 7, 5}};
  for (const auto& q : quads) {
    p.tris.push_back({q[0], q[1], q[2]});
    p.tris.push_back({q[0], q[2], q[3]});
  }
  p.edges = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {0, 2}, {1, 3}, {4, 6}, {5, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
  for (int axis = 0; axis < 3; ++axis) {
    Vec3d n{};
    n[axis] = 1;
    p.normals.push_back(direction_to_world(pose, n));
  }
  return p;
}

// An upright prism with kPrismSides sides whose vertices lie at `vertex_radius` from the axis.
Poly oracle_prism(Vec3d bottom, double vertex_radius, double height) {
  Poly p;
  const int k = kPrismSides;
  for (int i = 0; i < k; ++i) {
    const double angle = 2 * std::numbers::pi * i / k;
    const Vec3d r{vertex_radius * std::cos(angle), vertex_radius * std::sin(angle), 0};
    p.v.push_back(bottom + r);
    p.v.push_back(bottom + r + Vec3d{0, 0, height});
  }
  for (int i = 0; i < k; ++i) {
    const int j = (i + 1) % k;
    p.tris.push_back({2 * i, 2 * j, 2 * j + 1});
    p.tris.push_back({2 * i, 2 * j + 1, 2 * i + 1});
    if (i > 0 && j > 0) {
      p.tris.push_back({0, 2 * i, 2 * j});
      p.tris.push_back({1, 2 * i + 1, 2 * j + 1});
    }
    p.edges.push_back({2 * i, 2 * j});
    p.edges.push_back({2 * i + 1, 2 * j + 1});
    p.edges.push_back({2 * i, 2 * i + 1});
    p.normals.push_back(normalize(cross(p.v[std::size_t(2 * j)] - p.v[std::size_t(2 * i)], Vec3d{0, 0, 1})));
  }
  p.normals.push_back({0, 0, 1});
  return p;
}

// The hull of points in general position, brute force: every triangle with all other points on one side.
Poly oracle_hull(const std::vector<Vec3>& local, const Pose& pose) {
  Poly p;
  for (Vec3 v : local)
    p.v.push_back(to_world(pose, to_double(v)));
  const int n = int(p.v.size());
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      for (int k = j + 1; k < n; ++k) {
        const Vec3d nrm =
            cross(p.v[std::size_t(j)] - p.v[std::size_t(i)], p.v[std::size_t(k)] - p.v[std::size_t(i)]);
        int above = 0, below = 0;
        for (int m = 0; m < n; ++m) {
          const double s = dot(nrm, p.v[std::size_t(m)] - p.v[std::size_t(i)]);
          above += s > 1e-9 * length(nrm);
          below += s < -1e-9 * length(nrm);
        }
        if (above > 0 && below > 0) continue;
        p.tris.push_back({i, j, k});
        p.normals.push_back(normalize(nrm));
        for (const auto& e : {std::array<int, 2>{i, j}, std::array<int, 2>{j, k}, std::array<int, 2>{i, k}}) {
          if (std::find(p.edges.begin(), p.edges.end(), e) == p.edges.end()) p.edges.push_back(e);
        }
      }
    }
  }
  return p;
}

// ---------------------------------------------------------------------------------------------------
// The test population.

enum class Kind { kPlayer, kProjectile, kBox, kHull, kPad };

struct Spec {
  Kind kind = Kind::kPlayer;
  float radius = 0;
  const PropModel* model = nullptr;
  std::vector<Vec3> points;                // hulls
  std::vector<std::array<Vec3, 2>> boxes;  // pads (and the box prop)
};

Entity make_entity(const Spec& spec, EntityId id, const Pose& pose) {
  Entity e;
  e.id = id;
  e.pose = pose;
  e.model = spec.model;
  if (spec.kind == Kind::kPlayer) e.shape = Shape::cylinder(15, 56);
  if (spec.kind == Kind::kProjectile) e.shape = Shape::sphere(spec.radius);
  if (spec.model != nullptr) e.shape = model_shape(*spec.model);
  e.kind = spec.model != nullptr
               ? EntityKind::kProp
               : (spec.kind == Kind::kPlayer ? EntityKind::kPlayer : EntityKind::kProjectile);
  compute_entity_bounds(e);
  return e;
}

// The entity as polytopes: `outer` picks the circumscribed prism for cylinders (a lower bound on the
// signed distance), else the inscribed one (an upper bound). Exact for every other kind.
std::vector<Poly> oracle_parts(const Spec& spec, const Pose& pose, bool outer) {
  switch (spec.kind) {
    case Kind::kPlayer: {
      const double r = outer ? 15 / std::cos(std::numbers::pi / kPrismSides) : 15;
      return {oracle_prism(to_double(pose.position), r, 56)};
    }
    case Kind::kProjectile:
      return {oracle_point(to_double(pose.position), spec.radius)};
    case Kind::kHull:
      return {oracle_hull(spec.points, pose)};
    case Kind::kBox:
    case Kind::kPad:
      break;
  }
  std::vector<Poly> parts;
  for (const auto& b : spec.boxes)
    parts.push_back(oracle_box(b[0], b[1], pose));
  return parts;
}

// Lower and upper bounds on the signed distance between the two entities (min over their pieces).
std::pair<double, double> oracle_bounds(const Spec& sa, const Pose& pa, const Spec& sb, const Pose& pb) {
  std::pair<double, double> out{kInf, kInf};
  for (int bound = 0; bound < 2; ++bound) {
    const bool outer = bound == 0;
    double& d = bound == 0 ? out.first : out.second;
    for (const Poly& a : oracle_parts(sa, pa, outer)) {
      for (const Poly& b : oracle_parts(sb, pb, outer))
        d = std::min(d, signed_distance(a, b));
    }
  }
  return out;
}

using Boxes = std::vector<std::array<Vec3, 2>>;

// Blow's repair pad as a U (a floor and two walls), and a tub (a floor and four walls).
Boxes u_pad() {
  return {{Vec3{-64, -48, 0}, Vec3{64, 48, 8}},
          {Vec3{-64, -48, 8}, Vec3{-52, 48, 40}},
          {Vec3{52, -48, 8}, Vec3{64, 48, 40}}};
}
Boxes tub() {
  return {{Vec3{-40, -40, 0}, Vec3{40, 40, 6}},
          {Vec3{-40, -40, 6}, Vec3{-32, 40, 30}},
          {Vec3{32, -40, 6}, Vec3{40, 40, 30}},
          {Vec3{-32, -40, 6}, Vec3{32, -32, 30}},
          {Vec3{-32, 32, 6}, Vec3{32, 40, 30}}};
}
PropModelResult make_pad(const Boxes& boxes) {
  std::vector<Brush> brushes;
  for (const auto& b : boxes)
    brushes.push_back(brush_from_box(b[0], b[1]));
  return make_brush_model("pad", brushes);
}

struct Population {
  std::vector<std::unique_ptr<PropModel>> models;
  std::vector<Spec> specs;
};

const PropModel* keep(Population& pop, PropModelResult r) {
  EXPECT_TRUE(r.ok()) << r.error;
  pop.models.push_back(std::move(r.model));
  return pop.models.back().get();
}

Population make_population(std::mt19937& rng) {
  Population pop;
  pop.specs.push_back({Kind::kPlayer});
  for (float r : {2.f, 6.f, 12.f})
    pop.specs.push_back({Kind::kProjectile, r});
  for (int i = 0; i < 3; ++i) {
    const Vec3 h{float(uniform_double(rng, 4, 32)), float(uniform_double(rng, 4, 32)),
                 float(uniform_double(rng, 4, 24))};
    pop.specs.push_back({Kind::kBox, 0, keep(pop, make_box_model("box", h)), {}, {{-h, h}}});
  }
  for (int i = 0; i < 4; ++i) {
    std::vector<Vec3> points;
    const int n = 6 + int(rng() % 7);
    const double size = uniform_double(rng, 8, 40);
    for (int k = 0; k < n; ++k) {
      points.push_back({float(uniform_double(rng, -size, size)), float(uniform_double(rng, -size, size)),
                        float(uniform_double(rng, -size, size))});
    }
    pop.specs.push_back({Kind::kHull, 0, keep(pop, make_hull_model("hull", points)), points, {}});
  }
  for (const Boxes& boxes : {u_pad(), tub()})
    pop.specs.push_back({Kind::kPad, 0, keep(pop, make_pad(boxes)), {}, boxes});
  return pop;
}

// A random pair near each other: b's bounding-sphere centre at a random direction from a's, at a random
// fraction of the sum of their bounding radii, so overlapping, touching and near-miss pairs all occur.
struct RandomPair {
  std::size_t spec_a, spec_b;
  Entity a, b;
  float reach;
};

RandomPair random_pair(const Population& pop, std::mt19937& rng, EntityId id_a, EntityId id_b, double snap) {
  RandomPair p;
  p.spec_a = rng() % pop.specs.size();
  p.spec_b = rng() % pop.specs.size();
  const auto yaw = [&] { return float(uniform_double(rng, -kPi, kPi)); };
  const Vec3 origin{float(uniform_double(rng, -2000, 2000)), float(uniform_double(rng, -2000, 2000)),
                    float(uniform_double(rng, -200, 200))};
  p.a = make_entity(pop.specs[p.spec_a], id_a, {origin, yaw()});
  p.b = make_entity(pop.specs[p.spec_b], id_b, {{}, yaw()});
  const Vec3d dir = normalize(
      Vec3d{uniform_double(rng, -1, 1), uniform_double(rng, -1, 1), uniform_double(rng, -0.6, 0.6)});
  const double dist = (p.a.bound_radius + p.b.bound_radius) * uniform_double(rng, 0.15, 1.05);
  const Vec3d centre = to_world(p.a.pose, to_double(p.a.local_center)) + dir * dist;
  p.b.pose.position = to_float(centre - direction_to_world(p.b.pose, to_double(p.b.local_center)));
  const float reaches[] = {0.0f, 0.25f, 2.0f};
  p.reach = reaches[rng() % 3];
  // Half the pairs are moved to within `snap` of the threshold, where a filter that is not conservative
  // or a hard case that is not exact would show: b slides along the contact normal until the hard case's
  // separation is about the reach (exactly so for convex shapes; for the pads the nearest brush may change on
  // the way).
  if (rng() % 2 == 0) {
    PairContact c;
    if (hard_case(p.a, p.b, 1e4f, c)) {
      const double target = p.reach + uniform_double(rng, -snap, snap);
      p.b.pose.position = p.b.pose.position + c.normal * float(target - c.separation);
    }
  }
  return p;
}

// ---------------------------------------------------------------------------------------------------

TEST(Filters, NoStageContradictsTheHardCaseOnRandomPairs) {
  std::mt19937 rng(4242);
  const Population pop = make_population(rng);
  // One cascade per reach, shared by every pair: the ids repeat (1, 2 or 2, 1), so stage 3 keeps trying
  // the axis left by an unrelated earlier pair. A stale axis may settle a pair only if it truly separates.
  std::vector<FilterCascade> cascades;
  for (float reach : {0.0f, 0.25f, 2.0f})
    cascades.emplace_back(FilterOptions{.reach = reach});
  FilterStats stats;
  int within = 0, apart = 0, pairs = 0;
  constexpr int kPairs = 20000;
  for (int i = 0; i < kPairs; ++i) {
    const bool flip = (rng() & 1) != 0;
    const RandomPair p = random_pair(pop, rng, flip ? 2 : 1, flip ? 1 : 2, 0.02);
    PairContact hard;
    const bool touching = hard_case(p.a, p.b, p.reach, hard);
    (touching ? within : apart) += 1;
    ++pairs;
    FilterCascade& cascade = cascades[p.reach == 0.0f ? 0 : (p.reach == 0.25f ? 1 : 2)];
    PairContact got;
    ASSERT_EQ(cascade.test(p.a, p.b, got, stats), touching) << "pair " << i;
    if (!touching) continue;
    EXPECT_EQ(got.separation, hard.separation);
    EXPECT_EQ(got.brush_a, hard.brush_a);
    EXPECT_EQ(got.brush_b, hard.brush_b);
    ASSERT_FALSE(spheres_apart(p.a, p.b, p.reach)) << "pair " << i;
    ASSERT_FALSE(boxes_apart(p.a, p.b, p.reach)) << "pair " << i;
    // No axis at all, in either direction, may claim to divide a touching pair.
    std::vector<Vec3d> axes = {to_double(hard.normal)};
    for (int k = 0; k < 8; ++k)
      axes.push_back(
          Vec3d{uniform_double(rng, -1, 1), uniform_double(rng, -1, 1), uniform_double(rng, -1, 1)});
    for (Vec3d axis : axes) {
      ASSERT_FALSE(separated_along(p.a.shape, p.a.pose, p.b.shape, p.b.pose, axis, p.reach)) << "pair " << i;
      ASSERT_FALSE(separated_along(p.a.shape, p.a.pose, p.b.shape, p.b.pose, -axis, p.reach)) << "pair " << i;
    }
  }
  // Both answers are common, every stage settled some pairs, and the counts add up.
  EXPECT_GT(within, kPairs / 5);
  EXPECT_GT(apart, kPairs / 5);
  std::uint64_t definitive = 0;
  for (int s = 0; s < kFilterStageCount; ++s) {
    EXPECT_GT(stats.stages[std::size_t(s)].definitive, 0u) << to_string(FilterStage(s));
    definitive += stats.stages[std::size_t(s)].definitive;
  }
  EXPECT_EQ(stats[FilterStage::kSpheres].tests, std::uint64_t(pairs));
  EXPECT_EQ(definitive, stats[FilterStage::kSpheres].tests);
  EXPECT_EQ(stats[FilterStage::kHard].tests, stats[FilterStage::kHard].definitive);
  for (int s = 1; s < kFilterStageCount; ++s) {
    EXPECT_EQ(stats.stages[std::size_t(s)].tests,
              stats.stages[std::size_t(s - 1)].tests - stats.stages[std::size_t(s - 1)].definitive);
  }
}

TEST(Filters, HardCaseAgreesWithPolytopeOracle) {
  std::mt19937 rng(777);
  const Population pop = make_population(rng);
  int judged_within = 0, judged_apart = 0, distances = 0;
  int exact = 0, near_exact = 0, bounded = 0, near_bounded = 0;
  constexpr int kPairs = 3000;
  for (int i = 0; i < kPairs; ++i) {
    const RandomPair p = random_pair(pop, rng, 1, 2, 0.05);
    const auto [lo, hi] = oracle_bounds(pop.specs[p.spec_a], p.a.pose, pop.specs[p.spec_b], p.b.pose);
    ASSERT_LE(lo, hi + 1e-9);
    PairContact c;
    const bool touching = hard_case(p.a, p.b, p.reach, c);
    if (lo > p.reach + kOracleMargin) {
      ++judged_apart;
      EXPECT_FALSE(touching) << "pair " << i << " kinds " << int(pop.specs[p.spec_a].kind) << ","
                             << int(pop.specs[p.spec_b].kind) << " oracle distance >= " << lo;
    } else if (hi < p.reach - kOracleMargin) {
      ++judged_within;
      EXPECT_TRUE(touching) << "pair " << i << " kinds " << int(pop.specs[p.spec_a].kind) << ","
                            << int(pop.specs[p.spec_b].kind) << " oracle distance <= " << hi;
      // Where the oracle is exact and the shapes are apart, the contact reports that distance.
      if (touching && lo == hi && lo > kOracleMargin) {
        ++distances;
        EXPECT_NEAR(c.separation, lo, kOracleMargin) << "pair " << i;
        EXPECT_NEAR(length(c.normal), 1.0f, 1e-4f);
      }
    } else {
      ++(lo == hi ? near_exact : near_bounded);
    }
    (lo == hi ? exact : bounded) += 1;
  }
  EXPECT_GT(judged_within, kPairs / 5);
  EXPECT_GT(judged_apart, kPairs / 5);
  EXPECT_GT(distances, 10);
  // Pairs too close to call: with the exact oracle only those within kOracleMargin of the threshold;
  // with a cylinder, also those inside the prism bounds' band (about 0.3 units wide).
  EXPECT_LT(near_exact, exact / 20);
  EXPECT_LT(near_bounded, bounded / 2);
}

// Blow's "Let's Rock": a hovertank lands in the concave area of a repair pad "such that there are no
// dividing planes". The pad's convex bound contains the tank, so only the hard case can answer.
TEST(Filters, VehicleNestedInConcavePadReachesTheHardCase) {
  const std::unique_ptr<PropModel> pad_model = make_pad(u_pad()).model;
  // A wedge-shaped hull: flat bottom at z = 0, 60 long, 36 wide, 14 high.
  const std::vector<Vec3> tank_points = {{-30, -18, 0}, {-30, 18, 0},  {26, -18, 0},
                                         {26, 18, 0},   {30, 0, 2},    {-28, -14, 14},
                                         {-28, 14, 14}, {10, -12, 12}, {10, 12, 12}};
  const std::unique_ptr<PropModel> tank_model = make_hull_model("hovertank", tank_points).model;
  ASSERT_TRUE(pad_model && tank_model);
  const Spec pad_spec{Kind::kPad, 0, pad_model.get(), {}, u_pad()};
  const Spec tank_spec{Kind::kHull, 0, tank_model.get(), tank_points, {}};
  const Pose pad_pose{{500, -300, 64}, 0.7f};
  for (const float gap : {4.0f, 0.1f}) {
    // The tank hovers `gap` above the floor, turned against the pad, between the walls.
    const Pose tank_pose{to_world(pad_pose, Vec3{3, -2, 8 + gap}), pad_pose.yaw + 0.4f};
    const Entity tank = make_entity(tank_spec, 7, tank_pose);
    const Entity pad = make_entity(pad_spec, 3, pad_pose);
    FilterCascade cascade({.reach = kContactDistanceForTest});
    FilterStats stats;
    PairContact c;
    const bool touching = cascade.test(tank, pad, c, stats);
    const auto [lo, hi] = oracle_bounds(tank_spec, tank_pose, pad_spec, pad_pose);
    EXPECT_NEAR(lo, gap, 1e-3);
    EXPECT_EQ(touching, gap <= kContactDistanceForTest);
    EXPECT_EQ(stats[FilterStage::kHard].tests, 1u);
    if (touching) {
      EXPECT_NEAR(c.separation, gap, 1e-3);
      EXPECT_EQ(c.brush_b, 0);  // the floor
      EXPECT_EQ(c.brush_a, kNoBrush);
      EXPECT_NEAR(c.normal.z, -1.0f, 1e-4f);  // from the tank (a) down to the pad (b)
    }
    // No dividing plane exists: no axis separates the tank from the pad's convex bound, so the second
    // test also goes all the way, and still answers correctly.
    std::mt19937 rng(9);
    for (int k = 0; k < 2000; ++k) {
      const Vec3d axis{uniform_double(rng, -1, 1), uniform_double(rng, -1, 1), uniform_double(rng, -1, 1)};
      ASSERT_FALSE(separated_along(tank.shape, tank.pose, pad.shape, pad.pose, axis, 0.0));
    }
    EXPECT_EQ(cascade.test(tank, pad, c, stats), touching);
    EXPECT_EQ(stats[FilterStage::kHard].tests, 2u);
  }
}

TEST(Filters, PlaneCacheSettlesASeparatedPairTheSecondTime) {
  // Two players on a diagonal, 1 unit apart: their boxes and spheres overlap, the cylinders do not.
  const Spec player{Kind::kPlayer};
  const double d = 31.0 / std::sqrt(2.0);
  const Entity a = make_entity(player, 5, {{100, 100, 0}, 0});
  const Entity b = make_entity(player, 9, {{float(100 + d), float(100 + d), 0}, 0});
  for (const bool use_cache : {true, false}) {
    FilterCascade cascade({.reach = 0.25f, .use_plane_cache = use_cache});
    FilterStats stats;
    PairContact c;
    EXPECT_FALSE(cascade.test(b, a, c, stats));
    EXPECT_EQ(stats[FilterStage::kHard].tests, 1u);
    EXPECT_FALSE(cascade.test(a, b, c, stats));  // either order finds the axis
    EXPECT_EQ(stats[FilterStage::kHard].tests, use_cache ? 1u : 2u);
    EXPECT_EQ(stats[FilterStage::kPlane].definitive, use_cache ? 1u : 0u);
    EXPECT_EQ(stats[FilterStage::kPlane].tests, use_cache ? 2u : 0u);
    EXPECT_EQ(cascade.cached_axes(), use_cache ? 1u : 0u);
  }
  // Moved into contact, the stale axis no longer separates them and the hard case answers.
  FilterCascade cascade({.reach = 0.25f});
  FilterStats stats;
  PairContact c;
  EXPECT_FALSE(cascade.test(a, b, c, stats));
  Entity closer = b;
  closer.pose.position = {float(100 + 30.1 / std::sqrt(2.0)), float(100 + 30.1 / std::sqrt(2.0)), 0};
  EXPECT_TRUE(cascade.test(a, closer, c, stats));
  EXPECT_NEAR(c.separation, 0.1, 1e-4);
  EXPECT_EQ(stats[FilterStage::kHard].tests, 2u);
}

TEST(Filters, BoxStageUsesBothBoxesAxes) {
  // A square turned 45 degrees beside an unturned one, its centre 26 units away along its own x axis:
  // only the turned square's axes separate them (the gap along them is 26 − 10 − 10·√2 ≈ 1.86), the
  // unturned one's axes do not (their projections overlap by 5.8).
  const PropModelResult square = make_box_model("square", {10, 10, 10});
  ASSERT_TRUE(square.ok());
  const Spec spec{Kind::kBox, 0, square.model.get(), {}, {}};
  const float h = 26 / std::sqrt(2.0f);
  const Entity a = make_entity(spec, 1, {{300, 400, 10}, 0});
  for (const float reach : {0.0f, 1.5f, 2.0f}) {
    const Entity b = make_entity(spec, 2, {{300 + h, 400 + h, 10}, kPi / 4});
    EXPECT_EQ(boxes_apart(a, b, reach), reach < 1.8f) << reach;
    EXPECT_EQ(boxes_apart(b, a, reach), reach < 1.8f) << reach;
    EXPECT_FALSE(spheres_apart(a, b, reach));
  }
  // Vertically apart by 3: the z interval decides.
  const Entity above = make_entity(spec, 2, {{305, 400, 33}, 0.3f});
  EXPECT_TRUE(boxes_apart(a, above, 2.5f));
  EXPECT_FALSE(boxes_apart(a, above, 3.1f));
}

TEST(Filters, ForgetDropsEveryAxisOfAnEntity) {
  const Spec player{Kind::kPlayer};
  FilterCascade cascade({.reach = 0});
  FilterStats stats;
  PairContact c;
  const double d = 31.0 / std::sqrt(2.0);
  const Entity e1 = make_entity(player, 1, {{0, 0, 0}, 0});
  const Entity e2 = make_entity(player, 2, {{float(d), float(d), 0}, 0});
  const Entity e3 = make_entity(player, 3, {{float(-d), float(d), 0}, 0});
  const Entity e4 = make_entity(player, 4, {{0, float(2 * d), 0}, 0});
  for (const auto& [x, y] : {std::pair{&e1, &e2}, {&e1, &e3}, {&e2, &e4}, {&e3, &e4}})
    cascade.test(*x, *y, c, stats);
  EXPECT_EQ(cascade.cached_axes(), 4u);
  cascade.forget(1);
  EXPECT_EQ(cascade.cached_axes(), 2u);
  cascade.forget(4);
  EXPECT_EQ(cascade.cached_axes(), 0u);

  // A tick's removals at once, in one scan: 3 (and 9, cached with nobody) takes 1-3 and 3-4 with it.
  for (const auto& [x, y] : {std::pair{&e1, &e2}, {&e1, &e3}, {&e2, &e4}, {&e3, &e4}})
    cascade.test(*x, *y, c, stats);
  const EntityId gone[] = {3, 9};
  cascade.forget(gone);
  EXPECT_EQ(cascade.cached_axes(), 2u);  // 1-2 and 2-4 stay
  const EntityId rest[] = {2, 1};
  cascade.forget(rest);
  EXPECT_EQ(cascade.cached_axes(), 0u);
  cascade.forget(std::span<const EntityId>{});  // nothing to forget
}

TEST(Filters, SpheresContactIsClosedForm) {
  const Spec ball{Kind::kProjectile, 4};
  const Entity a = make_entity(ball, 1, {{10, 20, 30}, 0});
  const Entity b = make_entity(ball, 2, {{10, 28.2f, 30}, 1});
  PairContact c;
  ASSERT_TRUE(hard_case(a, b, 0.25f, c));
  EXPECT_NEAR(c.separation, 0.2, 1e-5);
  EXPECT_FALSE(c.overlapping);
  EXPECT_NEAR(c.normal.y, 1.0f, 1e-6f);
  EXPECT_NEAR(c.point.y, 24.1f, 1e-5f);
  EXPECT_FALSE(hard_case(a, b, 0.1f, c));
  const Entity deep = make_entity(ball, 2, {{10, 25, 30}, 0});
  ASSERT_TRUE(hard_case(a, deep, 0, c));
  EXPECT_TRUE(c.overlapping);
  EXPECT_NEAR(c.separation, -3, 1e-5);
}

TEST(Filters, StatsTableAddsUp) {
  FilterStats s;
  s[FilterStage::kSpheres] = {100, 57, 1000};
  s[FilterStage::kBoxes] = {43, 29, 4300};
  s[FilterStage::kPlane] = {14, 1, 2800};
  s[FilterStage::kHard] = {13, 13, 26000};
  FilterStats total;
  total.add(s);
  total.add(s);
  EXPECT_EQ(total[FilterStage::kBoxes].tests, 86u);
  EXPECT_EQ(total[FilterStage::kHard].nanoseconds, 52000u);
  const std::string table = s.format();
  // Shares of all 100 definitive answers and mean microseconds per test, one row per stage.
  EXPECT_NE(table.find("bounding spheres"), std::string::npos) << table;
  EXPECT_NE(table.find(" 57.0%"), std::string::npos) << table;
  EXPECT_NE(table.find(" 29.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("0.100"), std::string::npos) << table;  // 4300 ns / 43 tests
  EXPECT_NE(table.find("2.000"), std::string::npos) << table;  // 26000 ns / 13 tests
  EXPECT_NE(table.find("hard case"), std::string::npos) << table;
}

TEST(Filters, MeasuredTimesAreRecordedOnlyWhenAsked) {
  const Spec player{Kind::kPlayer};
  const Entity a = make_entity(player, 1, {{0, 0, 0}, 0});
  const Entity b = make_entity(player, 2, {{20, 0, 0}, 0});
  for (const bool measure : {false, true}) {
    FilterCascade cascade({.reach = 0, .measure_time = measure});
    FilterStats stats;
    PairContact c;
    for (int i = 0; i < 10; ++i)
      EXPECT_TRUE(cascade.test(a, b, c, stats));
    std::uint64_t ns = 0;
    for (const FilterStageStats& s : stats.stages)
      ns += s.nanoseconds;
    EXPECT_EQ(ns > 0, measure);
  }
}

// The tick passes each entity's bounding centre, computed once per entity, instead of letting stage 1
// compute it per pair. Oracle: the general transform (to_world, trigonometry for every entity) and the
// cascade without given centres, on random pairs of every kind, in two cascades fed the same sequence.
TEST(Filters, GivenCentresAnswerExactlyAsTheCascadeWithout) {
  std::mt19937 rng(1717);
  const Population pop = make_population(rng);
  FilterCascade plain(FilterOptions{.reach = 0.25f});
  FilterCascade given(FilterOptions{.reach = 0.25f});
  FilterStats plain_stats, given_stats;
  int touching = 0, off_axis = 0;
  for (int i = 0; i < 5000; ++i) {
    const RandomPair p = random_pair(pop, rng, 1 + std::uint32_t(i % 7), 100 + std::uint32_t(i % 5), 0.02);
    for (const Entity* e : {&p.a, &p.b}) {
      const Vec3d oracle = to_world(e->pose, to_double(e->local_center));
      const Vec3d got = bounding_centre(*e);
      ASSERT_EQ(got.x, oracle.x);  // == treats the two zeros as equal, the only difference allowed
      ASSERT_EQ(got.y, oracle.y);
      ASSERT_EQ(got.z, oracle.z);
      if (e->local_center.x != 0 || e->local_center.y != 0) ++off_axis;
    }
    PairContact want, got;
    const bool w = plain.test(p.a, p.b, want, plain_stats);
    ASSERT_EQ(given.test(p.a, bounding_centre(p.a), p.b, bounding_centre(p.b), got, given_stats), w) << i;
    if (!w) continue;
    ++touching;
    EXPECT_EQ(got.separation, want.separation);
    EXPECT_EQ(got.normal, want.normal);
    EXPECT_EQ(got.point, want.point);
    EXPECT_EQ(got.brush_a, want.brush_a);
    EXPECT_EQ(got.brush_b, want.brush_b);
  }
  EXPECT_GT(touching, 500);
  EXPECT_GT(off_axis, 500);  // both paths of bounding_centre ran
  for (int s = 0; s < kFilterStageCount; ++s) {
    EXPECT_EQ(given_stats.stages[std::size_t(s)].tests, plain_stats.stages[std::size_t(s)].tests);
    EXPECT_EQ(given_stats.stages[std::size_t(s)].definitive, plain_stats.stages[std::size_t(s)].definitive);
  }
}

// A mover's one-off question (is this entity in my way?) goes through stages 1 and 2 before the hard
// case. Oracle: the hard case alone, on random pairs of every kind snapped near each reach, including the
// movers' kEntitySkin and 0.
TEST(Filters, CulledHardCaseAnswersExactlyAsTheHardCase) {
  std::mt19937 rng(2317);
  const Population pop = make_population(rng);
  int within = 0, culled = 0;
  for (int i = 0; i < 6000; ++i) {
    RandomPair p = random_pair(pop, rng, 1, 2, 0.02);
    const float reaches[] = {0.0f, 1.0f / 32, 0.25f, 2.0f};
    const float reach = reaches[i % 4];
    PairContact want, got;
    const bool w = hard_case(p.a, p.b, reach, want);
    ASSERT_EQ(culled_hard_case(p.a, p.b, reach, got), w) << i;
    if (!w) {
      culled += spheres_apart(p.a, p.b, reach) || boxes_apart(p.a, p.b, reach);
      continue;
    }
    ++within;
    EXPECT_EQ(got.separation, want.separation);
    EXPECT_EQ(got.normal, want.normal);
    EXPECT_EQ(got.overlapping, want.overlapping);
  }
  EXPECT_GT(within, 1000);
  EXPECT_GT(culled, 200);  // the culls did settle pairs: the fast path ran
}

}  // namespace
}  // namespace shiftcast
