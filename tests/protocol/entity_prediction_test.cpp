// The predicted baseline (protocol version 5) against a reference written differently (long double
// arithmetic and roundl, the shorter way round of a yaw found by comparison), and the entity block encoded
// against it: a server and a client over a link that loses, delays and reorders snapshots and acks, with
// random budgets, where the client's rebuilt state must equal the server's remembered result bit for bit.
#include "protocol/entity_prediction.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "protocol/entity_block.hpp"
#include "protocol/snapshot_delta.hpp"
#include "tests/support/seeded_random.hpp"

namespace shiftcast {
namespace {

constexpr std::int32_t kInt32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kInt32Max = std::numeric_limits<std::int32_t>::max();

// As a server holds it: a player's (kind 0) yaw in whole 1/2048 turns (its low 5 bits cleared).
wire::EntityState entity(std::uint32_t id, std::int32_t x, std::int32_t y, std::int32_t z,
                         std::uint16_t yaw = 0, std::uint8_t flags = 0, std::uint8_t kind = 0) {
  const auto held = static_cast<std::uint16_t>(kind == 0 ? yaw & ~31u : yaw);
  return wire::EntityState(id, kind, flags, held, wire::QuantizedVec(x, y, z));
}

bool same_states(std::span<const wire::EntityState> a, std::span<const wire::EntityState> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_entity_state);
}

// The reference: the exact quotient in long double (|n| < 2^40 and d < 2^7 here, so the only rounding of
// n / d is far below the distance 1 / (2d) from any half-way point, and an exact half stays exact), then
// roundl, which rounds half away from zero by definition.
std::int64_t reference_round(std::int64_t n, std::int64_t d) {
  return static_cast<std::int64_t>(std::roundl(static_cast<long double>(n) / static_cast<long double>(d)));
}

// The yaw change from `from` to `to` in [-32768, 32767]: the difference taken whichever way is shorter,
// exactly half a turn counting as -32768.
std::int64_t reference_turn(std::uint16_t from, std::uint16_t to) {
  const std::int64_t forward = (std::int64_t{to} - from + 65536) % 65536;  // [0, 65536)
  return forward < 32768 ? forward : forward - 65536;
}
// The same in a player's 1/2048 turns (docs/protocol.md: floor(yaw / 32), wrap11).
std::int64_t reference_player_turn(std::uint16_t from, std::uint16_t to) {
  const std::int64_t forward = (std::int64_t{to / 32} - from / 32 + 2048) % 2048;  // [0, 2048)
  return forward < 1024 ? forward : forward - 2048;
}

wire::EntityState reference_predict(const wire::EntityState& b, const wire::EntityState* a, std::uint64_t n,
                                    std::uint64_t tb, std::uint64_t ta) {
  if (a == nullptr || (b.flags() & 1) != 0 || ta == 0 || !(ta < tb && tb < n) || n - tb >= 64 ||
      tb - ta >= 64)
    return b;
  const auto ahead = static_cast<std::int64_t>(n - tb);
  const auto span = static_cast<std::int64_t>(tb - ta);
  std::int64_t p[3] = {b.position().x(), b.position().y(), b.position().z()};
  const std::int64_t q[3] = {a->position().x(), a->position().y(), a->position().z()};
  for (int i = 0; i < 3; ++i) {
    p[i] += reference_round((p[i] - q[i]) * ahead, span);
    if (p[i] < kInt32Min || p[i] > kInt32Max) return b;
  }
  std::int64_t yaw = 0;
  if (b.kind() == 0) {  // a player: in 1/2048 turns
    const std::int64_t steps =
        (b.yaw() / 32 + reference_round(reference_player_turn(a->yaw(), b.yaw()) * ahead, span));
    yaw = ((steps % 2048 + 2048) % 2048) * 32;
  } else {
    yaw = ((b.yaw() + reference_round(reference_turn(a->yaw(), b.yaw()) * ahead, span)) % 65536 + 65536) %
          65536;
  }
  return entity(b.id(), static_cast<std::int32_t>(p[0]), static_cast<std::int32_t>(p[1]),
                static_cast<std::int32_t>(p[2]), static_cast<std::uint16_t>(yaw), b.flags(), b.kind());
}

TEST(EntityPrediction, DivideRoundedIsNearestHalfAwayFromZero) {
  EXPECT_EQ(divide_rounded(3, 2), 2);
  EXPECT_EQ(divide_rounded(-3, 2), -2);
  EXPECT_EQ(divide_rounded(5, 2), 3);
  EXPECT_EQ(divide_rounded(-5, 2), -3);
  EXPECT_EQ(divide_rounded(1, 3), 0);
  EXPECT_EQ(divide_rounded(2, 3), 1);
  EXPECT_EQ(divide_rounded(-2, 3), -1);
  EXPECT_EQ(divide_rounded(-1, 3), 0);
  EXPECT_EQ(divide_rounded(0, 7), 0);
  EXPECT_EQ(divide_rounded(7, 1), 7);
  std::mt19937 rng(51);
  for (int i = 0; i < 200000; ++i) {
    const std::int64_t d = uniform_int<std::int64_t>(rng, 1, 126);
    // Small numerators hit the half-way points often; large ones reach 2^40.
    const std::int64_t n = i % 2 == 0 ? uniform_int<std::int64_t>(rng, -300, 300)
                                      : uniform_int<std::int64_t>(rng, -(1ll << 40), 1ll << 40);
    ASSERT_EQ(divide_rounded(n, d), reference_round(n, d)) << n << " / " << d;
  }
}

// b - d, held to the int32 range a coordinate has (near the edges b - d alone can leave it).
std::int32_t shifted(std::int32_t b, std::int32_t d) {
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(std::int64_t{b} - d, kInt32Min, kInt32Max));
}

// A random coordinate pair (A's, B's): small motion, large motion, or at the int32 edges.
std::pair<std::int32_t, std::int32_t> random_coordinates(std::mt19937& rng) {
  switch (uniform_int(rng, 0, 3)) {
    case 0: {
      const std::int32_t b = uniform_int(rng, -100000, 100000);
      return {b - uniform_int(rng, -400, 400), b};
    }
    case 1:
      return {uniform_int(rng, kInt32Min, kInt32Max), uniform_int(rng, kInt32Min, kInt32Max)};
    case 2: {  // near the top, moving up or down
      const std::int32_t b = kInt32Max - uniform_int(rng, 0, 2000);
      return {shifted(b, uniform_int(rng, -500, 500)), b};
    }
    default: {
      const std::int32_t b = kInt32Min + uniform_int(rng, 0, 2000);
      return {shifted(b, uniform_int(rng, -500, 500)), b};
    }
  }
}

std::uint16_t random_yaw(std::mt19937& rng, std::uint16_t near) {
  switch (uniform_int(rng, 0, 2)) {
    case 0:
      return static_cast<std::uint16_t>(near + uniform_int(rng, -600, 600));  // wraps around 0 often
    case 1:
      return static_cast<std::uint16_t>(near + 32768 + uniform_int(rng, -2, 2));  // about half a turn
    default:
      return static_cast<std::uint16_t>(uniform_int(rng, 0, 65535));
  }
}

TEST(EntityPrediction, PredictEntityMatchesAReferenceOnRandomInputs) {
  std::mt19937 rng(52);
  int predicted = 0, overflowed = 0, halfway = 0, wrapped = 0, unequal_spans = 0;
  for (int i = 0; i < 300000; ++i) {
    const auto [ax, bx] = random_coordinates(rng);
    const auto [ay, by] = random_coordinates(rng);
    const auto [az, bz] = random_coordinates(rng);
    const auto yaw_b = static_cast<std::uint16_t>(uniform_int(rng, 0, 65535));
    const std::uint16_t yaw_a = random_yaw(rng, yaw_b);
    const std::uint8_t flags =
        uniform_int(rng, 0, 9) == 0 ? 1 : static_cast<std::uint8_t>(uniform_int(rng, 0, 1) * 2);
    const auto kind = static_cast<std::uint8_t>(uniform_int(rng, 0, 2));
    // B as any peer may name it: a player's yaw not always whole 1/2048 turns (the rule floors it).
    const wire::EntityState b(9, kind, flags, yaw_b, wire::QuantizedVec(bx, by, bz));
    const wire::EntityState a = entity(9, ax, ay, az, yaw_a, static_cast<std::uint8_t>(flags ^ 2), 1);
    // Ticks: mostly inside the bound, some beyond it, some degenerate (ta 0, ta >= tb).
    const std::uint64_t ta =
        uniform_int<std::uint64_t>(rng, 0, 2) == 0 ? 0 : uniform_int<std::uint64_t>(rng, 1, 1000);
    const std::uint64_t tb = ta + uniform_int<std::uint64_t>(rng, 0, i % 10 == 0 ? 200 : 8);
    const std::uint64_t n = tb + uniform_int<std::uint64_t>(rng, 0, i % 10 == 1 ? 200 : 8);
    const wire::EntityState* with_a = uniform_int(rng, 0, 9) == 0 ? nullptr : &a;
    const wire::EntityState got = predict_entity(b, with_a, n, tb, ta);
    const wire::EntityState expected = reference_predict(b, with_a, n, tb, ta);
    ASSERT_TRUE(same_entity_state(got, expected))
        << "case " << i << ": x " << ax << " -> " << bx << ", yaw " << yaw_a << " -> " << yaw_b << ", ticks "
        << ta << " " << tb << " " << n << ": got x " << got.position().x() << " yaw " << got.yaw()
        << ", expected x " << expected.position().x() << " yaw " << expected.yaw();
    if (!same_entity_state(got, b)) {
      ++predicted;
      if ((std::int64_t{bx} - ax) * std::int64_t(n - tb) % std::int64_t(tb - ta) != 0 &&
          2 * ((std::int64_t{bx} - ax) * std::int64_t(n - tb) % std::int64_t(tb - ta)) %
                  std::int64_t(tb - ta) ==
              0)
        ++halfway;
      if (std::abs(std::int64_t{got.yaw()} - yaw_b) > 32768) ++wrapped;
      if (n - tb != tb - ta) ++unequal_spans;
    }
    if (with_a != nullptr && (flags & 1) == 0 && ta != 0 && ta < tb && tb < n && n - tb < 64 &&
        tb - ta < 64) {
      const auto leaves = [&](std::int64_t from, std::int64_t to) {
        const std::int64_t p =
            to + reference_round((to - from) * std::int64_t(n - tb), std::int64_t(tb - ta));
        return p < kInt32Min || p > kInt32Max;
      };
      if (leaves(ax, bx) || leaves(ay, by) || leaves(az, bz)) {
        ++overflowed;  // B itself, whatever the other coordinates and the yaw did
        ASSERT_TRUE(same_entity_state(got, b));
      }
    }
  }
  EXPECT_GT(predicted, 50000);
  EXPECT_GT(overflowed, 1000);
  EXPECT_GT(halfway, 1000);
  EXPECT_GT(wrapped, 1000);
  EXPECT_GT(unequal_spans, 10000);
}

TEST(EntityPrediction, PredictBaselineReplacesEveryEntityByItsPrediction) {
  const SnapshotState a = {entity(1, 0, 0, 0, 65000), entity(2, 10, 0, 0), entity(4, 0, 0, 0)};
  // 1 runs and turns across 0; 2 is asleep; 3 is new in B; 4 stands still; 5 is gone from B.
  const SnapshotState b = {entity(1, 40, -9, 1, 100), entity(2, 20, 0, 0, 0, kEntityFlagAsleep),
                           entity(3, 5, 5, 5), entity(4, 0, 0, 0)};
  SnapshotState scratch;
  // A at tick 10, B at 14, the snapshot at 16: half of A-to-B again, rounded half away from zero.
  const auto predicted = predict_baseline({b, 14, a, 10}, 16, scratch);
  ASSERT_EQ(predicted.size(), 4u);
  // x 40 + 40 / 2; y -9 + round(-4.5) = -9 - 5; z 1 + round(0.5); a player's yaw in 1/2048 turns: 65000
  // and 100 are held as steps 2031 and 3, +20 across 0, so 3 + 20 / 2 = 13 steps, 416.
  EXPECT_TRUE(same_entity_state(predicted[0], entity(1, 60, -14, 2, 416)));
  // A prop (kind 2) turns in 1/65536 turns: 100 + 636 / 2.
  const SnapshotState prop_a = {entity(1, 0, 0, 0, 65000, 0, 2)}, prop_b = {entity(1, 0, 0, 0, 100, 0, 2)};
  EXPECT_EQ(predict_baseline({prop_b, 14, prop_a, 10}, 16, scratch)[0].yaw(), 418);
  EXPECT_TRUE(same_entity_state(predicted[1], b[1]));
  EXPECT_TRUE(same_entity_state(predicted[2], b[2]));
  EXPECT_TRUE(same_entity_state(predicted[3], b[3]));
  EXPECT_EQ(predicted.data(), scratch.data());
  // Nothing predicted: B itself, not a copy. Without a predecessor, at B's own tick, or too far ahead.
  EXPECT_EQ(predict_baseline({b, 14, {}, 0}, 16, scratch).data(), b.data());
  EXPECT_EQ(predict_baseline({b, 14, a, 10}, 14, scratch).data(), b.data());
  EXPECT_EQ(predict_baseline({b, 14, a, 10}, 14 + kMaxPredictionTicks + 1, scratch).data(), b.data());
  EXPECT_EQ(
      predict_baseline({b, 14 + kMaxPredictionTicks, a, 13}, 14 + kMaxPredictionTicks + 1, scratch).data(),
      b.data());
  EXPECT_NE(predict_baseline({b, 14, a, 10}, 14 + kMaxPredictionTicks, scratch).data(), b.data());
  EXPECT_EQ(predict_baseline({}, 16, scratch).size(), 0u);
}

// Entity 2 runs in a straight line at constant speed and turns at a constant rate; entity 3 stands still.
// Once the client holds two snapshots of that (the second decoded against the first), the runner is
// predicted exactly and the block is its two empty counts; when it stops, it costs a delta.
TEST(EntityPrediction, AStraightRunnerCostsNothingOnceTwoSnapshotsWereAcknowledged) {
  const auto runner = [](std::uint64_t tick) {
    const auto t = static_cast<std::int32_t>(tick);
    return entity(2, 1000 + 80 * t, -500 - 13 * t, 24, static_cast<std::uint16_t>(64992 + 320 * t));
  };
  const wire::EntityState still = entity(3, 7, 7, 7);
  const SnapshotState at2 = {runner(2), still}, at4 = {runner(4), still}, at6 = {runner(6), still};
  const SnapshotState at9 = {runner(9), still};
  SnapshotState scratch;
  // Against B alone (the first acknowledged snapshot, sent against the empty state) the runner costs.
  const auto only_b = predict_baseline({at2, 2, {}, 0}, 4, scratch);
  const SnapshotDelta first = encode_delta(only_b, at4, {}, 1u << 20);
  ASSERT_EQ(first.changed.size(), 1u);
  EXPECT_GT(first.bits, kMinEntityBlockBits + 20);
  // B at 4 decoded against A at 2: at 6, and at 9 (three ticks ahead of two), the runner is predicted.
  for (const auto& [tick, world] : {std::pair{6u, &at6}, std::pair{9u, &at9}}) {
    const auto predicted = predict_baseline({at4, 4, at2, 2}, tick, scratch);
    const SnapshotDelta d = encode_delta(predicted, *world, {}, 1u << 20);
    EXPECT_TRUE(d.changed.empty()) << tick;
    EXPECT_EQ(d.bits, kMinEntityBlockBits) << tick;
    BitWriter w;
    write_entity_block(w, predicted, d.changed, d.removed);
    EXPECT_EQ(w.bit_count(), kMinEntityBlockBits);
    const AppliedDelta applied = apply_delta({at4, 4, at2, 2}, tick, w.bytes());
    ASSERT_EQ(applied.error, wire::ErrorCode::Ok);
    EXPECT_TRUE(same_states(applied.state, *world)) << tick;
  }
  // It stopped at tick 4: now it differs from its prediction by a position and a yaw delta.
  const auto predicted = predict_baseline({at4, 4, at2, 2}, 6, scratch);
  const SnapshotDelta stopped = encode_delta(predicted, at4, {}, 1u << 20);
  ASSERT_EQ(stopped.changed.size(), 1u);
  EXPECT_EQ(stopped.changed[0].id(), 2u);
  EXPECT_GT(stopped.bits, kMinEntityBlockBits + 20);
  BitWriter w;
  write_entity_block(w, predicted, stopped.changed, stopped.removed);
  const AppliedDelta applied = apply_delta({at4, 4, at2, 2}, 6, w.bytes());
  ASSERT_EQ(applied.error, wire::ErrorCode::Ok);
  EXPECT_TRUE(same_states(applied.state, at4));
  // And read against B without the prediction, the same bytes say something else.
  const AppliedDelta unpredicted = apply_delta(std::span<const wire::EntityState>(at4), w.bytes());
  ASSERT_EQ(unpredicted.error, wire::ErrorCode::Ok);
  EXPECT_FALSE(same_states(unpredicted.state, at4));
}

// A world of runners (constant velocity and turn rate, some across the yaw wrap), wanderers (random steps),
// sleepers (asleep, or waking), stoppers (run, then stand), entities at the int32 edges running outwards,
// and spawns and removals.
struct MovingWorld {
  struct Body {
    wire::EntityState state;
    std::int32_t vx, vy, vz;
    std::int16_t turn;
    int mode;  // 0 runner, 1 wanderer, 2 sleeper, 3 stopper, 4 edge runner
  };
  std::mt19937 rng;
  std::map<std::uint32_t, Body> bodies;
  std::uint32_t next_id = 1;

  MovingWorld(std::uint32_t seed, int count) : rng(seed) {
    for (int i = 0; i < count; ++i)
      spawn();
  }
  void spawn() {
    const int mode = uniform_int(rng, 0, 4);
    std::int32_t x = uniform_int(rng, -60000, 60000), y = uniform_int(rng, -60000, 60000);
    if (mode == 4)
      x = uniform_int(rng, 0, 1) == 0 ? kInt32Max - uniform_int(rng, 0, 3000)
                                      : kInt32Min + uniform_int(rng, 0, 3000);
    const auto yaw = static_cast<std::uint16_t>(uniform_int(rng, 0, 65535));
    const std::int32_t vx = mode == 4 ? (x > 0 ? 150 : -150) : uniform_int(rng, -90, 90);
    Body b{entity(next_id, x, y, uniform_int(rng, -100, 100), yaw, mode == 2 ? kEntityFlagAsleep : 0,
                  static_cast<std::uint8_t>(uniform_int(rng, 0, 2))),
           vx,
           uniform_int(rng, -90, 90),
           uniform_int(rng, -3, 3),
           static_cast<std::int16_t>(uniform_int(rng, -700, 700)),
           mode};
    bodies.emplace(next_id++, b);
  }
  void step() {
    for (auto it = bodies.begin(); it != bodies.end();) {
      Body& b = it->second;
      const double r = uniform_double(rng, 0, 1);
      if (r < 0.01) {
        it = bodies.erase(it);
        continue;
      }
      const wire::EntityState& e = b.state;
      const auto& p = e.position();
      std::int64_t x = p.x(), y = p.y(), z = p.z();
      std::uint16_t yaw = e.yaw();
      std::uint8_t flags = e.flags();
      switch (b.mode) {
        case 0:
        case 4:
          x += b.vx, y += b.vy, z += b.vz;
          yaw = static_cast<std::uint16_t>(yaw + b.turn);
          break;
        case 1:
          x += uniform_int(rng, -200, 200), y += uniform_int(rng, -200, 200);
          yaw = static_cast<std::uint16_t>(yaw + uniform_int(rng, -3000, 3000));
          break;
        case 2:
          if (r < 0.05) flags ^= kEntityFlagAsleep;
          if ((flags & kEntityFlagAsleep) == 0) x += b.vx;
          break;
        default:
          if (r < 0.97) x += b.vx, y += b.vy;  // stops now and then, runs on the next tick
          break;
      }
      x = std::clamp<std::int64_t>(x, kInt32Min, kInt32Max);  // the edge runners stop at the edge
      b.state = entity(e.id(), static_cast<std::int32_t>(x), static_cast<std::int32_t>(y),
                       static_cast<std::int32_t>(z), yaw, flags, e.kind());
      ++it;
    }
    for (int i = uniform_int(rng, 0, 1); i > 0; --i)
      spawn();
  }
  SnapshotState states() const {
    SnapshotState out;
    for (const auto& [id, b] : bodies)
      out.push_back(b.state);
    return out;
  }
};

// What one end remembers of a snapshot: its state and what it was decoded against (depth one).
struct Remembered {
  SnapshotState state;
  SnapshotState predecessor;
  std::uint64_t predecessor_tick = 0;
};

struct InFlight {
  std::uint64_t arrival;
  std::uint64_t tick;
  std::uint64_t baseline_tick;
  std::vector<std::uint8_t> block;
};

// The server encodes each snapshot against the newest acknowledged one's prediction (or the empty state
// past kSnapshotHistory ticks) and remembers the result; the client decodes each arriving block against its
// own copy of the baseline and of that baseline's predecessor, and acknowledges what it applied. Snapshots
// are lost, delayed and reordered, acks lost and delayed, budgets random (so cuts are frequent), and now
// and then the link goes quiet long enough for the baseline to expire.
TEST(EntityPrediction, ClientRebuildsExactlyWhatTheServerRememberedUnderLossReorderingAndBudgets) {
  for (std::uint32_t seed : {1u, 2u, 3u, 4u}) {
    MovingWorld world(200 + seed, 90);
    std::mt19937 rng(seed);
    std::map<std::uint64_t, Remembered> server_sent, client_held;
    std::vector<InFlight> snapshots_in_flight;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> acks_in_flight;  // (arrival, acked tick)
    std::uint64_t server_baseline = 0;
    int checked = 0, complete = 0, incomplete = 0, predicted_against = 0, empty_baseline = 0, reordered = 0;
    int differs_unpredicted = 0;
    std::size_t bits = 0, bits_unpredicted = 0;
    SnapshotState scratch;

    for (std::uint64_t tick = 1; tick <= 900; ++tick) {
      world.step();
      for (auto it = acks_in_flight.begin(); it != acks_in_flight.end();) {
        if (it->first <= tick) {
          server_baseline = std::max(server_baseline, it->second);  // a late ack never moves it back
          it = acks_in_flight.erase(it);
        } else {
          ++it;
        }
      }
      const bool quiet = tick % 300 > 200 && tick % 300 < 280;  // nothing gets through: the baseline expires
      if (uniform_int(rng, 0, 3) != 0) {                        // snapshots on most ticks, so spans vary
        const bool use = server_baseline != 0 && tick - server_baseline < kSnapshotHistory;
        const SnapshotState now = world.states();
        SnapshotBaseline base;
        if (use) {
          const Remembered& b = server_sent.at(server_baseline);
          base = {b.state, server_baseline, b.predecessor, b.predecessor_tick};
        }
        const auto predicted = predict_baseline(base, tick, scratch);
        if (predicts(base, tick)) ++predicted_against;
        if (!use) ++empty_baseline;
        const std::size_t budget = uniform_int<std::size_t>(rng, kMinEntityBlockBits, 4000);
        const SnapshotDelta d =
            encode_delta(predicted, now, {1, now.empty() ? wire::QuantizedVec{} : now[0].position()}, budget);
        ASSERT_LE(d.bits, budget);
        BitWriter block;
        write_entity_block(block, predicted, d.changed, d.removed);
        ASSERT_EQ(block.bit_count(), d.bits);
        d.complete ? ++complete : ++incomplete;
        ASSERT_TRUE(!d.complete || same_states(d.result, now));
        // The same world against B alone, for comparison (without a budget, so both are whole).
        bits += encode_delta(predicted, now, {}, 1u << 20).bits;
        bits_unpredicted += encode_delta(base.state, now, {}, 1u << 20).bits;
        server_sent[tick] = {d.result, use ? server_sent.at(server_baseline).state : SnapshotState{},
                             use ? server_baseline : 0};
        if (!quiet && uniform_int(rng, 0, 4) != 0) {
          snapshots_in_flight.push_back(
              {tick + uniform_int<std::uint64_t>(rng, 0, 6), tick, use ? server_baseline : 0,
               std::vector<std::uint8_t>(block.bytes().begin(), block.bytes().end())});
        }
      }

      // Arrivals of this tick in a shuffled order (delays already reorder across ticks).
      std::vector<InFlight> arriving;
      for (auto it = snapshots_in_flight.begin(); it != snapshots_in_flight.end();) {
        if (it->arrival <= tick) {
          arriving.push_back(std::move(*it));
          it = snapshots_in_flight.erase(it);
        } else {
          ++it;
        }
      }
      for (std::size_t k = arriving.size(); k > 1; --k)  // Fisher-Yates, with the portable mapping
        std::swap(arriving[k - 1], arriving[uniform_int<std::size_t>(rng, 0, k - 1)]);
      std::uint64_t newest_applied = 0;
      for (const InFlight& f : arriving) {
        if (client_held.contains(f.tick)) continue;
        SnapshotBaseline base;
        if (f.baseline_tick != 0) {
          const auto held = client_held.find(f.baseline_tick);
          if (held == client_held.end()) continue;  // not held: not applied, not acknowledged
          base = {held->second.state, f.baseline_tick, held->second.predecessor,
                  held->second.predecessor_tick};
        }
        const AppliedDelta a = apply_delta(base, f.tick, f.block);
        ASSERT_EQ(a.error, wire::ErrorCode::Ok) << "seed " << seed << " tick " << f.tick;
        ASSERT_TRUE(same_states(a.state, server_sent.at(f.tick).state))
            << "seed " << seed << " tick " << f.tick;
        const AppliedDelta plain = apply_delta(base.state, f.block);
        if (plain.error != wire::ErrorCode::Ok || !same_states(plain.state, a.state)) ++differs_unpredicted;
        if (f.tick < newest_applied || (!client_held.empty() && f.tick < client_held.rbegin()->first))
          ++reordered;
        newest_applied = std::max(newest_applied, f.tick);
        client_held[f.tick] = {a.state, SnapshotState(base.state.begin(), base.state.end()), f.baseline_tick};
        while (client_held.size() > kSnapshotHistory)
          client_held.erase(client_held.begin());
        ++checked;
        if (!quiet && uniform_int(rng, 0, 3) != 0)
          acks_in_flight.emplace_back(tick + uniform_int<std::uint64_t>(rng, 1, 6), f.tick);
      }
    }
    EXPECT_GT(checked, 300) << seed;
    EXPECT_GT(complete, 100) << seed;
    EXPECT_GT(incomplete, 50) << seed;
    EXPECT_GT(predicted_against, 300) << seed;
    EXPECT_GT(empty_baseline, 2) << seed;
    EXPECT_GT(reordered, 20) << seed;
    EXPECT_GT(differs_unpredicted, 100) << seed;         // the prediction is part of the decoding
    EXPECT_LT(bits * 10, bits_unpredicted * 9) << seed;  // and it saves more than a tenth of the bits here
  }
}

}  // namespace
}  // namespace shiftcast
