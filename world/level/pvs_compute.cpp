// The grid set: cells, open samples, rays between the samples of every pair of open cells, dilation.
#include "world/level/pvs_compute.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include "collision/shape.hpp"
#include "world/level/pvs_grid.hpp"
#include "world/level/pvs_random_internal.hpp"

namespace shiftcast {
namespace {

// The grid reaches this far past the level's bounds on every side (units), so a point on a bounding
// brush's outer face is inside a cell.
constexpr float kGridMargin = 1;

struct Cell {
  std::int32_t x, y, z;
};

}  // namespace

PvsComputeResult compute_grid_pvs(const BspTree& tree, const Aabb& bounds,
                                  const PvsComputeSettings& settings) {
  PvsComputeResult result;
  if (!settings.enabled || bounds.empty() || !(settings.cell_size > 0) || settings.samples_per_cell < 1 ||
      settings.max_cells < 1)
    return result;
  const auto start = std::chrono::steady_clock::now();
  const Vec3 lo = bounds.min - Vec3{kGridMargin, kGridMargin, kGridMargin};
  const Vec3 size = bounds.size() + Vec3{2 * kGridMargin, 2 * kGridMargin, 2 * kGridMargin};
  float cell = settings.cell_size;
  std::int32_t n[3];
  for (;;) {
    std::int64_t total = 1;
    for (int a = 0; a < 3; ++a) {
      n[a] = std::max(1, std::int32_t(std::ceil(size[a] / cell)));
      total *= n[a];
    }
    if (total <= settings.max_cells) break;
    cell *= 1.25f;
  }
  GridCuts grid;
  for (int a = 0; a < 3; ++a)
    for (std::int32_t i = 0; i <= n[a]; ++i)
      grid.cuts[std::size_t(a)].push_back(lo[a] + float(i) * cell);
  result.cell_size = cell;
  result.cells = grid.cell_count();

  // Open samples per cell; a cell without any is kNoCluster (answers "visible" if a point lands there).
  std::mt19937 rng(settings.seed);
  const std::int32_t k = settings.samples_per_cell;
  std::vector<std::int32_t> cell_clusters(std::size_t(result.cells), kNoCluster);
  std::vector<Cell> cluster_cells;
  std::vector<Vec3> samples;  // k per cluster
  for (std::int32_t z = 0; z < n[2]; ++z)
    for (std::int32_t y = 0; y < n[1]; ++y)
      for (std::int32_t x = 0; x < n[0]; ++x) {
        // Inset a little so a sample is strictly inside its cell.
        const float inset = cell * 1e-3f;
        const Aabb box{{grid.cuts[0][std::size_t(x)] + inset, grid.cuts[1][std::size_t(y)] + inset,
                        grid.cuts[2][std::size_t(z)] + inset},
                       {grid.cuts[0][std::size_t(x) + 1] - inset, grid.cuts[1][std::size_t(y) + 1] - inset,
                        grid.cuts[2][std::size_t(z) + 1] - inset}};
        // Samples stay inside the level's bounds: the grid's overshoot past them (and its margin) is the
        // outside of the level, where rays would run around the walls and join everything.
        const Aabb inside{max(box.min, bounds.min), min(box.max, bounds.max)};
        if (inside.empty()) continue;
        std::vector<Vec3> open;
        for (std::int32_t attempt = 0; attempt < 4 * k && std::int32_t(open.size()) < k; ++attempt) {
          const Vec3 p = pvs_random::point_in(rng, inside);
          if (tree.point_brush(p) == kNoBrush) open.push_back(p);
        }
        if (open.empty()) continue;
        // Fewer than k found: repeat them, so every cluster has k samples to pair.
        for (std::size_t i = 0; open.size() < std::size_t(k); ++i)
          open.push_back(open[i]);
        cell_clusters[std::size_t(grid.cell_index(x, y, z))] = std::int32_t(cluster_cells.size());
        cluster_cells.push_back({x, y, z});
        samples.insert(samples.end(), open.begin(), open.end());
      }
  const std::int32_t clusters = std::int32_t(cluster_cells.size());
  result.clusters = clusters;
  if (clusters == 0) return result;

  // The open cells around a cluster's cell, itself included.
  const auto neighbours = [&](std::int32_t c, auto&& visit) {
    const Cell& at = cluster_cells[std::size_t(c)];
    for (std::int32_t dz = -1; dz <= 1; ++dz)
      for (std::int32_t dy = -1; dy <= 1; ++dy)
        for (std::int32_t dx = -1; dx <= 1; ++dx) {
          const std::int32_t x = at.x + dx, y = at.y + dy, z = at.z + dz;
          if (x < 0 || y < 0 || z < 0 || x >= n[0] || y >= n[1] || z >= n[2]) continue;
          const std::int32_t other = cell_clusters[std::size_t(grid.cell_index(x, y, z))];
          if (other != kNoCluster) visit(other);
        }
  };
  // Rays: sample i of one cell to sample (i + offset) of the other, a different pairing per ray.
  std::vector<std::uint8_t> sees(std::size_t(clusters) * std::size_t(clusters), 0);
  const Shape point = Shape::point();
  for (std::int32_t a = 0; a < clusters; ++a) {
    sees[std::size_t(a) * std::size_t(clusters) + std::size_t(a)] = 1;
    for (std::int32_t b = a + 1; b < clusters; ++b) {
      // Already implied by the dilation below (a sees a neighbour of b, or a neighbour of a sees b, among
      // the pairs decided so far): no rays needed. This is most pairs in open levels.
      bool implied = false;
      neighbours(b, [&](std::int32_t nb) {
        implied = implied || sees[std::size_t(a) * std::size_t(clusters) + std::size_t(nb)];
      });
      neighbours(a, [&](std::int32_t na) {
        implied = implied || sees[std::size_t(na) * std::size_t(clusters) + std::size_t(b)];
      });
      if (implied) continue;
      bool connected = false;
      for (std::int32_t r = 0; r < settings.rays_per_pair && !connected; ++r) {
        const Vec3& p = samples[std::size_t(a) * std::size_t(k) + std::size_t(r % k)];
        const Vec3& q = samples[std::size_t(b) * std::size_t(k) + std::size_t((r * 3 + r / k) % k)];
        const TraceResult t = tree.trace(point, p, q);
        ++result.rays;
        connected = t.status != QueryStatus::kOk || (!t.hit && !t.start_solid);
      }
      if (connected) {
        sees[std::size_t(a) * std::size_t(clusters) + std::size_t(b)] = 1;
        sees[std::size_t(b) * std::size_t(clusters) + std::size_t(a)] = 1;
      }
    }
  }

  // Dilation by one cell at both ends: first the seen end, then the seeing end.
  std::vector<std::uint8_t> once(sees.size(), 0);
  for (std::int32_t a = 0; a < clusters; ++a)
    for (std::int32_t b = 0; b < clusters; ++b)
      if (sees[std::size_t(a) * std::size_t(clusters) + std::size_t(b)])
        neighbours(
            b, [&](std::int32_t nb) { once[std::size_t(a) * std::size_t(clusters) + std::size_t(nb)] = 1; });
  const std::int32_t bytes = (clusters + 7) / 8;
  std::vector<std::uint8_t> bits(std::size_t(clusters) * std::size_t(bytes), 0);
  for (std::int32_t a = 0; a < clusters; ++a)
    for (std::int32_t b = 0; b < clusters; ++b)
      if (once[std::size_t(a) * std::size_t(clusters) + std::size_t(b)])
        neighbours(a, [&](std::int32_t na) {
          bits[std::size_t(na) * std::size_t(bytes) + std::size_t(b >> 3)] |= std::uint8_t(1u << (b & 7));
        });

  PvsResult set = PotentiallyVisibleSet::from_parts(grid_cluster_tree(grid, cell_clusters), clusters, bytes,
                                                    std::move(bits));
  // A grid of at most max_cells cells is shallow and well formed; a refusal would be a bug here, and the
  // level then ships no set (every query "visible") rather than a wrong one.
  if (set.ok()) result.set = std::move(set.set);
  result.build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace shiftcast
