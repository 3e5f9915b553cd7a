// Contact events bit-packed for ServerFrame.events_packed (protocol version 3): the oldest
// unacknowledged events of the connection's reliable stream, in ascending sequence, each as a few small
// fields against the previous event and the frame's tick. docs/protocol.md ("Contact events") is the
// written standard of its bits.
//
//   BitWriter w;
//   const std::size_t sent = write_contact_events(w, sender.unacknowledged(), frame_tick, max_bits);
//   BitReader r(bytes);
//   std::optional<std::vector<wire::ContactEvent>> events = read_contact_events(r, frame_tick);
//   if (!events || r.finish() != BitReadError::kNone) ... refuse the frame (Malformed) ...
//
// Nothing is quantized: time, point, normal, separation and relative_speed travel as their IEEE-754 bit
// patterns, so a client gets exactly the record the server's ContactPush subscribers get. What is
// usually zero or an axis costs a bit or three instead.
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
inline constexpr std::array<unsigned, 3> kEventSequenceGapTiers = {0, 8, 64};     // sequence - previous - 1
inline constexpr std::array<unsigned, 4> kEventTickOffsetTiers = {3, 8, 16, 64};  // frame tick - tick
inline constexpr std::array<unsigned, 2> kEventSmallTiers = {2, 8};               // phase, a_kind, b_kind
inline constexpr std::array<unsigned, 3> kEventEntityTiers = {8, 16, 32};         // a
inline constexpr std::array<unsigned, 4> kEventIdTiers = {0, 8, 16, 32};          // b, and brush + 1
// normal's 3-bit form: 0..5 the unit axes +x, -x, +y, -y, +z, -z; kEventNormalExplicit: three floats.
inline constexpr unsigned kEventNormalFormBits = 3;
inline constexpr unsigned kEventNormalExplicit = 6;
// The most one event adds to a list: its presence bit and every field in its widest form.
inline constexpr std::size_t kMaxContactEventBits =
    1 + (3 + 64) + (3 + 64) + 33 + 3 * (1 + 8) + (2 + 32) + 2 * (3 + 32) + 96 + 3 + 96 + 2 * 33;

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
