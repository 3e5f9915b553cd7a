// The tick rates a match may run at (DESIGN.md: 20-128 Hz): beyond 128 a tick's work no longer fits its
// period. The config ([match] tick_rate), CreateMatch (server/match_registry.cpp) and the load tester's
// --tick-rate all check against these two.
#pragma once

namespace shiftcast {

inline constexpr int kMinTickRate = 20;
inline constexpr int kMaxTickRate = 128;

}  // namespace shiftcast
