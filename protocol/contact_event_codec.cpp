#include "protocol/contact_event_codec.hpp"

#include <algorithm>
#include <cstdlib>

#include "protocol/quantize.hpp"
#include "protocol/wire_constants.hpp"

namespace shiftcast {
namespace {

constexpr double kPointSteps = 1.0 / static_cast<double>(kPositionQuantum);
constexpr std::int64_t kTimeStepsMax = static_cast<std::int64_t>(kEventTimeSteps);  // time 1: the tick's end

// Points, separations and speeds are clamped to +-kEventMaxSteps: every such count of steps divided by a
// power of two is a float exactly, so what a client reads re-encodes to the same bits.
std::int64_t clamped(float value, double steps_per_unit) {
  return std::clamp<std::int64_t>(quantize_to_steps(value, steps_per_unit), -kEventMaxSteps, kEventMaxSteps);
}

// An event's measured fields as they travel.
struct QuantizedFields {
  std::int64_t time = 0;
  std::int64_t point[3] = {0, 0, 0};
  std::int64_t normal[3] = {0, 0, 0};
  std::int64_t separation = 0;
  std::int64_t speed = 0;
};

std::int64_t normal_component(float c) {
  return std::clamp<std::int64_t>(quantize_to_steps(c, kEventNormalSteps), -kEventNormalSteps,
                                  kEventNormalSteps);
}

QuantizedFields quantize(const wire::ContactEvent& e) {
  QuantizedFields q;
  q.time = std::clamp<std::int64_t>(quantize_to_steps(e.time(), kEventTimeSteps), 0, kTimeStepsMax);
  q.point[0] = clamped(e.point().x(), kPointSteps);
  q.point[1] = clamped(e.point().y(), kPointSteps);
  q.point[2] = clamped(e.point().z(), kPointSteps);
  q.normal[0] = normal_component(e.normal().x());
  q.normal[1] = normal_component(e.normal().y());
  q.normal[2] = normal_component(e.normal().z());
  q.separation = clamped(e.separation(), kEventSeparationSteps);
  q.speed = clamped(e.relative_speed(), kEventSpeedSteps);
  return q;
}

wire::ContactEvent with_fields(const wire::ContactEvent& e, const QuantizedFields& q) {
  const auto normal = [&](int i) { return dequantize_steps(q.normal[i], kEventNormalSteps); };
  return wire::ContactEvent(
      e.sequence(), e.tick(), dequantize_steps(q.time, kEventTimeSteps), e.phase(), e.a_kind(), e.b_kind(),
      e.a(), e.b(), e.brush(),
      wire::Vec3f(dequantize_steps(q.point[0], kPointSteps), dequantize_steps(q.point[1], kPointSteps),
                  dequantize_steps(q.point[2], kPointSteps)),
      wire::Vec3f(normal(0), normal(1), normal(2)), dequantize_steps(q.separation, kEventSeparationSteps),
      dequantize_steps(q.speed, kEventSpeedSteps));
}

// 0..5 for the unit axes +x, -x, +y, -y, +z, -z (one component +-kEventNormalSteps, the others 0), else
// kEventNormalExplicit.
unsigned normal_form(const std::int64_t n[3]) {
  for (unsigned axis = 0; axis < 3; ++axis) {
    const std::int64_t other1 = n[(axis + 1) % 3], other2 = n[(axis + 2) % 3];
    if (other1 != 0 || other2 != 0) continue;
    if (n[axis] == kEventNormalSteps) return 2 * axis;
    if (n[axis] == -kEventNormalSteps) return 2 * axis + 1;
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
  const QuantizedFields q = quantize(e);
  out.write_tiered(static_cast<std::uint64_t>(q.time), kEventTimeTiers);
  out.write_tiered(e.phase(), kEventSmallTiers);
  out.write_tiered(e.a_kind(), kEventSmallTiers);
  out.write_tiered(e.b_kind(), kEventSmallTiers);
  out.write_tiered(e.a(), kEventEntityTiers);
  out.write_tiered(e.b(), kEventIdTiers);
  out.write_tiered(brush_code(e.brush()), kEventIdTiers);
  for (const std::int64_t c : q.point)
    out.write_tiered_signed(c, kEventPointTiers);
  const unsigned form = normal_form(q.normal);
  out.write_bits(form, kEventNormalFormBits);
  if (form == kEventNormalExplicit) {
    for (const std::int64_t c : q.normal)
      out.write_bits(zigzag_encode(c), kEventNormalComponentBits);
  }
  out.write_tiered_signed(q.separation, kEventSeparationTiers);
  out.write_tiered_signed(q.speed, kEventSpeedTiers);
}

bool within_max_steps(std::int64_t v) {
  return v >= -kEventMaxSteps && v <= kEventMaxSteps;
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
  QuantizedFields q;
  q.time = static_cast<std::int64_t>(in.read_tiered(kEventTimeTiers));
  const std::uint64_t phase = in.read_tiered(kEventSmallTiers);
  const std::uint64_t a_kind = in.read_tiered(kEventSmallTiers);
  const std::uint64_t b_kind = in.read_tiered(kEventSmallTiers);
  const std::uint64_t a = in.read_tiered(kEventEntityTiers);
  const std::uint64_t b = in.read_tiered(kEventIdTiers);
  const std::uint64_t brush = in.read_tiered(kEventIdTiers);
  for (std::int64_t& c : q.point)
    c = in.read_tiered_signed(kEventPointTiers);
  const std::uint64_t form = in.read_bits(kEventNormalFormBits);
  if (form < kEventNormalExplicit) {
    q.normal[form / 2] = form % 2 == 0 ? kEventNormalSteps : -kEventNormalSteps;
  } else if (form == kEventNormalExplicit) {
    for (std::int64_t& c : q.normal)
      c = zigzag_decode(in.read_bits(kEventNormalComponentBits));
  }
  q.separation = in.read_tiered_signed(kEventSeparationTiers);
  q.speed = in.read_tiered_signed(kEventSpeedTiers);
  if (!in.ok()) return std::nullopt;
  // Only what a conforming writer sends: time within the tick, steps within +-kEventMaxSteps, components
  // within +-kEventNormalSteps, an axis in its own short form, a known form.
  if (q.time > kTimeStepsMax || form > kEventNormalExplicit) return std::nullopt;
  if (!std::all_of(std::begin(q.point), std::end(q.point), within_max_steps) ||
      !within_max_steps(q.separation) || !within_max_steps(q.speed))
    return std::nullopt;
  if (form == kEventNormalExplicit) {
    for (const std::int64_t c : q.normal)
      if (std::abs(c) > kEventNormalSteps) return std::nullopt;
    if (normal_form(q.normal) != kEventNormalExplicit) return std::nullopt;
  }
  const wire::ContactEvent ids(sequence, tick, 0, static_cast<std::uint8_t>(phase),
                               static_cast<std::uint8_t>(a_kind), static_cast<std::uint8_t>(b_kind),
                               static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b),
                               static_cast<std::int32_t>(static_cast<std::uint32_t>(brush) - 1u),
                               wire::Vec3f(0, 0, 0), wire::Vec3f(0, 0, 0), 0, 0);
  return with_fields(ids, q);
}

}  // namespace

wire::ContactEvent quantize_contact_event(const wire::ContactEvent& event) {
  return with_fields(event, quantize(event));
}

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
  // Every event takes more than forty bits, so the buffer bounds the loop.
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
