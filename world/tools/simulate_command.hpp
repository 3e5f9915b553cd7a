// `shiftcast-level simulate`: a headless match on a level, as fast as the machine runs it (simulated
// time, not wall time), with the numbers a server operator asks about: tick time percentiles, contacts
// per second, Blow's filter table, invariant violations and re-placements, projectile hits, and the
// final state hash (equal on every run with the same arguments).
//
//   shiftcast-level simulate LEVEL [--players N] [--projectiles N] [--props N] [--tick-rate HZ]
//                            [--seconds S] [--seed N] [--scene match|landing] [--json FILE] [--filter-timing]
//
// LEVEL is a compiled .level or any source import_level_file reads (.map, .bsp, .obj: imported and
// compiled first, navmesh included). Exit status: 0 after a run (invariant violations are reported, not
// failures), 1 when the level cannot be loaded or the scene cannot be built, 2 on a usage error.
#pragma once

namespace shiftcast {

// The exit statuses of every shiftcast-level command, one set for all of them.
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;  // a level, query file or scene that cannot be used
inline constexpr int kExitUsage = 2;     // arguments that do not parse

// argv as main() received it, with argv[1] == "simulate". Returns the process exit status.
int run_simulate_command(int argc, char** argv);

}  // namespace shiftcast
