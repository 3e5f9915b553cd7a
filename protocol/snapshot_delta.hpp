// Snapshot delta encoding: what the server sends a client each tick, and how the client rebuilds the
// world from it. A client's view of a snapshot is a SnapshotState: quantized entity states sorted by id.
// The server encodes the current world against the prediction of the newest snapshot the client
// acknowledged (protocol/entity_prediction.hpp; or the empty state) and remembers the resulting state per
// packet; the client applies the delta to the same prediction of the state it holds for that baseline
// tick. Both ends agree bit for bit, so deltas never drift, even when a datagram cannot hold every change
// (the entries left out keep their predicted values and follow later).
//
//   const auto predicted = predict_baseline(acked, tick, scratch);    // entity_prediction.hpp
//   SnapshotDelta d = encode_delta(predicted, world_states, {own_entity, focus}, bit_budget);
//   write_entity_block(writer, predicted, d.changed, d.removed);     // the block (entity_block.hpp)
//   ... d.complete in the frame's SnapshotSection, remember d.result for its tick ...
//   AppliedDelta a = apply_delta(held_baseline, frame.tick, snapshot.block);        // client
//   if (a.error == wire::ErrorCode::Ok) hold(frame.tick, std::move(a.state));
//
// Quantization (both ends, also for anything else that ships poses): positions in kPositionQuantum
// steps rounded to nearest (half away from zero), so the error is at most half a quantum; yaw in
// 1/65536 turns, wrapped, and a player's in 1/2048 turn (quantize_entity_yaw).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/shiftcast_generated.h"
#include "protocol/wire_constants.hpp"

namespace shiftcast {

// A client's copy of one snapshot: ascending by id, ids unique.
using SnapshotState = std::vector<wire::EntityState>;

// EntityState.flags bits.
inline constexpr std::uint8_t kEntityFlagAsleep = 1u << 0;
// EntityState.kind of a player.
inline constexpr std::uint8_t kEntityKindPlayer = 0;
// A player's yaw is held and sent in 1/2048 turn (about 0.18 degrees): the low kPlayerYawShift bits of
// its u16 are zero. Its upright cylinder collides the same at every yaw, so the yaw only turns the
// model others draw, and the five bits saved are a tenth of what a turning player costs in a snapshot.
// Other kinds keep 1/65536 turn: a prop's yaw places its box, which clients collide with.
inline constexpr unsigned kPlayerYawShift = 5;

// Nearest multiple of kPositionQuantum, in quanta, clamped to the int32 range; NaN gives 0 (the
// simulation's invariants never let one through, this only keeps the function total).
std::int32_t quantize_coordinate(float value);
float dequantize_coordinate(std::int32_t quanta);
wire::QuantizedVec quantize_position(const wire::Vec3f& position);
wire::Vec3f dequantize_position(const wire::QuantizedVec& position);
// yaw / 2pi * 65536 rounded to nearest and wrapped into [0, 65536); NaN gives 0.
std::uint16_t quantize_yaw(float yaw);
float dequantize_yaw(std::uint16_t yaw);  // in [0, 2pi)
// How many low yaw bits an entity of `kind` does not send: kPlayerYawShift for players, else 0.
unsigned yaw_shift(std::uint8_t kind);
// The turn from `from` to `to` in steps of 1 << shift (an entity's yaw steps: yaw_shift), the shorter
// way round: a signed (16 - shift)-bit value, exactly half a turn the negative one (wrap16 for shift 0;
// wrap11 of floor(yaw / 32) for a player). Both the entity block and the prediction count turns so.
std::int64_t yaw_turn(std::uint16_t from, std::uint16_t to, unsigned shift);
// `from` turned by `steps` of 1 << shift, wrapped; the low `shift` bits come out zero.
std::uint16_t turn_yaw(std::uint16_t from, std::int64_t steps, unsigned shift);
// The yaw an entity of `kind` is held at: quantize_yaw for every kind but players, whose yaw is rounded
// to the nearest 1/2048 turn (half away from zero) and wrapped. What a server puts in its snapshots.
std::uint16_t quantize_entity_yaw(float yaw, std::uint8_t kind);

// The entry with `id` in a state ascending by id, or null.
const wire::EntityState* find_entity(std::span<const wire::EntityState> state, std::uint32_t id);

// The same state, bit for bit (every field of the quantized struct).
bool same_entity_state(const wire::EntityState& a, const wire::EntityState& b);

// Who goes first when a delta does not fit: the client's own entity, then the entities nearest to
// `focus` (usually the client's own position), then by id.
struct DeltaPriority {
  std::uint32_t own_entity = 0;
  wire::QuantizedVec focus{};
};

struct SnapshotDelta {
  std::vector<wire::EntityState> changed;  // ascending id: new entities and entities that differ
  std::vector<std::uint32_t> removed;      // ascending: in the baseline, gone from the world
  bool complete = true;                    // everything that differs was sent
  SnapshotState result;                    // what the client holds after applying this delta
  std::size_t bits = 0;                    // the entity block's exact size (write_entity_block)
  std::vector<std::size_t> entry_bits;     // scratch: each difference's cost after its id
};

// `baseline` and `world` ascending by id with unique ids. The budget is in bits of the entity block
// (entity_block.hpp), counted exactly: removed ids go first (they are cheap and free the client of
// ghosts), as many as fit in ascending order, then changed entries in priority order until the first
// that does not fit. The block's two counts are always written (kMinEntityBlockBits), whatever the budget.
SnapshotDelta encode_delta(std::span<const wire::EntityState> baseline,
                           std::span<const wire::EntityState> world, const DeltaPriority& priority,
                           std::size_t bit_budget);
// The same delta, into `out`, reusing its vectors' capacity (a server encodes one per client per
// snapshot). A complete delta leaves `out.result` empty: the client then holds exactly `world`, which
// the caller may share between clients instead of copying it.
void encode_delta_into(std::span<const wire::EntityState> baseline, std::span<const wire::EntityState> world,
                       const DeltaPriority& priority, std::size_t bit_budget, SnapshotDelta& out);

struct AppliedDelta {
  wire::ErrorCode error =
      wire::ErrorCode::Ok;  // Malformed: not ascending, repeated, or both changed and removed
  SnapshotState state;
};

// Client side. The lists come from the network: they are checked (strictly ascending ids, no id both
// changed and removed), never trusted. A removed id the baseline does not hold is ignored.
AppliedDelta apply_delta(std::span<const wire::EntityState> baseline,
                         std::span<const wire::EntityState> changed, std::span<const std::uint32_t> removed);
// The snapshot's entity block decoded against `baseline` exactly as given, i.e. an already predicted
// baseline (a client calls apply_delta(SnapshotBaseline, tick, block) in entity_prediction.hpp, which
// predicts first). Malformed also for a block that does not end in its zero padding.
AppliedDelta apply_delta(std::span<const wire::EntityState> baseline, std::span<const std::uint8_t> block);

}  // namespace shiftcast
