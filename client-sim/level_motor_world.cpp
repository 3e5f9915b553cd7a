#include "client-sim/level_motor_world.hpp"

#include "world/match/entity_sweep.hpp"

namespace shiftcast {

LevelMotorWorld::LevelMotorWorld(const BspTree& tree, const MotorConfig& config)
    : tree_(tree), shape_(player_shape(config)) {}

MotorHit LevelMotorWorld::sweep(Vec3 from, Vec3 to) const {
  // The server's own level step and translation (world/match/entity_sweep.hpp): a refused trace (non-finite
  // input) is a start in solid, all_solid follows from start_solid at fraction 0.
  return to_motor_hit(sweep_level(tree_, shape_, from, to));
}

bool LevelMotorWorld::free(Vec3 feet) const {
  const OverlapResult o = tree_.overlap(shape_, feet);
  return o.status == QueryStatus::kOk && !o.overlap;
}

}  // namespace shiftcast
