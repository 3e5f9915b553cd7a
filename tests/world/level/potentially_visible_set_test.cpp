// The potentially visible set against a closed form: random axis grids of cells (some solid, clusters
// shared between cells, random visibility rows) whose cell for a point, cells for a closed box and cells
// for a segment are computed here by per-axis comparisons and slab clipping in double, independently of
// the tree walk. Plus every refusal of from_parts, and the "no answer means visible" rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <span>

#include "tests/support/seeded_random.hpp"
#include "world/level/potentially_visible_set.hpp"
#include "world/level/pvs_grid.hpp"

namespace shiftcast {
namespace {

constexpr std::uint32_t kSeed = 15001;
constexpr int kGrids = 60;
constexpr int kQueriesPerGrid = 400;
// A segment passing within this distance of a cell (in world units, cells are 4 to 64 wide) may or may
// not be reported in it: the walk clips in float.
constexpr double kSegmentTolerance = 1e-3;

struct TestGrid {
  GridCuts grid;
  std::vector<std::int32_t> cell_clusters;
  std::int32_t clusters = 0;
  std::vector<std::vector<bool>> sees;  // [from][to]
  PotentiallyVisibleSet set;
};

std::vector<std::uint8_t> pack_rows(const std::vector<std::vector<bool>>& sees, std::int32_t bytes) {
  std::vector<std::uint8_t> bits(sees.size() * std::size_t(bytes), 0);
  for (std::size_t from = 0; from < sees.size(); ++from)
    for (std::size_t to = 0; to < sees[from].size(); ++to)
      if (sees[from][to]) bits[from * std::size_t(bytes) + to / 8] |= std::uint8_t(1u << (to % 8));
  return bits;
}

TestGrid random_grid(std::mt19937& rng) {
  TestGrid t;
  for (auto& c : t.grid.cuts) {
    const int cells = uniform_int(rng, 1, 6);
    float x = uniform_float(rng, -200, 200);
    c.push_back(x);
    for (int i = 0; i < cells; ++i) {
      x += float(uniform_int(rng, 4, 64)) + (uniform_int(rng, 0, 1) ? 0.0f : uniform_float(rng, 0, 1));
      c.push_back(x);
    }
  }
  t.clusters = uniform_int(rng, 1, 40);
  for (std::int32_t i = 0; i < t.grid.cell_count(); ++i)
    t.cell_clusters.push_back(uniform_int(rng, 0, 4) == 0 ? kNoCluster : uniform_int(rng, 0, t.clusters - 1));
  t.sees.assign(std::size_t(t.clusters), std::vector<bool>(std::size_t(t.clusters)));
  for (auto& row : t.sees)
    for (std::size_t i = 0; i < row.size(); ++i)
      row[i] = uniform_int(rng, 0, 2) == 0;
  // Rows longer than needed (Quake III pads to 4 bytes) must work too.
  const std::int32_t bytes = (t.clusters + 7) / 8 + uniform_int(rng, 0, 3);
  PvsResult r = PotentiallyVisibleSet::from_parts(grid_cluster_tree(t.grid, t.cell_clusters), t.clusters,
                                                  bytes, pack_rows(t.sees, bytes));
  EXPECT_TRUE(r.ok()) << to_string(r.error) << " " << r.detail;
  t.set = std::move(r.set);
  return t;
}

// The oracle's cell on one axis: cuts[i] <= v < cuts[i + 1], the last cell closed above; -1 outside.
int axis_cell(const std::vector<float>& c, float v) {
  if (!(v >= c.front() && v <= c.back())) return -1;
  int i = 0;
  while (i + 2 < int(c.size()) && v >= c[std::size_t(i) + 1])
    ++i;
  return i;
}

std::int32_t oracle_cluster(const TestGrid& t, const Vec3& p) {
  int cell[3];
  for (int a = 0; a < 3; ++a)
    if ((cell[a] = axis_cell(t.grid.cuts[std::size_t(a)], p[a])) < 0) return kNoCluster;
  return t.cell_clusters[std::size_t(t.grid.cell_index(cell[0], cell[1], cell[2]))];
}

// The cells' clusters a closed box touches: on each axis, cell i's half-open range meets [lo, hi].
std::vector<std::int32_t> oracle_box_clusters(const TestGrid& t, const Aabb& box) {
  std::vector<int> ranges[3];
  for (int a = 0; a < 3; ++a) {
    const std::vector<float>& c = t.grid.cuts[std::size_t(a)];
    const int n = int(c.size()) - 1;
    for (int i = 0; i < n; ++i) {
      const bool below_top =
          i == n - 1 ? box.min[a] <= c[std::size_t(i) + 1] : box.min[a] < c[std::size_t(i) + 1];
      if (box.max[a] >= c[std::size_t(i)] && below_top) ranges[a].push_back(i);
    }
  }
  std::vector<std::int32_t> out;
  for (int z : ranges[2])
    for (int y : ranges[1])
      for (int x : ranges[0])
        if (std::int32_t c = t.cell_clusters[std::size_t(t.grid.cell_index(x, y, z))]; c != kNoCluster)
          out.push_back(c);
  return out;
}

// Whether segment a-b meets the cell box grown by `grow` (negative: shrunk), by slab clipping in double.
bool segment_meets_cell(const TestGrid& t, const Vec3& a, const Vec3& b, const int cell[3], double grow) {
  double t0 = 0, t1 = 1;
  for (int ax = 0; ax < 3; ++ax) {
    const std::vector<float>& c = t.grid.cuts[std::size_t(ax)];
    const double lo = double(c[std::size_t(cell[ax])]) - grow;
    const double hi = double(c[std::size_t(cell[ax]) + 1]) + grow;
    const double p = a[ax], d = double(b[ax]) - double(a[ax]);
    if (d == 0) {
      if (p < lo || p > hi) return false;
      continue;
    }
    double ta = (lo - p) / d, tb = (hi - p) / d;
    if (ta > tb) std::swap(ta, tb);
    t0 = std::max(t0, ta);
    t1 = std::min(t1, tb);
    if (t0 > t1) return false;
  }
  return true;
}

// One coordinate in `on_cut` exactly on a cut, where the side rule decides.
Vec3 random_point(std::mt19937& rng, const TestGrid& t, int on_cut = 3) {
  Vec3 p;
  for (int a = 0; a < 3; ++a) {
    const std::vector<float>& c = t.grid.cuts[std::size_t(a)];
    p[a] = uniform_int(rng, 1, on_cut) == 1 ? c[std::size_t(uniform_int(rng, 0, int(c.size()) - 1))]
                                            : uniform_float(rng, c.front() - 20, c.back() + 20);
  }
  return p;
}

TEST(PotentiallyVisibleSet, ClusterAtMatchesTheGridsClosedForm) {
  std::mt19937 rng(kSeed);
  int inside = 0;
  for (int g = 0; g < kGrids; ++g) {
    TestGrid t = random_grid(rng);
    for (int q = 0; q < kQueriesPerGrid; ++q) {
      const Vec3 p = random_point(rng, t);
      const std::int32_t expected = oracle_cluster(t, p);
      ASSERT_EQ(t.set.cluster_at(p), expected) << "grid " << g << " at " << p.x << " " << p.y << " " << p.z;
      inside += expected != kNoCluster;
    }
  }
  EXPECT_GT(inside, kGrids * kQueriesPerGrid / 4);  // the oracle is not trivially "outside"
}

TEST(PotentiallyVisibleSet, ClusterSeesReadsTheRowsBitForBit) {
  std::mt19937 rng(kSeed + 1);
  for (int g = 0; g < kGrids; ++g) {
    TestGrid t = random_grid(rng);
    for (std::int32_t from = 0; from < t.clusters; ++from)
      for (std::int32_t to = 0; to < t.clusters; ++to)
        ASSERT_EQ(t.set.cluster_sees(from, to), bool(t.sees[std::size_t(from)][std::size_t(to)]));
    EXPECT_TRUE(t.set.cluster_sees(kNoCluster, 0));
    EXPECT_TRUE(t.set.cluster_sees(0, kNoCluster));
    EXPECT_TRUE(t.set.cluster_sees(t.clusters, 0));  // out of range: no answer, so visible
  }
}

// sees_box against the grid's cells, and clusters_in_box lists exactly those cells (appended after what the
// vector held, which may end in one of them).
TEST(PotentiallyVisibleSet, SeesBoxMatchesTheCellsTheClosedBoxTouches) {
  std::mt19937 rng(kSeed + 2);
  int culled = 0, straddling = 0;
  for (int g = 0; g < kGrids; ++g) {
    TestGrid t = random_grid(rng);
    for (int q = 0; q < kQueriesPerGrid; ++q) {
      const Vec3 p = random_point(rng, t), r = random_point(rng, t);
      Aabb box;
      box.grow(p);
      // Small boxes mostly (an entity), some as large as the grid; corners on cuts come from random_point.
      box.grow(uniform_int(rng, 0, 3) == 0 ? r : p + (r - p) * 0.1f);
      const std::int32_t from = uniform_int(rng, 0, t.clusters - 1);
      const std::vector<std::int32_t> touched = oracle_box_clusters(t, box);
      bool expected = touched.empty();
      for (std::int32_t c : touched)
        expected = expected || t.sees[std::size_t(from)][std::size_t(c)];
      ASSERT_EQ(t.set.sees_box(from, box), expected) << "grid " << g << " query " << q;
      for (const std::int32_t before : touched) {
        std::vector<std::int32_t> listed{before};
        t.set.clusters_in_box(box, listed);
        ASSERT_EQ(std::set<std::int32_t>(listed.begin() + 1, listed.end()),
                  std::set<std::int32_t>(touched.begin(), touched.end()))
            << "grid " << g << " query " << q;
        ASSERT_EQ(t.set.sees_any(from, std::span<const std::int32_t>(listed).subspan(1)), expected)
            << "grid " << g << " query " << q;
      }
      culled += !expected;
      straddling += touched.size() > 1;
    }
  }
  EXPECT_GT(culled, kGrids * kQueriesPerGrid / 10);
  EXPECT_GT(straddling, kGrids * kQueriesPerGrid / 10);
}

TEST(PotentiallyVisibleSet, SeesSegmentMatchesTheCellsTheSegmentCrosses) {
  std::mt19937 rng(kSeed + 3);
  int culled = 0, seen = 0, undecided = 0;
  for (int g = 0; g < kGrids; ++g) {
    TestGrid t = random_grid(rng);
    for (int q = 0; q < kQueriesPerGrid; ++q) {
      // Fewer coordinates on cuts: a segment along a cut plane is within the tolerance of both sides.
      const Vec3 a = random_point(rng, t, 12);
      const Vec3 b = uniform_int(rng, 0, 9) == 0 ? a : random_point(rng, t, 12);
      const std::int32_t from = uniform_int(rng, 0, t.clusters - 1);
      // Definitely in a cell: meets the cell shrunk by the tolerance; possibly: meets it grown.
      bool must_see = false, may_see = false, possibly_in_any = false, surely_in_any = false;
      for (int z = 0; z < t.grid.cells(2); ++z)
        for (int y = 0; y < t.grid.cells(1); ++y)
          for (int x = 0; x < t.grid.cells(0); ++x) {
            const std::int32_t c = t.cell_clusters[std::size_t(t.grid.cell_index(x, y, z))];
            if (c == kNoCluster) continue;
            const int cell[3] = {x, y, z};
            const bool visible = t.sees[std::size_t(from)][std::size_t(c)];
            if (segment_meets_cell(t, a, b, cell, kSegmentTolerance)) {
              possibly_in_any = true;
              may_see = may_see || visible;
            }
            if (segment_meets_cell(t, a, b, cell, -kSegmentTolerance)) {
              surely_in_any = true;
              must_see = must_see || visible;
            }
          }
      const bool answer = t.set.sees_segment(from, a, b);
      // The same walk as a list, appended after something else, answers alike through sees_any.
      std::vector<std::int32_t> crossed{kNoCluster, from};
      t.set.clusters_on_segment(a, b, crossed);
      ASSERT_EQ(t.set.sees_any(from, std::span<const std::int32_t>(crossed).subspan(2)), answer)
          << "grid " << g << " query " << q;
      if (must_see || !possibly_in_any) {
        ASSERT_TRUE(answer) << "grid " << g << " query " << q;
        ++seen;
      } else if (!may_see && surely_in_any) {
        ASSERT_FALSE(answer) << "grid " << g << " query " << q;
        ++culled;
      } else {
        ++undecided;
      }
    }
  }
  EXPECT_GT(culled, kGrids * kQueriesPerGrid / 10);
  EXPECT_GT(seen, kGrids * kQueriesPerGrid / 10);
  EXPECT_LT(undecided, kGrids * kQueriesPerGrid / 5);
}

TEST(PotentiallyVisibleSet, NoAnswerMeansVisible) {
  PotentiallyVisibleSet none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.cluster_at({1, 2, 3}), kNoCluster);
  EXPECT_TRUE(none.cluster_sees(0, 1));
  EXPECT_TRUE(none.sees_box(0, Aabb{{0, 0, 0}, {1, 1, 1}}));
  EXPECT_TRUE(none.sees_segment(0, {0, 0, 0}, {1, 1, 1}));

  // Two cells, each a cluster seeing nothing (not even itself).
  GridCuts grid{{{{0, 10, 20}, {0, 10}, {0, 10}}}};
  const std::vector<std::int32_t> cells{0, 1};
  PvsResult r = PotentiallyVisibleSet::from_parts(grid_cluster_tree(grid, cells), 2, 1, {0, 0});
  ASSERT_TRUE(r.ok()) << r.detail;
  const PotentiallyVisibleSet& s = r.set;
  EXPECT_FALSE(s.sees_box(0, Aabb{{1, 1, 1}, {2, 2, 2}}));
  EXPECT_TRUE(s.sees_box(kNoCluster, Aabb{{1, 1, 1}, {2, 2, 2}}));
  EXPECT_TRUE(s.sees_box(0, Aabb{{30, 1, 1}, {40, 2, 2}}));   // outside only
  EXPECT_FALSE(s.sees_box(0, Aabb{{15, 1, 1}, {40, 2, 2}}));  // outside and an unseen cluster
  EXPECT_TRUE(s.sees_box(0, Aabb{}));                         // an empty box: no answer
  EXPECT_TRUE(s.sees_segment(0, {30, 1, 1}, {40, 1, 1}));
  EXPECT_FALSE(s.sees_segment(0, {30, 1, 1}, {5, 1, 1}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(s.sees_segment(0, {nan, 1, 1}, {5, 1, 1}));
  EXPECT_EQ(s.cluster_at({nan, 1, 1}), kNoCluster);
  EXPECT_EQ(s.cluster_at({20, 10, 10}), 1);  // the grid's upper corner is inside
}

// A valid three-node tree to break one way at a time.
std::vector<PvsNode> small_tree() {
  return {{{1, 0, 0}, 0, {1, 2}}, {{0, 1, 0}, 0, {-2, -3}}, {{0, 0, 1}, 0, {-4, -1}}};
}

PvsError refusal(std::vector<PvsNode> nodes, std::int32_t clusters = 3, std::int32_t bytes = 1,
                 std::size_t bits = 3) {
  PvsResult r = PotentiallyVisibleSet::from_parts(std::move(nodes), clusters, bytes,
                                                  std::vector<std::uint8_t>(bits, 0xff));
  if (!r.ok()) {
    EXPECT_FALSE(r.detail.empty());
  }
  return r.error;
}

TEST(PotentiallyVisibleSet, FromPartsRefusesEachKindOfBrokenPart) {
  EXPECT_EQ(refusal(small_tree()), PvsError::kNone);
  auto broken = [](auto change) {
    std::vector<PvsNode> n = small_tree();
    change(n);
    return n;
  };
  EXPECT_EQ(refusal(broken([](auto& n) { n[1].children[0] = 3; })), PvsError::kBadChild);
  EXPECT_EQ(refusal(broken([](auto& n) { n[2].children[0] = -5; })), PvsError::kBadChild);  // cluster 3
  EXPECT_EQ(refusal(broken([](auto& n) { n[2].children[0] = std::numeric_limits<std::int32_t>::min(); })),
            PvsError::kBadChild);
  EXPECT_EQ(refusal(broken([](auto& n) { n[2].children[1] = 0; })), PvsError::kCycle);
  EXPECT_EQ(refusal(broken([](auto& n) { n[1].children[1] = 1; })), PvsError::kCycle);
  EXPECT_EQ(refusal(broken([](auto& n) { n[1].children[1] = 2; })), PvsError::kCycle);  // shared subtree
  EXPECT_EQ(refusal(broken([](auto& n) { n[0].normal = {1, 1, 0}; })), PvsError::kBadPlane);
  EXPECT_EQ(refusal(broken([](auto& n) { n[1].normal = {0, 0, 0}; })), PvsError::kBadPlane);
  EXPECT_EQ(refusal(broken([](auto& n) { n[2].distance = std::numeric_limits<float>::infinity(); })),
            PvsError::kBadPlane);
  EXPECT_EQ(refusal(broken([](auto& n) { n[2].normal.x = std::numeric_limits<float>::quiet_NaN(); })),
            PvsError::kBadPlane);
  EXPECT_EQ(refusal(small_tree(), 3, 1, 2), PvsError::kBadBitsLength);
  EXPECT_EQ(refusal(small_tree(), 3, 1, 4), PvsError::kBadBitsLength);
  EXPECT_EQ(refusal(small_tree(), 9, 1, 9), PvsError::kBadBitsLength);  // 9 clusters need 2 bytes a row
  EXPECT_EQ(refusal(small_tree(), -1, 1, 0), PvsError::kBadBitsLength);
  EXPECT_EQ(refusal(small_tree(), 3, std::numeric_limits<std::int32_t>::max(), 3), PvsError::kBadBitsLength);
  EXPECT_EQ(refusal({}, 3, 1, 3), PvsError::kBadChild);            // clusters, no root
  EXPECT_EQ(refusal(small_tree(), 0, 0, 0), PvsError::kBadChild);  // nodes, no clusters
  EXPECT_EQ(refusal({}, 0, 0, 0), PvsError::kNone);                // the empty set

  // A chain one node deeper than the query stacks allow, and one exactly at the limit.
  for (std::int32_t depth : {kMaxPvsDepth, kMaxPvsDepth + 1}) {
    std::vector<PvsNode> chain;
    for (std::int32_t i = 0; i < depth; ++i)
      chain.push_back({{1, 0, 0}, float(i), {i + 1 < depth ? i + 1 : -2, -2}});
    EXPECT_EQ(refusal(chain, 1, 1, 1), depth > kMaxPvsDepth ? PvsError::kTooDeep : PvsError::kNone);
  }
}

// Random corruptions of a valid tree are refused or answer every query without leaving the arrays
// (ASan and UBSan watch in CI).
TEST(PotentiallyVisibleSet, CorruptedPartsNeverCrash) {
  std::mt19937 rng(kSeed + 4);
  int accepted = 0;
  for (int g = 0; g < 200; ++g) {
    TestGrid t = random_grid(rng);
    std::vector<PvsNode> nodes = grid_cluster_tree(t.grid, t.cell_clusters);
    for (int k = 0; k < 3; ++k) {
      PvsNode& n = nodes[std::size_t(uniform_int(rng, 0, int(nodes.size()) - 1))];
      n.children[uniform_int(rng, 0, 1)] = uniform_int(rng, -t.clusters - 3, int(nodes.size()) + 2);
    }
    const std::int32_t bytes = (t.clusters + 7) / 8;
    PvsResult r =
        PotentiallyVisibleSet::from_parts(std::move(nodes), t.clusters, bytes, pack_rows(t.sees, bytes));
    if (!r.ok()) continue;
    ++accepted;
    for (int q = 0; q < 50; ++q) {
      const Vec3 a = random_point(rng, t), b = random_point(rng, t);
      const std::int32_t c = r.set.cluster_at(a);
      EXPECT_TRUE(c == kNoCluster || (c >= 0 && c < t.clusters));
      Aabb box;
      box.grow(a);
      box.grow(b);
      (void)r.set.sees_box(c, box);
      (void)r.set.sees_segment(c, a, b);
    }
  }
  EXPECT_GT(accepted, 10);
}

}  // namespace
}  // namespace shiftcast
