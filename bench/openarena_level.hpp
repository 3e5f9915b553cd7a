// The OpenArena map a benchmark runs on, imported and compiled (BSP, visible set and navmesh) at startup,
// as the server does when it loads a level. Shared by the benchmarks that need a real map and its bots.
//
//   OpenArenaLevel level;
//   if (const int status = load_openarena_level("match_bench", "oa_dm1", level); status != kLevelLoaded)
//     return status == kLevelMissing ? 0 : 1;   // missing: said so, nothing to measure
#pragma once

#include <memory>

#include "world/level/compiled_level.hpp"
#include "world/level/navmesh.hpp"
#include "world/match/match_setup.hpp"

namespace shiftcast {

struct OpenArenaLevel {
  CompiledLevel compiled;
  std::unique_ptr<NavMesh> navmesh;
};

inline constexpr int kLevelLoaded = 0;
inline constexpr int kLevelMissing = 1;  // data/openarena/maps/NAME.bsp is not there (fetch script not run)
inline constexpr int kLevelFailed = 2;   // it is there but does not import, compile or build its navmesh

// Loads data/openarena/maps/<map>.bsp under the source tree; prints why not, prefixed by `program`.
int load_openarena_level(const char* program, const char* map, OpenArenaLevel& out);

// A bot match on the level (SceneKind::kMatch), as the server sets one up; null (and said why, prefixed
// by `program`) when it cannot be built.
std::unique_ptr<MatchSetup> make_openarena_match(const char* program, const OpenArenaLevel& level,
                                                 int tick_rate, int players, int projectiles, int props,
                                                 std::uint32_t seed);

}  // namespace shiftcast
