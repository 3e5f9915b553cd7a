// Grid: Blow's 2D segregation of dynamic entities ("Segregation is Good"): a uniform grid over x and y,
// stored as a spatial hash so the world need not be bounded in advance. Shooters are played over floors,
// so a column of cells costs little and z is left to the filters.
//
//   Grid grid(cell_size);                      // default: GridOptions::derive from the largest entity
//   grid.update(id, box);                      // insert or move: only the cells it left or entered change
//   grid.update(id, swept_box);                // fast movers pass their speedbox (start ∪ end bounds)
//   grid.pairs(pairs);                         // every pair sharing a cell, once, first < second, sorted
//   grid.query(box, ids);                      // entities whose cells meet the box's cells, once, sorted
//   grid.query_sweep(from, to, radius, ids);   // cells walked along a ray/sweep, entities once, sorted
//
// Outputs are sorted by id, so everything built on them is deterministic regardless of hash order.
// Boxes with non-finite coordinates are refused (update returns false and counts the refusal); an
// entity whose box spans more than kMaxCellsPerEntity cells is kept in an oversize list that every
// query and pair walk includes, rather than filling thousands of cells.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collision/aabb.hpp"
#include "world/entity.hpp"

namespace shiftcast {

inline constexpr int kMaxCellsPerEntity = 64;

struct GridStats {
  std::uint64_t updates = 0;       // update() calls
  std::uint64_t cell_changes = 0;  // cells entered or left over all updates (0 for a move within cells)
  std::uint64_t refused = 0;       // non-finite boxes
  std::int64_t occupied_cells = 0;
  std::int64_t oversize = 0;  // entities in the oversize list now
};

class Grid {
 public:
  explicit Grid(float cell_size);

  // Cell side for a match: at least the diameter of the largest entity's bounding sphere, so a resting
  // entity covers at most 2×2 cells (Blow; RTR 25.1.2), and never below `minimum`.
  static float derive_cell_size(float largest_bound_radius, float minimum = 64);

  float cell_size() const { return cell_size_; }

  bool update(EntityId id, const Aabb& box);
  void remove(EntityId id);
  bool contains(EntityId id) const;
  std::size_t size() const;

  void query(const Aabb& box, std::vector<EntityId>& out) const;
  void pairs(std::vector<std::pair<EntityId, EntityId>>& out) const;
  // The cells within `radius` (xy) of the segment from→to, walked from `from` (a 2D DDA over the cells of
  // the segment's corridor); z is ignored.
  void query_sweep(Vec3 from, Vec3 to, float radius, std::vector<EntityId>& out) const;

  const GridStats& stats() const { return stats_; }

 private:
  // Implementation-defined; see grid.cpp.
  struct Entry;
  float cell_size_;
  float inv_cell_size_;
  GridStats stats_;
  std::unordered_map<std::uint64_t, std::vector<EntityId>> cells_;
  std::unordered_map<EntityId, std::vector<std::int32_t>> entity_cells_placeholder_;
};

}  // namespace shiftcast
