// Test support for the interest filter's tests: a potentially visible set over an axis grid of square
// cells (x, y; one cell tall in z) with a random visibility matrix, built through PotentiallyVisibleSet::
// from_parts, and the same grid answered by arithmetic (floor of coordinate / cell) as the oracle.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "collision/aabb.hpp"
#include "world/level/potentially_visible_set.hpp"
#include "world/level/pvs_grid.hpp"

namespace shiftcast::interest_test {

// The grid's extent in z: every point the tests place is inside it (z is not cut, the oracle ignores it).
inline constexpr float kGridHalfHeight = 4096;

struct GridSet {
  int nx = 0, ny = 0;
  float cell = 0;
  std::vector<std::uint8_t> sees;  // nx*ny rows of nx*ny: from sees to
  PotentiallyVisibleSet set;

  int cluster_count() const { return nx * ny; }
  bool may_see(int from, int to) const { return sees[std::size_t(from * cluster_count() + to)] != 0; }

  // Oracle: the cell of p by arithmetic, kNoCluster outside the grid.
  std::int32_t cell_of(float x, float y) const {
    const int ix = int(std::floor(x / cell)), iy = int(std::floor(y / cell));
    if (ix < 0 || iy < 0 || ix >= nx || iy >= ny) return kNoCluster;
    return ix + nx * iy;
  }
  // Oracle: the cells a closed box touches (its x, y extent).
  std::vector<std::int32_t> cells_of(const Aabb& box) const {
    std::vector<std::int32_t> out;
    const int x0 = std::max(0, int(std::floor(box.min.x / cell))),
              x1 = std::min(nx - 1, int(std::floor(box.max.x / cell)));
    const int y0 = std::max(0, int(std::floor(box.min.y / cell))),
              y1 = std::min(ny - 1, int(std::floor(box.max.y / cell)));
    for (int iy = y0; iy <= y1; ++iy)
      for (int ix = x0; ix <= x1; ++ix)
        out.push_back(ix + nx * iy);
    return out;
  }
  // Oracle: the cells a segment crosses, each cell's rectangle clipped against the segment (slabs).
  std::vector<std::int32_t> cells_of(Vec3 a, Vec3 b) const {
    std::vector<std::int32_t> out;
    for (int iy = 0; iy < ny; ++iy)
      for (int ix = 0; ix < nx; ++ix) {
        double t0 = 0, t1 = 1;
        const auto slab = [&](double p, double d, double lo, double hi) {
          if (d == 0) return p >= lo && p <= hi;
          double u = (lo - p) / d, v = (hi - p) / d;
          if (u > v) std::swap(u, v);
          t0 = std::max(t0, u);
          t1 = std::min(t1, v);
          return t0 <= t1;
        };
        if (slab(a.x, double(b.x) - a.x, ix * cell, (ix + 1) * cell) &&
            slab(a.y, double(b.y) - a.y, iy * cell, (iy + 1) * cell))
          out.push_back(ix + nx * iy);
      }
    return out;
  }
  // Oracle: "visible" in the set's sense: no cell to ask (outside), or any cell seen.
  bool sees_any(std::int32_t from, const std::vector<std::int32_t>& cells) const {
    if (from == kNoCluster || cells.empty()) return true;
    for (std::int32_t c : cells)
      if (may_see(from, c)) return true;
    return false;
  }
};

inline GridSet make_grid_set(int nx, int ny, float cell, double see_probability, std::uint32_t seed) {
  GridSet g;
  g.nx = nx;
  g.ny = ny;
  g.cell = cell;
  std::mt19937 rng(seed);
  std::bernoulli_distribution coin(see_probability);
  const int n = nx * ny;
  g.sees.resize(std::size_t(n * n));
  for (int from = 0; from < n; ++from)
    for (int to = 0; to < n; ++to)
      g.sees[std::size_t(from * n + to)] = from == to || coin(rng) ? 1 : 0;
  // The tree of world/level/pvs_grid.hpp (the compile-time sets' own); the oracle above is arithmetic.
  GridCuts cuts;
  for (int i = 0; i <= nx; ++i)
    cuts.cuts[0].push_back(float(i) * cell);
  for (int i = 0; i <= ny; ++i)
    cuts.cuts[1].push_back(float(i) * cell);
  cuts.cuts[2] = {-kGridHalfHeight, kGridHalfHeight};
  std::vector<std::int32_t> clusters(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    clusters[std::size_t(i)] = i;  // cell_index(ix, iy, 0) = ix + nx * iy, the oracle's numbering
  std::vector<PvsNode> nodes = grid_cluster_tree(cuts, clusters);
  const int bytes = (n + 7) / 8;
  std::vector<std::uint8_t> bits(std::size_t(n * bytes), 0);
  for (int from = 0; from < n; ++from)
    for (int to = 0; to < n; ++to)
      if (g.may_see(from, to)) bits[std::size_t(from * bytes + (to >> 3))] |= std::uint8_t(1u << (to & 7));
  PvsResult r = PotentiallyVisibleSet::from_parts(std::move(nodes), n, bytes, std::move(bits));
  EXPECT_TRUE(r.ok()) << to_string(r.error) << ": " << r.detail;
  g.set = std::move(r.set);
  return g;
}

}  // namespace shiftcast::interest_test
