// MatchDirectory: the matches a server hosts, as the RPC layer and the UDP endpoint see them. Any
// thread may look a match up; the handle it gets keeps the match's published data (level, history,
// contact feed) alive while a query runs, even if the match ends meanwhile. Nothing here ever waits for
// a match's worker: queries read the views the match published (world/match/tick_history.hpp).
//
//   std::shared_ptr<MatchHandle> m = directory.find(match_id);
//   if (!m) return error(wire::ErrorCode::UnknownMatch);
//   RewindView view = m->history().at(tick);                  // any thread, lock-free
//   world_raycast(m->level_tree(), entities_of(view), ...);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collision/bsp_tree.hpp"
#include "protocol/shiftcast_generated.h"
#include "server/contact_feed.hpp"
#include "world/match/match_defaults.hpp"
#include "world/match/match_recording.hpp"
#include "world/match/tick_history.hpp"

namespace shiftcast {

struct HostedLevel;
class ShotLog;

struct MatchSummary {
  std::uint32_t match_id = 0;
  std::string level;
  int tick_rate = 0;
  std::uint64_t tick = 0;
  int players = 0;
  int max_players = 0;
  std::uint32_t entities = 0;
};

struct MatchHealth {
  MatchSummary summary;
  double tick_p50_ms = 0;
  double tick_p99_ms = 0;
  std::uint64_t late_ticks = 0;
  std::uint64_t contacts = 0;
  std::uint64_t invariant_violations = 0;
  std::uint64_t replacements = 0;
  std::vector<double> tick_ms_bounds;      // the tick-time histogram: upper bounds in milliseconds
  std::vector<std::uint64_t> tick_counts;  // ticks per bucket since the start, one more (+Inf)
};

struct CreateMatchSpec {
  std::string level;  // a level name from the server's config
  int max_players = kDefaultMaxPlayers;
  int props = 0;
  std::uint32_t seed = 1;
  int tick_rate = 0;      // 0: the server's
  int snapshot_rate = 0;  // 0: the server's (capped at the tick rate)
  std::uint32_t id = 0;   // 0: the next id; else one MatchRegistry::reserve_id() handed out (Agones)
};

struct CreatedMatch {
  wire::ErrorCode error = wire::ErrorCode::Ok;  // UnknownLevel, BadArgument, TooManyConnections (limit)
  std::string detail;
  std::uint32_t match_id = 0;
};

// The read side of one match: every method is safe on any thread.
class MatchHandle {
 public:
  virtual ~MatchHandle() = default;
  virtual std::uint32_t id() const = 0;
  virtual const BspTree& level_tree() const = 0;
  virtual const TickHistory& history() const = 0;
  virtual int tick_rate() const = 0;
  // The view_tick of the client's newest input (lag compensation); nothing for an unknown client.
  virtual std::optional<double> client_view_tick(std::uint64_t client_id) const = 0;
  virtual ContactFeed& contact_feed() = 0;
  virtual MatchHealth health() const = 0;
  virtual bool ended() const = 0;
  // A query this match answered, for its recording (docs/replay.md); any thread. Default: not recorded.
  virtual bool records_queries() const { return false; }
  virtual void record_query(const RecordedQuery& /*query*/) const {}
  // The level as loaded (navmesh included), for floor plans; null when the match has none to show.
  virtual const HostedLevel* hosted_level() const { return nullptr; }
  // The raycasts it answered while a spectator watches (server/spectator/shot_log.hpp); null: none kept.
  virtual ShotLog* shot_log() const { return nullptr; }
};

class MatchDirectory {
 public:
  virtual ~MatchDirectory() = default;
  virtual std::shared_ptr<MatchHandle> find(std::uint32_t match_id) const = 0;
  virtual std::vector<std::shared_ptr<MatchHandle>> list() const = 0;  // ascending ids
  virtual CreatedMatch create(const CreateMatchSpec& spec) = 0;
  // Ends the match: its worker finishes the tick in progress, flushes reliable events and says goodbye
  // to its clients; subscribers get match_ended. UnknownMatch when there is none.
  virtual wire::ErrorCode end(std::uint32_t match_id) = 0;
};

}  // namespace shiftcast
