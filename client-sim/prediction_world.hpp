// PredictionWorld: the character motor's world as a real game client predicts it: the level and the other
// players at their poses in the newest snapshot (dequantized). Each sweep is answered by the server's own
// steps (world/match/entity_sweep.hpp): the level by sweep_level, bit for bit what the server's player sweep
// computes, and each other player by sweep_entity_step, the per-entity step of the server's tick. So a
// player that walks into a standing player is stopped by the client exactly where the server stops it.
// Moving players are extrapolated to the tick the predicted command will run at on the server (their
// velocity from the last two snapshots; a lower id has already moved in that tick, a higher one not yet,
// as the server moves players in id order). What remains is the others' change of course since the
// snapshot, props and snapshot quantization.
//
//   PredictionWorld world(level_world, MotorConfig{});      // level_world: the thread's LevelMotorWorld
//   world.set_own_id(own);
//   world.set_players(others, snapshot_tick);               // each snapshot, ascending ids, without self
//                                                           // (or clear_players(tick), add_player(p) each)
//   world.begin_move(feet, yaw, ticks_after_snapshot);      // before each command's move_character
//   MotorResult r = move_character(config, world, feet, state, input, dt);
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "client-sim/level_motor_world.hpp"
#include "world/match/character_motor.hpp"
#include "world/match/entity.hpp"

namespace shiftcast {

// Velocities come from two snapshots at most this many ticks apart; a player that moved faster than
// kMaxExtrapolatedStep units per tick between them (a respawn) is taken to stand.
inline constexpr std::uint64_t kMaxVelocityGapTicks = 8;
inline constexpr float kMaxExtrapolatedStep = 32;

// Another player as a snapshot shows it.
struct SnapshotPlayer {
  EntityId id = kNoEntity;
  Vec3 feet{};
  float yaw = 0;
};

class PredictionWorld final : public MotorWorld {
 public:
  PredictionWorld(const LevelMotorWorld& level, const MotorConfig& config);

  // The own player's id: who moves before it in a server tick.
  void set_own_id(EntityId own) { own_ = own; }
  // The other players of the snapshot of server tick `snapshot_tick`, ascending ids (ties between two
  // players hit at the same fraction go to the lower id, as on the server), the own player left out. A
  // player also in the previous snapshot (at most kMaxVelocityGapTicks older) gets its velocity from the
  // two; tick 0 means no timing (players stand where they are shown).
  void set_players(std::span<const SnapshotPlayer> players, std::uint64_t snapshot_tick = 0);
  // The same one player at a time (no scratch vector): clear, then add in ascending ids.
  void clear_players(std::uint64_t snapshot_tick = 0);
  void add_player(const SnapshotPlayer& player);
  // Before one command's move from `feet` with the own player turned by `yaw` (its previous command's, as
  // on the server): a player whose cylinder the own one already overlaps there (two quantized snapshot
  // positions, or one that walked into our predicted spot) is left out of this move, since a start inside
  // it would freeze the motor where the server, which keeps them apart, moves on.
  // `ticks_after_snapshot`: the command runs this many server ticks after the snapshot's (its sequence
  // minus the snapshot's acknowledged one); each other player is extrapolated that far.
  void begin_move(Vec3 feet, float yaw, int ticks_after_snapshot = 0);
  MotorHit sweep(Vec3 from, Vec3 to) const override;

  bool free(Vec3 feet) const { return level_.free(feet); }  // of the level
  const LevelMotorWorld& level() const { return level_; }
  std::size_t players() const { return others_.size(); }
  std::uint64_t entity_sweeps() const { return entity_sweeps_; }  // exact searches run, for the cost

 private:
  const LevelMotorWorld& level_;
  Shape shape_;
  Entity prototype_;  // a player with its bounds, no id or pose: what add_player copies
  float yaw_ = 0;
  float cull_radius_ = 0;  // two players' bounding spheres and the contact distance
  EntityId own_ = kNoEntity;
  std::uint64_t tick_ = 0;           // of the snapshot the players come from
  std::vector<Entity> others_;       // ascending ids, at their extrapolated poses for the current move
  std::vector<Vec3> shown_;          // per others_ entry: the snapshot's feet
  std::vector<Vec3> velocity_;       // per others_ entry: units per tick
  std::vector<char> left_out_;       // per others_ entry, for the current move
  std::uint64_t previous_tick_ = 0;  // the snapshot before, for velocities
  std::vector<std::pair<EntityId, Vec3>> previous_;
  mutable std::uint64_t entity_sweeps_ = 0;
  mutable std::vector<std::size_t> near_start_;  // sweep(): players it started near (the skin guard's)
};

}  // namespace shiftcast
