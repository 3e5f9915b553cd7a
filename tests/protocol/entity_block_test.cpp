// The entity block against untrusted bits: any byte string either decodes (and then is the one encoding
// of what it decodes to: writing the decoded lists gives back the same bytes) or is Malformed, never a
// crash or a read past the end; every proper prefix of a real block is refused. The round trip of real
// deltas against a brute-force priority oracle is in snapshot_delta_test.cpp.
#include "protocol/entity_block.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "protocol/snapshot_delta.hpp"

namespace shiftcast {
namespace {

SnapshotState random_baseline(std::mt19937& rng) {
  SnapshotState out;
  std::uint32_t id = 0;
  for (std::uint32_t n = rng() % 12; n > 0; --n) {
    id += 1 + rng() % 3;
    out.push_back(
        wire::EntityState(id, std::uint8_t(rng() % 3), std::uint8_t(rng() % 2), std::uint16_t(rng()),
                          wire::QuantizedVec(std::int32_t(rng() % 64) - 32, std::int32_t(rng() % 64) - 32,
                                             std::int32_t(rng() % 64) - 32)));
  }
  return out;
}

// What decoding `bytes` against `baseline` gives, with the whole-block rule (padding only at the end).
struct Outcome {
  bool ok = false;
  DecodedEntityBlock block;
};
Outcome decode(std::span<const std::uint8_t> bytes, std::span<const wire::EntityState> baseline) {
  BitReader in(bytes);
  Outcome o;
  o.block = read_entity_block(in, baseline);
  o.ok = o.block.error == wire::ErrorCode::Ok && in.finish() == BitReadError::kNone;
  return o;
}

TEST(EntityBlock, AnyBytesDecodeToTheirOneEncodingOrAreMalformed) {
  std::mt19937 rng(151);
  int decoded = 0;
  for (int round = 0; round < 20000; ++round) {
    const SnapshotState baseline = random_baseline(rng);
    // Half random strings (biased to small counts), half real blocks with a bit or two flipped: those
    // often still decode, to something else, which must then be what these very bytes encode.
    std::vector<std::uint8_t> bytes;
    if (round % 2 == 0) {
      bytes.resize(1 + rng() % 12);
      for (auto& b : bytes)
        b = std::uint8_t(rng());
      if (rng() % 2) bytes[0] &= 0x0e;
    } else {
      const SnapshotDelta d = encode_delta(baseline, random_baseline(rng), {}, 1u << 20);
      BitWriter w;
      write_entity_block(w, baseline, d.changed, d.removed);
      bytes.assign(w.bytes().begin(), w.bytes().end());
      for (std::uint32_t flips = 1 + rng() % 2; flips > 0; --flips) {
        const std::size_t bit = rng() % (bytes.size() * 8);
        bytes[bit / 8] = std::uint8_t(bytes[bit / 8] ^ (1u << (bit % 8)));
      }
    }
    const std::vector<std::uint8_t> exact(bytes);  // a heap copy of exactly this size: ASan sees overruns
    const Outcome o = decode(exact, baseline);
    if (!o.ok) continue;
    ++decoded;
    BitWriter again;
    write_entity_block(again, baseline, o.block.changed, o.block.removed);
    ASSERT_EQ(std::vector<std::uint8_t>(again.bytes().begin(), again.bytes().end()), exact) << round;
  }
  EXPECT_GT(decoded, 1000);
}

TEST(EntityBlock, EveryProperPrefixOfARealBlockIsMalformed) {
  std::mt19937 rng(152);
  for (int round = 0; round < 300; ++round) {
    const SnapshotState baseline = random_baseline(rng);
    const SnapshotState world = random_baseline(rng);
    const SnapshotDelta d = encode_delta(baseline, world, {}, 1u << 20);
    BitWriter w;
    write_entity_block(w, baseline, d.changed, d.removed);
    const std::vector<std::uint8_t> whole(w.bytes().begin(), w.bytes().end());
    ASSERT_TRUE(decode(whole, baseline).ok) << round;
    for (std::size_t cut = 0; cut < whole.size(); ++cut) {
      const std::vector<std::uint8_t> part(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cut));
      EXPECT_FALSE(decode(part, baseline).ok) << round << " cut " << cut;
    }
  }
}

TEST(EntityBlock, ChangeBitsOverNoChangeAndHugeCountsAreMalformed) {
  const SnapshotState baseline = {wire::EntityState(1, 0, 0, 5, wire::QuantizedVec(1, 2, 3))};
  const auto malformed = [&](BitWriter& w) {
    BitReader in(w.bytes());
    return read_entity_block(in, baseline).error == wire::ErrorCode::Malformed;
  };
  const auto prologue = [](BitWriter& w) {
    w.write_tiered(0, kCountTiers);  // nothing removed
    w.write_tiered(1, kCountTiers);  // one changed
    w.write_tiered(1, kIdGapTiers);  // id 1
  };
  // The change code: 1 position and yaw, 01 position, 001 yaw, 0001 kind/flags (then a position bit and a
  // yaw bit), 0000 nothing. A player's yaw delta in kPlayerYawDeltaTiers.
  {
    BitWriter w;  // position flagged, all three deltas zero
    prologue(w);
    w.write_bits(0b10, 2);
    for (int i = 0; i < 3; ++i)
      w.write_tiered_signed(0, kPositionDeltaTiers);
    EXPECT_TRUE(malformed(w));
  }
  {
    BitWriter w;  // yaw flagged with a zero delta
    prologue(w);
    w.write_bits(0b100, 3);
    w.write_tiered_signed(0, kPlayerYawDeltaTiers);
    EXPECT_TRUE(malformed(w));
  }
  {
    BitWriter w;  // a player's yaw delta of half a turn the positive way: not the shorter form
    prologue(w);
    w.write_bits(0b100, 3);
    w.write_tiered_signed(1024, kPlayerYawDeltaTiers);
    EXPECT_TRUE(malformed(w));
  }
  {
    BitWriter w;  // kind and flags flagged, the same values
    prologue(w);
    w.write_bits(0b1000, 4);
    w.write_tiered(0, kKindTiers);
    w.write_tiered(0, kFlagTiers);
    w.write_bool(false);
    w.write_bool(false);
    EXPECT_TRUE(malformed(w));
  }
  {
    BitWriter w;  // a position delta past int32
    prologue(w);
    w.write_bits(0b10, 2);
    w.write_tiered_signed(std::int64_t{1} << 31, kPositionDeltaTiers);
    w.write_tiered_signed(0, kPositionDeltaTiers);
    w.write_tiered_signed(0, kPositionDeltaTiers);
    EXPECT_TRUE(malformed(w));
  }
  {
    BitWriter w;  // the code "nothing": the baseline entry itself (its yaw 5 held as a player's, 0)
    prologue(w);
    w.write_bits(0, 4);
    BitReader in(w.bytes());
    const DecodedEntityBlock block = read_entity_block(in, baseline);
    ASSERT_EQ(block.error, wire::ErrorCode::Ok);
    ASSERT_EQ(block.changed.size(), 1u);
    EXPECT_EQ(block.changed[0].yaw(), 0);
    EXPECT_EQ(block.changed[0].position().z(), 3);
  }
  {
    BitWriter w;  // four billion removed ids announced in a few bytes
    w.write_tiered(0xffffffffu, kCountTiers);
    EXPECT_TRUE(malformed(w));
  }
  {
    BitWriter w;  // ids past 2^32 - 1
    w.write_tiered(2, kCountTiers);
    w.write_tiered(0xffffffffu, kIdGapTiers);
    w.write_tiered(0, kIdGapTiers);
    w.write_tiered(0, kCountTiers);
    EXPECT_TRUE(malformed(w));
  }
}

// A player's yaw travels in 1/2048 turn: 11 bits new, deltas in those steps, and whatever the baseline held
// (a prop's yaw, before the kind changed) the decoded yaw has its low 5 bits zero. Oracle: the values
// computed by hand from docs/protocol.md's tables.
TEST(EntityBlock, APlayersYawTravelsIn2048thsOfATurn) {
  const SnapshotState baseline = {wire::EntityState(1, 0, 0, 32 * 100, wire::QuantizedVec(0, 0, 0)),
                                  wire::EntityState(2, 2, 0, 1234, wire::QuantizedVec(0, 0, 0))};
  const SnapshotState world = {
      wire::EntityState(1, 0, 0, 32 * 97, wire::QuantizedVec(0, 0, 0)),  // -3 steps
      wire::EntityState(2, 0, 0, 32 * 38, wire::QuantizedVec(0, 0, 0)),  // now a player
      wire::EntityState(3, 0, 0, 65504, wire::QuantizedVec(0, 0, 0))};   // new: 2047
  const SnapshotDelta d = encode_delta(baseline, world, {}, 1u << 20);
  ASSERT_EQ(d.changed.size(), 3u);
  // Entity 1: the change code "yaw" (001) and dyaw -3 (zig-zag 5, the 4-bit tier: 2 + 4); entity 3: kind
  // 3 bits (a selector bit, then 2), flags 2, yaw 11, three zero coordinates of 11 bits each.
  EXPECT_EQ(entity_entry_bits(&baseline[0], world[0]), 3u + 6);
  EXPECT_EQ(entity_entry_bits(nullptr, world[2]), 3u + 2 + 11 + 3 * 11);
  // Entity 2 turns from 1234 (38.56 steps, floor 38) to 38 steps: no yaw change is sent, only the code
  // "kind/flags" (0001), the kind and flags (3 + 2 bits) and "no position, no yaw" (2 bits).
  EXPECT_EQ(entity_entry_bits(&baseline[1], world[1]), 4u + 3 + 2 + 2);
  BitWriter w;
  write_entity_block(w, baseline, d.changed, d.removed);
  BitReader in(w.bytes());
  const DecodedEntityBlock block = read_entity_block(in, baseline);
  ASSERT_EQ(block.error, wire::ErrorCode::Ok);
  ASSERT_EQ(block.changed.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(same_entity_state(block.changed[i], world[i])) << i;
}

}  // namespace
}  // namespace shiftcast
