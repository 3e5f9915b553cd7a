// The own state's bit packing: every state comes back bit for bit (floats as IEEE-754 patterns: -0, NaN
// payloads and infinities included), the usual ones are small, and untrusted bits either decode to the
// one encoding of what they decode to or are refused.
#include "protocol/own_state_codec.hpp"

#include "protocol/snapshot_delta.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
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

// Whole, or relative to `reference` (the snapshot's own entity).
std::vector<std::uint8_t> packed(const wire::OwnState& s, const wire::QuantizedVec* reference = nullptr) {
  BitWriter w;
  write_own_state(w, s, reference);
  return {w.bytes().begin(), w.bytes().end()};
}

std::optional<wire::OwnState> unpacked(const std::vector<std::uint8_t>& bytes,
                                       const wire::QuantizedVec* reference = nullptr) {
  BitReader in(bytes);
  std::optional<OwnStateBits> s = read_own_state(in);
  if (!s || in.finish() != BitReadError::kNone) return std::nullopt;
  const ResolvedOwnState resolved = resolve_own_state(*s, reference);
  EXPECT_EQ(resolved.error, wire::ErrorCode::Ok);
  return resolved.state;
}

// The quantized position of `p` (what the snapshot's own entity holds), moved by up to `off` quanta and
// kept in the int32 range (a huge or infinite coordinate quantizes to its edge).
wire::QuantizedVec reference_near(const wire::Vec3f& p, int off, std::mt19937& rng) {
  const auto q = [&](float c) {
    const std::int64_t moved =
        std::int64_t{quantize_coordinate(c)} + std::int64_t(rng() % (2 * off + 1)) - off;
    return static_cast<std::int32_t>(std::clamp<std::int64_t>(moved, std::numeric_limits<std::int32_t>::min(),
                                                              std::numeric_limits<std::int32_t>::max()));
  };
  return wire::QuantizedVec(q(p.x()), q(p.y()), q(p.z()));
}

TEST(OwnStateCodec, EveryStateComesBackBitForBit) {
  std::mt19937 rng(48);
  for (int round = 0; round < 20000; ++round) {
    const wire::OwnState s = random_state(rng);
    const auto back = unpacked(packed(s));
    ASSERT_TRUE(back.has_value()) << round;
    ASSERT_TRUE(identical(*back, s)) << round;
    // Relative to a reference near it, or anywhere (NaN, -0 and infinities have no near one).
    const wire::QuantizedVec reference =
        round % 2 ? reference_near(s.position(), 2, rng)
                  : wire::QuantizedVec(std::int32_t(rng()), std::int32_t(rng()), std::int32_t(rng()));
    const auto relative = unpacked(packed(s, &reference), &reference);
    ASSERT_TRUE(relative.has_value()) << round;
    ASSERT_TRUE(identical(*relative, s)) << round;
  }
}

// The relative form needs the snapshot: without its own entity the state is not resolved (a client then
// waits for the next frame), and the whole form needs nothing.
TEST(OwnStateCodec, ARelativeStateResolvesOnlyAgainstItsSnapshot) {
  const wire::OwnState s(wire::Vec3f(100.5f, -20.25f, 24), wire::Vec3f(320, -12.5f, 0), wire::Vec3f(0, 0, 1),
                         0, 17, 1);
  const wire::QuantizedVec reference = quantize_position(s.position());
  const std::vector<std::uint8_t> bytes = packed(s, &reference);
  BitReader in(bytes);
  const std::optional<OwnStateBits> read = read_own_state(in);
  ASSERT_TRUE(read.has_value());
  EXPECT_TRUE(read->relative[0] && read->relative[1] && read->relative[2]);
  const ResolvedOwnState unresolved = resolve_own_state(*read, nullptr);
  EXPECT_EQ(unresolved.error, wire::ErrorCode::Ok);
  EXPECT_FALSE(unresolved.state.has_value());
  const ResolvedOwnState resolved = resolve_own_state(*read, &reference);
  ASSERT_TRUE(resolved.state.has_value());
  EXPECT_TRUE(identical(*resolved.state, s));
  // Against another reference it resolves to another position, exactly as far off in float patterns.
  const wire::QuantizedVec other(reference.x() + 1, reference.y(), reference.z());
  const ResolvedOwnState moved = resolve_own_state(*read, &other);
  ASSERT_TRUE(moved.state.has_value());
  EXPECT_EQ(moved.state->position().x(), 100.5f + 1.0f / 16);
}

// Which form a coordinate takes is fixed: relative exactly when its residual fits the tiers. Near the
// origin floats are dense, so a coordinate of a few thousandths of a unit goes whole; and a whole
// coordinate that would have fitted is refused once the reference is known (one encoding per state).
TEST(OwnStateCodec, ACoordinateIsRelativeExactlyWhenItsResidualFits) {
  const wire::OwnState s(wire::Vec3f(1500.3f, 0.001f, -0.0f), wire::Vec3f(0, 0, 0), wire::Vec3f(0, 0, 0), 0,
                         -1, 0);
  const wire::QuantizedVec reference = quantize_position(s.position());  // (24005, 0, 0)
  const std::vector<std::uint8_t> bytes = packed(s, &reference);
  BitReader in(bytes);
  const std::optional<OwnStateBits> read = read_own_state(in);
  ASSERT_TRUE(read.has_value());
  // 0.001 is 0x3a83126f, about 2^30 patterns from +0; -0 is 2^31 from it: both whole.
  EXPECT_TRUE(read->relative[0]);
  EXPECT_FALSE(read->relative[1]);
  EXPECT_FALSE(read->relative[2]);
  const auto back = unpacked(bytes, &reference);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(identical(*back, s));
  // The same state written whole throughout, read against the reference: x would have fitted.
  const std::vector<std::uint8_t> whole_bytes = packed(s);
  BitReader whole(whole_bytes);
  const std::optional<OwnStateBits> whole_read = read_own_state(whole);
  ASSERT_TRUE(whole_read.has_value());
  EXPECT_EQ(resolve_own_state(*whole_read, &reference).error, wire::ErrorCode::Malformed);
  EXPECT_TRUE(resolve_own_state(*whole_read, nullptr).state.has_value());
}

// Closed form of the residual: a coordinate c in [2^k, 2^(k+1)) units and its reference (quanta / 16,
// within half a quantum, so in the same binade when c stays below 1.9 x 2^k) are (c - reference) / 2^(k - 23)
// float patterns apart, at most 2^(18 - k); its zig-zag code takes the narrowest tier of kOwnResidualTiers
// that holds it.
TEST(OwnStateCodec, APositionNearItsQuantumCostsTheClosedFormBits) {
  std::mt19937 rng(50);
  // A form bit, then the narrowest tier (its selector and width), or 32 bits whole when none holds it.
  const auto coordinate_cost = [](std::uint64_t code) {
    for (std::size_t t = 0; t < kOwnResidualTiers.size(); ++t) {
      if (code < (std::uint64_t{1} << kOwnResidualTiers[t]))
        return 1 + kOwnResidualTiers[t] + t + (t + 1 < kOwnResidualTiers.size() ? 1 : 0);
    }
    return std::size_t{33};
  };
  for (int k = 0; k <= 12; ++k) {
    for (int round = 0; round < 200; ++round) {
      float c[3];
      for (float& v : c) {
        const float m = std::ldexp(1.0f, k) * std::uniform_real_distribution<float>(1.0f, 1.9f)(rng);
        v = rng() % 2 ? m : -m;
      }
      const wire::OwnState s(wire::Vec3f(c[0], c[1], c[2]), wire::Vec3f(0, 0, 0), wire::Vec3f(0, 0, 0), 0, -1,
                             0);
      const wire::QuantizedVec reference = quantize_position(s.position());
      const std::int32_t q[3] = {reference.x(), reference.y(), reference.z()};
      std::size_t bits = 3 + 3 + 2 + 1 + 1;  // flags, three zero velocities, normal, two ids
      for (int i = 0; i < 3; ++i) {
        const double patterns = (double(c[i]) - double(q[i]) / 16) / std::ldexp(1.0, k - 23);
        const auto r = static_cast<std::int64_t>(c[i] < 0 ? -patterns : patterns);  // bits grow with |c|
        ASSERT_LE(std::abs(r), std::int64_t{1} << (18 - k));
        bits += coordinate_cost(r < 0 ? std::uint64_t(-2 * r - 1) : std::uint64_t(2 * r));
      }
      BitWriter relative, whole;
      write_own_state(relative, s, &reference);
      write_own_state(whole, s);
      ASSERT_EQ(relative.bit_count(), bits) << "k " << k << " c " << c[0] << " " << c[1] << " " << c[2];
      ASSERT_EQ(whole.bit_count(), 3u + 3 * 33 + 3 + 2 + 1 + 1);
      ASSERT_LT(relative.bit_count(), whole.bit_count()) << k;
    }
  }
}

TEST(OwnStateCodec, APlayerRunningOnFlatGroundTakesUnderHalfTheOldStruct) {
  // On ground, moving in the plane, no platform, on a brush: flags, position, two velocity components,
  // "up", no entity, a brush id under 255.
  const wire::OwnState running(wire::Vec3f(100.5f, -20.25f, 24), wire::Vec3f(320, -12.5f, 0),
                               wire::Vec3f(0, 0, 1), 0, 17, 1);
  const std::size_t bytes = packed(running).size();
  EXPECT_LE(bytes, 23u);  // 3 + 3 x 33 + 33 + 33 + 1 + 2 + 1 + 10 = 182 bits
  EXPECT_LT(bytes * 2, sizeof(wire::OwnState));
  // Relative to the snapshot's own entity, on its quanta: a residual of 0 costs 1 + 9 bits (182 - 99 + 30).
  const wire::QuantizedVec on_quantum = quantize_position(running.position());
  EXPECT_EQ(packed(running, &on_quantum).size(), (182u - 99 + 30 + 7) / 8);
  // In the air: zero normal, no brush.
  const wire::OwnState flying(wire::Vec3f(1, 2, 3), wire::Vec3f(0, 0, -200), wire::Vec3f(0, 0, 0), 0, -1, 0);
  EXPECT_EQ(packed(flying).size(), (3u + 99 + 1 + 1 + 33 + 2 + 1 + 1 + 7) / 8);
}

TEST(OwnStateCodec, UntrustedBitsDecodeToTheirOneEncodingOrAreRefused) {
  std::mt19937 rng(49);
  int decoded = 0, refused = 0;
  const wire::QuantizedVec reference(1600, -320, 384);
  for (int round = 0; round < 20000; ++round) {
    const wire::OwnState state = random_state(rng);
    std::vector<std::uint8_t> bytes = packed(state, round % 2 ? &reference : nullptr);
    if (round % 3 == 0) {
      bytes.resize(rng() % bytes.size());  // a truncation: always refused
      EXPECT_FALSE(unpacked(bytes).has_value()) << round;
      continue;
    }
    for (std::uint32_t flips = 1 + rng() % 2; flips > 0; --flips) {
      const std::size_t bit = rng() % (bytes.size() * 8);
      bytes[bit / 8] = static_cast<std::uint8_t>(bytes[bit / 8] ^ (1u << (bit % 8)));
    }
    // A flip may turn the form bit: the state re-encodes in the form it was read in.
    BitReader in(bytes);
    const std::optional<OwnStateBits> read = read_own_state(in);
    if (!read || in.finish() != BitReadError::kNone) {
      ++refused;
      continue;
    }
    // Read against the reference when a coordinate is relative: a whole one that would have fitted is
    // refused then; what resolves re-encodes to these very bytes.
    const wire::QuantizedVec* against = read->any_relative() ? &reference : nullptr;
    const ResolvedOwnState s = resolve_own_state(*read, against);
    if (!s.state) {
      ASSERT_EQ(s.error, wire::ErrorCode::Malformed) << round;
      ++refused;
      continue;
    }
    ++decoded;
    ASSERT_EQ(packed(*s.state, against), bytes) << round;
  }
  EXPECT_GT(decoded, 1000);
  EXPECT_GT(refused, 100);
}

TEST(OwnStateCodec, ShortFormsWrittenLongAreRefused) {
  {
    BitWriter w;  // the up normal written as three explicit floats
    w.write_tiered(0, kOwnFlagTiers);
    for (int i = 0; i < 3; ++i) {
      w.write_bool(false);  // the coordinate whole
      w.write_bits(0, 32);
    }
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
    for (int i = 0; i < 3; ++i) {
      w.write_bool(false);  // the coordinate whole
      w.write_bits(0, 32);
    }
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
    for (int i = 0; i < 3; ++i) {
      w.write_bool(false);  // the coordinate whole
      w.write_bits(0, 32);
    }
    for (int i = 0; i < 3; ++i)
      w.write_bool(false);
    w.write_bits(3, 2);
    w.write_tiered(0, kGroundIdTiers);
    w.write_tiered(0, kGroundIdTiers);
    BitReader in(w.bytes());
    EXPECT_FALSE(read_own_state(in).has_value());
  }
  {
    BitWriter w;  // a residual of 0 written in the 10-bit tier: not its shortest form
    w.write_tiered(0, kOwnFlagTiers);
    w.write_bool(true);
    w.write_bits(0b01, 2);  // selector of the second tier
    w.write_bits(0, 10);
    for (int i = 0; i < 2; ++i) {
      w.write_bool(true);
      w.write_tiered_signed(0, kOwnResidualTiers);
    }
    for (int i = 0; i < 3; ++i)
      w.write_bool(false);
    w.write_bits(kNormalZero, 2);
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
  // Relative to a reference far from it, every coordinate goes whole: the same size.
  const wire::QuantizedVec origin(0, 0, 0);
  EXPECT_EQ(packed(widest, &origin).size(), kMaxOwnStateBytes);
  std::mt19937 rng(77);
  for (int i = 0; i < 20000; ++i) {
    const wire::QuantizedVec anywhere{std::int32_t(rng()), std::int32_t(rng()), std::int32_t(rng())};
    ASSERT_LE(packed(random_state(rng), i % 2 ? &anywhere : nullptr).size(), kMaxOwnStateBytes);
  }
}

}  // namespace
}  // namespace shiftcast
