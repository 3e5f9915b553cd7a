// The own player's exact state (wire::OwnState) bit-packed for ServerFrame.own_packed: the client
// continues its character motor from it, so nothing is quantized; what is usually "none", zero or "up"
// costs a bit or two. docs/protocol.md ("Own state") is the written standard of its bits.
//
//   BitWriter w;
//   write_own_state(w, own, &own_entity_position);             // server: the snapshot's own entity, or null
//   BitReader r(bytes);
//   std::optional<OwnStateBits> bits = read_own_state(r);      // client; nullopt: Malformed
//   if (!bits || r.finish() != BitReadError::kNone) ... refuse the frame ...
//   ... apply the frame's snapshot ...
//   ResolvedOwnState own = resolve_own_state(*bits, held_own_position);  // null: the snapshot is not held
//
// Floats travel as their IEEE-754 bit patterns (exact, NaN and -0 included: the reader gets the very
// bits the server held). In a frame with a snapshot the position travels as the difference of its bit
// patterns from those of the own entity's quantized position in that snapshot (protocol version 6):
// within half a quantum of it, 9 to 15 bits a coordinate instead of 32, and still exact.
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

// A position coordinate travels relative (protocol version 6) when the frame has a snapshot whose world
// holds the own entity and the residual below fits the residual tiers, else whole (its 32 float bits).
// The residual: the coordinate's float bits minus the bits of the float nearest its reference coordinate
// (quanta / 16), modulo 2^32, as a signed 32-bit value. A coordinate within half a quantum of a reference
// of magnitude 2^k is within 2^(18 - k) patterns of it: at 64 to 4,096 units from the origin that is
// 8 to 14 bits. Nearer the origin floats are denser and the residual grows: below half a unit it may not
// fit, and the coordinate goes whole. Which form a coordinate takes is fixed by this rule (a reader
// refuses a whole coordinate that would have fitted), so every state has one encoding per reference.
inline constexpr std::array<unsigned, 6> kOwnResidualTiers = {8, 10, 12, 14, 16, 20};  // zig-zag
inline constexpr std::uint64_t kOwnResidualLimit = std::uint64_t{1} << 20;

// The most a state takes: flags 1 + 8 bits, the position 3 x (1 + 32), velocity 3 x 33, an explicit
// normal 2 + 96, the two ground ids 3 + 32 each: 375 bits (a relative coordinate takes at most 1 + 25).
inline constexpr std::size_t kMaxOwnStateBytes = (9 + 3 * 33 + 99 + 98 + 2 * 35 + 7) / 8;

// Writes `own`; with a `reference` (the own entity's quantized position in the frame's snapshot, as the
// client holds it once it applied that snapshot) each coordinate whose residual fits goes relative to
// it, the others whole; without one every coordinate goes whole.
void write_own_state(BitWriter& out, const wire::OwnState& own,
                     const wire::QuantizedVec* reference = nullptr);

// The own section as read, before the snapshot it may refer to is known.
struct OwnStateBits {
  wire::OwnState state;            // a relative coordinate of the position is +0 here
  std::array<bool, 3> relative{};  // which coordinates are residuals against the snapshot's own entity
  std::array<std::int32_t, 3> residual{};
  bool any_relative() const { return relative[0] || relative[1] || relative[2]; }
};
// Nothing when the bits are not a state a conforming writer sends (past the end, form 3, a byte field
// beyond 255, a non-shortest form); the reader's error() says which when it was the stream.
std::optional<OwnStateBits> read_own_state(BitReader& in);

struct ResolvedOwnState {
  wire::ErrorCode error = wire::ErrorCode::Ok;  // Malformed: a whole coordinate the writer sends relative
  std::optional<wire::OwnState> state;          // none when unresolved or Malformed
};
// The state, each relative coordinate rebuilt from `reference` (the own entity's position in the frame's
// snapshot as the client holds it, or null when the frame has no snapshot, the client did not apply it,
// or its world holds no own entity). Unresolved (Ok, no state) when a coordinate is relative and there is
// no reference: the next frame brings the state again.
ResolvedOwnState resolve_own_state(const OwnStateBits& bits, const wire::QuantizedVec* reference);

}  // namespace shiftcast
