// Contact events bit-packed (the ServerFrame's events section): every list comes back as its quantized
// self, read by the library and by a brute-force decoder written here from docs/protocol.md's table alone;
// what is read is within half a step of what was sent; the budget is exact; the usual event is small;
// untrusted bits are refused or are the one encoding of what they decode to.
#include "protocol/contact_event_codec.hpp"

#include "protocol/reliable_events.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <optional>
#include <random>
#include <vector>

namespace shiftcast {
namespace {

using Bytes = std::vector<std::uint8_t>;
constexpr std::size_t kNoBudget = std::size_t{1} << 20;

std::uint32_t bits(float v) {
  return std::bit_cast<std::uint32_t>(v);
}

// The oracle's comparison: every field, floats by their bits.
bool identical(const wire::ContactEvent& a, const wire::ContactEvent& b) {
  const auto same = [](const wire::Vec3f& p, const wire::Vec3f& q) {
    return bits(p.x()) == bits(q.x()) && bits(p.y()) == bits(q.y()) && bits(p.z()) == bits(q.z());
  };
  return a.sequence() == b.sequence() && a.tick() == b.tick() && bits(a.time()) == bits(b.time()) &&
         a.phase() == b.phase() && a.a_kind() == b.a_kind() && a.b_kind() == b.b_kind() && a.a() == b.a() &&
         a.b() == b.b() && a.brush() == b.brush() && same(a.point(), b.point()) &&
         same(a.normal(), b.normal()) && bits(a.separation()) == bits(b.separation()) &&
         bits(a.relative_speed()) == bits(b.relative_speed());
}

// A second decoder, from the document's table: one bit at a time, no BitReader, no validation beyond
// running out of bytes (it is fed only what the writer wrote).
class BruteForce {
 public:
  explicit BruteForce(const Bytes& bytes) : bytes_(bytes) {}

  std::vector<wire::ContactEvent> list(std::uint64_t frame_tick) {
    std::vector<wire::ContactEvent> out;
    while (bit()) {
      std::uint64_t sequence =
          out.empty() ? tiered({8, 16, 32, 64}) : out.back().sequence() + 1 + tiered({0, 8, 64});
      const std::uint64_t zz = tiered({3, 8, 16, 64});
      const std::int64_t offset = static_cast<std::int64_t>(zz >> 1) ^ -static_cast<std::int64_t>(zz & 1);
      const std::uint64_t tick = frame_tick - static_cast<std::uint64_t>(offset);
      const float time = scaled(tiered({0, 9}), 256);
      const auto phase = static_cast<std::uint8_t>(tiered({2, 8}));
      const auto a_kind = static_cast<std::uint8_t>(tiered({2, 8}));
      const auto b_kind = static_cast<std::uint8_t>(tiered({2, 8}));
      const auto a = static_cast<std::uint32_t>(tiered({8, 16, 32}));
      const auto b = static_cast<std::uint32_t>(tiered({0, 8, 16, 32}));
      const auto brush = static_cast<std::int32_t>(static_cast<std::uint32_t>(tiered({0, 8, 16, 32})) - 1u);
      const wire::Vec3f point{position(), position(), position()};  // braces: read left to right
      const std::uint64_t form = field(3);
      wire::Vec3f normal(0, 0, 0);
      if (form == 6) {
        normal = wire::Vec3f{component(), component(), component()};
      } else {
        float n[3] = {0, 0, 0};
        n[form / 2] = form % 2 == 0 ? 1.0f : -1.0f;
        normal = wire::Vec3f(n[0], n[1], n[2]);
      }
      const float separation = scaled(zigzag(tiered({0, 6, 12, 32})), 256);
      const float speed = scaled(zigzag(tiered({0, 8, 12, 16, 32})), 4);
      out.emplace_back(sequence, tick, time, phase, a_kind, b_kind, a, b, brush, point, normal, separation,
                       speed);
    }
    return out;
  }

 private:
  bool bit() {
    const bool b = (bytes_.at(position_ / 8) >> (position_ % 8)) & 1;
    ++position_;
    return b;
  }
  std::uint64_t field(unsigned width) {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < width; ++i)
      v |= std::uint64_t{bit()} << i;
    return v;
  }
  std::uint64_t tiered(std::vector<unsigned> widths) {
    std::size_t tier = 0;
    while (tier + 1 < widths.size() && bit())
      ++tier;
    return field(widths[tier]);
  }
  static std::int64_t zigzag(std::uint64_t v) {
    return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
  }
  // The document: steps / steps-per-unit in double precision, then to the nearest float.
  static float scaled(std::int64_t steps, double per_unit) {
    return static_cast<float>(static_cast<double>(steps) / per_unit);
  }
  float position() { return scaled(zigzag(tiered({10, 14, 18, 22, 32})), 16); }
  float component() { return scaled(zigzag(field(10)), 511); }

  const Bytes& bytes_;
  std::size_t position_ = 0;
};

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
      return float(rng() >> 8) * 0x1p-24f * 8192 - 4096;
  }
}

std::uint64_t random_u64(std::mt19937& rng) {
  const std::uint64_t v = (std::uint64_t{rng()} << 32) | rng();
  return v >> (rng() % 64);
}

// A list as the server sends it (ascending; mostly consecutive, sometimes with a gap or absurd values).
std::vector<wire::ContactEvent> random_list(std::mt19937& rng, std::uint64_t frame_tick) {
  std::vector<wire::ContactEvent> out;
  const std::size_t count = rng() % 8;
  std::uint64_t sequence = rng() % 4 == 0 ? random_u64(rng) >> 1 : 1 + rng() % 5000;
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) sequence += 1 + (rng() % 5 == 0 ? rng() % 1000 : 0);
    const std::uint64_t tick = rng() % 5 == 0 ? random_u64(rng) : frame_tick - rng() % 40;
    const auto small = [&] { return static_cast<std::uint8_t>(rng() % 8 ? rng() % 4 : rng()); };
    wire::Vec3f normal(random_float(rng), random_float(rng), random_float(rng));
    const unsigned axis = rng() % 8;
    if (axis < 6) {
      float n[3] = {0, 0, 0};
      n[axis / 2] = axis % 2 == 0 ? 1.0f : -1.0f;
      normal = wire::Vec3f(n[0], n[1], n[2]);
    }
    const std::uint32_t b = rng() % 2 ? 0 : static_cast<std::uint32_t>(rng() >> (rng() % 32));
    const std::int32_t brush = rng() % 3 == 0 ? -1 : static_cast<std::int32_t>(rng() >> (rng() % 32));
    out.emplace_back(sequence, tick, random_float(rng), small(), small(), small(),
                     static_cast<std::uint32_t>(rng() >> (rng() % 32)), b, brush,
                     wire::Vec3f(random_float(rng), random_float(rng), random_float(rng)), normal,
                     random_float(rng), random_float(rng));
  }
  return out;
}

Bytes packed(const std::vector<wire::ContactEvent>& events, std::uint64_t frame_tick) {
  BitWriter w;
  EXPECT_EQ(write_contact_events(w, events, frame_tick, kNoBudget), events.size());
  return {w.bytes().begin(), w.bytes().end()};
}

std::optional<std::vector<wire::ContactEvent>> unpacked(const Bytes& bytes, std::uint64_t frame_tick) {
  BitReader in(bytes);
  auto events = read_contact_events(in, frame_tick);
  if (!events || in.finish() != BitReadError::kNone) return std::nullopt;
  return events;
}

TEST(ContactEventCodec, EveryListComesBackBitForBitAndTheBruteForceDecoderAgrees) {
  std::mt19937 rng(15);
  for (int round = 0; round < 5000; ++round) {
    const std::uint64_t frame_tick = rng() % 4 == 0 ? random_u64(rng) : 100 + rng() % 100000;
    const auto events = random_list(rng, frame_tick);
    const Bytes bytes = packed(events, frame_tick);
    const auto back = unpacked(bytes, frame_tick);
    ASSERT_TRUE(back.has_value()) << round;
    const auto brute = BruteForce(bytes).list(frame_tick);
    ASSERT_EQ(back->size(), events.size()) << round;
    ASSERT_EQ(brute.size(), events.size()) << round;
    for (std::size_t i = 0; i < events.size(); ++i) {
      const wire::ContactEvent sent = quantize_contact_event(events[i]);
      ASSERT_TRUE(identical((*back)[i], sent)) << round << " event " << i;
      ASSERT_TRUE(identical(brute[i], sent)) << round << " event " << i;
      ASSERT_TRUE(identical(quantize_contact_event(sent), sent)) << round << " event " << i;  // a fixed point
    }
  }
}

// Within half a step of what was sent, for values the steps can hold: the closed-form bound of rounding to
// nearest, checked on the decoded floats (so a wrong scale or a truncation shows).
TEST(ContactEventCodec, WhatIsReadIsWithinHalfAStepOfWhatWasSent) {
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> coordinate(-8192, 8192), unit(-1, 1), time(0, 1), speed(-4000, 4000),
      separation(-4, 4);
  std::vector<wire::ContactEvent> events;
  for (std::uint64_t s = 1; s <= 2000; ++s) {
    wire::Vec3f n(unit(rng), unit(rng), unit(rng));
    const float length = std::sqrt(n.x() * n.x() + n.y() * n.y() + n.z() * n.z());
    if (length > 1e-3f) n = wire::Vec3f(n.x() / length, n.y() / length, n.z() / length);
    events.emplace_back(s, 50, time(rng), 0, 0, 1, 7, 9, -1,
                        wire::Vec3f(coordinate(rng), coordinate(rng), coordinate(rng)), n, separation(rng),
                        speed(rng));
  }
  const auto back = unpacked(packed(events, 60), 60);
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->size(), events.size());
  // Half a step, plus the float rounding of the decoded value (an ulp at most at these magnitudes).
  const auto near = [](float got, float want, double step, float magnitude) {
    return std::abs(double(got) - double(want)) <= step / 2 + std::ldexp(1.0, std::ilogb(magnitude) - 23);
  };
  for (std::size_t i = 0; i < events.size(); ++i) {
    const wire::ContactEvent& e = events[i];
    const wire::ContactEvent& r = (*back)[i];
    EXPECT_TRUE(near(r.time(), e.time(), 1.0 / 256, 1)) << i;
    EXPECT_TRUE(near(r.point().x(), e.point().x(), 1.0 / 16, 8192)) << i;
    EXPECT_TRUE(near(r.point().y(), e.point().y(), 1.0 / 16, 8192)) << i;
    EXPECT_TRUE(near(r.point().z(), e.point().z(), 1.0 / 16, 8192)) << i;
    EXPECT_TRUE(near(r.normal().x(), e.normal().x(), 1.0 / 511, 1)) << i;
    EXPECT_TRUE(near(r.normal().y(), e.normal().y(), 1.0 / 511, 1)) << i;
    EXPECT_TRUE(near(r.normal().z(), e.normal().z(), 1.0 / 511, 1)) << i;
    EXPECT_TRUE(near(r.separation(), e.separation(), 1.0 / 256, 4)) << i;
    EXPECT_TRUE(near(r.relative_speed(), e.relative_speed(), 1.0 / 4, 4096)) << i;
    EXPECT_EQ(r.sequence(), e.sequence());
    EXPECT_EQ(r.a(), e.a());
    EXPECT_EQ(r.b(), e.b());
  }
}

TEST(ContactEventCodec, TheBudgetTakesTheLongestPrefixThatFits) {
  std::mt19937 rng(16);
  for (int round = 0; round < 2000; ++round) {
    const std::uint64_t frame_tick = 1000 + rng() % 1000;
    const auto events = random_list(rng, frame_tick);
    // The oracle: each prefix's exact size, written without a budget.
    std::vector<std::size_t> prefix_bits;
    for (std::size_t n = 0; n <= events.size(); ++n) {
      BitWriter w;
      write_contact_events(w, std::span(events).first(n), frame_tick, kNoBudget);
      prefix_bits.push_back(w.bit_count());
    }
    const std::size_t budget = rng() % (prefix_bits.back() + 8);
    BitWriter w;
    const std::size_t sent = write_contact_events(w, events, frame_tick, budget);
    std::size_t expected = 0;
    while (expected < events.size() && prefix_bits[expected + 1] <= budget)
      ++expected;
    ASSERT_EQ(sent, expected) << round;
    ASSERT_EQ(w.bit_count(), prefix_bits[sent]) << round;
    ASSERT_LE(w.bit_count(), std::max<std::size_t>(budget, 1)) << round;  // the end bit always
    if (!events.empty()) {
      ASSERT_LE(prefix_bits[1] - prefix_bits[0], kMaxContactEventBits);
    }
  }
}

TEST(ContactEventCodec, AResendOfConsecutiveEventsOnAnAxisTakesUnderAThirdOfTheStruct) {
  // The usual event: a player (id < 256) against a level brush, resting (time 0), separation 0,
  // normal +z, two snapshots after its tick, the next in sequence after the previous one.
  const wire::Vec3f point(1234.5f, -88.25f, 24.0f), up(0, 0, 1);
  const std::vector<wire::ContactEvent> events = {
      wire::ContactEvent(4000, 998, 0, 1, 0, 3, 17, 0, 412, point, up, 0, 0),
      wire::ContactEvent(4001, 998, 0, 1, 0, 3, 18, 0, 413, point, up, 0, 0)};
  BitWriter one, two;
  write_contact_events(one, std::span(events).first(1), 1000, kNoBudget);
  write_contact_events(two, events, 1000, kNoBudget);
  const std::size_t second = two.bit_count() - one.bit_count();
  RecordProperty("second_event_bits", static_cast<int>(second));
  EXPECT_LE(second * 3, kContactEventBytes * 8);
  // presence 1, gap 1, tick offset 1 + 3, time 1, phase and kinds 3 x 3, a 1 + 8, b 1, brush 414 in
  // 3 + 16, point 19752, -1412, 384 quanta (zig-zag 39504, 2823, 768) in 3 + 18, 2 + 14, 1 + 10, normal 3,
  // separation 1, speed 1.
  EXPECT_EQ(second, 1 + 1 + 4 + 1 + 9 + 9 + 1 + 19 + (21 + 16 + 11) + 3 + 1 + 1u);
}

// Any bytes, after a list: the library refuses them, or they are the one encoding of what it read.
void expect_refused_or_canonical(const Bytes& bytes, std::uint64_t frame_tick, int round) {
  const auto events = unpacked(bytes, frame_tick);
  if (!events) return;
  BitWriter again;
  ASSERT_EQ(write_contact_events(again, *events, frame_tick, bytes.size() * 8), events->size()) << round;
  ASSERT_EQ(Bytes(again.bytes().begin(), again.bytes().end()), bytes) << round;
}

TEST(ContactEventCodec, TruncatedListsAreRefused) {
  std::mt19937 rng(17);
  for (int round = 0; round < 500; ++round) {
    const std::uint64_t frame_tick = 100 + rng() % 1000;
    const Bytes bytes = packed(random_list(rng, frame_tick), frame_tick);
    for (std::size_t n = 0; n < bytes.size(); ++n)
      ASSERT_FALSE(unpacked(Bytes(bytes.begin(), bytes.begin() + n), frame_tick).has_value()) << round;
    Bytes longer = bytes;
    longer.push_back(0);
    ASSERT_FALSE(unpacked(longer, frame_tick).has_value()) << round;  // a whole byte of padding
  }
}

TEST(ContactEventCodec, FlippedBitsAreRefusedOrReEncodeToTheSameBytes) {
  std::mt19937 rng(18);
  for (int round = 0; round < 300; ++round) {
    const std::uint64_t frame_tick = 100 + rng() % 1000;
    const Bytes bytes = packed(random_list(rng, frame_tick), frame_tick);
    for (std::size_t bit = 0; bit < bytes.size() * 8; ++bit) {
      Bytes flipped = bytes;
      flipped[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
      expect_refused_or_canonical(flipped, frame_tick, round);
    }
    Bytes noise(rng() % 64);
    for (auto& b : noise)
      b = static_cast<std::uint8_t>(rng());
    expect_refused_or_canonical(noise, frame_tick, round);
  }
}

// One event up to its normal, as a conforming writer would write it; the caller writes the rest.
void write_head(BitWriter& w, std::uint64_t sequence, bool first, std::uint64_t time_steps = 0) {
  w.write_bool(true);
  if (first) {
    w.write_tiered(sequence, kEventFirstSequenceTiers);
  } else {
    w.write_tiered(sequence, kEventSequenceGapTiers);
  }
  w.write_tiered_signed(0, kEventTickOffsetTiers);
  w.write_tiered(time_steps, kEventTimeTiers);
  for (int i = 0; i < 3; ++i)
    w.write_tiered(0, kEventSmallTiers);
  w.write_tiered(1, kEventEntityTiers);
  w.write_tiered(0, kEventIdTiers);
  w.write_tiered(0, kEventIdTiers);
  for (int i = 0; i < 3; ++i)
    w.write_tiered_signed(0, kEventPointTiers);
}

bool refused(const BitWriter& w) {
  BitReader in(w.bytes());
  const auto events = read_contact_events(in, 10);
  return !events || in.finish() != BitReadError::kNone;
}

TEST(ContactEventCodec, ShortFormsWrittenLongAndWrappingSequencesAreRefused) {
  const auto up_then_end = [](BitWriter& w) {
    w.write_bits(4, kEventNormalFormBits);  // +z
    w.write_bool(false);                    // separation 0
    w.write_bool(false);                    // speed 0
  };
  {  // The control: a conforming event.
    BitWriter w;
    write_head(w, 1, true);
    up_then_end(w);
    w.write_bool(false);
    EXPECT_FALSE(refused(w));
  }
  {  // +z spelled as three components.
    BitWriter w;
    write_head(w, 1, true);
    w.write_bits(kEventNormalExplicit, kEventNormalFormBits);
    w.write_signed(0, kEventNormalComponentBits);
    w.write_signed(0, kEventNormalComponentBits);
    w.write_signed(kEventNormalSteps, kEventNormalComponentBits);
    w.write_bool(false);
    w.write_bool(false);
    w.write_bool(false);
    EXPECT_TRUE(refused(w));
  }
  {  // Normal form 7.
    BitWriter w;
    write_head(w, 1, true);
    w.write_bits(7, kEventNormalFormBits);
    w.write_bool(false);
    w.write_bool(false);
    w.write_bool(false);
    EXPECT_TRUE(refused(w));
  }
  {  // A normal component beyond +-kEventNormalSteps (zig-zag 1023 is -512).
    BitWriter w;
    write_head(w, 1, true);
    w.write_bits(kEventNormalExplicit, kEventNormalFormBits);
    w.write_signed(-512, kEventNormalComponentBits);
    w.write_signed(0, kEventNormalComponentBits);
    w.write_signed(0, kEventNormalComponentBits);
    w.write_bool(false);
    w.write_bool(false);
    w.write_bool(false);
    EXPECT_TRUE(refused(w));
  }
  {  // Time beyond the tick's end (257 steps).
    BitWriter w;
    write_head(w, 1, true, 257);
    up_then_end(w);
    w.write_bool(false);
    EXPECT_TRUE(refused(w));
  }
  {  // A separation of 0 written in its 6-bit tier.
    BitWriter w;
    write_head(w, 1, true);
    w.write_bits(4, kEventNormalFormBits);
    w.write_bool(true);
    w.write_bool(false);
    w.write_bits(0, 6);
    w.write_bool(false);
    w.write_bool(false);
    EXPECT_TRUE(refused(w));
  }
  {  // A second event whose sequence would pass 2^64 - 1.
    BitWriter w;
    write_head(w, ~std::uint64_t{0}, true);
    up_then_end(w);
    write_head(w, 0, false);
    up_then_end(w);
    w.write_bool(false);
    EXPECT_TRUE(refused(w));
  }
}

}  // namespace
}  // namespace shiftcast
