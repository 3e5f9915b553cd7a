// The predicted baseline (protocol version 5): what a snapshot's entity block is encoded against. Both
// ends know, for the baseline B (tick tb) a snapshot names, the state A (tick ta) that B was itself
// decoded against: the server chose it, the client decoded B with it. Each entity of B that A also holds
// and that is not asleep is extrapolated linearly from A through B to the snapshot's tick N, in integers
// only, so both ends compute the same prediction bit for bit; the block then carries only what differs
// from it, and an entity moving in a straight line at constant speed costs nothing. docs/protocol.md
// ("Snapshots and the delta rule") is the written standard.
//
//   SnapshotState scratch;
//   const auto predicted = predict_baseline({b_state, tb, a_state, ta}, tick, scratch);
//   encode_delta_into(predicted, world, priority, budget, delta);       // server (snapshot_delta.hpp)
//   write_entity_block(writer, predicted, delta.changed, delta.removed);
//   AppliedDelta a = apply_delta({b_state, tb, a_state, ta}, tick, block);  // client: predicts, decodes
//
// One function (predict_baseline) serves the encoder and the decoder, so they cannot disagree.
#pragma once

#include <cstdint>
#include <span>

#include "protocol/shiftcast_generated.h"
#include "protocol/snapshot_delta.hpp"
#include "protocol/wire_constants.hpp"

namespace shiftcast {

// A snapshot's baseline as both ends hold it: B and what B was decoded against (depth one: A's own
// predecessor plays no part). The default is the empty state (tick 0), which predicts nothing.
struct SnapshotBaseline {
  std::span<const wire::EntityState> state;        // B, ascending by id
  std::uint64_t tick = 0;                          // tb; 0: the empty state
  std::span<const wire::EntityState> predecessor;  // A, ascending by id
  std::uint64_t predecessor_tick = 0;              // ta; 0: B was sent against the empty state
};

// No prediction across more than this many ticks (N - tb or tb - ta). The server never encodes against a
// baseline this old (kSnapshotHistory), so every snapshot it sends is inside the bound; the bound keeps
// the arithmetic within 64 bits for any tick a peer may name.
inline constexpr std::uint64_t kMaxPredictionTicks = kSnapshotHistory - 1;

// numerator / denominator rounded to the nearest integer, half away from zero (denominator > 0):
// sign(n) * floor((|n| + floor(d / 2)) / d). |numerator| must stay below 2^62.
std::int64_t divide_rounded(std::int64_t numerator, std::int64_t denominator);

// Whether entities of `base` are predicted at `tick` at all: a predecessor (ta != 0), ta < tb < tick,
// and both spans at most kMaxPredictionTicks.
bool predicts(const SnapshotBaseline& base, std::uint64_t tick);

// One entity's prediction at `tick` from `b` (its state in B at `baseline_tick`) and `a` (A's entry with
// the same id at `predecessor_tick`, or null). Each coordinate p = pB + round((pB - pA) * (N - tb) /
// (tb - ta)), yaw (yB + round(wrap16(yB - yA) * (N - tb) / (tb - ta))) mod 65536, for a player the same
// in its 1/2048-turn steps (yaw >> kPlayerYawShift, wrap11, then shifted back); kind, flags and id are
// B's. `b` itself when there is no `a`, `b` is asleep (kEntityFlagAsleep), predicts() is false, or a
// predicted coordinate leaves int32.
wire::EntityState predict_entity(const wire::EntityState& b, const wire::EntityState* a, std::uint64_t tick,
                                 std::uint64_t baseline_tick, std::uint64_t predecessor_tick);

// The predicted baseline at `tick`: B with every entity replaced by its prediction (same ids, same
// order). Returns `base.state` itself when nothing is predicted (predicts() false), else `scratch`
// filled (its capacity reused).
std::span<const wire::EntityState> predict_baseline(const SnapshotBaseline& base, std::uint64_t tick,
                                                    SnapshotState& scratch);

// The snapshot at `tick` rebuilt from its entity block against the predicted baseline of `base`
// (Malformed as apply_delta(predicted, block)). What a client calls for every snapshot it receives.
AppliedDelta apply_delta(const SnapshotBaseline& base, std::uint64_t tick,
                         std::span<const std::uint8_t> block);

}  // namespace shiftcast
