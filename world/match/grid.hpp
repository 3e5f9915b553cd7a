// Grid: Blow's 2D segregation of dynamic entities ("Segregation is Good"): a uniform grid over x and y,
// stored as a spatial hash so the world need not be bounded in advance. Shooters are played over floors,
// so a column of cells costs little and z is left to the filters.
//
//   Grid grid(cell_size);                      // default: Grid::derive_cell_size from the largest entity
//   grid.update(id, box);                      // insert or move: only the cells it left or entered change
//   grid.update(id, swept_box);                // fast movers pass their speedbox (start ∪ end bounds)
//   grid.pairs(pairs);                         // every pair sharing a cell, once, first < second, sorted
//   grid.query(box, ids);                      // entities whose cells meet the box's cells, once, sorted
//   grid.query_sweep(from, to, radius, ids);   // cells walked along a ray/sweep, entities once, sorted
//
// Outputs are sorted by id, so everything built on them is deterministic regardless of hash order.
// Boxes with non-finite coordinates, or inverted in x or y (min > max), are refused (update returns false,
// counts the refusal and leaves the entity where it was); an entity whose box spans more than
// kMaxCellsPerEntity cells is kept in an oversize list that every query and pair walk includes (filtered
// by its cell range), rather than filling thousands of cells.
//
// Cells are [k·size, (k+1)·size) on each axis (floor, so -0.5 is in cell -1). A box covers every cell its
// closed extent reaches: one whose max lies exactly on a cell edge also covers the cell beyond, so boxes
// that merely touch still share a cell (conservative: the filters decide touching vs overlapping). Cell
// coordinates are clamped to ±2^30, so a box beyond that collapses into the border cells: answers stay
// conservative, only coarser. Everything is the xy projection; z is ignored except that a non-finite z is
// refused too. Const members touch no shared scratch, so readers on several threads may query one grid.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "collision/aabb.hpp"
#include "world/match/entity.hpp"

namespace shiftcast {

inline constexpr int kMaxCellsPerEntity = 64;

struct GridStats {
  std::uint64_t updates = 0;       // update() calls
  std::uint64_t cell_changes = 0;  // cells entered or left by update() (0 for a move within its cells)
  std::uint64_t refused = 0;       // non-finite or inverted boxes
  std::int64_t occupied_cells = 0;
  std::int64_t oversize = 0;  // entities in the oversize list now
};

class Grid {
 public:
  // A cell_size that is NaN or not positive becomes 64; others are clamped to [1, 2^24].
  explicit Grid(float cell_size);

  // Cell side for a match: at least the diameter of the largest entity's bounding sphere, so a resting
  // entity covers at most 2×2 cells (Blow; RTR 25.1.2), and never below `minimum`.
  static float derive_cell_size(float largest_bound_radius, float minimum = 64);

  float cell_size() const { return cell_size_; }

  bool update(EntityId id, const Aabb& box);
  void remove(EntityId id);
  bool contains(EntityId id) const;
  std::size_t size() const;

  // Entities whose cell range meets the box's cell range. A box with a NaN coordinate or inverted in x or
  // y finds nothing; infinite coordinates reach the border cells.
  void query(const Aabb& box, std::vector<EntityId>& out) const;
  // Pairs whose cell ranges meet (share at least one cell), oversize entities included.
  void pairs(std::vector<std::pair<EntityId, EntityId>>& out) const;
  // The cells within `radius` (xy) of the segment from→to, walked from `from` (a 2D DDA over the cells of
  // the segment's corridor); z is ignored. Conservative: every cell within radius of the segment (a
  // segment on a cell edge takes both sides) and no cell farther than radius·√2 (the corridor is the
  // segment swept by a square). A negative radius counts as 0; non-finite input finds nothing. A corridor
  // reaching beyond the clamped cell range falls back to the cell box around it.
  void query_sweep(Vec3 from, Vec3 to, float radius, std::vector<EntityId>& out) const;

  const GridStats& stats() const { return stats_; }

 private:
  // Inclusive cell coordinates covered by a box; x0 > x1 (the default) covers none.
  struct CellRange {
    std::int32_t x0 = 0, y0 = 0, x1 = -1, y1 = -1;
    bool operator==(const CellRange&) const = default;
    bool overlaps(const CellRange& o) const { return x0 <= o.x1 && o.x0 <= x1 && y0 <= o.y1 && o.y0 <= y1; }
    std::int64_t area() const {
      if (x0 > x1 || y0 > y1) return 0;
      return (std::int64_t(x1) - x0 + 1) * (std::int64_t(y1) - y0 + 1);
    }
  };
  struct Entry {
    EntityId id = kNoEntity;  // kNoEntity: a free slot
    bool oversize = false;
    CellRange range;  // kept for oversize entries too: queries and pairs filter them by it
  };
  struct Cell {
    std::uint64_t key = 0;
    std::vector<std::int32_t> slots;  // entries_ slots, any order: every output is sorted after the walk
  };
  // Open addressing from a 64-bit key to a slot (linear probing, backward-shift deletion): after it has
  // grown, inserting and erasing never allocate, unlike std::unordered_map's node per insert.
  class SlotIndex {
   public:
    std::int32_t find(std::uint64_t key) const;         // -1 when absent
    void insert(std::uint64_t key, std::int32_t slot);  // key absent
    void assign(std::uint64_t key, std::int32_t slot);  // key present
    void erase(std::uint64_t key);                      // key present

   private:
    struct Bucket {
      std::uint64_t key = 0;
      std::int32_t slot = -1;  // -1: empty
    };
    std::size_t home(std::uint64_t key) const;
    std::size_t bucket_of(std::uint64_t key) const;  // key present
    void grow();
    std::vector<Bucket> buckets_;  // power-of-two size, at most half full
    std::size_t size_ = 0;
    int shift_ = 0;  // 64 - log2(buckets_.size())
  };

  std::int32_t cell_of(double v) const;
  CellRange range_of(double x_min, double y_min, double x_max, double y_max) const;
  void insert_entry(EntityId id, const CellRange& range, bool oversize);
  // Both return the number of cells changed; `keep` (may be null) names cells to leave alone.
  std::int64_t enter_cells(const CellRange& range, const CellRange* keep, std::int32_t slot);
  std::int64_t leave_cells(const CellRange& range, const CellRange* keep, std::int32_t slot);
  void add_to_cell(std::uint64_t key, std::int32_t slot);
  void remove_from_cell(std::uint64_t key, std::int32_t slot);
  void drop_oversize(std::int32_t slot);
  void collect_range(const CellRange& q, std::vector<EntityId>& out) const;

  float cell_size_;
  double inv_cell_size_;  // double, so that cells are [k·size, (k+1)·size) exactly (see cell_of)
  GridStats stats_;
  std::vector<Entry> entries_;  // by slot; slots never move while their entity lives
  std::vector<std::int32_t> free_slots_;
  std::vector<std::int32_t> order_;  // live slots sorted by id: walks come out sorted
  SlotIndex entity_slots_;           // id -> slot
  std::vector<Cell> cells_;          // [0, live_cells_) occupied; the rest keep their capacity
  std::size_t live_cells_ = 0;
  SlotIndex cell_slots_;                // packed cell key -> index into cells_
  std::vector<std::int32_t> oversize_;  // slots of oversize entries, any order
};

}  // namespace shiftcast
