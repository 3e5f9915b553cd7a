// The promises of the query API that are not about geometry: queries never allocate, give the same
// answers from many threads at once as from one, and box and hull sweeps (which the sphere/cylinder oracle
// does not cover) agree with an exact polytope sweep: the ray against the Minkowski difference of brush and
// shape, built by brute force from their vertices.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include "collision/bsp_build.hpp"
#include "tests/support/brush_oracle.hpp"
#include "tests/support/seeded_random.hpp"
#include "world/level/procedural_level.hpp"

namespace {
// Allocation counter for this test binary only: every operator new in the process bumps it.
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace shiftcast {
namespace {

struct Query {
  Shape shape;
  Vec3 from;
  Vec3 to;
};

std::vector<Query> random_queries(const Aabb& bounds, std::span<const Vec3> hull, int count,
                                  std::uint32_t seed) {
  std::mt19937 rng(seed);
  const auto uniform = [&](float lo, float hi) { return uniform_float(rng, lo, hi); };
  const Shape shapes[] = {Shape::point(), Shape::sphere(8), Shape::cylinder(15, 56),
                          Shape::box({16, 16, 28}, {0, 0, 28}), Shape::hull(hull)};
  std::vector<Query> out;
  for (int i = 0; i < count; ++i) {
    const Vec3 from{uniform(bounds.min.x, bounds.max.x), uniform(bounds.min.y, bounds.max.y),
                    uniform(bounds.min.z, 512)};
    const float len = uniform(0, 1) < 0.5f ? 64 : 2048;
    out.push_back({shapes[i % 5], from,
                   from + Vec3{uniform(-len, len), uniform(-len, len), uniform(-len, len) * 0.25f}});
  }
  return out;
}

const std::vector<Vec3> kHull = {{-12, -12, 0}, {12, -12, 0}, {-12, 12, 0},
                                 {12, 12, 0},   {0, 0, 60},   {-8, 0, 40}};

class BspQueryContract : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    level_ = new ProceduralLevel(make_procedural_level({.seed = 9, .target_brushes = 240}));
    BspBuildResult built = build_bsp(level_->brushes, {});
    tree_ = new BspTree(std::move(built.tree));
  }
  static void TearDownTestSuite() {
    delete tree_;
    delete level_;
  }
  static ProceduralLevel* level_;
  static BspTree* tree_;
};
ProceduralLevel* BspQueryContract::level_ = nullptr;
BspTree* BspQueryContract::tree_ = nullptr;

TEST_F(BspQueryContract, QueriesNeverAllocate) {
  const std::vector<Query> queries = random_queries(tree_->bounds(), kHull, 20000, 1);
  std::int64_t hits = 0;
  const long before = g_allocations.load();
  for (const Query& q : queries) {
    hits += tree_->trace(q.shape, q.from, q.to).hit;
    hits += tree_->overlap(q.shape, q.from).overlap;
    hits += tree_->raycast(q.from, q.to - q.from, 300).hit;
    hits += tree_->point_brush(q.to) != kNoBrush;
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_GT(hits, 1000);  // the queries did real work
}

TEST_F(BspQueryContract, ManyThreadsGetTheAnswersOneThreadGets) {
  const std::vector<Query> queries = random_queries(tree_->bounds(), kHull, 20000, 2);
  std::vector<TraceResult> serial;
  for (const Query& q : queries)
    serial.push_back(tree_->trace(q.shape, q.from, q.to));
  constexpr int kThreads = 4;
  std::vector<std::vector<TraceResult>> parallel(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread walks the queries in its own order so they hit the tree at different places at once.
      for (std::size_t i = 0; i < queries.size(); ++i) {
        const Query& q = queries[(i * (2 * t + 1)) % queries.size()];
        parallel[std::size_t(t)].push_back(tree_->trace(q.shape, q.from, q.to));
      }
    });
  }
  for (std::thread& th : threads)
    th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (std::size_t i = 0; i < queries.size(); ++i) {
      const TraceResult& a = serial[(i * (2 * t + 1)) % queries.size()];
      const TraceResult& b = parallel[std::size_t(t)][i];
      ASSERT_EQ(a.hit, b.hit);
      ASSERT_EQ(a.fraction, b.fraction);
      ASSERT_EQ(a.end_position, b.end_position);
      ASSERT_EQ(a.brush, b.brush);
    }
  }
}

// Exact sweep of a convex polytope shape by the dynamic separating-axis test (RTR 25.11.4): on every
// candidate axis (brush face normals, cross products of pairs of shape vertex-pair directions, which
// include the shape's face normals, and of brush edges with shape vertex-pair directions, which include
// the shape's edges) the open projected intervals overlap
// for a range of t; the shapes overlap exactly when every axis does, from the latest entry to the
// earliest exit. Returns the first contact and sets `hit`; zero motion asks whether `from` is in solid.
double exact_polytope_sweep(const BrushOracle& oracle, std::span<const Vec3d> shape, Vec3d from, Vec3d to,
                            bool& hit) {
  const Vec3d delta = to - from;
  Aabbd swept;
  for (Vec3d s : shape) {
    swept.grow(from + s);
    swept.grow(to + s);
  }
  std::vector<Vec3d> shape_dirs;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    for (std::size_t j = i + 1; j < shape.size(); ++j)
      shape_dirs.push_back(shape[j] - shape[i]);
  }
  std::vector<Vec3d> shape_normals;  // a superset of the shape's face normals
  for (std::size_t i = 0; i < shape_dirs.size(); ++i) {
    for (std::size_t j = i + 1; j < shape_dirs.size(); ++j) {
      const Vec3d n = cross(shape_dirs[i], shape_dirs[j]);
      if (length_squared(n) > 1e-12 * length_squared(shape_dirs[i]) * length_squared(shape_dirs[j])) {
        shape_normals.push_back(n);
      }
    }
  }
  double best = 1.0;
  hit = false;
  for (std::int32_t b = 0; b < oracle.brush_count(); ++b) {
    const OraclePolytope& brush = oracle.polytope(b);
    if (brush.empty() || !brush.bounds.overlaps(swept)) continue;
    std::vector<Vec3d> axes = shape_normals;
    for (const OraclePolytope::Face& f : brush.faces)
      axes.push_back(f.plane.normal);
    for (const auto& e : brush.edges) {
      const Vec3d edge = brush.vertices[std::size_t(e[1])] - brush.vertices[std::size_t(e[0])];
      for (Vec3d d : shape_dirs) {
        const Vec3d a = cross(edge, d);
        if (length_squared(a) > 1e-12 * length_squared(edge) * length_squared(d)) axes.push_back(a);
      }
    }
    double t_in = 0.0;
    double t_out = 1.0;
    for (Vec3d a : axes) {
      double bmin = 1e300, bmax = -1e300, smin = 1e300, smax = -1e300;
      for (Vec3d v : brush.vertices) {
        bmin = std::min(bmin, dot(a, v));
        bmax = std::max(bmax, dot(a, v));
      }
      for (Vec3d s : shape) {
        smin = std::min(smin, dot(a, from + s));
        smax = std::max(smax, dot(a, from + s));
      }
      // Open intervals overlap while smin + t·v < bmax and smax + t·v > bmin.
      const double v = dot(a, delta);
      if (v == 0.0) {
        if (!(smin < bmax && smax > bmin)) t_in = 2.0;
        continue;
      }
      const double t_a = (bmax - smin) / v;  // v > 0: upper end of the first condition
      const double t_b = (bmin - smax) / v;  // v > 0: lower end of the second condition
      if (v > 0) {
        t_in = std::max(t_in, t_b);
        t_out = std::min(t_out, t_a);
      } else {
        t_in = std::max(t_in, t_a);
        t_out = std::min(t_out, t_b);
      }
    }
    const bool overlaps = delta == Vec3d{} ? t_in == 0.0 : t_in < t_out;
    if (overlaps && t_in <= best) {
      best = t_in;
      hit = true;
    }
  }
  return best;
}

TEST_F(BspQueryContract, BoxAndHullSweepsAreNeverLateAndNeverEndInSolid) {
  const BrushOracle oracle(level_->brushes);
  const Shape box = Shape::box({16, 16, 28}, {0, 0, 28});
  std::vector<Vec3d> box_vertices;
  for (int c = 0; c < 8; ++c)
    box_vertices.push_back({c & 1 ? 16.0 : -16.0, c & 2 ? 16.0 : -16.0, c & 4 ? 56.0 : 0.0});
  std::vector<Vec3d> hull_vertices;
  for (Vec3 v : kHull)
    hull_vertices.push_back(to_double(v));
  const struct {
    Shape shape;
    const std::vector<Vec3d>* vertices;
  } cases[] = {{box, &box_vertices}, {Shape::hull(kHull), &hull_vertices}};

  std::mt19937 rng(5);
  const auto uniform = [&](float lo, float hi) { return uniform_float(rng, lo, hi); };
  const Aabb bounds = tree_->bounds();
  int hits = 0;
  for (const auto& c : cases) {
    for (int i = 0; i < 2000; ++i) {
      const Vec3 from{uniform(bounds.min.x, bounds.max.x), uniform(bounds.min.y, bounds.max.y),
                      uniform(0, 400)};
      bool start_hit = false;
      if (exact_polytope_sweep(oracle, *c.vertices, to_double(from), to_double(from), start_hit) == 0.0 &&
          start_hit) {
        continue;  // starts in solid
      }
      const Vec3 to = from + Vec3{uniform(-1024, 1024), uniform(-1024, 1024), uniform(-256, 256)};
      bool want_hit = false;
      const double want = exact_polytope_sweep(oracle, *c.vertices, to_double(from), to_double(to), want_hit);
      const TraceResult got = tree_->trace(c.shape, from, to);
      const double len = length(to_double(to) - to_double(from));
      ASSERT_TRUE(!want_hit || got.hit) << "missed, case " << i;
      if (want_hit) {
        ASSERT_LE(double(got.fraction) * len, want * len + 1e-3) << "late, case " << i;
      }
      bool end_hit = false;
      const double end_t = exact_polytope_sweep(oracle, *c.vertices, to_double(got.end_position),
                                                to_double(got.end_position), end_hit);
      ASSERT_FALSE(end_hit && end_t == 0.0) << "ends in solid, case " << i;
      hits += want_hit;
    }
  }
  EXPECT_GT(hits, 100);
}

TEST_F(BspQueryContract, ShortQueriesStartBelowTheRootAndOnlyOnPlanesTheirBoxClears) {
  // start_node may skip a node only if the query's box grown by the shape's reach lies strictly on one
  // side of it; checked here against every node on the skipped path, independently of the grid.
  std::mt19937 rng(8);
  const auto uniform = [&](float lo, float hi) { return uniform_float(rng, lo, hi); };
  const Aabb b = tree_->bounds();
  int below_root = 0;
  for (int i = 0; i < 20000; ++i) {
    const Vec3 p{uniform(b.min.x, b.max.x), uniform(b.min.y, b.max.y), uniform(b.min.z, b.max.z)};
    const Vec3 q = p + Vec3{uniform(-16, 16), uniform(-16, 16), uniform(-16, 16)};
    const float reach = (i % 2) ? 0.0f : Shape::cylinder(15, 56).reach();
    const Vec3 lo = min(p, q) - Vec3{reach, reach, reach};
    const Vec3 hi = max(p, q) + Vec3{reach, reach, reach};
    const std::int32_t start = tree_->start_node(min(p, q), max(p, q), reach);
    below_root += start != tree_->root();
    // Walk from the root by the box's centre until the start node; each plane passed must clear the box.
    std::int32_t child = tree_->root();
    while (child != start) {
      ASSERT_GE(child, 0) << "the start node is not on the box's path";
      const BspNode& node = tree_->nodes()[std::size_t(child)];
      float far_back = -1e30f;
      float far_front = 1e30f;
      for (int c = 0; c < 8; ++c) {
        const Vec3 corner{c & 1 ? hi.x : lo.x, c & 2 ? hi.y : lo.y, c & 4 ? hi.z : lo.z};
        far_back = std::max(far_back, node.plane.distance(corner));
        far_front = std::min(far_front, node.plane.distance(corner));
      }
      ASSERT_TRUE(far_back < 0 || far_front > 0) << "a skipped plane cuts the query's box";
      child = node.child[far_back < 0 ? 0 : 1];
    }
  }
  EXPECT_GT(below_root, 10000);
}

}  // namespace
}  // namespace shiftcast
