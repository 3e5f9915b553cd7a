// SteppedMatchDirectory: a MatchDirectory over real matches for the RPC tests: real levels (configs/levels),
// real Simulations populated by MatchSetup (navmesh bots, projectiles, props), real TickHistory. Nothing is
// mocked; only the clock is the test's: the test thread steps each match itself (no worker thread, no
// timer), and each step publishes the tick's contacts to the match's ContactFeed as the server's match
// worker does. RPC threads meanwhile read the histories and feeds through the MatchHandle interface.
//
//   SteppedMatchDirectory directory({{"arena", source_path("configs/levels/arena.map")}});
//   std::uint32_t id = directory.create({.level = "arena", .max_players = 8, .props = 10}).match_id;
//   SteppedMatch& m = *directory.stepped(id);
//   m.step();                                           // test thread: one tick, contacts published
//   m.simulation().contacts();                          // the oracle for what subscribers received
//
// Levels are imported and compiled (BSP and navmesh) on the first match that uses them and shared after.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/match_directory.hpp"
#include "world/level/compiled_level.hpp"
#include "world/level/navmesh.hpp"
#include "world/match/match_defaults.hpp"
#include "world/match/match_setup.hpp"

namespace shiftcast {

struct SimLevelSource {
  std::string name;  // what CreateMatch names
  std::string path;  // a .map, .bsp or .obj source
};

struct SimLevel {
  std::string name;
  CompiledLevel compiled;
  std::unique_ptr<NavMesh> navmesh;
};

struct SteppedMatchOptions {
  int tick_rate = kDefaultTickRate;
  int projectiles = 24;          // kept about this many in flight
  float settle_seconds = 0.25f;  // MatchSetup's settling ticks before the first published one counts
};

class SteppedMatch final : public MatchHandle {
 public:
  // Null (and *error set) when the scene cannot be built on the level.
  static std::shared_ptr<SteppedMatch> create(std::uint32_t id, std::shared_ptr<const SimLevel> level,
                                              const CreateMatchSpec& spec, const SteppedMatchOptions& options,
                                              std::string* error);

  // Test thread only: one tick (bots' inputs, the step), then the tick's contacts to the feed.
  void step();
  Simulation& simulation() { return scene_->simulation(); }
  MatchSetup& scene() { return *scene_; }
  // The view tick a client's newest input carried (what ClientView rewinds resolve to). Any thread.
  void set_client_view_tick(std::uint64_t client_id, double tick);
  // Ends the match: subscribers get match_ended. Any thread.
  void end();

  std::uint32_t id() const override { return id_; }
  const BspTree& level_tree() const override { return level_->compiled.tree; }
  const TickHistory& history() const override { return scene_->simulation().history(); }
  int tick_rate() const override { return tick_rate_; }
  std::optional<double> client_view_tick(std::uint64_t client_id) const override;
  ContactFeed& contact_feed() override { return feed_; }
  MatchHealth health() const override;
  bool ended() const override { return ended_.load(); }

 private:
  SteppedMatch(std::uint32_t id, std::shared_ptr<const SimLevel> level, int tick_rate);
  void publish_contacts();
  void remember_kinds();
  void update_health();

  std::uint32_t id_;
  std::shared_ptr<const SimLevel> level_;
  int tick_rate_;
  int max_players_ = 0;
  std::unique_ptr<MatchSetup> scene_;
  ContactFeed feed_;
  std::atomic<bool> ended_{false};
  // Kinds of every entity seen, so a contact naming an entity removed in its tick (a projectile that hit)
  // still carries the right kind. Test thread only.
  std::unordered_map<EntityId, EntityKind> kinds_;

  mutable std::mutex mutex_;  // guards the two below (written by the test thread, read by RPC threads)
  std::map<std::uint64_t, double> view_ticks_;
  MatchHealth health_;
};

class SteppedMatchDirectory final : public MatchDirectory {
 public:
  explicit SteppedMatchDirectory(std::vector<SimLevelSource> levels, SteppedMatchOptions options = {});

  std::shared_ptr<MatchHandle> find(std::uint32_t match_id) const override;
  std::vector<std::shared_ptr<MatchHandle>> list() const override;
  CreatedMatch create(const CreateMatchSpec& spec) override;
  wire::ErrorCode end(std::uint32_t match_id) override;

  // The match itself, for the test thread to step (null when there is none).
  std::shared_ptr<SteppedMatch> stepped(std::uint32_t match_id) const;

 private:
  std::shared_ptr<const SimLevel> level(const std::string& name, std::string* error);

  std::vector<SimLevelSource> sources_;
  SteppedMatchOptions options_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const SimLevel>> levels_;
  std::map<std::uint32_t, std::shared_ptr<SteppedMatch>> matches_;
  std::uint32_t next_id_ = 1;
};

}  // namespace shiftcast
