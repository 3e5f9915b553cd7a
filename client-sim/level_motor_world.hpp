// LevelMotorWorld: the character motor's world over the level's BSP alone, shared read-only by a thread's
// clients. Its sweeps are the server's own level step (world/match/entity_sweep.hpp sweep_level, the one
// SimulationState::sweep_among runs for a player), so they answer exactly what the server's player sweeps
// answer when no entity is near. A client's prediction adds the other players on top of it
// (client-sim/prediction_world).
//
//   LevelMotorWorld world(level.compiled.tree, MotorConfig{});
//   MotorResult r = move_character(config, world, feet, state, input, 1.0f / tick_rate);
//   if (!world.free(feet)) ...   // a quantized snapshot position that ended up in solid
#pragma once

#include "collision/bsp_tree.hpp"
#include "collision/shape.hpp"
#include "world/match/character_motor.hpp"

namespace shiftcast {

class LevelMotorWorld final : public MotorWorld {
 public:
  LevelMotorWorld(const BspTree& tree, const MotorConfig& config);

  MotorHit sweep(Vec3 from, Vec3 to) const override;
  // True when the player's cylinder at `feet` overlaps no level brush.
  bool free(Vec3 feet) const;
  const BspTree& tree() const { return tree_; }

 private:
  const BspTree& tree_;
  Shape shape_;
};

}  // namespace shiftcast
