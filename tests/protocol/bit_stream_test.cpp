#include "protocol/bit_stream.hpp"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <vector>

namespace shiftcast {
namespace {

// The oracle: the stream as a string of '0'/'1', one character per bit in stream order, built from the
// written standard's rules in their plainest form (a field's least significant bit first; bit i of the
// stream is bit i % 8 of byte i / 8).
struct BitString {
  std::string bits;

  void field(std::uint64_t value, unsigned width) {
    for (unsigned i = 0; i < width; ++i)
      bits.push_back(((value >> i) & 1) != 0 ? '1' : '0');
  }
  void varuint(std::uint64_t value, unsigned group) {
    // Groups needed: the smallest count whose total width holds the value, at least one.
    unsigned groups = 1;
    while (groups * group < 64 && (value >> (groups * group)) != 0)
      ++groups;
    for (unsigned g = 0; g < groups; ++g) {
      bits.push_back(g + 1 < groups ? '1' : '0');
      field(g * group < 64 ? value >> (g * group) : 0, group);
    }
  }
  void tiered(std::uint64_t value, const std::vector<unsigned>& widths) {
    std::size_t tier = 0;
    while (tier + 1 < widths.size() && widths[tier] < 64 && (value >> widths[tier]) != 0)
      ++tier;
    bits.append(tier, '1');
    if (tier + 1 < widths.size()) bits.push_back('0');
    field(value, widths[tier]);
  }
  std::vector<std::uint8_t> bytes() const {
    std::vector<std::uint8_t> out((bits.size() + 7) / 8, 0);
    for (std::size_t i = 0; i < bits.size(); ++i) {
      if (bits[i] == '1') out[i / 8] = static_cast<std::uint8_t>(out[i / 8] | (1u << (i % 8)));
    }
    return out;
  }
};

std::uint64_t mask(unsigned width) {
  return width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
}

enum class FieldKind { kBits, kSigned, kVaruint, kVarint, kTiered, kTieredSigned };

struct Field {
  FieldKind kind;
  unsigned width;  // bits, or group bits
  std::uint64_t value;
  std::int64_t signed_value;
};

const std::vector<unsigned> kTiers = {2, 5, 12, 64};

// A random value whose magnitude is spread over every width, not clustered near 2^64.
std::uint64_t spread_value(std::mt19937_64& rng, unsigned max_width) {
  const unsigned width = static_cast<unsigned>(rng() % (max_width + 1));
  return rng() & mask(width);
}

std::vector<Field> random_fields(std::mt19937_64& rng, int count) {
  std::vector<Field> out;
  for (int i = 0; i < count; ++i) {
    Field f{static_cast<FieldKind>(rng() % 6), 0, 0, 0};
    switch (f.kind) {
      case FieldKind::kBits:
        f.width = static_cast<unsigned>(rng() % 65);
        f.value = spread_value(rng, f.width);
        break;
      case FieldKind::kSigned: {
        f.width = 1 + static_cast<unsigned>(rng() % 64);
        const std::uint64_t z = spread_value(rng, f.width);
        f.signed_value = zigzag_decode(z);
        break;
      }
      case FieldKind::kVaruint:
        f.width = 1 + static_cast<unsigned>(rng() % 12);
        f.value = spread_value(rng, 64);
        break;
      case FieldKind::kVarint:
        f.width = 1 + static_cast<unsigned>(rng() % 12);
        f.signed_value = zigzag_decode(spread_value(rng, 64));
        break;
      case FieldKind::kTiered:
        f.value = spread_value(rng, 64);
        break;
      case FieldKind::kTieredSigned:
        f.signed_value = zigzag_decode(spread_value(rng, 64));
        break;
    }
    out.push_back(f);
  }
  return out;
}

void write_field(BitWriter& w, BitString& oracle, const Field& f) {
  switch (f.kind) {
    case FieldKind::kBits:
      w.write_bits(f.value, f.width);
      oracle.field(f.value, f.width);
      break;
    case FieldKind::kSigned:
      w.write_signed(f.signed_value, f.width);
      // Zig-zag by its definition: non-negative n -> 2n, negative n -> -2n - 1.
      oracle.field(f.signed_value >= 0 ? 2 * static_cast<std::uint64_t>(f.signed_value)
                                       : 2 * (~static_cast<std::uint64_t>(f.signed_value)) + 1,
                   f.width);
      break;
    case FieldKind::kVaruint:
      w.write_varuint(f.value, f.width);
      oracle.varuint(f.value, f.width);
      break;
    case FieldKind::kVarint:
      w.write_varint(f.signed_value, f.width);
      oracle.varuint(zigzag_encode(f.signed_value), f.width);
      break;
    case FieldKind::kTiered:
      w.write_tiered(f.value, kTiers);
      oracle.tiered(f.value, kTiers);
      break;
    case FieldKind::kTieredSigned:
      w.write_tiered_signed(f.signed_value, kTiers);
      oracle.tiered(zigzag_encode(f.signed_value), kTiers);
      break;
  }
}

// Whether the next read of `f`'s kind gives back `f`'s value.
bool read_matches(BitReader& r, const Field& f) {
  switch (f.kind) {
    case FieldKind::kBits:
      return r.read_bits(f.width) == f.value;
    case FieldKind::kSigned:
      return r.read_signed(f.width) == f.signed_value;
    case FieldKind::kVaruint:
      return r.read_varuint(f.width) == f.value;
    case FieldKind::kVarint:
      return r.read_varint(f.width) == f.signed_value;
    case FieldKind::kTiered:
      return r.read_tiered(kTiers) == f.value;
    case FieldKind::kTieredSigned:
      return r.read_tiered_signed(kTiers) == f.signed_value;
  }
  return false;
}

TEST(BitStream, RandomFieldSequencesMatchTheBitStringOracleAndReadBack) {
  std::mt19937_64 rng(15);
  for (int round = 0; round < 300; ++round) {
    const std::vector<Field> fields = random_fields(rng, 1 + static_cast<int>(rng() % 40));
    BitWriter w;
    BitString oracle;
    for (const Field& f : fields)
      write_field(w, oracle, f);
    ASSERT_EQ(w.bit_count(), oracle.bits.size()) << "round " << round;
    const std::vector<std::uint8_t> expected = oracle.bytes();
    ASSERT_EQ(std::vector<std::uint8_t>(w.bytes().begin(), w.bytes().end()), expected) << "round " << round;

    // Read from an odd address: the reader assumes no alignment.
    std::vector<std::uint8_t> shifted(expected.size() + 1);
    std::copy(expected.begin(), expected.end(), shifted.begin() + 1);
    BitReader r(std::span<const std::uint8_t>(shifted).subspan(1));
    for (std::size_t i = 0; i < fields.size(); ++i)
      EXPECT_TRUE(read_matches(r, fields[i])) << "round " << round << " field " << i;
    EXPECT_EQ(r.bits_read(), oracle.bits.size());
    EXPECT_EQ(r.finish(), BitReadError::kNone) << "round " << round;
  }
}

// One writer reused through clear() for every round, as a connection reuses its scratch writer: each
// round's bytes are the oracle's, whatever longer stream the writer held before.
TEST(BitStream, AClearedWriterWritesAsANewOne) {
  std::mt19937_64 rng(17);
  BitWriter reused;
  for (int round = 0; round < 300; ++round) {
    const std::vector<Field> fields = random_fields(rng, 1 + static_cast<int>(rng() % 40));
    reused.clear();
    EXPECT_EQ(reused.bit_count(), 0u);
    EXPECT_TRUE(reused.bytes().empty());
    BitString oracle;
    for (const Field& f : fields)
      write_field(reused, oracle, f);
    ASSERT_EQ(std::vector<std::uint8_t>(reused.bytes().begin(), reused.bytes().end()), oracle.bytes())
        << "round " << round;
  }
}

TEST(BitStream, CostFunctionsMatchWhatIsWritten) {
  std::mt19937_64 rng(16);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t v = spread_value(rng, 64);
    const unsigned group = 1 + static_cast<unsigned>(rng() % 16);
    BitWriter a, b;
    a.write_varuint(v, group);
    b.write_tiered(v, kTiers);
    EXPECT_EQ(varuint_bits(v, group), a.bit_count());
    EXPECT_EQ(tiered_bits(v, kTiers), b.bit_count());
  }
}

TEST(BitStream, ZigZagMapsSmallMagnitudesToSmallCodes) {
  EXPECT_EQ(zigzag_encode(0), 0u);
  EXPECT_EQ(zigzag_encode(-1), 1u);
  EXPECT_EQ(zigzag_encode(1), 2u);
  EXPECT_EQ(zigzag_encode(-2), 3u);
  EXPECT_EQ(zigzag_encode(INT64_MIN), ~std::uint64_t{0});
  EXPECT_EQ(zigzag_decode(~std::uint64_t{0}), INT64_MIN);
  EXPECT_EQ(zigzag_decode(zigzag_encode(INT64_MAX)), INT64_MAX);
}

TEST(BitStream, EveryTruncationOfAMessageIsPastEndNeverAWrongValue) {
  std::mt19937_64 rng(17);
  for (int round = 0; round < 100; ++round) {
    const std::vector<Field> fields = random_fields(rng, 1 + static_cast<int>(rng() % 20));
    BitWriter w;
    BitString oracle;
    for (const Field& f : fields)
      write_field(w, oracle, f);
    const std::vector<std::uint8_t> whole(w.bytes().begin(), w.bytes().end());
    for (std::size_t cut = 0; cut < whole.size(); ++cut) {
      // A heap copy of exactly `cut` bytes: ASan sees any read past it.
      std::vector<std::uint8_t> part(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cut));
      BitReader r(part);
      for (const Field& f : fields) {
        const bool matches = read_matches(r, f);
        if (!r.ok()) break;
        EXPECT_TRUE(matches) << "round " << round << " cut " << cut;  // a read that stayed ok is right
      }
      EXPECT_EQ(r.finish(), BitReadError::kPastEnd) << "round " << round << " cut " << cut;
      EXPECT_LE(r.bits_read(), cut * 8);
    }
  }
}

TEST(BitStream, AfterAnErrorEveryReadIsZeroAndConsumesNothing) {
  const std::array<std::uint8_t, 1> one = {0xff};
  BitReader r(one);
  EXPECT_EQ(r.read_bits(9), 0u);
  EXPECT_EQ(r.error(), BitReadError::kPastEnd);
  EXPECT_EQ(r.read_bits(1), 0u);
  EXPECT_EQ(r.read_varuint(3), 0u);
  EXPECT_EQ(r.bits_read(), 0u);
}

TEST(BitStream, FinishRejectsLeftoverBytesAndNonZeroPadding) {
  BitWriter w;
  w.write_bits(5, 3);
  {
    BitReader r(w.bytes());
    EXPECT_EQ(r.read_bits(3), 5u);
    EXPECT_EQ(r.finish(), BitReadError::kNone);
  }
  {
    const std::array<std::uint8_t, 1> padded_with_one = {static_cast<std::uint8_t>(5 | 0x80)};
    BitReader r(padded_with_one);
    EXPECT_EQ(r.read_bits(3), 5u);
    EXPECT_EQ(r.finish(), BitReadError::kTrailingBits);
  }
  {
    const std::array<std::uint8_t, 2> extra_byte = {5, 0};
    BitReader r(extra_byte);
    EXPECT_EQ(r.read_bits(3), 5u);
    EXPECT_EQ(r.finish(), BitReadError::kTrailingBits);
  }
}

TEST(BitStream, NonShortestVariableLengthFormsAreOverlong) {
  {
    // varuint, 4-bit groups: 3 written as two groups (3, then a zero group).
    BitString s;
    s.field(1, 1);
    s.field(3, 4);
    s.field(0, 1);
    s.field(0, 4);
    const auto bytes = s.bytes();
    BitReader r(bytes);
    EXPECT_EQ(r.read_varuint(4), 0u);
    EXPECT_EQ(r.error(), BitReadError::kOverlong);
  }
  {
    // varuint, 8-bit groups: nine groups all with the continuation bit (more than 64 bits).
    BitString s;
    for (int g = 0; g < 9; ++g) {
      s.field(1, 1);
      s.field(0xff, 8);
    }
    s.field(0, 1);
    s.field(1, 8);
    const auto bytes = s.bytes();
    BitReader r(bytes);
    r.read_varuint(8);
    EXPECT_EQ(r.error(), BitReadError::kOverlong);
  }
  {
    // varuint, 7-bit groups: the tenth group may carry only bit 63.
    BitString s;
    for (int g = 0; g < 9; ++g) {
      s.field(1, 1);
      s.field(0x7f, 7);
    }
    s.field(0, 1);
    s.field(2, 7);
    const auto bytes = s.bytes();
    BitReader r(bytes);
    r.read_varuint(7);
    EXPECT_EQ(r.error(), BitReadError::kOverlong);
  }
  {
    // tiered {2, 5, 12, 64}: 3 (fits 2 bits) announced as the 5-bit tier.
    BitString s;
    s.field(1, 1);
    s.field(0, 1);
    s.field(3, 5);
    const auto bytes = s.bytes();
    BitReader r(bytes);
    EXPECT_EQ(r.read_tiered(kTiers), 0u);
    EXPECT_EQ(r.error(), BitReadError::kOverlong);
  }
}

TEST(BitStream, MaximumVaruintRoundTripsForEveryGroupWidth) {
  for (unsigned group = 1; group <= 64; ++group) {
    for (const std::uint64_t v : {std::uint64_t{0}, ~std::uint64_t{0}, std::uint64_t{1} << 63}) {
      BitWriter w;
      w.write_varuint(v, group);
      BitReader r(w.bytes());
      EXPECT_EQ(r.read_varuint(group), v) << group;
      EXPECT_EQ(r.finish(), BitReadError::kNone) << group;
    }
  }
}

}  // namespace
}  // namespace shiftcast
