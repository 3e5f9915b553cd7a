// Snapshot quantization against closed forms, and delta encoding against a brute-force oracle: a server
// and a client exchanging deltas over random worlds with random budgets and lost datagrams and acks.
#include "protocol/snapshot_delta.hpp"
#include "protocol/entity_block.hpp"
#include "tests/support/seeded_random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <random>
#include <set>

namespace shiftcast {
namespace {

constexpr double kHalfQuantum = kPositionQuantum / 2.0;
constexpr double kYawStep = 2.0 * std::numbers::pi / 65536.0;
// dequantize_yaw returns a float: its rounding (half an ulp of at most 2pi) comes on top of the step.
constexpr double kYawFloatSlack = 4.0e-7;

// A player as a server holds it: its yaw in whole 1/2048 turns (quantize_entity_yaw clears the low 5 bits).
wire::EntityState make_state(std::uint32_t id, std::int32_t x, std::int32_t y, std::int32_t z,
                             std::uint16_t yaw = 0, std::uint8_t flags = 0) {
  return wire::EntityState(id, 0, flags, static_cast<std::uint16_t>(yaw & ~31u), wire::QuantizedVec(x, y, z));
}

// Any kind's state as a server holds it.
wire::EntityState held_state(std::uint32_t id, std::uint8_t kind, std::uint8_t flags, std::uint16_t yaw,
                             const wire::QuantizedVec& position) {
  const auto held = static_cast<std::uint16_t>(kind == kEntityKindPlayer ? yaw & ~31u : yaw);
  return wire::EntityState(id, kind, flags, held, position);
}

bool same_states(std::span<const wire::EntityState> a, std::span<const wire::EntityState> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_entity_state);
}

TEST(Quantize, PositionsRoundToNearestQuantumHalfAwayFromZero) {
  EXPECT_EQ(quantize_coordinate(0.0f), 0);
  EXPECT_EQ(quantize_coordinate(1.0f), 16);
  EXPECT_EQ(quantize_coordinate(-2.5f), -40);
  EXPECT_EQ(quantize_coordinate(1.0f / 64), 0);  // a quarter quantum
  EXPECT_EQ(quantize_coordinate(3.0f / 64), 1);  // three quarters
  EXPECT_EQ(quantize_coordinate(1.0f / 32), 1);  // exactly half: away from zero
  EXPECT_EQ(quantize_coordinate(-1.0f / 32), -1);
  EXPECT_EQ(quantize_coordinate(std::numeric_limits<float>::quiet_NaN()), 0);
  EXPECT_EQ(quantize_coordinate(1e30f), std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(quantize_coordinate(-1e30f), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(dequantize_coordinate(-40), -2.5f);
}

TEST(Quantize, PositionErrorIsAtMostHalfAQuantum) {
  std::mt19937 rng(11);
  UniformReal<float> coordinate(-16384.0f, 16384.0f);
  for (int i = 0; i < 200000; ++i) {
    const float v = coordinate(rng);
    const std::int32_t q = quantize_coordinate(v);
    // Closed form: q is the integer nearest to 16 v, so |q / 16 - v| <= 1/32, computed exactly in double.
    ASSERT_LE(std::abs(q / 16.0 - static_cast<double>(v)), kHalfQuantum) << v;
    // Grid points survive the round trip exactly (|q| < 2^24 is exact in float).
    ASSERT_EQ(quantize_coordinate(dequantize_coordinate(q)), q);
  }
  const wire::Vec3f p(100.03f, -7.99f, 24.0f);
  const wire::Vec3f back = dequantize_position(quantize_position(p));
  EXPECT_LE(std::abs(back.x() - p.x()), kHalfQuantum);
  EXPECT_LE(std::abs(back.y() - p.y()), kHalfQuantum);
  EXPECT_EQ(back.z(), 24.0f);
}

TEST(Quantize, YawIsSixteenBitTurnsWrapped) {
  const float pi = std::numbers::pi_v<float>;
  EXPECT_EQ(quantize_yaw(0.0f), 0);
  EXPECT_EQ(quantize_yaw(pi / 2), 16384);
  EXPECT_EQ(quantize_yaw(-pi / 2), 49152);  // wrapped into [0, 65536)
  EXPECT_EQ(quantize_yaw(2 * pi), 0);
  EXPECT_EQ(quantize_yaw(5 * pi / 2), 16384);
  EXPECT_EQ(quantize_yaw(std::numeric_limits<float>::infinity()), 0);
  EXPECT_FLOAT_EQ(dequantize_yaw(32768), pi);

  std::mt19937 rng(12);
  UniformReal<float> yaw(-20.0f, 20.0f);
  for (int i = 0; i < 100000; ++i) {
    const float y = yaw(rng);
    const double back = dequantize_yaw(quantize_yaw(y));
    ASSERT_GE(back, 0.0);
    ASSERT_LT(back, 2.0 * std::numbers::pi);
    const double error = std::remainder(back - static_cast<double>(y), 2.0 * std::numbers::pi);
    ASSERT_LE(std::abs(error), kYawStep / 2 + kYawFloatSlack) << y;
  }
}

// A player's yaw is held in 1/2048 turn: a multiple of 32 steps, within half of 1/2048 turn of the float
// (the closed form); every other kind's is quantize_yaw's.
TEST(SnapshotDelta, APlayersYawIsQuantizedTo2048thsOfATurn) {
  const float pi = std::numbers::pi_v<float>;
  EXPECT_EQ(quantize_entity_yaw(pi / 2, kEntityKindPlayer), 16384);
  EXPECT_EQ(quantize_entity_yaw(-pi / 2, kEntityKindPlayer), 49152);
  EXPECT_EQ(quantize_entity_yaw(std::numeric_limits<float>::quiet_NaN(), kEntityKindPlayer), 0);
  std::mt19937 rng(13);
  UniformReal<float> yaw(-20.0f, 20.0f);
  for (int i = 0; i < 100000; ++i) {
    const float y = yaw(rng);
    const std::uint16_t held = quantize_entity_yaw(y, kEntityKindPlayer);
    ASSERT_EQ(held % 32, 0) << y;
    const double error =
        std::remainder(dequantize_yaw(held) - static_cast<double>(y), 2.0 * std::numbers::pi);
    ASSERT_LE(std::abs(error), 32 * kYawStep / 2 + kYawFloatSlack) << y;
    ASSERT_EQ(quantize_entity_yaw(y, 2), quantize_yaw(y));
    ASSERT_EQ(quantize_entity_yaw(y, 1), quantize_yaw(y));
  }
}

TEST(SnapshotDelta, SendsOnlyWhatChangedAndRemovedIds) {
  const SnapshotState baseline{make_state(1, 0, 0, 0), make_state(2, 5, 5, 5), make_state(4, 1, 1, 1)};
  const SnapshotState world{make_state(1, 0, 0, 0), make_state(2, 5, 5, 5, 0, kEntityFlagAsleep),
                            make_state(3, 9, 9, 9)};
  const SnapshotDelta d = encode_delta(baseline, world, {}, 1000);
  ASSERT_EQ(d.changed.size(), 2u);  // 2 (flags differ) and 3 (new); 1 is identical
  EXPECT_EQ(d.changed[0].id(), 2u);
  EXPECT_EQ(d.changed[1].id(), 3u);
  EXPECT_EQ(d.removed, std::vector<std::uint32_t>{4});
  EXPECT_TRUE(d.complete);
  EXPECT_TRUE(same_states(d.result, world));
  // By hand from the layout: removed count 1 (6 bits), id 4 as gap 4 (3-bit tier: 2 + 3 bits); changed
  // count 2 (6), id 2 as gap 2 (5), the change code "kind/flags" (0001), kind 0 (1 + 2) and flags 1
  // (1 + 1), then "no position, no yaw" (2 bits): 4 + 5 + 2; id 3 as gap 0 (1), new: kind 0 (3), flags 0
  // (2), a player's yaw (11), 9 quanta three times (1 + 10 each).
  EXPECT_EQ(d.bits, (6 + 5) + 6 + (5 + 4 + 3 + 2 + 2) + (1 + 3 + 2 + 11 + 3 * 11));
}

TEST(SnapshotDelta, RemovedIdsFitFirstThenOwnEntityThenNearest) {
  SnapshotState baseline, world;
  for (std::uint32_t id = 1; id <= 10; ++id)
    baseline.push_back(make_state(id, 0, 0, 0));
  // 1..3 gone; 4..10 moved to distance (id - 3) * 100 from the focus, own entity 9.
  for (std::uint32_t id = 4; id <= 10; ++id)
    world.push_back(make_state(id, (id - 3) * 100, 0, 0));
  const DeltaPriority priority{9, wire::QuantizedVec(0, 0, 0)};
  // Removed 1, 2, 3 (gaps 1, 0, 0: 5 + 1 + 1 bits) and the two counts (6 each): 19 bits. Then each moved
  // entity: its id gap, the change code "position" (2 bits), the x delta (id - 3) * 100 quanta (zig-zag 200
  // .. 1200: the 10-bit tier and its 5-bit selector, or the 17-bit tier and its 6) and two zero deltas (1
  // each). Own 9 first (gap 9: 10 bits, then 2 + 23 + 2 = 37), then 4 (gap 4: 5 bits, 2 + 15 + 2, and 9's gap
  // shrinks to 4: 5 bits less: 19) and 5 (gap 0: 1 bit, 2 + 15 + 2; 9's gap 3 costs what 4 did: 20): 19 + 37
  // + 19 + 20 = 95; 6 (another 20) does not fit 100.
  const SnapshotDelta d = encode_delta(baseline, world, priority, 100);
  EXPECT_EQ(d.removed, (std::vector<std::uint32_t>{1, 2, 3}));
  ASSERT_EQ(d.changed.size(), 3u);  // own 9, then 4 and 5, the nearest; in id order
  EXPECT_EQ(d.bits, 95u);
  EXPECT_EQ(d.changed[0].id(), 4u);
  EXPECT_EQ(d.changed[1].id(), 5u);
  EXPECT_EQ(d.changed[2].id(), 9u);
  EXPECT_FALSE(d.complete);
  // The result keeps baseline values for what was left out.
  ASSERT_EQ(d.result.size(), 7u);
  EXPECT_TRUE(same_entity_state(d.result[2], baseline[5]));  // id 6, unchanged at the baseline

  const SnapshotDelta tiny = encode_delta(baseline, world, priority, 6 + 5 + 1 + 6);  // room for two ids only
  EXPECT_EQ(tiny.removed, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_TRUE(tiny.changed.empty());
  EXPECT_FALSE(tiny.complete);
  EXPECT_EQ(tiny.result.size(), 8u);
}

TEST(SnapshotDelta, ApplyRefusesMalformedLists) {
  const SnapshotState baseline{make_state(1, 0, 0, 0), make_state(2, 0, 0, 0)};
  const SnapshotState unsorted{make_state(3, 0, 0, 0), make_state(2, 1, 1, 1)};
  const SnapshotState repeated{make_state(3, 0, 0, 0), make_state(3, 1, 1, 1)};
  const SnapshotState ok{make_state(2, 7, 7, 7)};
  const std::vector<std::uint32_t> none, both{2}, backwards{2, 1}, absent{5};
  EXPECT_EQ(apply_delta(baseline, unsorted, none).error, wire::ErrorCode::Malformed);
  EXPECT_EQ(apply_delta(baseline, repeated, none).error, wire::ErrorCode::Malformed);
  EXPECT_EQ(apply_delta(baseline, ok, both).error, wire::ErrorCode::Malformed);
  EXPECT_EQ(apply_delta(baseline, {}, backwards).error, wire::ErrorCode::Malformed);
  const AppliedDelta a = apply_delta(baseline, ok, absent);  // removing what is not there: harmless
  ASSERT_EQ(a.error, wire::ErrorCode::Ok);
  EXPECT_TRUE(same_states(a.state, SnapshotState{make_state(1, 0, 0, 0), make_state(2, 7, 7, 7)}));
}

TEST(SnapshotDelta, ApplyReadsTheEntityBlock) {
  const SnapshotState baseline{make_state(1, 0, 0, 0), make_state(2, 0, 0, 0), make_state(3, 0, 0, 0)};
  const SnapshotState changed{make_state(2, -3, 4, 5, 77), make_state(8, 1, 2, 3)};
  const std::vector<std::uint32_t> removed{1};
  BitWriter w;
  write_entity_block(w, baseline, changed, removed);
  const AppliedDelta a = apply_delta(baseline, w.bytes());
  ASSERT_EQ(a.error, wire::ErrorCode::Ok);
  EXPECT_TRUE(same_states(a.state, SnapshotState{changed[0], baseline[2], changed[1]}));
  // Cut short, or not ending in its zero padding: refused.
  EXPECT_EQ(apply_delta(baseline, w.bytes().first(w.bytes().size() - 1)).error, wire::ErrorCode::Malformed);
  std::vector<std::uint8_t> longer(w.bytes().begin(), w.bytes().end());
  longer.push_back(0x01);
  EXPECT_EQ(apply_delta(baseline, longer).error, wire::ErrorCode::Malformed);
}

// The oracle for which entries a budget-limited delta carries: every differing entry ranked by brute
// force (own entity, squared distance in exact 64-bit integers, id); the removed ids, ascending, as many
// as the written block of them alone fits; then the longest prefix of the ranking whose written block
// (measured by writing it, not by the encoder's cost sums) fits. The test worlds stay within +-2^20
// quanta, so the squares cannot overflow.
struct OracleChoice {
  std::vector<std::uint32_t> removed;
  std::set<std::uint32_t> changed;
};
std::size_t written_bits(const SnapshotState& baseline, const std::set<std::uint32_t>& ids,
                         const SnapshotState& world, const std::vector<std::uint32_t>& removed) {
  SnapshotState changed;
  for (const auto& w : world) {
    if (ids.contains(w.id())) changed.push_back(w);
  }
  BitWriter out;
  write_entity_block(out, baseline, changed, removed);
  return out.bit_count();
}
OracleChoice oracle_chosen(const SnapshotState& baseline, const SnapshotState& world, const DeltaPriority& p,
                           std::size_t budget) {
  std::vector<std::tuple<int, std::int64_t, std::uint32_t>> ranked;
  std::vector<std::uint32_t> gone;
  for (const auto& b : baseline) {
    if (std::none_of(world.begin(), world.end(), [&](const auto& w) { return w.id() == b.id(); }))
      gone.push_back(b.id());
  }
  for (const auto& w : world) {
    const auto it =
        std::find_if(baseline.begin(), baseline.end(), [&](const auto& b) { return b.id() == w.id(); });
    if (it != baseline.end() && same_entity_state(*it, w)) continue;
    const std::int64_t dx = std::int64_t{w.position().x()} - p.focus.x();
    const std::int64_t dy = std::int64_t{w.position().y()} - p.focus.y();
    const std::int64_t dz = std::int64_t{w.position().z()} - p.focus.z();
    ranked.emplace_back(w.id() == p.own_entity ? 0 : 1, dx * dx + dy * dy + dz * dz, w.id());
  }
  std::sort(ranked.begin(), ranked.end());
  OracleChoice choice;
  const auto prefix = [&](std::size_t k) {
    std::set<std::uint32_t> ids;
    for (std::size_t i = 0; i < k; ++i)
      ids.insert(std::get<2>(ranked[i]));
    return ids;
  };
  if (written_bits(baseline, prefix(ranked.size()), world, gone) <= budget) {
    choice.removed = gone;
    choice.changed = prefix(ranked.size());
    return choice;
  }
  std::size_t r = 0;
  while (r < gone.size() &&
         written_bits(baseline, {}, world, std::vector<std::uint32_t>(gone.begin(), gone.begin() + r + 1)) <=
             budget)
    ++r;
  choice.removed.assign(gone.begin(), gone.begin() + r);
  // The written size grows with every entry taken: the longest fitting prefix by bisection.
  std::size_t lo = 0, hi = ranked.size();
  while (lo < hi) {
    const std::size_t mid = (lo + hi + 1) / 2;
    if (written_bits(baseline, prefix(mid), world, choice.removed) <= budget) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  choice.changed = prefix(lo);
  return choice;
}

struct RandomWorld {
  std::mt19937 rng;
  std::map<std::uint32_t, wire::EntityState> entities;
  std::uint32_t next_id = 1;

  explicit RandomWorld(std::uint32_t seed, int initial) : rng(seed) {
    for (int i = 0; i < initial; ++i)
      add();
  }
  void add() {
    UniformInt<std::int32_t> coordinate(-4096 * 16, 4096 * 16);
    UniformInt<int> yaw(0, 65535), kind(0, 2);
    const std::uint32_t id = next_id++;
    entities[id] =
        held_state(id, static_cast<std::uint8_t>(kind(rng)), 0, static_cast<std::uint16_t>(yaw(rng)),
                   wire::QuantizedVec(coordinate(rng), coordinate(rng), coordinate(rng)));
  }
  void step() {
    UniformReal<double> u(0, 1);
    UniformInt<std::int32_t> move(-64, 64);
    for (auto it = entities.begin(); it != entities.end();) {
      const double r = u(rng);
      wire::EntityState& e = it->second;
      if (r < 0.02) {
        it = entities.erase(it);
        continue;
      }
      if (r < 0.4) {  // moves
        const auto& p = e.position();
        e = held_state(e.id(), e.kind(), 0, static_cast<std::uint16_t>(e.yaw() + move(rng)),
                       wire::QuantizedVec(p.x() + move(rng), p.y() + move(rng), p.z() + move(rng)));
      } else if (r < 0.45) {  // falls asleep or wakes: only the flag changes
        e = wire::EntityState(e.id(), e.kind(), e.flags() ^ kEntityFlagAsleep, e.yaw(), e.position());
      }
      ++it;
    }
    const int spawned = UniformInt<int>(0, 3)(rng);
    for (int i = 0; i < spawned; ++i)
      add();
  }
  SnapshotState states() const {
    SnapshotState out;
    for (const auto& [id, e] : entities)
      out.push_back(e);
    return out;
  }
};

// A server and one client over a link that loses deltas and acks and delivers acks late: the client's
// state rebuilt from what it received always equals what the server recorded it sent, and equals the
// world whenever the delta was complete. Every delta matches the brute-force priority oracle.
TEST(SnapshotDelta, ClientRebuildsExactlyWhatTheServerRecordedUnderLossAndBudgets) {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    RandomWorld world(100 + seed, 120);
    std::mt19937 rng(seed);
    UniformReal<double> u(0, 1);
    UniformInt<std::size_t> budget(kMinEntityBlockBits, 6000);
    std::map<std::uint64_t, SnapshotState> server_sent;  // tick -> the state the client will hold
    std::map<std::uint64_t, SnapshotState> client_held;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> acks_in_flight;  // (arrival tick, acked tick)
    std::uint64_t server_baseline = 0;
    int complete = 0, incomplete = 0, delivered = 0;

    for (std::uint64_t tick = 1; tick <= 400; ++tick) {
      world.step();
      for (auto it = acks_in_flight.begin(); it != acks_in_flight.end();) {
        if (it->first <= tick) {
          server_baseline = std::max(server_baseline, it->second);
          it = acks_in_flight.erase(it);
        } else {
          ++it;
        }
      }
      const bool use = server_baseline != 0 && tick - server_baseline < kSnapshotHistory;
      const SnapshotState empty;
      const SnapshotState& baseline = use ? server_sent.at(server_baseline) : empty;
      const SnapshotState now = world.states();
      const auto& own = now[UniformInt<std::size_t>(0, now.size() - 1)(rng)];
      const DeltaPriority priority{own.id(), own.position()};
      const std::size_t limit = budget(rng);
      const SnapshotDelta d = encode_delta(baseline, now, priority, limit);

      ASSERT_LE(d.bits, limit);
      const OracleChoice expected = oracle_chosen(baseline, now, priority, limit);
      std::set<std::uint32_t> got;
      for (const auto& e : d.changed)
        got.insert(e.id());
      ASSERT_EQ(got, expected.changed) << "tick " << tick;
      ASSERT_EQ(d.removed, expected.removed) << "tick " << tick;
      BitWriter block;
      write_entity_block(block, baseline, d.changed, d.removed);
      ASSERT_EQ(block.bit_count(), d.bits) << "tick " << tick;
      if (d.complete) {
        ASSERT_TRUE(same_states(d.result, now));
        ++complete;
      } else {
        ++incomplete;
      }
      server_sent[tick] = d.result;

      if (u(rng) < 0.25) continue;  // the datagram is lost
      ++delivered;
      const SnapshotState client_empty;
      const auto held = client_held.find(use ? server_baseline : 0);
      ASSERT_TRUE(!use || held != client_held.end()) << "the server encoded against a state never delivered";
      // The client decodes the block's bytes against the state it holds.
      const std::vector<std::uint8_t> bytes(block.bytes().begin(), block.bytes().end());
      BitReader in(bytes);
      const SnapshotState& held_state = use ? held->second : client_empty;
      const DecodedEntityBlock decoded = read_entity_block(in, held_state);
      ASSERT_EQ(decoded.error, wire::ErrorCode::Ok);
      ASSERT_EQ(in.finish(), BitReadError::kNone);
      const AppliedDelta a = apply_delta(held_state, decoded.changed, decoded.removed);
      ASSERT_EQ(a.error, wire::ErrorCode::Ok);
      ASSERT_TRUE(same_states(a.state, server_sent.at(tick))) << "tick " << tick;
      client_held[tick] = a.state;
      if (u(rng) < 0.3) continue;  // the ack is lost
      acks_in_flight.emplace_back(tick + UniformInt<std::uint64_t>(1, 5)(rng), tick);
    }
    EXPECT_GT(complete, 50) << seed;
    EXPECT_GT(incomplete, 50) << seed;
    EXPECT_GT(delivered, 250) << seed;
  }
}

}  // namespace
}  // namespace shiftcast
