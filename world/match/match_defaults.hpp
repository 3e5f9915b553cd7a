// The defaults of a match's rates and size, defined once: the simulation, the server's config and match
// hosting, recordings, the load tester and the test scenes all start from these, so changing one here
// changes it everywhere (configs/server.toml states the same values for operators).
//
//   int tick_rate = kDefaultTickRate;   // a field's default, in any struct that carries one
#pragma once

namespace shiftcast {

inline constexpr int kDefaultTickRate = 64;      // Hz; the server accepts 20..128
inline constexpr int kDefaultSnapshotRate = 32;  // Hz; a snapshot every round(tick / snapshot) ticks
inline constexpr int kDefaultMaxPlayers = 32;    // per match

}  // namespace shiftcast
