// Lean input commands for ClientFrame.commands_packed (protocol version 3): the newest command with its
// own fields, the redundant older ones as deltas against the next newer (their sequences implied
// consecutive), moves, angles and the view tick quantized, and the events acknowledgement. docs/protocol.md
// ("ClientFrame commands") is the written standard of its bits.
//
//   const PlayerInput input = quantize_input(bot.think(...));  // predict with exactly this
//   BitWriter w;
//   write_client_commands(w, {newest_first, events_received});  // client
//   BitReader r(bytes);
//   std::optional<ClientCommands> c = read_client_commands(r);   // server; nullopt: Malformed
//   if (!c || r.finish() != BitReadError::kNone) ... refuse the frame ...
//
// The server runs exactly the decoded values, so a client that predicts with quantize_input()'s result
// (what it sends) stays bit for bit with the server. Units: forward and right in 1/127 steps of [-1, 1];
// yaw and pitch in kAngleUnit = 2 pi / 65536 radians, yaw counter-clockwise about +z from +x wrapped to
// [-pi, pi), pitch positive up within [-pi/2, pi/2]; view_tick in 1/256 ticks.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "protocol/bit_stream.hpp"
#include "protocol/player_input.hpp"
#include "protocol/shiftcast_generated.h"

namespace shiftcast {

inline constexpr float kMoveSteps = 127.0f;                        // forward/right = q / 127
inline constexpr double kAngleUnit = 6.283185307179586 / 65536.0;  // radians per yaw/pitch step
inline constexpr std::int32_t kMaxPitchSteps = 16384;              // pi / 2
inline constexpr double kViewTickSteps = 256.0;                    // view_tick = q / 256 ticks
inline constexpr unsigned kMoveBits = 8;                           // q + 127 in 0..254
inline constexpr unsigned kYawBits = 16;                           // q modulo 65536
inline constexpr unsigned kPitchBits = 16;                         // zig-zag of q
inline constexpr unsigned kButtonBits = 2;                         // jump, fire
inline constexpr unsigned kCommandCountBits = 2;
inline constexpr std::array<unsigned, 4> kEventsReceivedTiers = {8, 16, 32, 64};
inline constexpr std::array<unsigned, 3> kCommandSequenceTiers = {16, 32, 64};
inline constexpr std::array<unsigned, 3> kViewTickTiers = {16, 32, 53};         // q, below 2^53
inline constexpr std::array<unsigned, 3> kViewTickDeltaTiers = {0, 12, 64};     // newer q - older q
inline constexpr std::array<unsigned, 3> kCommandYawDeltaTiers = {0, 8, 16};    // older - newer, wrapped
inline constexpr std::array<unsigned, 3> kCommandPitchDeltaTiers = {0, 8, 17};  // older - newer

// What the wire carries for `input`: the nearest step of each field (NaN as 0, moves clamped to [-1, 1],
// yaw wrapped, pitch clamped, unknown buttons dropped). Idempotent.
PlayerInput quantize_input(const PlayerInput& input);
// The nearest 1/256 tick, clamped to [0, 2^45) (NaN as 0).
double quantize_view_tick(double view_tick);

struct ClientCommands {
  std::vector<wire::InputCommand> commands;  // newest first, consecutive sequences, at most 3
  std::uint64_t events_received = 0;         // as KeepAlive.events_received: 0 acknowledges nothing
};

// `commands` must be newest first with consecutive sequences (the newest >= the count), at most 3; their
// fields are quantized here (already quantized values pass unchanged).
void write_client_commands(BitWriter& out, const ClientCommands& commands);
// Nothing when the bits are not a frame a conforming writer sends.
std::optional<ClientCommands> read_client_commands(BitReader& in);

}  // namespace shiftcast
