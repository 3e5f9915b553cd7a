#include "client-sim/level_motor_world.hpp"

namespace shiftcast {

LevelMotorWorld::LevelMotorWorld(const BspTree& tree, const MotorConfig& config)
    : tree_(tree), shape_(player_shape(config)) {}

MotorHit LevelMotorWorld::sweep(Vec3 from, Vec3 to) const {
  // The same translation from a level trace to a motor hit as the server's player sweep: a refused trace
  // (non-finite input) is a start in solid, all_solid follows from start_solid at fraction 0.
  MotorHit m;
  const TraceResult t = tree_.trace(shape_, from, to);
  if (t.status != QueryStatus::kOk) {
    m.trace.hit = true;
    m.trace.start_solid = true;
    m.trace.all_solid = true;
    m.trace.fraction = 0;
    m.trace.end_position = from;
    return m;
  }
  m.trace.end_position = to;
  if (t.hit) {
    m.trace.hit = true;
    m.trace.fraction = t.fraction;
    m.trace.normal = t.normal;
    m.trace.end_position = t.end_position;
    m.trace.brush = t.brush;
    m.trace.start_solid = t.start_solid;
    m.trace.all_solid = t.start_solid && t.fraction == 0.0f;
  }
  return m;
}

bool LevelMotorWorld::free(Vec3 feet) const {
  const OverlapResult o = tree_.overlap(shape_, feet);
  return o.status == QueryStatus::kOk && !o.overlap;
}

}  // namespace shiftcast
