// Grid: the spatial hash behind the dynamic-entity broad phase. Layout, chosen for the per-tick update
// of every entity (hundreds of calls at up to 128 Hz):
//   - entries_ holds each entity's cell range by slot (slots are stable), found through an open-
//     addressing table, so an update that stays in its cells is one probe and four floors;
//   - cells_ is dense over the occupied cells, each with an unordered list of entity slots; a cell that
//   empties swaps
//     with the last occupied one and keeps its vector's capacity for the next cell to open, so steady
//     movement allocates nothing;
//   - order_ lists the live slots by id, so walks over entities come out sorted for free.
// pairs() walks entities in id order and, for each entity a, gathers the b > a in a's cells: only the
// duplicates of a pair sharing several cells meet, inside one entity's short run, which a tiny sort +
// unique removes, and the whole output is sorted by construction. Measured against walking the cells and
// sorting all their pairs at the end (with sort + unique, or with the first-shared-cell rule and a sort),
// 500 entities of 30×30 in cells of 64, best of 500 calls on a shared machine: clumped (1720 pairs)
// 16 µs against 24–31 µs; spread out (52–214 pairs) 5–6 µs against 1.6–3.8 µs, the floor being one
// probe per covered cell. The clumped case is the one that costs a tick, so this walk. An update that
// stays in its cells measured about 25 ns.
#include "world/match/grid.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace shiftcast {
namespace {

// Cell coordinates are clamped to ±kCellLimit before the int32 cast, which keeps the cast defined for any
// finite box and leaves room to add one to a coordinate and to multiply two spans in int64. With cells of
// at least kMinCellSize, a float world would have to reach ±10^9 units before anything is clamped.
constexpr double kCellLimit = 1073741824.0;  // 2^30
// A cell under one unit is smaller than anything an entity is made of; the bound keeps 1/size finite.
constexpr float kMinCellSize = 1.0f;
// Beyond 2^24 units a float coordinate cannot even resolve a unit; larger cells would change nothing.
constexpr float kMaxCellSize = 16777216.0f;
// What a meaningless cell size (NaN, zero, negative) becomes: derive_cell_size's default minimum.
constexpr float kFallbackCellSize = 64.0f;
// The sweep corridor is widened by this fraction of the magnitude of its coordinates. The corridor is
// computed in double from float inputs, a handful of operations each off by 2^-53 of that magnitude, so
// 2^-40 covers them thousands of times over and still lies far below a float ulp (2^-24 of it): no
// float caller can place an entity inside the slack.
constexpr double kSweepSlack = 0x1p-40;
// A hash probe of a cell costs about as much as testing this many entity ranges. Picks between walking
// cells and walking entities; both give the same answer, so it only moves speed.
constexpr std::int64_t kProbeCost = 4;

constexpr std::uint64_t pack(std::int32_t x, std::int32_t y) {
  return (std::uint64_t(std::uint32_t(x)) << 32) | std::uint32_t(y);
}

bool valid_box(const Aabb& b) {
  for (int i = 0; i < 3; ++i) {
    if (!std::isfinite(b.min[i]) || !std::isfinite(b.max[i])) return false;
  }
  return b.min.x <= b.max.x && b.min.y <= b.max.y;
}

float sanitize_cell_size(float size) {
  if (!(size > 0)) return kFallbackCellSize;
  return std::clamp(size, kMinCellSize, kMaxCellSize);
}

struct Segment2 {
  double ax, ay, bx, by;
};

// The x extent of the segment's points whose y lies in [lo, hi]; false when there are none. Near the ends
// of the band rounding may answer either way; callers widen bands by kSweepSlack so that no cell within
// the true radius depends on such an answer.
bool x_extent_in_band(const Segment2& s, double lo, double hi, double& x_min, double& x_max) {
  double t0 = 0, t1 = 1;
  const double dy = s.by - s.ay;
  if (dy == 0) {
    if (s.ay < lo || s.ay > hi) return false;
  } else {
    double ta = (lo - s.ay) / dy, tb = (hi - s.ay) / dy;
    if (ta > tb) std::swap(ta, tb);
    t0 = std::max(t0, ta);
    t1 = std::min(t1, tb);
    if (t0 > t1) return false;
  }
  const double xa = s.ax + t0 * (s.bx - s.ax), xb = s.ax + t1 * (s.bx - s.ax);
  x_min = std::min(xa, xb);
  x_max = std::max(xa, xb);
  return true;
}

// Whether the segment meets the closed rectangle (Liang–Barsky clipping).
bool segment_meets_rect(const Segment2& s, double x_lo, double y_lo, double x_hi, double y_hi) {
  double t0 = 0, t1 = 1;
  const double p[2] = {s.ax, s.ay}, d[2] = {s.bx - s.ax, s.by - s.ay};
  const double lo[2] = {x_lo, y_lo}, hi[2] = {x_hi, y_hi};
  for (int i = 0; i < 2; ++i) {
    if (d[i] == 0) {
      if (p[i] < lo[i] || p[i] > hi[i]) return false;
      continue;
    }
    double ta = (lo[i] - p[i]) / d[i], tb = (hi[i] - p[i]) / d[i];
    if (ta > tb) std::swap(ta, tb);
    t0 = std::max(t0, ta);
    t1 = std::min(t1, tb);
    if (t0 > t1) return false;
  }
  return true;
}

void sort_unique(std::vector<EntityId>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

}  // namespace

// --- SlotIndex -----------------------------------------------------------------------------------------

std::size_t Grid::SlotIndex::home(std::uint64_t key) const {
  // Fibonacci hashing: the multiply carries both packed coordinates into the top bits kept.
  return std::size_t((key * 0x9E3779B97F4A7C15ull) >> shift_);
}

std::int32_t Grid::SlotIndex::find(std::uint64_t key) const {
  if (size_ == 0) return -1;
  const std::size_t mask = buckets_.size() - 1;
  for (std::size_t i = home(key);; i = (i + 1) & mask) {
    const Bucket& b = buckets_[i];
    if (b.slot < 0) return -1;
    if (b.key == key) return b.slot;
  }
}

std::size_t Grid::SlotIndex::bucket_of(std::uint64_t key) const {
  const std::size_t mask = buckets_.size() - 1;
  std::size_t i = home(key);
  while (buckets_[i].key != key || buckets_[i].slot < 0)
    i = (i + 1) & mask;
  return i;
}

void Grid::SlotIndex::grow() {
  std::vector<Bucket> old = std::move(buckets_);
  const std::size_t capacity = std::max<std::size_t>(16, old.size() * 2);
  buckets_.assign(capacity, Bucket{});
  shift_ = 64 - std::countr_zero(capacity);
  size_ = 0;
  for (const Bucket& b : old) {
    if (b.slot >= 0) insert(b.key, b.slot);
  }
}

void Grid::SlotIndex::insert(std::uint64_t key, std::int32_t slot) {
  if ((size_ + 1) * 2 > buckets_.size()) grow();
  const std::size_t mask = buckets_.size() - 1;
  std::size_t i = home(key);
  while (buckets_[i].slot >= 0)
    i = (i + 1) & mask;
  buckets_[i] = {key, slot};
  ++size_;
}

void Grid::SlotIndex::assign(std::uint64_t key, std::int32_t slot) {
  buckets_[bucket_of(key)].slot = slot;
}

void Grid::SlotIndex::erase(std::uint64_t key) {
  const std::size_t mask = buckets_.size() - 1;
  std::size_t hole = bucket_of(key);
  // Backward shift: pull later members of the probe run into the hole when their home lies at or before
  // it, so lookups never need tombstones.
  for (std::size_t j = (hole + 1) & mask; buckets_[j].slot >= 0; j = (j + 1) & mask) {
    if (((j - home(buckets_[j].key)) & mask) >= ((j - hole) & mask)) {
      buckets_[hole] = buckets_[j];
      hole = j;
    }
  }
  buckets_[hole].slot = -1;
  --size_;
}

// --- Grid ------------------------------------------------------------------------------------------------

Grid::Grid(float cell_size)
    : cell_size_(sanitize_cell_size(cell_size)), inv_cell_size_(1.0 / double(cell_size_)) {}

float Grid::derive_cell_size(float largest_bound_radius, float minimum) {
  float size = minimum;
  if (2 * largest_bound_radius > size) size = 2 * largest_bound_radius;
  return sanitize_cell_size(size);
}

std::int32_t Grid::cell_of(double v) const {
  // For float v and size, q = v / size is an integer or at least min(2^-24, 2^-48·|q|) away from one
  // (both have 24-bit mantissas), while this product is off by two double roundings, about 2^-52·|q|:
  // below |q| = 2^26 the floor is exactly floor(v / size), so cells are [k·size, (k+1)·size) with no
  // rounding at their edges. (Doubles from the sweep are covered by its slack instead.)
  const double q = v * inv_cell_size_;
  if (!(q > -kCellLimit)) return std::int32_t(-kCellLimit);
  if (q >= kCellLimit) return std::int32_t(kCellLimit);
  return std::int32_t(std::floor(q));
}

Grid::CellRange Grid::range_of(double x_min, double y_min, double x_max, double y_max) const {
  return {cell_of(x_min), cell_of(y_min), cell_of(x_max), cell_of(y_max)};
}

std::size_t Grid::size() const {
  return order_.size();
}

bool Grid::contains(EntityId id) const {
  return entity_slots_.find(id) >= 0;
}

void Grid::add_to_cell(std::uint64_t key, std::int32_t slot) {
  std::int32_t index = cell_slots_.find(key);
  if (index < 0) {
    index = std::int32_t(live_cells_);
    if (live_cells_ == cells_.size()) cells_.emplace_back();
    cells_[live_cells_].key = key;
    cells_[live_cells_].slots.clear();
    ++live_cells_;
    cell_slots_.insert(key, index);
  }
  cells_[index].slots.push_back(slot);
}

void Grid::remove_from_cell(std::uint64_t key, std::int32_t slot) {
  const std::int32_t index = cell_slots_.find(key);
  if (index < 0) return;
  std::vector<std::int32_t>& slots = cells_[index].slots;
  const auto it = std::find(slots.begin(), slots.end(), slot);
  if (it == slots.end()) return;
  *it = slots.back();
  slots.pop_back();
  if (!slots.empty()) return;
  const std::size_t last = live_cells_ - 1;
  if (std::size_t(index) != last) {
    std::swap(cells_[index], cells_[last]);
    cell_slots_.assign(cells_[index].key, index);
  }
  cell_slots_.erase(key);
  --live_cells_;
}

std::int64_t Grid::enter_cells(const CellRange& range, const CellRange* keep, std::int32_t slot) {
  std::int64_t changed = 0;
  for (std::int32_t y = range.y0; y <= range.y1; ++y) {
    for (std::int32_t x = range.x0; x <= range.x1; ++x) {
      if (keep && x >= keep->x0 && x <= keep->x1 && y >= keep->y0 && y <= keep->y1) continue;
      add_to_cell(pack(x, y), slot);
      ++changed;
    }
  }
  return changed;
}

std::int64_t Grid::leave_cells(const CellRange& range, const CellRange* keep, std::int32_t slot) {
  std::int64_t changed = 0;
  for (std::int32_t y = range.y0; y <= range.y1; ++y) {
    for (std::int32_t x = range.x0; x <= range.x1; ++x) {
      if (keep && x >= keep->x0 && x <= keep->x1 && y >= keep->y0 && y <= keep->y1) continue;
      remove_from_cell(pack(x, y), slot);
      ++changed;
    }
  }
  return changed;
}

void Grid::drop_oversize(std::int32_t slot) {
  const auto it = std::find(oversize_.begin(), oversize_.end(), slot);
  if (it == oversize_.end()) return;
  *it = oversize_.back();
  oversize_.pop_back();
}

void Grid::insert_entry(EntityId id, const CellRange& range, bool oversize) {
  std::int32_t slot;
  if (free_slots_.empty()) {
    slot = std::int32_t(entries_.size());
    entries_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  entries_[slot] = {id, oversize, range};
  entity_slots_.insert(id, slot);
  // Ids arrive in increasing order in a match, so this is nearly always an append.
  const auto pos = std::lower_bound(order_.begin(), order_.end(), id,
                                    [&](std::int32_t s, EntityId v) { return entries_[s].id < v; });
  order_.insert(pos, slot);
  if (oversize) {
    oversize_.push_back(slot);
  } else {
    stats_.cell_changes += std::uint64_t(enter_cells(range, nullptr, slot));
  }
}

bool Grid::update(EntityId id, const Aabb& box) {
  ++stats_.updates;
  if (!valid_box(box)) {
    ++stats_.refused;
    return false;
  }
  const CellRange range = range_of(box.min.x, box.min.y, box.max.x, box.max.y);
  const bool oversize = range.area() > kMaxCellsPerEntity;
  const std::int32_t slot = entity_slots_.find(id);
  if (slot < 0) {
    insert_entry(id, range, oversize);
  } else {
    Entry& e = entries_[slot];
    if (e.range == range) return true;
    std::int64_t changed = 0;
    if (!e.oversize && !oversize) {
      changed = leave_cells(e.range, &range, slot) + enter_cells(range, &e.range, slot);
    } else if (!e.oversize) {
      changed = leave_cells(e.range, nullptr, slot);
      oversize_.push_back(slot);
    } else if (!oversize) {
      drop_oversize(slot);
      changed = enter_cells(range, nullptr, slot);
    }
    stats_.cell_changes += std::uint64_t(changed);
    e.range = range;
    e.oversize = oversize;
  }
  stats_.occupied_cells = std::int64_t(live_cells_);
  stats_.oversize = std::int64_t(oversize_.size());
  return true;
}

void Grid::remove(EntityId id) {
  const std::int32_t slot = entity_slots_.find(id);
  if (slot < 0) return;
  Entry& e = entries_[slot];
  if (e.oversize) {
    drop_oversize(slot);
  } else {
    leave_cells(e.range, nullptr, slot);
  }
  const auto pos = std::lower_bound(order_.begin(), order_.end(), id,
                                    [&](std::int32_t s, EntityId v) { return entries_[s].id < v; });
  if (pos != order_.end() && *pos == slot) order_.erase(pos);
  entity_slots_.erase(id);
  e = Entry{};
  free_slots_.push_back(slot);
  stats_.occupied_cells = std::int64_t(live_cells_);
  stats_.oversize = std::int64_t(oversize_.size());
}

void Grid::collect_range(const CellRange& q, std::vector<EntityId>& out) const {
  const std::int64_t area = q.area();
  if (area == 0) return;
  if (area > std::int64_t(order_.size()) / kProbeCost) {
    // Cheaper to test every entity's range; order_ makes the answer sorted and unique as it stands.
    for (const std::int32_t slot : order_) {
      if (entries_[slot].range.overlaps(q)) out.push_back(entries_[slot].id);
    }
    return;
  }
  for (std::int32_t y = q.y0; y <= q.y1; ++y) {
    for (std::int32_t x = q.x0; x <= q.x1; ++x) {
      const std::int32_t index = cell_slots_.find(pack(x, y));
      if (index < 0) continue;
      for (const std::int32_t slot : cells_[index].slots)
        out.push_back(entries_[slot].id);
    }
  }
  for (const std::int32_t slot : oversize_) {
    if (entries_[slot].range.overlaps(q)) out.push_back(entries_[slot].id);
  }
  sort_unique(out);
}

void Grid::query(const Aabb& box, std::vector<EntityId>& out) const {
  out.clear();
  if (std::isnan(box.min.x) || std::isnan(box.min.y) || std::isnan(box.max.x) || std::isnan(box.max.y))
    return;
  collect_range(range_of(box.min.x, box.min.y, box.max.x, box.max.y), out);
}

void Grid::pairs(std::vector<std::pair<EntityId, EntityId>>& out) const {
  out.clear();
  for (std::size_t i = 0; i < order_.size(); ++i) {
    const Entry& a = entries_[order_[i]];
    if (a.oversize) {
      // Walking the later entities in id order yields a's pairs sorted and once each.
      for (std::size_t j = i + 1; j < order_.size(); ++j) {
        const Entry& b = entries_[order_[j]];
        if (a.range.overlaps(b.range)) out.emplace_back(a.id, b.id);
      }
      continue;
    }
    const std::size_t begin = out.size();
    for (std::int32_t y = a.range.y0; y <= a.range.y1; ++y) {
      for (std::int32_t x = a.range.x0; x <= a.range.x1; ++x) {
        const std::int32_t index = cell_slots_.find(pack(x, y));
        if (index < 0) continue;  // cannot happen while a is in it; kept for safety
        for (const std::int32_t slot : cells_[index].slots) {
          if (entries_[slot].id > a.id) out.emplace_back(a.id, entries_[slot].id);
        }
      }
    }
    // Oversize partners are not in the cells, so they cannot duplicate a cell partner.
    for (const std::int32_t slot : oversize_) {
      const Entry& b = entries_[slot];
      if (b.id > a.id && a.range.overlaps(b.range)) out.emplace_back(a.id, b.id);
    }
    if (out.size() - begin > 1) {
      std::sort(out.begin() + std::ptrdiff_t(begin), out.end());
      out.erase(std::unique(out.begin() + std::ptrdiff_t(begin), out.end()), out.end());
    }
  }
}

void Grid::query_sweep(Vec3 from, Vec3 to, float radius, std::vector<EntityId>& out) const {
  out.clear();
  if (!std::isfinite(from.x) || !std::isfinite(from.y) || !std::isfinite(to.x) || !std::isfinite(to.y) ||
      !std::isfinite(radius)) {
    return;
  }
  const Segment2 s{from.x, from.y, to.x, to.y};
  const double r0 = std::max(double(radius), 0.0);
  const double magnitude =
      std::max({std::abs(s.ax), std::abs(s.ay), std::abs(s.bx), std::abs(s.by)}) + r0 + double(cell_size_);
  const double r = r0 + kSweepSlack * magnitude;
  const double x_lo = std::min(s.ax, s.bx) - r, x_hi = std::max(s.ax, s.bx) + r;
  const double y_lo = std::min(s.ay, s.by) - r, y_hi = std::max(s.ay, s.by) + r;
  const CellRange bounds = range_of(x_lo, y_lo, x_hi, y_hi);
  // The corridor's geometry assumes unclamped cells; beyond them, the clamped (monotone, so conservative)
  // box of cells around the corridor answers instead.
  const double limit = kCellLimit - 1;
  if (!(x_lo * inv_cell_size_ > -limit && x_hi * inv_cell_size_ < limit && y_lo * inv_cell_size_ > -limit &&
        y_hi * inv_cell_size_ < limit)) {
    collect_range(bounds, out);
    return;
  }
  // The corridor is the segment swept by a square of half-side r: for each row of cells, the segment's
  // x extent within the row's y band widened by r, widened by r again. A cell is in it exactly when the
  // segment meets the cell grown by r, which is also how an entity's whole cell range is tested below.
  const double w = double(cell_size_);
  const auto row_cells = [&](std::int32_t j, std::int32_t& i0, std::int32_t& i1) {
    double x_min, x_max;
    if (!x_extent_in_band(s, j * w - r, (j + 1) * w + r, x_min, x_max)) return false;
    i0 = cell_of(x_min - r);
    i1 = cell_of(x_max + r);
    return true;
  };
  const std::int64_t budget = std::int64_t(order_.size()) / kProbeCost;
  const std::int64_t rows = std::int64_t(bounds.y1) - bounds.y0 + 1;
  std::int64_t cells = 0;
  for (std::int32_t j = bounds.y0; rows <= budget && cells <= budget && j <= bounds.y1; ++j) {
    std::int32_t i0, i1;
    if (row_cells(j, i0, i1)) cells += std::int64_t(i1) - i0 + 1;
  }
  const auto hits = [&](const CellRange& c) {
    return segment_meets_rect(s, c.x0 * w - r, c.y0 * w - r, (double(c.x1) + 1) * w + r,
                              (double(c.y1) + 1) * w + r);
  };
  if (rows > budget || cells > budget) {
    for (const std::int32_t slot : order_) {
      if (hits(entries_[slot].range)) out.push_back(entries_[slot].id);
    }
    return;
  }
  // Rows from the `from` side, as a ray walks them (invisible once sorted).
  const bool up = s.ay <= s.by;
  for (std::int64_t n = 0; n < rows; ++n) {
    const std::int32_t j = std::int32_t(up ? bounds.y0 + n : bounds.y1 - n);
    std::int32_t i0, i1;
    if (!row_cells(j, i0, i1)) continue;
    for (std::int32_t i = i0; i <= i1; ++i) {
      const std::int32_t index = cell_slots_.find(pack(i, j));
      if (index < 0) continue;
      for (const std::int32_t slot : cells_[index].slots)
        out.push_back(entries_[slot].id);
    }
  }
  for (const std::int32_t slot : oversize_) {
    if (hits(entries_[slot].range)) out.push_back(entries_[slot].id);
  }
  sort_unique(out);
}

}  // namespace shiftcast
