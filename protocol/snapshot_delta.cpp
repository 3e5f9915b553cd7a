#include "protocol/snapshot_delta.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

#include "protocol/entity_block.hpp"
#include "protocol/quantize.hpp"

namespace shiftcast {
namespace {

constexpr double kQuantaPerUnit = 1.0 / static_cast<double>(kPositionQuantum);
constexpr double kYawStepsPerTurn = 65536.0;
constexpr double kTwoPi = 2.0 * std::numbers::pi;

// Both inputs trusted (ascending, disjoint): baseline with `changed` replacing or adding entries and
// `removed` deleting them.
SnapshotState merge(std::span<const wire::EntityState> baseline, std::span<const wire::EntityState> changed,
                    std::span<const std::uint32_t> removed) {
  SnapshotState out;
  out.reserve(baseline.size() + changed.size());
  std::size_t i = 0, j = 0, k = 0;
  while (i < baseline.size() || j < changed.size()) {
    if (j == changed.size() || (i < baseline.size() && baseline[i].id() < changed[j].id())) {
      const std::uint32_t id = baseline[i].id();
      while (k < removed.size() && removed[k] < id)
        ++k;
      if (k == removed.size() || removed[k] != id) out.push_back(baseline[i]);
      ++i;
    } else {
      if (i < baseline.size() && baseline[i].id() == changed[j].id()) ++i;
      out.push_back(changed[j]);
      ++j;
    }
  }
  return out;
}

template <typename T, typename Id>
bool strictly_ascending(std::span<const T> items, Id id) {
  for (std::size_t i = 1; i < items.size(); ++i) {
    if (!(id(items[i - 1]) < id(items[i]))) return false;
  }
  return true;
}

}  // namespace

std::int32_t quantize_coordinate(float value) {
  return quantize_to_steps(value, kQuantaPerUnit);
}

float dequantize_coordinate(std::int32_t quanta) {
  return dequantize_steps(quanta, kQuantaPerUnit);
}

wire::QuantizedVec quantize_position(const wire::Vec3f& position) {
  return {quantize_coordinate(position.x()), quantize_coordinate(position.y()),
          quantize_coordinate(position.z())};
}

wire::Vec3f dequantize_position(const wire::QuantizedVec& position) {
  return {dequantize_coordinate(position.x()), dequantize_coordinate(position.y()),
          dequantize_coordinate(position.z())};
}

std::uint16_t quantize_yaw(float yaw) {
  if (!std::isfinite(yaw)) return 0;
  // Reduce to a turn first so the rounding below works on small numbers whatever the input.
  const double turns = std::remainder(static_cast<double>(yaw), kTwoPi) / kTwoPi;
  const auto steps = static_cast<std::int64_t>(std::round(turns * kYawStepsPerTurn));
  return static_cast<std::uint16_t>(static_cast<std::uint64_t>(steps));  // wraps modulo 65536
}

unsigned yaw_shift(std::uint8_t kind) {
  return kind == kEntityKindPlayer ? kPlayerYawShift : 0;
}

std::int64_t yaw_turn(std::uint16_t from, std::uint16_t to, unsigned shift) {
  const unsigned bits = 16 - shift;
  const std::uint32_t d = (static_cast<std::uint32_t>(to >> shift) - (from >> shift)) & ((1u << bits) - 1);
  return d >= (1u << (bits - 1)) ? std::int64_t{d} - (std::int64_t{1} << bits) : std::int64_t{d};
}

std::uint16_t turn_yaw(std::uint16_t from, std::int64_t steps, unsigned shift) {
  const std::uint64_t unit = static_cast<std::uint64_t>((from >> shift) + steps) & ((1u << (16 - shift)) - 1);
  return static_cast<std::uint16_t>(unit << shift);
}

std::uint16_t quantize_entity_yaw(float yaw, std::uint8_t kind) {
  const unsigned shift = yaw_shift(kind);
  if (shift == 0) return quantize_yaw(yaw);
  if (!std::isfinite(yaw)) return 0;
  const double turns = std::remainder(static_cast<double>(yaw), kTwoPi) / kTwoPi;
  const auto steps = static_cast<std::int64_t>(std::round(turns * (kYawStepsPerTurn / (1u << shift))));
  return static_cast<std::uint16_t>(static_cast<std::uint64_t>(steps) << shift);  // wraps modulo 65536
}

float dequantize_yaw(std::uint16_t yaw) {
  return static_cast<float>(yaw * (kTwoPi / kYawStepsPerTurn));
}

const wire::EntityState* find_entity(std::span<const wire::EntityState> state, std::uint32_t id) {
  const auto it = std::lower_bound(state.begin(), state.end(), id,
                                   [](const wire::EntityState& e, std::uint32_t v) { return e.id() < v; });
  return it != state.end() && it->id() == id ? &*it : nullptr;
}

bool same_entity_state(const wire::EntityState& a, const wire::EntityState& b) {
  static_assert(sizeof(wire::EntityState) == 20, "EntityState has no padding: compare its bytes");
  return std::memcmp(&a, &b, sizeof(wire::EntityState)) == 0;
}

void encode_delta_into(std::span<const wire::EntityState> baseline, std::span<const wire::EntityState> world,
                       const DeltaPriority& priority, std::size_t bit_budget, SnapshotDelta& delta) {
  // Every difference goes straight into the delta's lists (their capacity kept from the last call), with
  // its cost against its baseline entry; only a delta over budget then drops some.
  std::vector<wire::EntityState>& candidates = delta.changed;
  std::vector<std::uint32_t>& gone = delta.removed;
  std::vector<std::size_t>& entry_bits = delta.entry_bits;
  candidates.clear();
  gone.clear();
  entry_bits.clear();
  delta.result.clear();
  std::size_t i = 0, j = 0;
  while (i < baseline.size() || j < world.size()) {
    if (j == world.size() || (i < baseline.size() && baseline[i].id() < world[j].id())) {
      gone.push_back(baseline[i++].id());
    } else if (i == baseline.size() || world[j].id() < baseline[i].id()) {
      entry_bits.push_back(entity_entry_bits(nullptr, world[j]));
      candidates.push_back(world[j++]);
    } else {
      if (!same_entity_state(baseline[i], world[j])) {
        entry_bits.push_back(entity_entry_bits(&baseline[i], world[j]));
        candidates.push_back(world[j]);
      }
      ++i;
      ++j;
    }
  }

  std::size_t total = count_bits(gone.size()) + count_bits(candidates.size());
  std::int64_t previous = -1;
  for (const std::uint32_t id : gone) {
    total += id_gap_bits(previous, id);
    previous = id;
  }
  previous = -1;
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    total += id_gap_bits(previous, candidates[c].id()) + entry_bits[c];
    previous = candidates[c].id();
  }
  delta.complete = total <= bit_budget;
  delta.bits = total;
  if (delta.complete) return;

  // Removed ids first, ascending, while they fit (the counts priced at their final values as they grow).
  std::size_t used = 2 * count_bits(0);
  std::size_t removed_count = 0;
  previous = -1;
  for (; removed_count < gone.size(); ++removed_count) {
    const std::uint32_t id = gone[removed_count];
    const std::size_t cost =
        id_gap_bits(previous, id) + count_bits(removed_count + 1) - count_bits(removed_count);
    if (used + cost > bit_budget) break;
    used += cost;
    previous = id;
  }
  gone.resize(removed_count);

  struct Ranked {
    bool other;  // not the client's own entity
    double distance_squared;
    std::uint32_t id;
    std::size_t index;
    bool operator<(const Ranked& r) const {
      if (other != r.other) return !other;
      if (distance_squared != r.distance_squared) return distance_squared < r.distance_squared;
      return id < r.id;
    }
  };
  std::vector<Ranked> ranked;
  ranked.reserve(candidates.size());
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    const wire::QuantizedVec& p = candidates[c].position();
    // int64 differences are exact; their squares in double only order entities, never go on the wire.
    const auto dx = static_cast<double>(std::int64_t{p.x()} - priority.focus.x());
    const auto dy = static_cast<double>(std::int64_t{p.y()} - priority.focus.y());
    const auto dz = static_cast<double>(std::int64_t{p.z()} - priority.focus.z());
    ranked.push_back(
        {candidates[c].id() != priority.own_entity, dx * dx + dy * dy + dz * dz, candidates[c].id(), c});
  }
  std::sort(ranked.begin(), ranked.end());
  // In priority order until the first that does not fit. An entry's id gap depends on its neighbours
  // among those taken: taking it costs its own gap and entry, and turns its successor's gap (from the
  // predecessor) into a gap from it.
  std::vector<std::uint32_t> taken;  // ascending ids
  std::size_t kept = 0;
  for (; kept < ranked.size(); ++kept) {
    const std::uint32_t id = ranked[kept].id;
    const auto at = std::lower_bound(taken.begin(), taken.end(), id);
    const std::int64_t before = at == taken.begin() ? -1 : std::int64_t{*(at - 1)};
    std::size_t cost =
        entry_bits[ranked[kept].index] + id_gap_bits(before, id) + count_bits(kept + 1) - count_bits(kept);
    if (at != taken.end()) cost = cost + id_gap_bits(id, *at) - id_gap_bits(before, *at);
    if (used + cost > bit_budget) break;
    used += cost;
    taken.insert(at, id);
  }
  delta.bits = used;
  ranked.resize(kept);
  // Back to id order (candidates are ascending, so ascending index is ascending id); each kept entry
  // moves down to its place, never past one still to be read.
  std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) { return a.index < b.index; });
  for (std::size_t k = 0; k < ranked.size(); ++k)
    candidates[k] = candidates[ranked[k].index];
  candidates.resize(kept);
  delta.result = merge(baseline, delta.changed, delta.removed);
}

SnapshotDelta encode_delta(std::span<const wire::EntityState> baseline,
                           std::span<const wire::EntityState> world, const DeltaPriority& priority,
                           std::size_t byte_budget) {
  SnapshotDelta delta;
  encode_delta_into(baseline, world, priority, byte_budget, delta);
  if (delta.complete) delta.result.assign(world.begin(), world.end());
  return delta;
}

AppliedDelta apply_delta(std::span<const wire::EntityState> baseline,
                         std::span<const wire::EntityState> changed, std::span<const std::uint32_t> removed) {
  AppliedDelta applied;
  const bool ordered = strictly_ascending(changed, [](const wire::EntityState& e) { return e.id(); }) &&
                       strictly_ascending(removed, [](std::uint32_t id) { return id; });
  bool disjoint = true;
  for (std::size_t j = 0, k = 0; ordered && j < changed.size() && k < removed.size();) {
    if (changed[j].id() == removed[k]) {
      disjoint = false;
      break;
    }
    changed[j].id() < removed[k] ? ++j : ++k;
  }
  if (!ordered || !disjoint) {
    applied.error = wire::ErrorCode::Malformed;
    return applied;
  }
  applied.state = merge(baseline, changed, removed);
  return applied;
}

AppliedDelta apply_delta(std::span<const wire::EntityState> baseline, std::span<const std::uint8_t> block) {
  AppliedDelta applied;
  BitReader in(block);
  DecodedEntityBlock decoded = read_entity_block(in, baseline);
  if (decoded.error != wire::ErrorCode::Ok || in.finish() != BitReadError::kNone) {
    applied.error = wire::ErrorCode::Malformed;
    return applied;
  }
  return apply_delta(baseline, decoded.changed, decoded.removed);
}

}  // namespace shiftcast
