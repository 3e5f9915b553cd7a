// Contact events bit-packed for the ServerFrame's events section: the oldest unacknowledged events of the
// connection's reliable stream, in ascending sequence, each as a few small fields against the previous
// event and the frame's tick. docs/protocol.md ("Contact events on the wire") is the written standard.
//
//   BitWriter w;
//   const std::size_t sent = write_contact_events(w, sender.unacknowledged(), frame_tick, max_bits);
//   BitReader r(bytes);
//   std::optional<std::vector<wire::ContactEvent>> events = read_contact_events(r, frame_tick);
//   if (!events || r.finish() != BitReadError::kNone) ... refuse the frame (Malformed) ...
//
// Since protocol version 5 the measured values are quantized, as a snapshot's poses are (a player draws
// sparks and plays sounds with them; the RPC contact feed, where services adjudicate, stays exact): the
// point in kPositionQuantum steps, the normal's components in 1/kEventNormalSteps, time in 1/256 tick,
// separation in 1/256 unit, relative speed in 1/4 unit/s. quantize_contact_event is exactly what a
// client reads for an event. What is usually zero or an axis costs a bit or three.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "protocol/bit_stream.hpp"
#include "protocol/shiftcast_generated.h"

namespace shiftcast {

inline constexpr std::array<unsigned, 4> kEventFirstSequenceTiers = {8, 16, 32, 64};
inline constexpr std::array<unsigned, 3> kEventSequenceGapTiers = {0, 8, 64};      // sequence - previous - 1
inline constexpr std::array<unsigned, 4> kEventTickOffsetTiers = {3, 8, 16, 64};   // frame tick - tick
inline constexpr std::array<unsigned, 2> kEventSmallTiers = {2, 8};                // phase, a_kind, b_kind
inline constexpr std::array<unsigned, 3> kEventEntityTiers = {8, 16, 32};          // a
inline constexpr std::array<unsigned, 4> kEventIdTiers = {0, 8, 16, 32};           // b, and brush + 1
inline constexpr std::array<unsigned, 2> kEventTimeTiers = {0, 9};                 // time steps, 0..256
inline constexpr std::array<unsigned, 5> kEventPointTiers = {10, 14, 18, 22, 32};  // zig-zag quanta
inline constexpr std::array<unsigned, 4> kEventSeparationTiers = {0, 6, 12, 32};   // zig-zag steps
inline constexpr std::array<unsigned, 5> kEventSpeedTiers = {0, 8, 12, 16, 32};    // zig-zag steps

// The quantization steps (powers of two where the value has a unit, so scaling is exact).
inline constexpr double kEventTimeSteps = 256;        // per tick: 1/256 of a tick (61 us at 64 Hz)
inline constexpr double kEventSeparationSteps = 256;  // per unit
inline constexpr double kEventSpeedSteps = 4;         // per unit/s
// Points (in quanta), separations and speeds (in steps) are clamped to +-2^24 steps: 1,048,576 units,
// 65,536 units and 4,194,304 units/s, beyond anything a level holds.
inline constexpr std::int64_t kEventMaxSteps = std::int64_t{1} << 24;
// A normal component c travels as round(c * 511), so +-1 is exact and the direction is within 0.2
// degrees; its zig-zag code fits kEventNormalComponentBits.
inline constexpr int kEventNormalSteps = 511;
inline constexpr unsigned kEventNormalComponentBits = 10;
// normal's 3-bit form: 0..5 the unit axes +x, -x, +y, -y, +z, -z; kEventNormalExplicit: three components.
inline constexpr unsigned kEventNormalFormBits = 3;
inline constexpr unsigned kEventNormalExplicit = 6;
// The most one event adds to a list: its presence bit and every field in its widest form.
inline constexpr std::size_t kMaxContactEventBits = 1 + (3 + 64) + (3 + 64) + (1 + 9) + 3 * (1 + 8) +
                                                    (2 + 32) + 2 * (3 + 32) + 3 * (4 + 32) + 3 +
                                                    3 * kEventNormalComponentBits + (3 + 32) + (4 + 32);

// What a client reads for `event`: every measured field quantized and back, the rest unchanged.
wire::ContactEvent quantize_contact_event(const wire::ContactEvent& event);

// Writes the longest prefix of `events` (ascending sequence, the caller's invariant) whose encoding,
// with its end bit, fits `max_bits`; returns how many. The list is always terminated, so it takes at
// least one bit even when nothing fits (a caller with max_bits 0 should write nothing at all).
std::size_t write_contact_events(BitWriter& out, std::span<const wire::ContactEvent> events,
                                 std::uint64_t frame_tick, std::size_t max_bits);
// Nothing when the bits are not a list a conforming writer sends (past the end, a form or field no
// writer uses, a sequence that wraps, a non-shortest form); the reader's error() says which when it was
// the stream.
std::optional<std::vector<wire::ContactEvent>> read_contact_events(BitReader& in, std::uint64_t frame_tick);

}  // namespace shiftcast
