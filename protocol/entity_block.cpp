#include "protocol/entity_block.hpp"

#include <algorithm>
#include <limits>

#include "protocol/snapshot_delta.hpp"

namespace shiftcast {
namespace {

constexpr std::int64_t kMaxId = std::numeric_limits<std::uint32_t>::max();
constexpr std::int64_t kMinCoordinate = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t kMaxCoordinate = std::numeric_limits<std::int32_t>::max();
// The fewest bits a removed id (its gap) and a changed entity (gap and change code) can take: a
// count larger than the bits left over these is a lie, refused before anything is allocated for it.
constexpr std::size_t kMinRemovedBits = 1;
constexpr std::size_t kMinChangedBits = 2;

std::uint64_t gap(std::int64_t previous, std::uint32_t id) {
  return static_cast<std::uint64_t>(std::int64_t{id} - previous - 1);
}

std::span<const unsigned> yaw_delta_tiers(unsigned shift) {
  if (shift == 0) return kYawDeltaTiers;
  return kPlayerYawDeltaTiers;
}

std::int64_t coordinate_delta(std::int32_t from, std::int32_t to) {
  return std::int64_t{to} - from;
}

bool same_position(const wire::QuantizedVec& a, const wire::QuantizedVec& b) {
  return a.x() == b.x() && a.y() == b.y() && a.z() == b.z();
}

// What a delta changes. The change code (protocol version 6) is prefix-free, the commonest first: `1`
// position and yaw, `01` position, `001` yaw, `0001` kind/flags (the two fields, then a position bit and
// a yaw bit follow), `0000` nothing (only when the baseline held a player's yaw between its steps).
struct Changes {
  bool kind_flags = false;
  bool position = false;
  bool yaw = false;
};

void write_change_code(BitWriter& out, const Changes& c) {
  if (c.kind_flags) {
    out.write_bits(0b1000, 4);  // 0, 0, 0, 1 in stream order
  } else if (c.position && c.yaw) {
    out.write_bool(true);
  } else if (c.position) {
    out.write_bits(0b10, 2);
  } else if (c.yaw) {
    out.write_bits(0b100, 3);
  } else {
    out.write_bits(0, 4);
  }
}

// The change code's bits, the kind/flags case's two trailing bits included (not its fields).
std::size_t change_code_bits(const Changes& c) {
  if (c.kind_flags) return 4 + 2;
  if (c.position) return c.yaw ? 1 : 2;
  return c.yaw ? 3 : 4;
}

void write_entry(BitWriter& out, const wire::EntityState* base, const wire::EntityState& now) {
  const unsigned shift = yaw_shift(now.kind());
  if (base == nullptr) {
    out.write_tiered(now.kind(), kKindTiers);
    out.write_tiered(now.flags(), kFlagTiers);
    out.write_bits(now.yaw() >> shift, 16 - shift);
    for (const std::int32_t c : {now.position().x(), now.position().y(), now.position().z()})
      out.write_tiered_signed(c, kPositionTiers);
    return;
  }
  // The change code first (kind first when it changed: it says in which steps the yaw travels).
  const bool kind_flags = base->kind() != now.kind() || base->flags() != now.flags();
  const bool position = !same_position(base->position(), now.position());
  const std::int64_t turn = yaw_turn(base->yaw(), now.yaw(), shift);
  write_change_code(out, {kind_flags, position, turn != 0});
  if (kind_flags) {
    out.write_tiered(now.kind(), kKindTiers);
    out.write_tiered(now.flags(), kFlagTiers);
    out.write_bool(position);
    out.write_bool(turn != 0);
  }
  if (position) {
    out.write_tiered_signed(coordinate_delta(base->position().x(), now.position().x()), kPositionDeltaTiers);
    out.write_tiered_signed(coordinate_delta(base->position().y(), now.position().y()), kPositionDeltaTiers);
    out.write_tiered_signed(coordinate_delta(base->position().z(), now.position().z()), kPositionDeltaTiers);
  }
  if (turn != 0) out.write_tiered_signed(turn, yaw_delta_tiers(shift));
}

// A tiered field that must fit `limit` (kind and flags in a byte, a yaw delta in int16, a coordinate in
// int32): anything else is Malformed (a conforming writer never sends it).
bool read_byte(BitReader& in, std::span<const unsigned> tiers, std::uint8_t& out) {
  const std::uint64_t v = in.read_tiered(tiers);
  out = static_cast<std::uint8_t>(v);
  return v <= 0xff;
}

bool read_entry(BitReader& in, const wire::EntityState* base, std::uint32_t id, wire::EntityState& out) {
  if (base == nullptr) {
    std::uint8_t kind = 0, flags = 0;
    if (!read_byte(in, kKindTiers, kind) || !read_byte(in, kFlagTiers, flags)) return false;
    const unsigned shift = yaw_shift(kind);
    const auto yaw = static_cast<std::uint16_t>(in.read_bits(16 - shift) << shift);
    std::array<std::int32_t, 3> p{};
    for (std::int32_t& c : p) {
      const std::int64_t v = in.read_tiered_signed(kPositionTiers);
      if (v < kMinCoordinate || v > kMaxCoordinate) return false;
      c = static_cast<std::int32_t>(v);
    }
    out = wire::EntityState(id, kind, flags, yaw, wire::QuantizedVec(p[0], p[1], p[2]));
    return true;
  }
  // A change bit over no change is not something a conforming writer sends: refused, so every state has
  // exactly one encoding.
  Changes c;
  if (in.read_bool()) {
    c.position = c.yaw = true;
  } else if (in.read_bool()) {
    c.position = true;
  } else if (in.read_bool()) {
    c.yaw = true;
  } else {
    c.kind_flags = in.read_bool();
  }
  std::uint8_t kind = base->kind(), flags = base->flags();
  if (c.kind_flags) {
    if (!read_byte(in, kKindTiers, kind) || !read_byte(in, kFlagTiers, flags)) return false;
    if (kind == base->kind() && flags == base->flags() && in.ok()) return false;
    c.position = in.read_bool();
    c.yaw = in.read_bool();
  }
  std::array<std::int32_t, 3> p = {base->position().x(), base->position().y(), base->position().z()};
  if (c.position) {
    bool moved = false;
    for (std::int32_t& c : p) {
      const std::int64_t d = in.read_tiered_signed(kPositionDeltaTiers);
      const std::int64_t v = c + d;
      if (v < kMinCoordinate || v > kMaxCoordinate) return false;
      moved = moved || d != 0;
      c = static_cast<std::int32_t>(v);
    }
    if (!moved && in.ok()) return false;
  }
  // The yaw in the (new) kind's steps: a player's low bits come out zero whatever the baseline held.
  const unsigned shift = yaw_shift(kind);
  std::int64_t turn = 0;
  if (c.yaw) {
    turn = in.read_tiered_signed(yaw_delta_tiers(shift));
    const std::int64_t half = std::int64_t{1} << (15 - shift);
    if (turn < -half || turn >= half) return false;
    if (turn == 0 && in.ok()) return false;
  }
  const std::uint16_t yaw = turn_yaw(base->yaw(), turn, shift);
  out = wire::EntityState(id, kind, flags, yaw, wire::QuantizedVec(p[0], p[1], p[2]));
  return true;
}

// The next id of a gap-coded list, or false when it would pass 2^32 - 1.
bool next_id(BitReader& in, std::int64_t& previous) {
  const std::uint64_t g = in.read_tiered(kIdGapTiers);
  if (g > static_cast<std::uint64_t>(kMaxId)) return false;
  const std::int64_t id = previous + 1 + static_cast<std::int64_t>(g);
  if (id > kMaxId) return false;
  previous = id;
  return true;
}

}  // namespace

std::size_t id_gap_bits(std::int64_t previous, std::uint32_t id) {
  return tiered_bits(gap(previous, id), kIdGapTiers);
}

std::size_t count_bits(std::size_t count) {
  return tiered_bits(count, kCountTiers);
}

std::size_t entity_entry_bits(const wire::EntityState* base, const wire::EntityState& now) {
  const unsigned shift = yaw_shift(now.kind());
  if (base == nullptr) {
    return tiered_bits(now.kind(), kKindTiers) + tiered_bits(now.flags(), kFlagTiers) + (16 - shift) +
           tiered_bits(zigzag_encode(now.position().x()), kPositionTiers) +
           tiered_bits(zigzag_encode(now.position().y()), kPositionTiers) +
           tiered_bits(zigzag_encode(now.position().z()), kPositionTiers);
  }
  const std::int64_t turn = yaw_turn(base->yaw(), now.yaw(), shift);
  const Changes c{base->kind() != now.kind() || base->flags() != now.flags(),
                  !same_position(base->position(), now.position()), turn != 0};
  std::size_t bits = change_code_bits(c);
  if (c.kind_flags) bits += tiered_bits(now.kind(), kKindTiers) + tiered_bits(now.flags(), kFlagTiers);
  if (c.position) {
    bits += tiered_bits(zigzag_encode(coordinate_delta(base->position().x(), now.position().x())),
                        kPositionDeltaTiers) +
            tiered_bits(zigzag_encode(coordinate_delta(base->position().y(), now.position().y())),
                        kPositionDeltaTiers) +
            tiered_bits(zigzag_encode(coordinate_delta(base->position().z(), now.position().z())),
                        kPositionDeltaTiers);
  }
  if (c.yaw) bits += tiered_bits(zigzag_encode(turn), yaw_delta_tiers(shift));
  return bits;
}

void write_entity_block(BitWriter& out, std::span<const wire::EntityState> baseline,
                        std::span<const wire::EntityState> changed, std::span<const std::uint32_t> removed) {
  out.write_tiered(removed.size(), kCountTiers);
  std::int64_t previous = -1;
  for (const std::uint32_t id : removed) {
    out.write_tiered(gap(previous, id), kIdGapTiers);
    previous = id;
  }
  out.write_tiered(changed.size(), kCountTiers);
  previous = -1;
  std::size_t b = 0;  // both lists ascend: one walk of the baseline finds every base entry
  for (const wire::EntityState& e : changed) {
    out.write_tiered(gap(previous, e.id()), kIdGapTiers);
    previous = e.id();
    while (b < baseline.size() && baseline[b].id() < e.id())
      ++b;
    write_entry(out, b < baseline.size() && baseline[b].id() == e.id() ? &baseline[b] : nullptr, e);
  }
}

DecodedEntityBlock read_entity_block(BitReader& in, std::span<const wire::EntityState> baseline) {
  DecodedEntityBlock block;
  const auto malformed = [&block] {
    block.error = wire::ErrorCode::Malformed;
    block.changed.clear();
    block.removed.clear();
    return std::move(block);
  };
  const std::uint64_t removed_count = in.read_tiered(kCountTiers);
  if (!in.ok() || removed_count > in.bits_left() / kMinRemovedBits) return malformed();
  block.removed.reserve(removed_count);
  std::int64_t previous = -1;
  for (std::uint64_t k = 0; k < removed_count; ++k) {
    if (!next_id(in, previous) || !in.ok()) return malformed();
    block.removed.push_back(static_cast<std::uint32_t>(previous));
  }
  const std::uint64_t changed_count = in.read_tiered(kCountTiers);
  if (!in.ok() || changed_count > in.bits_left() / kMinChangedBits) return malformed();
  block.changed.reserve(changed_count);
  previous = -1;
  for (std::uint64_t k = 0; k < changed_count; ++k) {
    if (!next_id(in, previous)) return malformed();
    const auto id = static_cast<std::uint32_t>(previous);
    wire::EntityState e;
    if (!read_entry(in, find_entity(baseline, id), id, e) || !in.ok()) return malformed();
    block.changed.push_back(e);
  }
  return block;
}

}  // namespace shiftcast
