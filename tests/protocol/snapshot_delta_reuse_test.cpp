// encode_delta_into, the server's allocation-free form of encode_delta, against a brute-force oracle:
// over random baselines, worlds and budgets (most over budget, some not) and one scratch delta reused
// dirty from call to call, it sends exactly encode_delta's lists, and what the client then holds (a map
// applied entry by entry, no merge shared with the code under test) is `world` itself whenever the delta
// says it is complete (so the server may share the world instead of copying it), and `out.result`
// otherwise.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "protocol/entity_block.hpp"
#include "protocol/snapshot_delta.hpp"

namespace shiftcast {
namespace {

SnapshotState random_state(std::mt19937& rng, std::uint32_t max_id) {
  std::map<std::uint32_t, wire::EntityState> m;
  const std::uint32_t n = rng() % (max_id + 1);
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t id = 1 + rng() % max_id;
    // Few distinct values, so baselines and worlds often agree on an entry.
    m[id] = wire::EntityState(id, std::uint8_t(rng() % 3), 0, std::uint16_t(rng() % 2),
                              wire::QuantizedVec(std::int32_t(rng() % 3), std::int32_t(rng() % 3) - 1, 0));
  }
  SnapshotState out;
  for (const auto& [id, e] : m)
    out.push_back(e);
  return out;
}

SnapshotState applied_by_map(std::span<const wire::EntityState> baseline, const SnapshotDelta& d) {
  std::map<std::uint32_t, wire::EntityState> m;
  for (const auto& e : baseline)
    m[e.id()] = e;
  for (const std::uint32_t id : d.removed)
    m.erase(id);
  for (const auto& e : d.changed)
    m[e.id()] = e;
  SnapshotState out;
  for (const auto& [id, e] : m)
    out.push_back(e);
  return out;
}

bool same(std::span<const wire::EntityState> a, std::span<const wire::EntityState> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_entity_state);
}

TEST(SnapshotDelta, EncodeIntoAReusedScratchMatchesEncodeAndTheOracle) {
  std::mt19937 rng(17);
  SnapshotDelta scratch;
  int complete = 0, partial = 0;
  for (int round = 0; round < 3000; ++round) {
    const SnapshotState baseline = random_state(rng, 60);
    const SnapshotState world = random_state(rng, 60);
    const DeltaPriority priority{1 + std::uint32_t(rng() % 60),
                                 wire::QuantizedVec(std::int32_t(rng() % 3), 0, 0)};
    const std::size_t budget = rng() % 4 == 0 ? 32768 : kMinEntityBlockBits + rng() % 600;
    const SnapshotDelta fresh = encode_delta(baseline, world, priority, budget);
    encode_delta_into(baseline, world, priority, budget, scratch);
    ASSERT_TRUE(same(scratch.changed, fresh.changed)) << round;
    ASSERT_EQ(scratch.removed, fresh.removed) << round;
    ASSERT_EQ(scratch.complete, fresh.complete) << round;
    ASSERT_LE(scratch.bits, budget);
    ASSERT_EQ(scratch.bits, fresh.bits);
    const SnapshotState held = applied_by_map(baseline, scratch);
    if (scratch.complete) {
      ++complete;
      EXPECT_TRUE(scratch.result.empty());
      ASSERT_TRUE(same(held, world)) << round;
    } else {
      ++partial;
      ASSERT_TRUE(same(held, scratch.result)) << round;
    }
    ASSERT_TRUE(same(held, fresh.result)) << round;
  }
  EXPECT_GT(complete, 300);
  EXPECT_GT(partial, 300);
}

}  // namespace
}  // namespace shiftcast
