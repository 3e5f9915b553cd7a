#include "protocol/entity_prediction.hpp"

#include <limits>
#include <optional>

namespace shiftcast {
namespace {

constexpr std::int64_t kMinCoordinate = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t kMaxCoordinate = std::numeric_limits<std::int32_t>::max();

// pB + round((pB - pA) * ahead / span), or nothing outside int32. |pB - pA| < 2^32 and ahead <= 63
// (kMaxPredictionTicks), so the product stays far inside int64.
std::optional<std::int32_t> extrapolate(std::int32_t a, std::int32_t b, std::int64_t ahead,
                                        std::int64_t span) {
  const std::int64_t p = std::int64_t{b} + divide_rounded((std::int64_t{b} - a) * ahead, span);
  if (p < kMinCoordinate || p > kMaxCoordinate) return std::nullopt;
  return static_cast<std::int32_t>(p);
}

}  // namespace

std::int64_t divide_rounded(std::int64_t numerator, std::int64_t denominator) {
  const std::int64_t magnitude = (numerator < 0 ? -numerator : numerator) + denominator / 2;
  const std::int64_t q = magnitude / denominator;
  return numerator < 0 ? -q : q;
}

bool predicts(const SnapshotBaseline& base, std::uint64_t tick) {
  const std::uint64_t ta = base.predecessor_tick, tb = base.tick;
  return ta != 0 && ta < tb && tb < tick && tick - tb <= kMaxPredictionTicks &&
         tb - ta <= kMaxPredictionTicks;
}

wire::EntityState predict_entity(const wire::EntityState& b, const wire::EntityState* a, std::uint64_t tick,
                                 std::uint64_t baseline_tick, std::uint64_t predecessor_tick) {
  if (a == nullptr || (b.flags() & kEntityFlagAsleep) != 0) return b;
  if (!predicts({{}, baseline_tick, {}, predecessor_tick}, tick)) return b;
  const auto ahead = static_cast<std::int64_t>(tick - baseline_tick);
  const auto span = static_cast<std::int64_t>(baseline_tick - predecessor_tick);
  const auto x = extrapolate(a->position().x(), b.position().x(), ahead, span);
  const auto y = extrapolate(a->position().y(), b.position().y(), ahead, span);
  const auto z = extrapolate(a->position().z(), b.position().z(), ahead, span);
  if (!x || !y || !z) return b;
  // In the entity's own yaw steps (a player's 1/2048 turn), so a player's prediction is one it can hold.
  const unsigned shift = yaw_shift(b.kind());
  const std::int64_t turn = divide_rounded(yaw_turn(a->yaw(), b.yaw(), shift) * ahead, span);
  const std::uint16_t yaw = turn_yaw(b.yaw(), turn, shift);
  return wire::EntityState(b.id(), b.kind(), b.flags(), yaw, wire::QuantizedVec(*x, *y, *z));
}

std::span<const wire::EntityState> predict_baseline(const SnapshotBaseline& base, std::uint64_t tick,
                                                    SnapshotState& scratch) {
  if (!predicts(base, tick)) return base.state;
  scratch.clear();
  scratch.reserve(base.state.size());
  std::size_t i = 0;  // both ascend by id: one walk of A finds every entry
  for (const wire::EntityState& b : base.state) {
    while (i < base.predecessor.size() && base.predecessor[i].id() < b.id())
      ++i;
    const wire::EntityState* a =
        i < base.predecessor.size() && base.predecessor[i].id() == b.id() ? &base.predecessor[i] : nullptr;
    scratch.push_back(predict_entity(b, a, tick, base.tick, base.predecessor_tick));
  }
  return scratch;
}

AppliedDelta apply_delta(const SnapshotBaseline& base, std::uint64_t tick,
                         std::span<const std::uint8_t> block) {
  SnapshotState scratch;
  return apply_delta(predict_baseline(base, tick, scratch), block);
}

}  // namespace shiftcast
