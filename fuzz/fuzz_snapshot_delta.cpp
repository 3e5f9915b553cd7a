// Target: snapshot-delta apply against a held state and its prediction (protocol version 5), judged
// against an independent model (a std::map from id to state). The held state B comes from the input
// (strictly ascending, as a client holds it), and optionally the state A it was decoded against with the
// ticks (any 64-bit ticks when the frame names them); the delta arrives as fuzzed lists (so the ordering
// checks are exercised), as a Snapshot whose entity block the harness writes from well-formed fuzzed lists
// against the predicted baseline (the block must decode to exactly those lists), or as raw bytes of a
// whole ServerFrame message (protocol/connected_message.hpp; its block is untrusted bits).
// Promise: the predicted baseline holds B's ids in B's order with B's kinds and flags, and is B itself
// where nothing may be predicted (no A entry, asleep, ticks out of bounds); apply is Malformed exactly
// when the lists are not strictly ascending or name an id both changed and removed, or the block does
// not decode; otherwise the result is the predicted baseline without the removed ids, with the changed
// ones set.
//
// Input: u8 held_count | per held entity u8 id_step, 8 bytes state | u8 mode |
//        mode bit 1 set:   u16 ta, u8 tb - ta, u8 N - tb, then per held entity u8 (bit 0: A holds it)
//                          and, when it does, its 8 bytes state in A (else ta = 0: nothing predicted)
//        mode bit 0 clear: u8 changed_count, each u16 id + 8 bytes state; u8 removed_count, each u16 id
//        mode bit 0 set:   a ServerFrame message (its snapshot is applied at the frame's tick, against
//                          B at the frame's baseline tick)
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "protocol/connected_message.hpp"
#include "protocol/entity_block.hpp"
#include "protocol/entity_prediction.hpp"
#include "protocol/snapshot_delta.hpp"

namespace shiftcast::fuzz {
namespace {

// A state as a server holds it: a player's yaw in whole 1/2048 turns (quantize_entity_yaw), so the block
// carries it exactly.
wire::EntityState entity(std::uint32_t id, Input& in) {
  const std::uint8_t kind = in.u8();
  const std::uint8_t flags = in.u8();
  const auto yaw = static_cast<std::uint16_t>(in.u16() & ~((1u << yaw_shift(kind)) - 1));
  const auto x = static_cast<std::int32_t>(in.u16()) - 32768;
  const auto z = static_cast<std::int32_t>(in.u16()) - 32768;
  return wire::EntityState(id, kind, flags, yaw, wire::QuantizedVec(x, -x, z));
}

template <class T, class Id>
bool strictly_ascending(std::span<const T> v, Id id) {
  for (std::size_t i = 1; i < v.size(); ++i)
    if (!(id(v[i - 1]) < id(v[i]))) return false;
  return true;
}

void check(std::span<const wire::EntityState> held, std::span<const wire::EntityState> changed,
           std::span<const std::uint32_t> removed, const AppliedDelta& applied) {
  const bool ordered = strictly_ascending(changed, [](const wire::EntityState& e) { return e.id(); }) &&
                       strictly_ascending(removed, [](std::uint32_t id) { return id; });
  std::map<std::uint32_t, wire::EntityState> model;
  for (const auto& e : held)
    model.insert_or_assign(e.id(), e);
  bool disjoint = true;
  for (const std::uint32_t id : removed) {
    model.erase(id);
    for (const auto& c : changed)
      disjoint = disjoint && c.id() != id;
  }
  for (const auto& c : changed)
    model.insert_or_assign(c.id(), c);
  if (!ordered || !disjoint) {
    require(applied.error == wire::ErrorCode::Malformed,
            "apply_delta: accepted unordered or overlapping lists");
    return;
  }
  require(applied.error == wire::ErrorCode::Ok, "apply_delta: refused a well-formed delta");
  require(applied.state.size() == model.size(), "apply_delta: wrong number of entities");
  std::size_t i = 0;
  for (const auto& [id, e] : model)
    require(same_entity_state(applied.state[i++], e), "apply_delta: an entity differs from the model");
}

// The prediction's promise, from B and A alone.
void check_prediction(const SnapshotBaseline& base, std::uint64_t tick,
                      std::span<const wire::EntityState> predicted) {
  require(predicted.size() == base.state.size(), "predict_baseline: not one entry per entity of B");
  const bool any = predicts(base, tick);
  for (std::size_t i = 0; i < predicted.size(); ++i) {
    const wire::EntityState& b = base.state[i];
    const wire::EntityState& p = predicted[i];
    require(p.id() == b.id() && p.kind() == b.kind() && p.flags() == b.flags(),
            "predict_baseline: an id, kind or flags differs from B");
    const bool in_a = std::any_of(base.predecessor.begin(), base.predecessor.end(),
                                  [&](const wire::EntityState& a) { return a.id() == b.id(); });
    if (!any || !in_a || (b.flags() & kEntityFlagAsleep) != 0)
      require(same_entity_state(p, b), "predict_baseline: predicted what may not be");
  }
}

std::vector<std::uint8_t> server_frame(std::span<const wire::EntityState> predicted, std::uint64_t tick,
                                       std::uint64_t baseline_tick,
                                       const std::vector<wire::EntityState>& changed,
                                       const std::vector<std::uint32_t>& removed) {
  BitWriter w;
  write_entity_block(w, predicted, changed, removed);
  std::vector<std::uint8_t> m;
  write_server_frame(
      m, {tick, 0, SnapshotSection{baseline_tick, 1, true, w.bytes()}, std::nullopt, std::nullopt});
  return m;
}

// `base` with the frame's ticks: B at the frame's baseline tick, the snapshot at the frame's tick.
void apply_frame(SnapshotBaseline base, std::span<const std::uint8_t> bytes) {
  const ReadMessage read = read_connected_message(bytes);
  if (read.error != wire::ErrorCode::Ok || read.message.kind != MessageKind::kServerFrame) return;
  const auto& snapshot = read.message.server_frame.snapshot;
  if (!snapshot) return;
  const std::uint64_t tick = read.message.server_frame.tick;
  base.tick = snapshot->baseline_tick;
  SnapshotState scratch;
  const auto held = predict_baseline(base, tick, scratch);
  check_prediction(base, tick, held);
  const AppliedDelta applied = apply_delta(base, tick, snapshot->block);
  BitReader in(snapshot->block);
  const DecodedEntityBlock decoded = read_entity_block(in, held);
  if (decoded.error != wire::ErrorCode::Ok || in.finish() != BitReadError::kNone) {
    require(applied.error == wire::ErrorCode::Malformed,
            "apply_delta: accepted a block that does not decode");
    return;
  }
  check(held, decoded.changed, decoded.removed, applied);
}

// A block written from well-formed lists reads back as exactly those lists, in exactly its bits.
void round_trip(std::span<const wire::EntityState> held, const std::vector<wire::EntityState>& changed,
                const std::vector<std::uint32_t>& removed) {
  BitWriter w;
  write_entity_block(w, held, changed, removed);
  BitReader in(w.bytes());
  const DecodedEntityBlock decoded = read_entity_block(in, held);
  require(decoded.error == wire::ErrorCode::Ok && in.finish() == BitReadError::kNone,
          "entity block: a written block does not read back");
  require(decoded.removed == removed, "entity block: removed ids differ after a round trip");
  require(decoded.changed.size() == changed.size(), "entity block: changed count differs");
  for (std::size_t i = 0; i < changed.size(); ++i)
    require(same_entity_state(decoded.changed[i], changed[i]), "entity block: a changed entity differs");
}

}  // namespace
}  // namespace shiftcast::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  using namespace shiftcast::fuzz;
  Input in(data, size);
  SnapshotState held;
  std::uint32_t id = 0;
  for (int n = in.u8() % 65; n > 0; --n) {
    id += 1 + in.u8() % 8;
    held.push_back(entity(id, in));
  }
  const std::uint8_t mode = in.u8();
  SnapshotState predecessor;
  SnapshotBaseline base{held, 1, {}, 0};
  std::uint64_t tick = 2;
  if (mode & 2) {
    base.predecessor_tick = in.u16();
    base.tick = base.predecessor_tick + in.u8();
    tick = base.tick + in.u8();
    for (const wire::EntityState& e : held) {
      if (in.u8() & 1) predecessor.push_back(entity(e.id(), in));
    }
    base.predecessor = predecessor;
  }
  if (mode & 1) {
    apply_frame(base, copy(in.rest()));
    return 0;
  }
  // The lists go with a frame: it cannot name a baseline at or after its tick, nor a snapshot at tick 0.
  if (base.tick == 0 || tick <= base.tick) return 0;
  SnapshotState scratch;
  const auto predicted = predict_baseline(base, tick, scratch);
  check_prediction(base, tick, predicted);
  std::vector<wire::EntityState> changed;
  for (int n = in.u8() % 65; n > 0; --n) {
    const std::uint32_t changed_id = in.u16() % 600;
    changed.push_back(entity(changed_id, in));
  }
  std::vector<std::uint32_t> removed;
  for (int n = in.u8() % 65; n > 0; --n)
    removed.push_back(in.u16() % 600);
  const AppliedDelta applied = apply_delta(predicted, changed, removed);
  check(predicted, changed, removed, applied);
  // Only well-formed lists have a block (gaps cannot express a descending id).
  if (applied.error == wire::ErrorCode::Ok) {
    round_trip(predicted, changed, removed);
    apply_frame(base, server_frame(predicted, tick, base.tick, changed, removed));
  }
  return 0;
}
