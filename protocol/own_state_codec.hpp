// The own player's exact state (wire::OwnState) bit-packed for ServerFrame.own_packed: the client
// continues its character motor from it, so nothing is quantized; what is usually "none", zero or "up"
// costs a bit or two. docs/protocol.md ("Own state") is the written standard of its bits.
//
//   BitWriter w;
//   write_own_state(w, own);                                 // server
//   BitReader r(bytes);
//   std::optional<wire::OwnState> own = read_own_state(r);  // client; nullopt: Malformed
//   if (!own || r.finish() != BitReadError::kNone) ... refuse the frame ...
//
// Floats travel as their IEEE-754 bit patterns (exact, NaN and -0 included: the reader gets the very
// bits the server held).
#pragma once

#include <array>
#include <optional>

#include "protocol/bit_stream.hpp"
#include "protocol/shiftcast_generated.h"

namespace shiftcast {

inline constexpr std::array<unsigned, 2> kOwnFlagTiers = {2, 8};
inline constexpr std::array<unsigned, 4> kGroundIdTiers = {0, 8, 16, 32};  // entity, and brush + 1
// ground_normal's 2-bit form.
inline constexpr unsigned kNormalZero = 0;      // (0, 0, 0): not on ground
inline constexpr unsigned kNormalUp = 1;        // (0, 0, 1): flat ground
inline constexpr unsigned kNormalExplicit = 2;  // three floats follow

// The most a state takes: flags 1 + 8 bits, position 96, velocity 3 x 33, an explicit normal 2 + 96, the
// two ground ids 3 + 32 each: 372 bits.
inline constexpr std::size_t kMaxOwnStateBytes = (9 + 96 + 99 + 98 + 2 * 35 + 7) / 8;

void write_own_state(BitWriter& out, const wire::OwnState& own);
// Nothing when the bits are not a state a conforming writer sends (past the end, form 3, a byte field
// beyond 255, a non-shortest form); the reader's error() says which when it was the stream.
std::optional<wire::OwnState> read_own_state(BitReader& in);

}  // namespace shiftcast
