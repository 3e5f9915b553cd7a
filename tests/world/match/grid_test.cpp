// Grid against brute force: cell ranges computed here by division (the grid multiplies by an inverse),
// pairs and queries as all-pairs / all-entities range tests, sweeps against the exact distance from the
// segment to each box (ternary search on a convex function, not clipping as the grid does), update
// counters against set differences of the ranges, and the conservative property that every pair of truly
// overlapping boxes is reported.
#include "world/match/grid.hpp"
#include "tests/support/seeded_random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace shiftcast {
namespace {

using Pairs = std::vector<std::pair<EntityId, EntityId>>;
using Ids = std::vector<EntityId>;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Aabb box2(float x0, float y0, float x1, float y1) {
  return {{x0, y0, 0}, {x1, y1, 56}};
}

// The oracle's cells: floor of the exact quotient (double division of floats never rounds onto an
// integer at these magnitudes).
struct Range {
  std::int64_t x0, y0, x1, y1;
  bool overlaps(const Range& o) const { return x0 <= o.x1 && o.x0 <= x1 && y0 <= o.y1 && o.y0 <= y1; }
  std::int64_t area() const { return (x1 - x0 + 1) * (y1 - y0 + 1); }
  bool oversize() const { return area() > kMaxCellsPerEntity; }
};
std::int64_t cell(float v, float size) {
  return std::int64_t(std::floor(double(v) / double(size)));
}
Range range_of(const Aabb& b, float size) {
  return {cell(b.min.x, size), cell(b.min.y, size), cell(b.max.x, size), cell(b.max.y, size)};
}

bool sorted_unique(const Ids& ids) {
  return std::adjacent_find(ids.begin(), ids.end(), std::greater_equal<>()) == ids.end();
}

// Distance from the point to the closed rectangle.
double point_rect_distance(double px, double py, double x0, double y0, double x1, double y1) {
  const double dx = std::max({x0 - px, 0.0, px - x1}), dy = std::max({y0 - py, 0.0, py - y1});
  return std::sqrt(dx * dx + dy * dy);
}
// Exact distance from segment a→b to the rectangle: the point-rectangle distance is convex along the
// segment, so a ternary search finds its minimum.
double segment_rect_distance(double ax, double ay, double bx, double by, double x0, double y0, double x1,
                             double y1) {
  const auto f = [&](double t) {
    return point_rect_distance(ax + t * (bx - ax), ay + t * (by - ay), x0, y0, x1, y1);
  };
  double lo = 0, hi = 1;
  for (int i = 0; i < 100; ++i) {
    const double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
    if (f(m1) <= f(m2)) {
      hi = m2;
    } else {
      lo = m1;
    }
  }
  return std::min({f(lo), f(0), f(1)});
}

struct Sweep {
  Vec3 from, to;
  float radius;
};

// Brute-force oracles over the test's own record of the boxes.
struct Model {
  float size;
  std::map<EntityId, Aabb> boxes;

  Pairs pairs() const {
    Pairs out;
    for (auto a = boxes.begin(); a != boxes.end(); ++a) {
      for (auto b = std::next(a); b != boxes.end(); ++b) {
        if (range_of(a->second, size).overlaps(range_of(b->second, size)))
          out.emplace_back(a->first, b->first);
      }
    }
    return out;
  }
  Ids query(const Aabb& q) const {
    Ids out;
    for (const auto& [id, b] : boxes) {
      if (range_of(b, size).overlaps(range_of(q, size))) out.push_back(id);
    }
    return out;
  }
  // Entities that must be returned: the box within radius of the segment.
  Ids sweep_required(const Sweep& s) const {
    Ids out;
    const double lo_x = std::min(s.from.x, s.to.x), hi_x = std::max(s.from.x, s.to.x);
    const double lo_y = std::min(s.from.y, s.to.y), hi_y = std::max(s.from.y, s.to.y);
    for (const auto& [id, b] : boxes) {
      // The gap between the box and the segment's bounds is a lower bound on the distance: skips the search.
      if (std::max({b.min.x - hi_x, lo_x - b.max.x, b.min.y - hi_y, lo_y - b.max.y}) > s.radius) continue;
      if (segment_rect_distance(s.from.x, s.from.y, s.to.x, s.to.y, b.min.x, b.min.y, b.max.x, b.max.y) <=
          s.radius) {
        out.push_back(id);
      }
    }
    return out;
  }
  // Whether returning the entity is allowed: its cells come within radius·√2 of the segment.
  bool sweep_allowed(const Sweep& s, EntityId id) const {
    const Range r = range_of(boxes.at(id), size);
    const double d =
        segment_rect_distance(s.from.x, s.from.y, s.to.x, s.to.y, r.x0 * double(size), r.y0 * double(size),
                              (r.x1 + 1) * double(size), (r.y1 + 1) * double(size));
    return d <= std::max(double(s.radius), 0.0) * std::sqrt(2.0) + 1e-6;
  }
  std::int64_t occupied_cells() const {
    std::set<std::pair<std::int64_t, std::int64_t>> cells;
    for (const auto& [id, b] : boxes) {
      const Range r = range_of(b, size);
      if (r.oversize()) continue;
      for (std::int64_t y = r.y0; y <= r.y1; ++y) {
        for (std::int64_t x = r.x0; x <= r.x1; ++x)
          cells.insert({x, y});
      }
    }
    return std::int64_t(cells.size());
  }
  std::int64_t oversize() const {
    return std::count_if(boxes.begin(), boxes.end(),
                         [&](const auto& e) { return range_of(e.second, size).oversize(); });
  }
};

// Cells changed by moving from range o to range n (counting only cells, not the oversize list).
std::int64_t expected_changes(const Range* o, const Range& n) {
  if (!o) return n.oversize() ? 0 : n.area();
  if (o->oversize() && n.oversize()) return 0;
  if (o->oversize()) return n.area();
  if (n.oversize()) return o->area();
  std::int64_t common = 0;
  if (o->overlaps(n)) {
    common = (std::min(o->x1, n.x1) - std::max(o->x0, n.x0) + 1) *
             (std::min(o->y1, n.y1) - std::max(o->y0, n.y0) + 1);
  }
  return o->area() + n.area() - 2 * common;
}

TEST(GridTest, DeriveCellSizeIsTheLargestDiameterButAtLeastTheMinimum) {
  EXPECT_EQ(Grid::derive_cell_size(15), 64);
  EXPECT_EQ(Grid::derive_cell_size(40), 80);
  EXPECT_EQ(Grid::derive_cell_size(15, 16), 30);
  EXPECT_EQ(Grid::derive_cell_size(kNaN), 64);
  EXPECT_EQ(Grid::derive_cell_size(kInf), 16777216.0f);
  EXPECT_EQ(Grid(0).cell_size(), 64);
  EXPECT_EQ(Grid(kNaN).cell_size(), 64);
  EXPECT_EQ(Grid(-5).cell_size(), 64);
  EXPECT_EQ(Grid(0.25f).cell_size(), 1);
  EXPECT_EQ(Grid(48).cell_size(), 48);
}

TEST(GridTest, NegativeCoordinatesFloorRatherThanTruncate) {
  Grid grid(64);
  ASSERT_TRUE(grid.update(1, box2(-10, 5, -2, 10)));  // cell x = -1 (truncation would say 0)
  ASSERT_TRUE(grid.update(2, box2(2, 5, 10, 10)));    // cell x = 0
  Pairs pairs;
  grid.pairs(pairs);
  EXPECT_TRUE(pairs.empty());
  Ids ids;
  grid.query(box2(-0.5f, 1, -0.5f, 1), ids);
  EXPECT_EQ(ids, Ids{1});
  grid.query(box2(-64, -64, -64, -64), ids);  // cell (-1, -1): exactly on its low corner
  EXPECT_TRUE(ids.empty());
  grid.query(box2(-64, 0, -64, 0), ids);  // cell (-1, 0)
  EXPECT_EQ(ids, Ids{1});
  EXPECT_EQ(grid.stats().occupied_cells, 2);
}

TEST(GridTest, BoxesEndingOnACellEdgeAlsoCoverTheNextCell) {
  Grid grid(64);
  grid.update(1, box2(0, 0, 64, 10));     // x cells 0..1
  grid.update(2, box2(64, 0, 70, 10));    // x cell 1: touches 1 at x = 64
  grid.update(3, box2(-10, 0, 0, 10));    // x cells -1..0: touches 1 at x = 0
  grid.update(4, box2(128, 0, 130, 10));  // x cell 2: apart from 2 (6 units short of it)
  EXPECT_EQ(grid.stats().cell_changes, 2u + 1u + 2u + 1u);
  Pairs pairs;
  grid.pairs(pairs);
  EXPECT_EQ(pairs, (Pairs{{1, 2}, {1, 3}}));
  Ids ids;
  grid.query(box2(63.5f, 0, 64, 0), ids);  // cells 0..1
  EXPECT_EQ(ids, (Ids{1, 2, 3}));
}

TEST(GridTest, MovesInsideTheSameCellsChangeNothing) {
  Grid grid(64);
  grid.update(7, box2(10, 10, 20, 20));
  EXPECT_EQ(grid.stats().cell_changes, 1u);
  for (int i = 0; i < 10; ++i)
    grid.update(7, box2(10.0f + i, 10, 20.0f + i, 20));  // x up to 29
  EXPECT_EQ(grid.stats().updates, 11u);
  EXPECT_EQ(grid.stats().cell_changes, 1u);
  grid.update(7, box2(60, 10, 70, 20));  // enters cell 1, keeps cell 0
  EXPECT_EQ(grid.stats().cell_changes, 2u);
  EXPECT_EQ(grid.stats().occupied_cells, 2);
  grid.update(7, box2(124, 10, 134, 20));  // cells 1..2: leaves 0, enters 2
  EXPECT_EQ(grid.stats().cell_changes, 4u);
  grid.update(7, box2(124, 60, 134, 70));  // 2×2: enters (1,1) and (2,1)
  EXPECT_EQ(grid.stats().cell_changes, 6u);
  EXPECT_EQ(grid.stats().occupied_cells, 4);
  Ids ids;
  grid.query(box2(0, 0, 1, 1), ids);
  EXPECT_TRUE(ids.empty());
  grid.query(box2(190, 70, 190, 70), ids);
  EXPECT_EQ(ids, Ids{7});
}

TEST(GridTest, NonFiniteAndInvertedBoxesAreRefusedAndLeaveTheEntityWhereItWas) {
  Grid grid(64);
  ASSERT_TRUE(grid.update(1, box2(10, 10, 20, 20)));
  std::uint64_t refused = 0;
  for (int coord = 0; coord < 6; ++coord) {
    for (float bad : {kNaN, kInf, -kInf}) {
      Aabb b = box2(300, 300, 310, 310);
      (coord < 3 ? b.min : b.max)[coord % 3] = bad;
      EXPECT_FALSE(grid.update(1, b));
      EXPECT_FALSE(grid.update(2, b));
      refused += 2;
      EXPECT_EQ(grid.stats().refused, refused);
    }
  }
  EXPECT_FALSE(grid.update(2, box2(10, 10, 5, 20)));  // inverted in x
  EXPECT_FALSE(grid.update(1, box2(10, 10, 20, 5)));  // inverted in y
  EXPECT_EQ(grid.stats().refused, refused + 2);
  EXPECT_FALSE(grid.contains(2));
  EXPECT_EQ(grid.size(), 1u);
  Ids ids;
  grid.query(box2(15, 15, 15, 15), ids);
  EXPECT_EQ(ids, Ids{1});
  EXPECT_EQ(grid.stats().cell_changes, 1u);
  // Queries: NaN or inverted find nothing, infinite reaches everything.
  grid.query(box2(kNaN, 0, 100, 100), ids);
  EXPECT_TRUE(ids.empty());
  grid.query(box2(100, 0, 0, 100), ids);
  EXPECT_TRUE(ids.empty());
  grid.query(box2(-kInf, -kInf, kInf, kInf), ids);
  EXPECT_EQ(ids, Ids{1});
}

TEST(GridTest, OversizeEntitiesPairAndAnswerByTheirCellRange) {
  Grid grid(64);
  grid.update(1, box2(0, 0, 639, 639));  // 10×10 cells
  EXPECT_EQ(grid.stats().oversize, 1);
  EXPECT_EQ(grid.stats().occupied_cells, 0);
  EXPECT_EQ(grid.stats().cell_changes, 0u);
  grid.update(2, box2(300, 300, 310, 310));   // inside
  grid.update(3, box2(650, 650, 660, 660));   // outside its cells
  grid.update(4, box2(600, -400, 700, 100));  // 2×9 = 18 cells: not oversize, overlaps 1
  grid.update(5, box2(-1000, 600, 0, 1000));  // 17×7 = 119 cells: oversize, touches 1 at (0, 600..639)
  EXPECT_EQ(grid.stats().oversize, 2);
  Pairs pairs;
  grid.pairs(pairs);
  EXPECT_EQ(pairs, (Pairs{{1, 2}, {1, 4}, {1, 5}}));
  Ids ids;
  grid.query(box2(650, 650, 650, 650), ids);
  EXPECT_EQ(ids, Ids{3});
  grid.query(box2(5, 5, 5, 5), ids);
  EXPECT_EQ(ids, Ids{1});
  grid.query(box2(-5, 605, 5, 605), ids);
  EXPECT_EQ(ids, (Ids{1, 5}));
  // Shrinking back enters its cells; growing again leaves them.
  grid.update(1, box2(0, 0, 10, 10));
  EXPECT_EQ(grid.stats().oversize, 1);
  EXPECT_EQ(grid.stats().cell_changes, 1u + 18u + 1u + 1u);
  grid.update(2, box2(0, 0, 1000, 1000));
  EXPECT_EQ(grid.stats().cell_changes, 1u + 18u + 1u + 1u + 1u);
  // A finite but enormous box is oversize and meets every query.
  grid.update(9, box2(-1e30f, -1e30f, 1e30f, 1e30f));
  grid.update(10, box2(-std::numeric_limits<float>::max(), 0, std::numeric_limits<float>::max(), 0));
  grid.query(box2(-5e6f, 3e6f, -5e6f, 3e6f), ids);
  EXPECT_EQ(ids, Ids{9});
  grid.query(box2(1e7f, 0, 1e7f, 0), ids);
  EXPECT_EQ(ids, (Ids{9, 10}));
  EXPECT_EQ(grid.stats().oversize, 4);
}

TEST(GridTest, FarAwayBoxesCollapseIntoBorderCellsButStayConservative) {
  Grid grid(64);
  grid.update(1, box2(1e15f, 1e15f, 1e15f + 1e9f, 1e15f + 1e9f));
  grid.update(2, box2(1e15f + 5e8f, 1e15f, 1e15f + 2e9f, 1e15f + 1e9f));  // overlaps 1
  grid.update(3, box2(3e15f, 3e15f, 3e15f, 3e15f));                       // apart, same border cell
  Pairs pairs;
  grid.pairs(pairs);
  EXPECT_EQ(pairs, (Pairs{{1, 2}, {1, 3}, {2, 3}}));
  EXPECT_EQ(grid.stats().oversize, 0);
}

TEST(GridTest, RemoveContainsAndSize) {
  Grid grid(64);
  grid.remove(3);  // absent: nothing happens
  for (EntityId id : {5u, 2u, 9u})
    grid.update(id, box2(10, 10, 70, 20));
  grid.update(4, box2(-500, -500, 500, 500));
  EXPECT_EQ(grid.size(), 4u);
  EXPECT_EQ(grid.stats().occupied_cells, 2);
  grid.remove(2);
  grid.remove(4);
  EXPECT_FALSE(grid.contains(2));
  EXPECT_FALSE(grid.contains(4));
  EXPECT_TRUE(grid.contains(5));
  EXPECT_EQ(grid.size(), 2u);
  EXPECT_EQ(grid.stats().oversize, 0);
  Pairs pairs;
  grid.pairs(pairs);
  EXPECT_EQ(pairs, (Pairs{{5, 9}}));
  grid.remove(5);
  grid.remove(9);
  EXPECT_EQ(grid.size(), 0u);
  EXPECT_EQ(grid.stats().occupied_cells, 0);
  grid.pairs(pairs);
  EXPECT_TRUE(pairs.empty());
  grid.update(2, box2(0, 0, 1, 1));  // a removed id may come back (the grid does not police reuse)
  EXPECT_TRUE(grid.contains(2));
}

TEST(GridTest, SweepSpecialCases) {
  Grid grid(64);
  grid.update(1, box2(10, 10, 20, 20));      // cell (0,0)
  grid.update(2, box2(40, 40, 50, 50));      // cell (0,0), away from (15,15)
  grid.update(3, box2(200, 10, 210, 20));    // cell (3,0)
  grid.update(4, box2(10, 70, 20, 80));      // cell (0,1), just above the edge y = 64
  grid.update(5, box2(10, 140, 20, 150));    // cell (0,2)
  grid.update(6, box2(-20, -20, -10, -10));  // cell (-1,-1)
  Ids ids;
  // Zero length, and vertical (degenerate in xy): the point's cell.
  grid.query_sweep({15, 15, 0}, {15, 15, 0}, 0, ids);
  EXPECT_EQ(ids, (Ids{1, 2}));
  grid.query_sweep({15, 15, 0}, {15, 15, 900}, 0, ids);
  EXPECT_EQ(ids, (Ids{1, 2}));
  grid.query_sweep({15, 15, 0}, {15, 15, 900}, -3, ids);  // negative radius: 0
  EXPECT_EQ(ids, (Ids{1, 2}));
  grid.query_sweep({15, 15, 0}, {15, 15, 0}, 30, ids);  // reaches cells x, y in -1..0
  EXPECT_EQ(ids, (Ids{1, 2, 6}));
  // Along the edge y = 64: both rows, not the one beyond.
  grid.query_sweep({0, 64, 0}, {60, 64, 0}, 0, ids);
  EXPECT_EQ(ids, (Ids{1, 2, 4}));
  // Along the edge x = 0 downwards: columns -1 and 0.
  grid.query_sweep({0, 100, 0}, {0, -30, 0}, 0, ids);
  EXPECT_EQ(ids, (Ids{1, 2, 4, 6}));
  // Diagonal through the corner (0,0) with radius: its neighbours.
  grid.query_sweep({-30, -30, 0}, {30, 30, 0}, 1, ids);
  EXPECT_EQ(ids, (Ids{1, 2, 6}));
  // Very long (walks entities rather than cells) and absurdly far (falls back to the cell box).
  grid.query_sweep({-1e6f, 15, 0}, {1e6f, 15, 0}, 0, ids);
  EXPECT_EQ(ids, (Ids{1, 2, 3}));
  grid.query_sweep({-1e11f, 15, 0}, {1e11f, 15, 0}, 0, ids);
  EXPECT_EQ(ids, (Ids{1, 2, 3}));
  grid.query_sweep({15, -1e11f, 0}, {15, 1e11f, 0}, 0, ids);
  EXPECT_EQ(ids, (Ids{1, 2, 4, 5}));
  // At 10^20 the slack for double rounding alone spans millions of units: everything, conservatively.
  grid.query_sweep({15, -1e20f, 0}, {15, 1e20f, 0}, 0, ids);
  EXPECT_EQ(ids, (Ids{1, 2, 3, 4, 5, 6}));
  // Non-finite input finds nothing.
  grid.query_sweep({kNaN, 15, 0}, {15, 15, 0}, 0, ids);
  EXPECT_TRUE(ids.empty());
  grid.query_sweep({15, 15, 0}, {kInf, 15, 0}, 0, ids);
  EXPECT_TRUE(ids.empty());
  grid.query_sweep({15, 15, 0}, {15, 15, 0}, kInf, ids);
  EXPECT_TRUE(ids.empty());
}

// Coordinates snapped to multiples of 8 half the time put many box faces and segment ends exactly on
// cell edges.
float coordinate(std::mt19937& rng, float lo, float hi) {
  const float v = float(uniform_double(rng, lo, hi));
  return (rng() & 1) ? std::round(v / 8) * 8 : v;
}

Aabb random_box(std::mt19937& rng) {
  const float cx = coordinate(rng, -1200, 1200), cy = coordinate(rng, -1200, 1200);
  const unsigned kind = rng() % 20;
  const float extent = kind < 14 ? 40 : (kind < 19 ? 150 : 600);
  const float hx = 1 + coordinate(rng, 0, extent), hy = 1 + coordinate(rng, 0, extent);
  return box2(cx - hx, cy - hy, cx + hx, cy + hy);
}

Sweep random_sweep(std::mt19937& rng) {
  Sweep s;
  s.from = {coordinate(rng, -1300, 1300), coordinate(rng, -1300, 1300), coordinate(rng, -50, 50)};
  switch (rng() % 5) {
    case 0:  // a short hop, as a projectile's tick
      s.to = s.from + Vec3{coordinate(rng, -80, 80), coordinate(rng, -80, 80), 0};
      break;
    case 1:  // xy-degenerate
      s.to = s.from + Vec3{0, 0, coordinate(rng, -100, 100)};
      break;
    case 2:  // axis-aligned, often along a cell edge
      s.to = (rng() & 1) ? Vec3{coordinate(rng, -1300, 1300), s.from.y, 0}
                         : Vec3{s.from.x, coordinate(rng, -1300, 1300), 0};
      break;
    default:
      s.to = {coordinate(rng, -1300, 1300), coordinate(rng, -1300, 1300), 0};
  }
  s.radius = (rng() % 3 == 0) ? 0 : coordinate(rng, 0, 100);
  return s;
}

class GridRandomTest : public ::testing::TestWithParam<float> {};

TEST_P(GridRandomTest, MatchesBruteForceThroughManyMoves) {
  const float size = GetParam();
  std::mt19937 rng(20240604);
  Grid grid(size);
  Model model{size, {}};
  std::vector<EntityId> ids;
  for (EntityId id = 1; id <= 250; ++id)
    ids.push_back(id);
  std::shuffle(ids.begin(), ids.end(), rng);
  EntityId next_id = 251;
  std::int64_t changes = 0;
  const auto move = [&](EntityId id, const Aabb& b) {
    const auto it = model.boxes.find(id);
    Range old{};
    if (it != model.boxes.end()) old = range_of(it->second, size);
    changes += expected_changes(it != model.boxes.end() ? &old : nullptr, range_of(b, size));
    ASSERT_TRUE(grid.update(id, b));
    model.boxes[id] = b;
  };
  for (EntityId id : ids)
    move(id, random_box(rng));

  int sweeps_checked = 0, required_hits = 0, pairs_seen = 0, overlapping_seen = 0;
  Pairs pairs;
  Ids out;
  for (int round = 0; round < 60; ++round) {
    for (auto& [id, b] : std::map<EntityId, Aabb>(model.boxes)) {
      const unsigned what = rng() % 16;
      if (what < 8) {  // jitter: often stays in its cells
        const float dx = coordinate(rng, -3, 3), dy = coordinate(rng, -3, 3);
        move(id, box2(b.min.x + dx, b.min.y + dy, b.max.x + dx, b.max.y + dy));
      } else if (what < 10) {
        move(id, random_box(rng));
      } else if (what == 10) {
        grid.remove(id);
        model.boxes.erase(id);
        move(next_id++, random_box(rng));
      } else if (what == 11) {  // refused: nothing changes
        Aabb bad = b;
        bad.max.y = kNaN;
        EXPECT_FALSE(grid.update(id, bad));
      }
    }
    ASSERT_EQ(grid.size(), model.boxes.size());
    for (const auto& [id, b] : model.boxes)
      ASSERT_TRUE(grid.contains(id));
    EXPECT_EQ(std::int64_t(grid.stats().cell_changes), changes);
    EXPECT_EQ(grid.stats().occupied_cells, model.occupied_cells());
    EXPECT_EQ(grid.stats().oversize, model.oversize());

    grid.pairs(pairs);
    ASSERT_EQ(pairs, model.pairs()) << "round " << round;
    for (const auto& [a, b] : pairs)
      ASSERT_LT(a, b);
    ASSERT_TRUE(std::adjacent_find(pairs.begin(), pairs.end(), std::greater_equal<>()) == pairs.end());
    pairs_seen += int(pairs.size());
    // Conservative: truly overlapping boxes (closed, xy) always pair.
    for (auto a = model.boxes.begin(); a != model.boxes.end(); ++a) {
      for (auto b = std::next(a); b != model.boxes.end(); ++b) {
        const Aabb &p = a->second, &q = b->second;
        if (p.min.x <= q.max.x && q.min.x <= p.max.x && p.min.y <= q.max.y && q.min.y <= p.max.y) {
          ++overlapping_seen;
          ASSERT_TRUE(std::binary_search(pairs.begin(), pairs.end(), std::make_pair(a->first, b->first)));
        }
      }
    }

    for (int i = 0; i < 20; ++i) {
      Aabb q = random_box(rng);
      if (i % 4 == 0) q = box2(q.min.x, q.min.y, q.min.x, q.min.y);  // a point, often on an edge
      grid.query(q, out);
      ASSERT_EQ(out, model.query(q));
    }
    for (int i = 0; i < 20; ++i) {
      const Sweep s = random_sweep(rng);
      grid.query_sweep(s.from, s.to, s.radius, out);
      ASSERT_TRUE(sorted_unique(out));
      const Ids required = model.sweep_required(s);
      ASSERT_TRUE(std::includes(out.begin(), out.end(), required.begin(), required.end()))
          << "sweep " << s.from.x << "," << s.from.y << " -> " << s.to.x << "," << s.to.y << " r "
          << s.radius;
      for (EntityId id : out)
        ASSERT_TRUE(model.sweep_allowed(s, id)) << id;
      ++sweeps_checked;
      required_hits += int(required.size());
    }
  }
  // The workload must actually exercise what it claims to.
  EXPECT_GT(pairs_seen, 1000);
  EXPECT_GT(overlapping_seen, 500);
  EXPECT_GT(required_hits, 500);
  EXPECT_EQ(sweeps_checked, 1200);
  EXPECT_GT(grid.stats().oversize + model.oversize(), 0);
  EXPECT_GT(grid.stats().refused, 0u);
}

INSTANTIATE_TEST_SUITE_P(CellSizes, GridRandomTest, ::testing::Values(64.0f, 48.0f, 37.5f, 10.1f));

}  // namespace
}  // namespace shiftcast
