#include "protocol/contact_event_codec.hpp"

#include <bit>

namespace shiftcast {
namespace {

constexpr unsigned kFloatBits = 32;

std::uint32_t bits_of(float v) {
  return std::bit_cast<std::uint32_t>(v);
}
float float_of(std::uint64_t v) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(v));
}

// +0 costs its flag alone; any other pattern (-0 and NaNs included) follows the flag.
void write_float_or_zero(BitWriter& out, float v) {
  out.write_bool(bits_of(v) != 0);
  if (bits_of(v) != 0) out.write_bits(bits_of(v), kFloatBits);
}
// False for an explicit +0 (it has the one-bit form).
bool read_float_or_zero(BitReader& in, float& v) {
  v = 0;
  if (!in.read_bool()) return true;
  const std::uint64_t raw = in.read_bits(kFloatBits);
  v = float_of(raw);
  return raw != 0 || !in.ok();
}

constexpr std::array<std::array<float, 3>, 6> kAxes = {{
    {1, 0, 0},
    {-1, 0, 0},
    {0, 1, 0},
    {0, -1, 0},
    {0, 0, 1},
    {0, 0, -1},
}};

unsigned normal_form(const wire::Vec3f& n) {
  for (unsigned i = 0; i < kAxes.size(); ++i) {
    if (bits_of(n.x()) == bits_of(kAxes[i][0]) && bits_of(n.y()) == bits_of(kAxes[i][1]) &&
        bits_of(n.z()) == bits_of(kAxes[i][2]))
      return i;
  }
  return kEventNormalExplicit;
}

// -1 (no brush) -> 0, so the level-less usual case costs one bit; a bijection on 32 bits.
std::uint32_t brush_code(std::int32_t brush) {
  return static_cast<std::uint32_t>(brush) + 1u;
}

// One event after its presence bit; `previous` is the sequence of the event before it in this frame.
void write_event(BitWriter& out, const wire::ContactEvent& e, const std::uint64_t* previous,
                 std::uint64_t frame_tick) {
  if (previous == nullptr) {
    out.write_tiered(e.sequence(), kEventFirstSequenceTiers);
  } else {
    out.write_tiered(e.sequence() - *previous - 1, kEventSequenceGapTiers);
  }
  // Modulo 2^64 and zig-zagged: a bijection, so any tick survives whatever the frame's tick.
  out.write_tiered_signed(static_cast<std::int64_t>(frame_tick - e.tick()), kEventTickOffsetTiers);
  write_float_or_zero(out, e.time());
  out.write_tiered(e.phase(), kEventSmallTiers);
  out.write_tiered(e.a_kind(), kEventSmallTiers);
  out.write_tiered(e.b_kind(), kEventSmallTiers);
  out.write_tiered(e.a(), kEventEntityTiers);
  out.write_tiered(e.b(), kEventIdTiers);
  out.write_tiered(brush_code(e.brush()), kEventIdTiers);
  for (const float c : {e.point().x(), e.point().y(), e.point().z()})
    out.write_bits(bits_of(c), kFloatBits);
  const unsigned form = normal_form(e.normal());
  out.write_bits(form, kEventNormalFormBits);
  if (form == kEventNormalExplicit) {
    for (const float c : {e.normal().x(), e.normal().y(), e.normal().z()})
      out.write_bits(bits_of(c), kFloatBits);
  }
  write_float_or_zero(out, e.separation());
  write_float_or_zero(out, e.relative_speed());
}

std::optional<wire::ContactEvent> read_event(BitReader& in, const std::uint64_t* previous,
                                             std::uint64_t frame_tick) {
  std::uint64_t sequence = 0;
  if (previous == nullptr) {
    sequence = in.read_tiered(kEventFirstSequenceTiers);
  } else {
    const std::uint64_t gap = in.read_tiered(kEventSequenceGapTiers);
    // Ascending without wrapping: sequence = previous + 1 + gap must stay below 2^64.
    if (gap >= ~std::uint64_t{0} - *previous) return std::nullopt;
    sequence = *previous + 1 + gap;
  }
  const std::uint64_t tick =
      frame_tick - static_cast<std::uint64_t>(in.read_tiered_signed(kEventTickOffsetTiers));
  float time = 0, separation = 0, speed = 0;
  if (!read_float_or_zero(in, time)) return std::nullopt;
  const std::uint64_t phase = in.read_tiered(kEventSmallTiers);
  const std::uint64_t a_kind = in.read_tiered(kEventSmallTiers);
  const std::uint64_t b_kind = in.read_tiered(kEventSmallTiers);
  const std::uint64_t a = in.read_tiered(kEventEntityTiers);
  const std::uint64_t b = in.read_tiered(kEventIdTiers);
  const std::uint64_t brush = in.read_tiered(kEventIdTiers);
  float p[3], n[3] = {0, 0, 0};
  for (float& c : p)
    c = float_of(in.read_bits(kFloatBits));
  const std::uint64_t form = in.read_bits(kEventNormalFormBits);
  if (form < kAxes.size()) {
    for (unsigned i = 0; i < 3; ++i)
      n[i] = kAxes[form][i];
  } else if (form == kEventNormalExplicit) {
    for (float& c : n)
      c = float_of(in.read_bits(kFloatBits));
    // An axis has its own short form.
    if (in.ok() && normal_form(wire::Vec3f(n[0], n[1], n[2])) != kEventNormalExplicit) return std::nullopt;
  } else if (in.ok()) {
    return std::nullopt;
  }
  if (!read_float_or_zero(in, separation) || !read_float_or_zero(in, speed)) return std::nullopt;
  if (!in.ok()) return std::nullopt;
  return wire::ContactEvent(sequence, tick, time, static_cast<std::uint8_t>(phase),
                            static_cast<std::uint8_t>(a_kind), static_cast<std::uint8_t>(b_kind),
                            static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b),
                            static_cast<std::int32_t>(static_cast<std::uint32_t>(brush) - 1u),
                            wire::Vec3f(p[0], p[1], p[2]), wire::Vec3f(n[0], n[1], n[2]), separation, speed);
}

}  // namespace

std::size_t write_contact_events(BitWriter& out, std::span<const wire::ContactEvent> events,
                                 std::uint64_t frame_tick, std::size_t max_bits) {
  // Each event is measured on a scratch writer first, so the budget is exact and the encoding has one
  // author.
  BitWriter scratch;
  std::size_t used = 1;  // the end bit
  std::size_t count = 0;
  std::uint64_t previous = 0;
  for (const wire::ContactEvent& e : events) {
    scratch.clear();
    write_event(scratch, e, count == 0 ? nullptr : &previous, frame_tick);
    if (used + 1 + scratch.bit_count() > max_bits) break;
    used += 1 + scratch.bit_count();
    out.write_bool(true);
    write_event(out, e, count == 0 ? nullptr : &previous, frame_tick);
    previous = e.sequence();
    ++count;
  }
  out.write_bool(false);
  return count;
}

std::optional<std::vector<wire::ContactEvent>> read_contact_events(BitReader& in, std::uint64_t frame_tick) {
  std::vector<wire::ContactEvent> events;
  std::uint64_t previous = 0;
  // Every event takes more than a hundred bits, so the buffer bounds the loop.
  while (in.read_bool()) {
    const std::optional<wire::ContactEvent> e =
        read_event(in, events.empty() ? nullptr : &previous, frame_tick);
    if (!e) return std::nullopt;
    previous = e->sequence();
    events.push_back(*e);
  }
  if (!in.ok()) return std::nullopt;
  return events;
}

}  // namespace shiftcast
