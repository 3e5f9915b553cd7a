#include "protocol/own_state_codec.hpp"

#include <bit>
#include <cstdint>

#include "protocol/snapshot_delta.hpp"

namespace shiftcast {
namespace {

constexpr unsigned kFloatBits = 32;
constexpr unsigned kNormalFormBits = 2;

std::uint32_t bits_of(float v) {
  return std::bit_cast<std::uint32_t>(v);
}
float float_of(std::uint64_t v) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(v));
}

bool same_bits(const wire::Vec3f& a, float x, float y, float z) {
  return bits_of(a.x()) == bits_of(x) && bits_of(a.y()) == bits_of(y) && bits_of(a.z()) == bits_of(z);
}

// The bits of `value` minus those of `reference`, modulo 2^32, as a signed 32-bit value.
std::int32_t residual_of(float value, float reference) {
  return static_cast<std::int32_t>(bits_of(value) - bits_of(reference));
}
float apply_residual(float reference, std::int32_t residual) {
  return std::bit_cast<float>(bits_of(reference) + static_cast<std::uint32_t>(residual));
}

std::int32_t coordinate(const wire::QuantizedVec& v, int i) {
  return i == 0 ? v.x() : i == 1 ? v.y() : v.z();
}

// -1 (no brush) -> 0, so the usual "none" costs one bit; a bijection on 32 bits.
std::uint32_t brush_code(std::int32_t brush) {
  return static_cast<std::uint32_t>(brush) + 1u;
}
std::int32_t brush_of(std::uint32_t code) {
  return static_cast<std::int32_t>(code - 1u);
}

// Whether `residual` has the relative form: its zig-zag code fits the widest residual tier.
bool fits_relative(std::int32_t residual) {
  return zigzag_encode(residual) < kOwnResidualLimit;
}

}  // namespace

void write_own_state(BitWriter& out, const wire::OwnState& own, const wire::QuantizedVec* reference) {
  out.write_tiered(own.flags(), kOwnFlagTiers);
  const float p[3] = {own.position().x(), own.position().y(), own.position().z()};
  for (int i = 0; i < 3; ++i) {
    const std::int32_t residual =
        reference != nullptr ? residual_of(p[i], dequantize_coordinate(coordinate(*reference, i))) : 0;
    const bool relative = reference != nullptr && fits_relative(residual);
    out.write_bool(relative);
    if (relative) {
      out.write_tiered_signed(residual, kOwnResidualTiers);
    } else {
      out.write_bits(bits_of(p[i]), kFloatBits);
    }
  }
  // A velocity component whose bits are all zero (+0) costs its flag alone.
  for (const float c : {own.velocity().x(), own.velocity().y(), own.velocity().z()}) {
    out.write_bool(bits_of(c) != 0);
    if (bits_of(c) != 0) out.write_bits(bits_of(c), kFloatBits);
  }
  const wire::Vec3f& n = own.ground_normal();
  if (same_bits(n, 0, 0, 0)) {
    out.write_bits(kNormalZero, kNormalFormBits);
  } else if (same_bits(n, 0, 0, 1)) {
    out.write_bits(kNormalUp, kNormalFormBits);
  } else {
    out.write_bits(kNormalExplicit, kNormalFormBits);
    for (const float c : {n.x(), n.y(), n.z()})
      out.write_bits(bits_of(c), kFloatBits);
  }
  out.write_tiered(own.ground_entity(), kGroundIdTiers);
  out.write_tiered(brush_code(own.ground_brush()), kGroundIdTiers);
}

std::optional<OwnStateBits> read_own_state(BitReader& in) {
  const std::uint64_t flags = in.read_tiered(kOwnFlagTiers);
  OwnStateBits out;
  float p[3] = {0, 0, 0}, v[3], n[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    out.relative[i] = in.read_bool();
    if (out.relative[i]) {
      // The tiers hold only codes below kOwnResidualLimit: every one is an int32.
      out.residual[i] = static_cast<std::int32_t>(in.read_tiered_signed(kOwnResidualTiers));
    } else {
      p[i] = float_of(in.read_bits(kFloatBits));
    }
  }
  for (float& c : v) {
    c = 0;
    if (in.read_bool()) {
      const std::uint64_t raw = in.read_bits(kFloatBits);
      if (raw == 0 && in.ok()) return std::nullopt;  // +0 has its one-bit form
      c = float_of(raw);
    }
  }
  const std::uint64_t form = in.read_bits(kNormalFormBits);
  if (form == kNormalUp) {
    n[2] = 1;
  } else if (form == kNormalExplicit) {
    for (float& c : n)
      c = float_of(in.read_bits(kFloatBits));
    // The two short forms have their own codes.
    if (in.ok() && (same_bits(wire::Vec3f(n[0], n[1], n[2]), 0, 0, 0) ||
                    same_bits(wire::Vec3f(n[0], n[1], n[2]), 0, 0, 1)))
      return std::nullopt;
  } else if (form != kNormalZero) {
    return std::nullopt;
  }
  const std::uint64_t entity = in.read_tiered(kGroundIdTiers);
  const std::uint64_t brush = in.read_tiered(kGroundIdTiers);
  if (!in.ok() || flags > 0xff || entity > 0xffffffffu || brush > 0xffffffffu) return std::nullopt;
  out.state = wire::OwnState(wire::Vec3f(p[0], p[1], p[2]), wire::Vec3f(v[0], v[1], v[2]),
                             wire::Vec3f(n[0], n[1], n[2]), static_cast<std::uint32_t>(entity),
                             brush_of(static_cast<std::uint32_t>(brush)), static_cast<std::uint8_t>(flags));
  return out;
}

ResolvedOwnState resolve_own_state(const OwnStateBits& bits, const wire::QuantizedVec* reference) {
  const wire::OwnState& s = bits.state;
  float p[3] = {s.position().x(), s.position().y(), s.position().z()};
  for (int i = 0; i < 3; ++i) {
    if (bits.relative[i]) {
      if (reference == nullptr) return {};  // the frame's snapshot is not held: unresolved
      p[i] = apply_residual(dequantize_coordinate(coordinate(*reference, i)), bits.residual[i]);
    } else if (reference != nullptr &&
               fits_relative(residual_of(p[i], dequantize_coordinate(coordinate(*reference, i))))) {
      return {wire::ErrorCode::Malformed, std::nullopt};  // a writer sends this one relative
    }
  }
  return {wire::ErrorCode::Ok, wire::OwnState(wire::Vec3f(p[0], p[1], p[2]), s.velocity(), s.ground_normal(),
                                              s.ground_entity(), s.ground_brush(), s.flags())};
}

}  // namespace shiftcast
