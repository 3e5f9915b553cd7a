// The own state's bit packing: every state comes back bit for bit (floats as IEEE-754 patterns: -0, NaN
// payloads and infinities included), the usual ones are small, and untrusted bits either decode to the
// one encoding of what they decode to or are refused.
#include "protocol/own_state_codec.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <limits>
#include <random>
#include <vector>

namespace shiftcast {
namespace {

std::uint32_t bits(float v) {
  return std::bit_cast<std::uint32_t>(v);
}

// The oracle: every field, floats compared by their bits.
bool identical(const wire::OwnState& a, const wire::OwnState& b) {
  const auto same = [](const wire::Vec3f& p, const wire::Vec3f& q) {
    return bits(p.x()) == bits(q.x()) && bits(p.y()) == bits(q.y()) && bits(p.z()) == bits(q.z());
  };
  return same(a.position(), b.position()) && same(a.velocity(), b.velocity()) &&
         same(a.ground_normal(), b.ground_normal()) && a.ground_entity() == b.ground_entity() &&
         a.ground_brush() == b.ground_brush() && a.flags() == b.flags();
}

float random_float(std::mt19937& rng) {
  switch (rng() % 6) {
    case 0:
      return 0.0f;
    case 1:
      return -0.0f;
    case 2:
      return std::bit_cast<float>(static_cast<std::uint32_t>(rng()));  // any pattern, NaNs included
    case 3:
      return 1.0f;
    default:
      return std::uniform_real_distribution<float>(-4096, 4096)(rng);
  }
}

wire::OwnState random_state(std::mt19937& rng) {
  const auto vec = [&] { return wire::Vec3f(random_float(rng), random_float(rng), random_float(rng)); };
  wire::Vec3f normal = vec();
  if (rng() % 3 == 0) normal = wire::Vec3f(0, 0, 1);
  if (rng() % 3 == 0) normal = wire::Vec3f(0, 0, 0);
  const std::uint32_t entity = rng() % 2 ? 0 : static_cast<std::uint32_t>(rng() >> (rng() % 32));
  const std::int32_t brush = rng() % 2 ? -1 : static_cast<std::int32_t>(rng());
  return wire::OwnState(vec(), vec(), normal, entity, brush,
                        static_cast<std::uint8_t>(rng() % 4 ? rng() % 4 : rng()));
}

std::vector<std::uint8_t> packed(const wire::OwnState& s) {
  BitWriter w;
  write_own_state(w, s);
  return {w.bytes().begin(), w.bytes().end()};
}

std::optional<wire::OwnState> unpacked(const std::vector<std::uint8_t>& bytes) {
  BitReader in(bytes);
  std::optional<wire::OwnState> s = read_own_state(in);
  if (!s || in.finish() != BitReadError::kNone) return std::nullopt;
  return s;
}

TEST(OwnStateCodec, EveryStateComesBackBitForBit) {
  std::mt19937 rng(48);
  for (int round = 0; round < 20000; ++round) {
    const wire::OwnState s = random_state(rng);
    const auto back = unpacked(packed(s));
    ASSERT_TRUE(back.has_value()) << round;
    ASSERT_TRUE(identical(*back, s)) << round;
  }
}

TEST(OwnStateCodec, APlayerRunningOnFlatGroundTakesUnderHalfTheOldStruct) {
  // On ground, moving in the plane, no platform, on a brush: flags, position, two velocity components,
  // "up", no entity, a brush id under 255.
  const wire::OwnState running(wire::Vec3f(100.5f, -20.25f, 24), wire::Vec3f(320, -12.5f, 0),
                               wire::Vec3f(0, 0, 1), 0, 17, 1);
  const std::size_t bytes = packed(running).size();
  EXPECT_LE(bytes, 23u);  // 3 + 96 + 33 + 33 + 1 + 2 + 1 + 10 = 179 bits
  EXPECT_LT(bytes * 2, sizeof(wire::OwnState));
  // In the air: zero normal, no brush.
  const wire::OwnState flying(wire::Vec3f(1, 2, 3), wire::Vec3f(0, 0, -200), wire::Vec3f(0, 0, 0), 0, -1, 0);
  EXPECT_EQ(packed(flying).size(), (3u + 96 + 1 + 1 + 33 + 2 + 1 + 1 + 7) / 8);
}

TEST(OwnStateCodec, UntrustedBitsDecodeToTheirOneEncodingOrAreRefused) {
  std::mt19937 rng(49);
  int decoded = 0, refused = 0;
  for (int round = 0; round < 20000; ++round) {
    std::vector<std::uint8_t> bytes = packed(random_state(rng));
    if (round % 3 == 0) {
      bytes.resize(rng() % bytes.size());  // a truncation: always refused
      EXPECT_FALSE(unpacked(bytes).has_value()) << round;
      continue;
    }
    for (std::uint32_t flips = 1 + rng() % 2; flips > 0; --flips) {
      const std::size_t bit = rng() % (bytes.size() * 8);
      bytes[bit / 8] = static_cast<std::uint8_t>(bytes[bit / 8] ^ (1u << (bit % 8)));
    }
    const auto s = unpacked(bytes);
    if (!s) {
      ++refused;
      continue;
    }
    ++decoded;
    ASSERT_EQ(packed(*s), bytes) << round;
  }
  EXPECT_GT(decoded, 1000);
  EXPECT_GT(refused, 100);
}

TEST(OwnStateCodec, ShortFormsWrittenLongAreRefused) {
  {
    BitWriter w;  // the up normal written as three explicit floats
    w.write_tiered(0, kOwnFlagTiers);
    for (int i = 0; i < 3; ++i)
      w.write_bits(0, 32);
    for (int i = 0; i < 3; ++i)
      w.write_bool(false);
    w.write_bits(kNormalExplicit, 2);
    w.write_bits(0, 32);
    w.write_bits(0, 32);
    w.write_bits(std::bit_cast<std::uint32_t>(1.0f), 32);
    w.write_tiered(0, kGroundIdTiers);
    w.write_tiered(0, kGroundIdTiers);
    BitReader in(w.bytes());
    EXPECT_FALSE(read_own_state(in).has_value());
  }
  {
    BitWriter w;  // a velocity component flagged non-zero with +0 bits, and normal form 3
    w.write_tiered(0, kOwnFlagTiers);
    for (int i = 0; i < 3; ++i)
      w.write_bits(0, 32);
    w.write_bool(true);
    w.write_bits(0, 32);
    w.write_bool(false);
    w.write_bool(false);
    w.write_bits(kNormalZero, 2);
    w.write_tiered(0, kGroundIdTiers);
    w.write_tiered(0, kGroundIdTiers);
    BitReader in(w.bytes());
    EXPECT_FALSE(read_own_state(in).has_value());
  }
  {
    BitWriter w;
    w.write_tiered(0, kOwnFlagTiers);
    for (int i = 0; i < 3; ++i)
      w.write_bits(0, 32);
    for (int i = 0; i < 3; ++i)
      w.write_bool(false);
    w.write_bits(3, 2);
    w.write_tiered(0, kGroundIdTiers);
    w.write_tiered(0, kGroundIdTiers);
    BitReader in(w.bytes());
    EXPECT_FALSE(read_own_state(in).has_value());
  }
}

// The bound a frame reserves for the own state (kMaxOwnStateBytes) is reached by the widest state and
// never passed by any random one: every field in its widest form.
TEST(OwnStateCodec, TheWidestStateFillsTheReservedBoundExactly) {
  const float wide = std::bit_cast<float>(0x7f7fffffu);  // no field has a short form for it
  const wire::OwnState widest(wire::Vec3f(wide, wide, wide), wire::Vec3f(wide, wide, wide),
                              wire::Vec3f(wide, wide, wide), 0xffffffffu, 0x7ffffffe, 0xff);
  EXPECT_EQ(packed(widest).size(), kMaxOwnStateBytes);
  std::mt19937 rng(77);
  for (int i = 0; i < 20000; ++i)
    ASSERT_LE(packed(random_state(rng)).size(), kMaxOwnStateBytes);
}

}  // namespace
}  // namespace shiftcast
