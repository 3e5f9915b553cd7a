// Allocation settings: the match an allocated GameServer asks for, read from its labels and annotations
// (docs/server.md, "Running under Agones"). The allocator (a GameServerAllocation's metadata, or the
// fleet's template) writes them; an annotation wins over a label of the same key. Every value is a
// decimal integer except the level's name; what is absent takes the server's default. Ranges are not
// checked here: the spec goes through MatchDirectory::create, the same checks as the RPC's CreateMatch.
//
//   AllocationSpec a = allocation_spec(gs.labels, gs.annotations, config.max_players);
//   if (!a.ok()) count_and_log(a.error); else directory.create(a.spec);
#pragma once

#include <map>
#include <string>

#include "server/match_directory.hpp"

namespace shiftcast {

// What the allocator sets (label or annotation).
inline constexpr char kLevelKey[] = "shiftcast.dev/level";                 // required: a [[level]] name
inline constexpr char kTickRateKey[] = "shiftcast.dev/tick-rate";          // Hz; default: the server's
inline constexpr char kSnapshotRateKey[] = "shiftcast.dev/snapshot-rate";  // Hz; default: the server's
inline constexpr char kMaxPlayersKey[] = "shiftcast.dev/max-players";      // default: [match] max_players
inline constexpr char kPropsKey[] = "shiftcast.dev/props";                 // default: 0
inline constexpr char kSeedKey[] = "shiftcast.dev/seed";                   // default: 1

// What the server publishes with SetAnnotation before Ready, for a matchmaker to mint connect tokens
// from the allocation response. The sidecar stores SDK-set annotations under kSdkMetadataPrefix, so the
// GameServer carries "agones.dev/sdk-shiftcast-server-instance" and "agones.dev/sdk-shiftcast-match-id".
inline constexpr char kSdkMetadataPrefix[] = "agones.dev/sdk-";
inline constexpr char kInstanceAnnotation[] = "shiftcast-server-instance";  // 16 lowercase hex digits
inline constexpr char kMatchIdAnnotation[] = "shiftcast-match-id";          // decimal

struct AllocationSpec {
  CreateMatchSpec spec;
  std::string error;  // empty: read; else which key holds what
  bool ok() const { return error.empty(); }
};

AllocationSpec allocation_spec(const std::map<std::string, std::string>& labels,
                               const std::map<std::string, std::string>& annotations,
                               int default_max_players);

}  // namespace shiftcast
