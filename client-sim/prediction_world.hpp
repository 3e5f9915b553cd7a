// PredictionWorld: the character motor's world as a real game client predicts it: the level and the other
// players at their poses in the newest snapshot (dequantized). Each sweep is answered by the server's own
// steps (world/entity_sweep.hpp): the level by sweep_level, bit for bit what the server's player sweep
// computes, and each other player by sweep_entity_step, the per-entity step of the server's tick. So a
// player that walks into a standing player is stopped by the client exactly where the server stops it;
// what remains is the others' motion since that snapshot, props and snapshot quantization.
//
//   PredictionWorld world(level_world, MotorConfig{});      // level_world: the thread's LevelMotorWorld
//   world.set_players(others);                              // each snapshot, ascending ids, without self
//                                                           // (or clear_players() and add_player(p) each)
//   world.begin_move(feet, yaw);                            // before each command's move_character
//   MotorResult r = move_character(config, world, feet, state, input, dt);
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "client-sim/level_motor_world.hpp"
#include "world/character_motor.hpp"
#include "world/entity.hpp"

namespace shiftcast {

// Another player as a snapshot shows it.
struct SnapshotPlayer {
  EntityId id = kNoEntity;
  Vec3 feet{};
  float yaw = 0;
};

class PredictionWorld final : public MotorWorld {
 public:
  PredictionWorld(const LevelMotorWorld& level, const MotorConfig& config);

  // The other players of the newest snapshot, ascending ids (ties between two players hit at the same
  // fraction go to the lower id, as on the server), the own player left out.
  void set_players(std::span<const SnapshotPlayer> players);
  // The same one player at a time (no scratch vector): clear, then add in ascending ids.
  void clear_players();
  void add_player(const SnapshotPlayer& player);
  // Before one command's move from `feet` with the own player turned by `yaw` (its previous command's, as
  // on the server): a player whose cylinder the own one already overlaps there (two quantized snapshot
  // positions, or one that walked into our predicted spot) is left out of this move, since a start inside
  // it would freeze the motor where the server, which keeps them apart, moves on.
  void begin_move(Vec3 feet, float yaw);
  MotorHit sweep(Vec3 from, Vec3 to) const override;

  bool free(Vec3 feet) const { return level_.free(feet); }  // of the level
  const LevelMotorWorld& level() const { return level_; }
  std::size_t players() const { return others_.size(); }
  std::uint64_t entity_sweeps() const { return entity_sweeps_; }  // exact searches run, for the cost

 private:
  const LevelMotorWorld& level_;
  Shape shape_;
  float yaw_ = 0;
  float cull_radius_ = 0;       // two players' bounding spheres and the contact distance
  std::vector<Entity> others_;  // ascending ids
  std::vector<char> left_out_;  // per others_ entry, for the current move
  mutable std::uint64_t entity_sweeps_ = 0;
};

}  // namespace shiftcast
