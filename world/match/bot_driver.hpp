// BotDriver: a navmesh bot that turns what it sees each tick into a PlayerInput, as a human player's
// client would: run a Detour path to a random walkable goal, strafe and jump now and then, jump over
// what blocks it, and shoot at the nearest other player in range. Used by the headless `simulate`
// command, the match benchmark and tests to load the simulation the way a match does.
//
//   NavQuery nav(mesh);                              // one per thread
//   BotDriver bot(BotConfig{.tick_rate = 128}, seed, index);
//   const PlayerInput input = bot.think(nav, {.feet = e.pose.position, .motor = *sim.motor_state(id),
//                                             .players = feet_of_all_players, .self = i});
//   sim.set_input(id, input);
//
// Deterministic: the same seed, index and sequence of senses give the same inputs on every run and
// platform. All randomness is one std::mt19937 per bot (its raw 32-bit outputs are standardised) mapped
// to chances and ranges by hand, never through std distributions (their results vary between standard
// libraries).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "collision/bsp_tree.hpp"
#include "collision/vec3.hpp"
#include "world/level/navmesh.hpp"
#include "world/match/character_motor.hpp"
#include "world/match/match_defaults.hpp"
#include "world/match/player_input.hpp"

namespace shiftcast {

// Rates are per second of simulated time and converted to per-tick chances with tick_rate, so a bot
// behaves the same at 20 Hz and at 128 Hz.
struct BotConfig {
  int tick_rate = kDefaultTickRate;  // Hz: the simulation's
  // A path corner counts as reached within this horizontal distance: below the player's radius (15) so
  // bots round doorways close to where Detour's string-pulled path bends, above a tick's run (320/20 =
  // 16 units at 20 Hz would skip past a smaller radius without ever being inside it).
  float corner_radius = 20;
  // Getting this much closer to the current corner than ever before counts as progress; a bot that makes
  // none for stuck_seconds gives up on its path and picks a new goal.
  float progress_distance = 8;
  float stuck_seconds = 1.5f;
  // Making no progress for this long while on the ground means something is in the way: jump.
  float blocked_seconds = 0.25f;
  // Between two jumps of one bot (the motor also needs the button released between jumps).
  float jump_cooldown_seconds = 0.5f;
  float jump_per_second = 0.2f;    // jumps for no reason, like players do
  float strafe_per_second = 0.5f;  // strafes started
  float strafe_seconds = 0.4f;     // how long one strafe lasts
  float fire_per_second = 2;       // fire presses (the simulation's fire_interval limits actual shots)
  float fire_range = 1024;         // players farther than this are not aimed at
  float eye_height = 50;           // where shots leave, above the feet (Quake: 50 of 56)
  float aim_height = 28;           // aimed at: the middle of a 56-unit player
  // Random goals tried per repath before wandering instead: goals on pillar tops and other islands are
  // unreachable (half of the arena's random points are), so a few tries are not enough.
  int goal_attempts = 16;
  float wander_seconds = 1;  // running in a random direction when no path was found
};

// What the bot knows this tick.
struct BotSenses {
  Vec3 feet{};
  const MotorState* motor = nullptr;  // null: treated as on the ground and still
  std::span<const Vec3> players;      // every player's feet, the bot's own included
  int self = -1;                      // the bot's index in `players` (-1: not in it)
  bool may_fire = true;               // the caller's budget of projectiles in flight
  const BspTree* level = nullptr;     // when set, only players in line of sight are aimed at
};

class BotDriver {
 public:
  BotDriver(const BotConfig& config, std::uint32_t seed, std::uint32_t bot_index);

  // The input for one tick. `nav` is the calling thread's query object over the level's navmesh.
  PlayerInput think(NavQuery& nav, const BotSenses& senses);

  // For statistics and tests.
  std::uint64_t repaths() const { return repaths_; }
  std::uint64_t failed_paths() const { return failed_paths_; }
  std::uint64_t jumps() const { return jumps_; }
  std::uint64_t fire_presses() const { return fire_presses_; }
  bool has_path() const { return corner_ < corners_.size(); }
  std::span<const Vec3> path() const { return corners_; }

 private:
  std::uint32_t next() { return static_cast<std::uint32_t>(rng_()); }
  bool chance(float per_second);          // true with per_second / tick_rate, per tick
  float unit();                           // uniform in [0, 1)
  int ticks(float seconds) const;         // at least 1
  void repath(NavQuery& nav, Vec3 feet);  // new goal and path, or wandering
  // Index in senses.players of the nearest other player within range (and sight), or -1.
  int pick_target(const BotSenses& senses, Vec3 eye) const;

  BotConfig config_;
  std::mt19937 rng_;
  std::uint32_t nav_rng_;  // NavQuery::random_point's state, drawn from rng_

  std::vector<Vec3> corners_;  // Detour's straight path; reused between repaths
  std::size_t corner_ = 0;
  float best_distance_ = 0;  // closest to the current corner so far
  int no_progress_ticks_ = 0;
  int wander_ticks_ = 0;  // > 0: running along wander_yaw_ instead of a path
  float wander_yaw_ = 0;
  float move_yaw_ = 0;  // the last direction the bot ran in
  int strafe_ticks_ = 0;
  float strafe_ = 0;
  int jump_cooldown_ = 0;

  std::uint64_t repaths_ = 0;
  std::uint64_t failed_paths_ = 0;
  std::uint64_t jumps_ = 0;
  std::uint64_t fire_presses_ = 0;
};

// The bot's seed for (match seed, bot index): a hash, so neighbouring indices get unrelated streams.
std::uint32_t bot_seed(std::uint32_t seed, std::uint32_t bot_index);

}  // namespace shiftcast
