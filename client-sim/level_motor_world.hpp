// LevelMotorWorld: the character motor's world as a client predicts it, the level's BSP alone. Its sweeps
// answer exactly what the server's player sweeps answer when no entity is near (world/players.cpp's
// PlayerWorld over SimulationState::sweep_among), so a client's prediction of its own movement matches
// the server bit for bit until another player, a prop or a projectile gets in the way.
//
//   LevelMotorWorld world(level.compiled.tree, MotorConfig{});
//   MotorResult r = move_character(config, world, feet, state, input, 1.0f / tick_rate);
//   if (!world.free(feet)) ...   // a quantized snapshot position that ended up in solid
#pragma once

#include "collision/bsp_tree.hpp"
#include "collision/shape.hpp"
#include "world/character_motor.hpp"

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
