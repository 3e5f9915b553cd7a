// `shiftcast-level replay`: re-runs a match recording (world/match/match_recording.hpp, docs/replay.md)
// offline, bit for bit, on the scene make_hosted_match_setup builds, checking every recorded state hash.
//
//   shiftcast-level replay FILE [--level PATH] [--until TICK] [--entity ID] [--queries] [--any-level]
//   [--continue]
//
//   --level    the level the match ran on (.level, .bsp, .map, .obj); default: the recorded name looked up
//              as NAME.level, data/openarena/maps/NAME.bsp, configs/levels/NAME.map. Its fingerprint
//              must equal the recorded one.
//   --until T  stop after tick T and print the entities (players with their motor state) and the shot
//              audit: every recorded query judged at or before T re-answered on the replayed history
//   --entity   print only this entity (and only the queries that hit or ignore it)
//   --queries  the shot audit over every recorded query, without stopping early
//   --any-level  skip the fingerprint check (the state hashes still judge the replay)
//   --continue   go on after a hash mismatch (a changed simulation tried on recorded commands)
//
// Invariant violations and re-placements are printed as they happen. Exit status: 0 when every hash
// matched (and every audited query agreed), 1 at the first hash mismatch (tick, expected, got) or a bad
// recording or level, 2 on a usage error.
//
// The same replay is a library function, for tests and tools:
//   ReplayResult r = replay_recording(recording, tree, level, navmesh, {.until = 500});
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "world/level/navmesh.hpp"
#include "world/match/match_recording.hpp"
#include "world/match/simulation.hpp"

namespace shiftcast {

// The one place a recorded tick's commands reach the simulation: Simulation::set_inputs, as the server's
// Match::apply_inputs called it (an empty list: the player ran no motor step that tick). A player with no
// entry in a tick had no call at all (recordings made before every command ran exactly once).
void apply_recorded_commands(Simulation& sim, EntityId entity, std::span<const PlayerInput> commands);

// A query re-answered against the replayed world at the tick it was judged at.
struct AuditedQuery {
  RecordedQuery recorded;
  RecordedQuery replayed;  // the same question, the replay's answer
  bool agrees = false;
};

struct ReplayOptions {
  std::optional<std::uint64_t> until;  // stop after this tick
  bool audit_queries = true;
  // false: replay even when the level's fingerprint differs (a recording made before the fingerprint
  // ignored build timings); the state hashes still decide whether the replay is the match.
  bool check_level = true;
  // false: a hash mismatch is noted (the first one in ReplayResult) and the replay goes on applying the
  // recorded commands: how a changed simulation is tried on a recorded match (tests, --continue).
  bool stop_at_mismatch = true;
  // Called after every replayed tick (tests and the command's per-tick report).
  std::function<void(const Simulation&, const RecordedTick&)> on_tick;
};

enum class ReplayError : std::uint8_t {
  kNone,
  kWrongLevel,     // the level's fingerprint is not the recorded one
  kSceneFailed,    // make_hosted_match_setup refused the level
  kStartMismatch,  // the scene's tick or state hash before the first record differ
  kJoinMismatch,   // a join produced another entity id than the server's
  kHashMismatch,   // a tick's state hash differs
};
const char* to_string(ReplayError error);

struct ReplayResult {
  ReplayError error = ReplayError::kNone;
  std::string message;
  std::uint64_t tick = 0;  // the last tick replayed (the mismatching one on kHashMismatch)
  std::uint64_t expected_hash = 0;
  std::uint64_t got_hash = 0;
  std::uint64_t ticks_replayed = 0;
  std::uint64_t invariant_violations = 0;
  std::optional<std::uint64_t> first_mismatch;  // stop_at_mismatch false: the first tick that differed
  std::vector<AuditedQuery> queries;
  bool ok() const { return error == ReplayError::kNone; }
};

// Replays `recording` on `tree`/`level`/`navmesh` (which must be the recorded level: checked by
// `fingerprint` against the header). `until_scene` receives the scene's simulation at the end so callers
// can print it; it may be null.
ReplayResult replay_recording(const Recording& recording, const CompiledLevel& level, const NavMesh* navmesh,
                              const ReplayOptions& options,
                              const std::function<void(const Simulation&)>& at_end = {});

// argv as main() received it, with argv[1] == "replay". Returns the process exit status.
int run_replay_command(int argc, char** argv);

}  // namespace shiftcast
