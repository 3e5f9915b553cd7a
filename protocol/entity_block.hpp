// The snapshot's entity block: a SnapshotDelta's removed ids and changed entities, bit-packed against
// the baseline both ends hold, predicted to the snapshot's tick (protocol/entity_prediction.hpp; Fiedler's
// snapshot compression, Quake III's delta entities). `baseline` below is that predicted baseline. It travels
// as Snapshot.block; docs/protocol.md ("Entity block") is the written standard of its bits.
//
//   BitWriter w;
//   write_entity_block(w, baseline, delta.changed, delta.removed);   // server: delta from encode_delta
//   BitReader r(block_bytes);
//   DecodedEntityBlock d = read_entity_block(r, baseline);            // client: then r.finish()
//
// Layout (every field through protocol/bit_stream.hpp):
//   removed count, then each removed id as a gap from the previous one (the first from -1);
//   changed count, then each changed entity: its id gap, then
//     - held in the baseline: a prefix-free change code (1 bit when position and yaw changed, the
//       commonest case), then the changed fields: kind and flags whole, position as three signed deltas
//       in quanta from the baseline, yaw as a signed wrapped delta in the entity's yaw steps (a player's
//       1/2048 turn, snapshot_delta.hpp);
//     - new: kind, flags, yaw (11 bits for a player, else 16), and the position as three absolute
//       coordinates.
// A player's yaw must be a multiple of 1 << kPlayerYawShift (quantize_entity_yaw): its low bits are not
// sent, and the client holds them as zero.
// An entity identical to its baseline is not in the block at all, so at-rest entities cost nothing.
// Costs are exact and known before writing (entity_entry_bits, id_gap_bits): the encoder's budget cut
// is in bits and agrees with what is written.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/bit_stream.hpp"
#include "protocol/shiftcast_generated.h"

namespace shiftcast {

// The widths of the tiered fields (BitWriter::write_tiered). A position delta of 0 costs its one
// selector bit; against its prediction a running player's coordinate is mostly 1 to 31 quanta off
// (widths chosen from the 32-player demo's histogram, docs/protocol.md), one that was not predicted
// moves about 160 quanta per 32 Hz snapshot. The last tiers hold any value of the field, so every state
// can be written.
inline constexpr std::array<unsigned, 5> kIdGapTiers = {0, 3, 7, 12, 32};
inline constexpr std::array<unsigned, 3> kCountTiers = {5, 10, 32};
inline constexpr std::array<unsigned, 7> kPositionDeltaTiers = {0, 3, 5, 7, 10, 17, 33};  // zig-zag quanta
inline constexpr std::array<unsigned, 5> kPositionTiers = {10, 14, 18, 22, 32};           // zig-zag quanta
inline constexpr std::array<unsigned, 3> kYawDeltaTiers = {5, 10, 16};  // zig-zag, wrapped to int16
// A player's yaw delta in 1/2048 turn: a bot's turn against its prediction is mostly under 8 steps.
inline constexpr std::array<unsigned, 4> kPlayerYawDeltaTiers = {2, 4, 6, 11};  // zig-zag, wrapped to 11 bits
inline constexpr std::array<unsigned, 2> kKindTiers = {2, 8};
inline constexpr std::array<unsigned, 2> kFlagTiers = {1, 8};

// What an id costs after `previous` (-1 before the first id of a list).
std::size_t id_gap_bits(std::int64_t previous, std::uint32_t id);
// What one changed entity costs after its id: against `base` (its baseline entry, same id) or, null,
// as a new entity.
std::size_t entity_entry_bits(const wire::EntityState* base, const wire::EntityState& now);
// What a count costs; the smallest block (nothing removed, nothing changed) is two zero counts.
std::size_t count_bits(std::size_t count);
inline constexpr std::size_t kMinEntityBlockBits = 2 * (1 + kCountTiers[0]);

// `changed` and `removed` ascending by id, disjoint; `baseline` ascending by id.
void write_entity_block(BitWriter& out, std::span<const wire::EntityState> baseline,
                        std::span<const wire::EntityState> changed, std::span<const std::uint32_t> removed);

struct DecodedEntityBlock {
  wire::ErrorCode error = wire::ErrorCode::Ok;  // Malformed: short, overlong, ids past 2^32, bad values
  std::vector<wire::EntityState> changed;       // ascending (gaps make it so)
  std::vector<std::uint32_t> removed;           // ascending
};
// Reads one block from `in` (the caller checks in.finish() when the block is all there is). Everything is
// untrusted: counts larger than the bits left, ids beyond 32 bits, positions beyond int32 are Malformed.
DecodedEntityBlock read_entity_block(BitReader& in, std::span<const wire::EntityState> baseline);

}  // namespace shiftcast
