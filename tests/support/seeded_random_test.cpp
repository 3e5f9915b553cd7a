// The seeded random helper against independent statements of what it must return: the engine's
// standard-specified output, the mappings written as closed forms over a second engine, and the ranges.
#include "tests/support/seeded_random.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace shiftcast {
namespace {

TEST(SeededRandom, EngineIsTheStandardsMt19937) {
  // [rand.predef]: the 10000th consecutive output of a default-constructed std::mt19937 is 4123659995.
  std::mt19937 rng;
  rng.discard(9999);
  EXPECT_EQ(rng(), 4123659995u);
}

TEST(SeededRandom, RealMappingsAreTheClosedForms) {
  std::mt19937 rng(20261126), raw(20261126);
  for (int i = 0; i < 10000; ++i) {
    const float f = uniform_float(rng, -3.0f, 5.0f);
    const float expected_f = float(-3.0 + 8.0 * std::ldexp(double(raw() >> 8), -24));  // exact in double
    ASSERT_EQ(f, expected_f) << i;
    const double d = uniform_double(rng, -1.0, 1.0);
    ASSERT_EQ(d, -1.0 + 2.0 * std::ldexp(double(raw()), -32)) << i;
    const float u = unit_float(rng);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    ASSERT_EQ(u, float(std::ldexp(double(raw() >> 8), -24)));
  }
}

TEST(SeededRandom, IntegerSpanOfAPowerOfTwoTakesTheTopBits) {
  // With 2^k values, (draw · 2^k) >> 32 is the draw's top k bits: an independent form of the mapping.
  std::mt19937 rng(7), raw(7);
  for (int i = 0; i < 10000; ++i) {
    ASSERT_EQ(uniform_int(rng, 100, 163), 100 + int(raw() >> 26)) << i;
    ASSERT_EQ(uniform_int<std::int8_t>(rng, -128, 127), std::int8_t(-128 + int(raw() >> 24))) << i;
  }
  // The whole 64-bit range is the 64-bit draw itself, first output high.
  const std::uint64_t high = raw(), low = raw();
  EXPECT_EQ(
      uniform_int(rng, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()),
      std::int64_t(((high << 32) | low) ^ (std::uint64_t{1} << 63)));
}

TEST(SeededRandom, MultiplyHighIsTheTopHalfOfTheProduct) {
  // Closed forms: (2^64 − 1)² = 2^128 − 2^65 + 1, whose top half is 2^64 − 2; 2^63 · 6 = 3 · 2^64.
  EXPECT_EQ(multiply_high(~std::uint64_t{0}, ~std::uint64_t{0}), ~std::uint64_t{0} - 1);
  EXPECT_EQ(multiply_high(std::uint64_t{1} << 63, 6), 3u);
  EXPECT_EQ(multiply_high(0xFFFFFFFFull, 0xFFFFFFFFull), 0u);
  // Against the product of two 32-bit values shifted into place: (x · 2^32) · (y · 2^32) = x · y · 2^64.
  std::mt19937 rng(5);
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t x = rng(), y = rng();
    ASSERT_EQ(multiply_high(x << 32, y << 32), x * y);
  }
}

TEST(SeededRandom, IntegersCoverTheirRangeEvenly) {
  std::mt19937 rng(3);
  std::vector<int> counts(7, 0);
  constexpr int kDraws = 70000;
  for (int i = 0; i < kDraws; ++i) {
    const int k = UniformInt<int>(0, 6)(rng);
    ASSERT_GE(k, 0);
    ASSERT_LE(k, 6);
    ++counts[std::size_t(k)];
  }
  // 10000 expected each, standard deviation ~93: six deviations is far outside chance.
  for (int c : counts)
    EXPECT_NEAR(c, kDraws / 7, 600);
  // A span wider than 32 bits stays inside its bounds.
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t v = uniform_int<std::uint64_t>(rng, 5, std::uint64_t{1} << 40);
    ASSERT_GE(v, 5u);
    ASSERT_LE(v, std::uint64_t{1} << 40);
  }
}

TEST(SeededRandom, DistributionObjectsAreTheFunctions) {
  std::mt19937 a(11), b(11);
  const UniformReal<float> coordinate(-4000, 4000);
  const UniformReal<double> unit(0, 1);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(coordinate(a), uniform_float(b, -4000, 4000));
    ASSERT_EQ(unit(a), uniform_double(b, 0, 1));
  }
}

}  // namespace
}  // namespace shiftcast
