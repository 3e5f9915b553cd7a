// MatchSetup: how a match's world is built. Every hosted match (server/match.cpp) and its replay are built
// through make_hosted_match_setup; the headless `simulate` command, the match benchmark and tests populate
// fuller scenes with MatchSetup::create. Everything is placed from one seed, so a scene is reproducible
// bit for bit.
//
//   kMatch    players at the level's spawn points (then random walkable points), driven by BotDrivers;
//             props: kinematic lifts (up and down 64–128 units), sliding platforms, doors swinging 90°
//             about their hinge, concave U-shaped cradles riding as platforms, and crates dropped from
//             32–64 units; about `projectiles` in flight (bots fire, top-ups from random players' eyes).
//   kLanding  Blow's worst case: cradles and crates (some in the cradles) at rest, then every player
//             dropped at the same tick from one height in 64–128 units above a crate top or a cradle
//             floor, so they all land in the same tick; repeated every landing_period_seconds.
//
//   MatchSetupResult made = MatchSetup::create(tree, level, &navmesh, sim_config, {.players = 32});
//   if (!made.ok()) { log(made.error); return; }
//   MatchSetup& scene = *made.scene;
//   for (...) {
//     scene.before_step();            // bots' inputs, projectile top-ups, landing drops: not the tick
//     scene.simulation().step();      // what a benchmark times
//     scene.after_step();             // landing bookkeeping
//   }
//
// The level's tree and navmesh must outlive the scene. Placement never puts a prop or a player where it
// overlaps the level or anything placed before it (boxes kept a margin apart, movers over their whole
// path), so a correct simulation has no invariant violation to report from the scene itself.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collision/aabb.hpp"
#include "world/level/level.hpp"
#include "world/level/navmesh.hpp"
#include "world/match/bot_driver.hpp"
#include "world/match/match_defaults.hpp"
#include "world/match/simulation.hpp"

namespace shiftcast {

enum class SceneKind : std::uint8_t { kMatch, kLanding };
const char* to_string(SceneKind kind);
std::optional<SceneKind> parse_scene_kind(std::string_view text);

struct MatchSetupConfig {
  SceneKind kind = SceneKind::kMatch;
  int players = 32;
  int projectiles = 256;  // kept about this many in flight
  int props = 200;
  std::uint32_t seed = 1;
  BotConfig bot;  // tick_rate is taken from the simulation config
  // No-input ticks run by create() so spawned players and dropped crates come to rest before anything
  // is measured: crates fall at most 64 units (0.4 s) and sleep SimulationConfig::sleep_ticks later.
  float settle_seconds = 1;
  float landing_period_seconds = 2;  // kLanding: time between drops
};

// What create() managed to place: a crowded level can refuse some props (each kind is tried at a bounded
// number of random walkable points).
struct SceneCounts {
  int players = 0;
  int players_at_spawns = 0;
  int lifts = 0;
  int platforms = 0;
  int doors = 0;
  int cradles = 0;
  int crates = 0;
  int props_skipped = 0;
};

class MatchSetup;

// Tick times in milliseconds summarised the one way every report in shiftcast does: nearest-rank
// percentiles (the smallest sample with at least p% of the samples at or below it), so p99 of 2000 ticks
// is the 1980th fastest, a tick that really happened, never an interpolation.
struct TickTimeSummary {
  std::size_t count = 0;
  double p50 = 0;
  double p99 = 0;
  double max = 0;
  double mean = 0;
};
TickTimeSummary summarize_tick_times(std::vector<double> milliseconds);

struct MatchSetupResult {
  std::unique_ptr<MatchSetup> scene;  // null on error
  std::string error;

  bool ok() const { return scene != nullptr; }
};

// A hosted match's scene (server/match.cpp) and its replay (world/tools/replay_command.cpp) are built by this
// one function, so a recording re-runs on exactly the world the server ran: no players or projectiles
// (clients join later), the match's props from its seed, settled. Only the tick rate and the level-check
// period differ from SimulationConfig's defaults (the period's default depends on the build, so a replay
// passes the recorded one).
struct HostedMatchOptions {
  int tick_rate = kDefaultTickRate;
  int props = 0;
  std::uint32_t seed = 1;
  int level_check_period = kDefaultLevelCheckPeriod;
};
MatchSetupResult make_hosted_match_setup(const BspTree& tree, const Level& level, const NavMesh* navmesh,
                                         const HostedMatchOptions& setup);

class MatchSetup {
 public:
  // Fails (with the reason) when the level has no navmesh or no player can be placed.
  static MatchSetupResult create(const BspTree& tree, const Level& level, const NavMesh* navmesh,
                                 const SimulationConfig& sim_config, const MatchSetupConfig& config);
  ~MatchSetup();
  MatchSetup(const MatchSetup&) = delete;
  MatchSetup& operator=(const MatchSetup&) = delete;

  // Everything a match's clients and game code would do before the tick: bots' inputs, projectile
  // top-ups, the landing scene's drops.
  void before_step();
  // Bookkeeping that reads the tick's outcome (the landing window).
  void after_step();
  // before_step, step, after_step.
  void step();

  Simulation& simulation() { return *sim_; }
  const Simulation& simulation() const { return *sim_; }
  const MatchSetupConfig& config() const { return config_; }
  const SceneCounts& counts() const { return counts_; }
  std::span<const EntityId> players() const { return players_; }
  std::uint64_t projectiles_topped_up() const { return topped_up_; }
  int projectiles_alive() const;

  // kLanding: whether the tick just stepped was in a landing window (from the drop until every dropped
  // player stands on something, at most one landing period), and how many drops have happened.
  bool in_landing_window() const { return last_in_window_; }
  int drops() const { return drops_; }
  int dropped_players() const { return int(players_.size()); }  // in the last drop
  int landed_players() const { return landed_; }                // of the last drop, so far
  int last_window_ticks() const { return window_ticks_; }       // length of the last drop's window so far

 private:
  MatchSetup(const BspTree& tree, const Level& level, const NavMesh* navmesh,
             const SimulationConfig& sim_config, const MatchSetupConfig& config);
  std::string populate();
  void place_players();
  void place_props();
  bool place_mover(int kind_index);
  bool place_crate(std::optional<Vec3> above);
  void settle();
  int drive_bots();  // the number of bots pressing fire
  void top_up_projectiles(int bot_presses);
  void drop_players();

  std::uint32_t next();
  float uniform(float lo, float hi);
  std::optional<Vec3> random_walkable();
  bool box_is_clear(const Aabb& box) const;  // against everything placed, with a margin

  const BspTree& tree_;
  const Level& level_;
  const NavMesh* navmesh_;
  MatchSetupConfig config_;
  std::unique_ptr<Simulation> sim_;
  std::unique_ptr<NavQuery> nav_;
  std::uint32_t rng_state_;  // the scene's own stream: splitmix32 steps (see next())
  std::uint32_t nav_rng_;    // NavQuery::random_point's

  int lift_model_ = -1;
  int platform_model_ = -1;
  int door_model_ = -1;
  int cradle_model_ = -1;
  int crate_model_ = -1;

  std::vector<Aabb> placed_;  // world boxes of everything placed (movers: over their whole path)
  std::vector<EntityId> players_;
  std::vector<BotDriver> bots_;
  std::vector<EntityId> structures_;  // kLanding: crates and cradles players land on
  std::vector<Vec3> feet_scratch_;
  SceneCounts counts_;
  std::uint64_t topped_up_ = 0;

  int drops_ = 0;
  bool window_open_ = false;
  bool last_in_window_ = false;
  int window_ticks_ = 0;
  int landed_ = 0;
  int ticks_to_next_drop_ = 0;
};

}  // namespace shiftcast
