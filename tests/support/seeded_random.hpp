// Seeded random numbers for tests and benchmarks that are the same on every standard library and
// compiler. std::mt19937 is specified bit for bit by the standard, but std::uniform_*_distribution and
// std::normal_distribution are not (libstdc++ and libc++ map the same engine output to different values),
// so a test's data or a benchmark's checksum would change with the library. Every mapping here is
// written out: the engine's raw 32-bit outputs and plain arithmetic, nothing implementation-defined.
//
//   std::mt19937 rng(42);                                // the engine: exact everywhere
//   float x = uniform_float(rng, -100.0f, 100.0f);       // 24 random bits, lo + (hi - lo) · u
//   double t = uniform_double(rng, 0.0, 1.0);            // 32 random bits
//   int k = uniform_int(rng, 0, 6);                      // inclusive, like std::uniform_int_distribution
//   UniformReal<float> coordinate(-4000, 4000);          // or as a distribution object:
//   Vec3 p{coordinate(rng), coordinate(rng), coordinate(rng)};
//
// Each value uses exactly one engine output (two for a uniform_int over more than 2^32 values), so a
// sequence is a pure function of the seed and the calls made.
#pragma once

#include <concepts>
#include <cstdint>
#include <random>
#include <type_traits>

namespace shiftcast {

// Uniform in [0, 1) from the top 24 bits of one output: all a float's significand holds, so every value
// is exact.
inline float unit_float(std::mt19937& rng) {
  return float(rng() >> 8) * 0x1p-24f;
}

// Uniform in [lo, hi) (hi itself only by rounding).
inline float uniform_float(std::mt19937& rng, float lo, float hi) {
  return lo + (hi - lo) * unit_float(rng);
}

// Uniform in [0, 1) from one whole output (32 bits, exact in a double).
inline double unit_double(std::mt19937& rng) {
  return double(rng()) * 0x1p-32;
}

inline double uniform_double(std::mt19937& rng, double lo, double hi) {
  return lo + (hi - lo) * unit_double(rng);
}

// The high 64 bits of the 128-bit product a · b, from 32-bit halves (no 128-bit type, which ISO C++
// lacks). The middle sum cannot overflow: (2^32 − 1)² + 2 · (2^32 − 1) = 2^64 − 1.
inline std::uint64_t multiply_high(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t kLow = 0xFFFFFFFFull;
  const std::uint64_t low_low = (a & kLow) * (b & kLow);
  const std::uint64_t high_low = (a >> 32) * (b & kLow);
  const std::uint64_t low_high = (a & kLow) * (b >> 32);
  const std::uint64_t middle = (low_low >> 32) + (high_low & kLow) + low_high;
  return (a >> 32) * (b >> 32) + (high_low >> 32) + (middle >> 32);
}

// Uniform in [lo, hi], both included. The draw is scaled by multiplication (Lemire's method without the
// rejection step): one output for a span of at most 2^32 values, a 64-bit draw of two outputs (first
// output high) beyond. The bias, at most span / 2^32 (or / 2^64), is far below anything a test measures.
template <std::integral T>
T uniform_int(std::mt19937& rng, T lo, T hi) {
  using U = std::make_unsigned_t<T>;
  const std::uint64_t span = std::uint64_t(U(U(hi) - U(lo)));  // count − 1
  if (span <= 0xFFFFFFFFull) {
    const std::uint64_t draw = rng();
    return T(U(U(lo) + U((draw * (span + 1)) >> 32)));
  }
  const std::uint64_t high = rng();
  const std::uint64_t draw = (high << 32) | std::uint64_t(rng());
  if (span == ~std::uint64_t{0}) return T(U(U(lo) + U(draw)));
  return T(U(U(lo) + U(multiply_high(draw, span + 1))));
}

// The same mappings with the call shape of the std distributions, for code that keeps one per range.
template <std::floating_point T>
class UniformReal {
 public:
  UniformReal(T lo, T hi) : lo_(lo), hi_(hi) {}
  T operator()(std::mt19937& rng) const {
    if constexpr (std::is_same_v<T, float>) {
      return uniform_float(rng, lo_, hi_);
    } else {
      return T(uniform_double(rng, double(lo_), double(hi_)));
    }
  }

 private:
  T lo_, hi_;
};

template <std::integral T>
class UniformInt {
 public:
  UniformInt(T lo, T hi) : lo_(lo), hi_(hi) {}
  T operator()(std::mt19937& rng) const { return uniform_int(rng, lo_, hi_); }

 private:
  T lo_, hi_;
};

}  // namespace shiftcast
