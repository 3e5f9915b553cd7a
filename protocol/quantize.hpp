// Quantization to a fixed step, as every quantized field of the wire does it (positions, contact events):
// value * steps_per_unit rounded to nearest, half away from zero, clamped to the int32 range; NaN gives 0
// (the simulation never lets one through; this only keeps the functions total).
//
//   const std::int32_t q = quantize_to_steps(point.x, 16);   // 1/16 unit
//   const float back = dequantize_steps(q, 16);              // within half a step, when in range
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace shiftcast {

// `steps_per_unit` must be a power of two (every caller's is), so value * steps is exact in double and
// the only rounding is the one to the nearest step; both ends then agree bit for bit.
inline std::int32_t quantize_to_steps(float value, double steps_per_unit) {
  if (std::isnan(value)) return 0;
  const double steps = std::round(static_cast<double>(value) * steps_per_unit);
  constexpr double kLow = std::numeric_limits<std::int32_t>::min();
  constexpr double kHigh = std::numeric_limits<std::int32_t>::max();
  return static_cast<std::int32_t>(std::clamp(steps, kLow, kHigh));
}

inline float dequantize_steps(std::int64_t steps, double steps_per_unit) {
  return static_cast<float>(static_cast<double>(steps) / steps_per_unit);
}

}  // namespace shiftcast
