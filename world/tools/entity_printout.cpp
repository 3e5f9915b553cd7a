#include "world/tools/entity_printout.hpp"

#include <cinttypes>
#include <cstdio>

namespace shiftcast {

namespace {

void print_one(const Simulation& sim, const Entity& e) {
  std::printf("  %u %-10s pos (%.4f %.4f %.4f) yaw %.4f vel (%.3f %.3f %.3f)", e.id, to_string(e.kind),
              double(e.pose.position.x), double(e.pose.position.y), double(e.pose.position.z),
              double(e.pose.yaw), double(e.velocity.x), double(e.velocity.y), double(e.velocity.z));
  if (const MotorState* m = sim.motor_state(e.id)) {
    std::printf(" on_ground %d ground_entity %u ground_brush %d jump_held %d", m->on_ground ? 1 : 0,
                m->ground_entity, m->ground_brush, m->jump_held ? 1 : 0);
  }
  std::printf("\n");
}

}  // namespace

void print_entities(const Simulation& sim, std::optional<EntityId> only) {
  std::printf("entities at tick %" PRIu64 " (state hash 0x%016" PRIx64 "):\n", sim.tick(), sim.state_hash());
  const Entity* watched = nullptr;
  for (const Entity& e : sim.entities()) {
    if (only && e.id == *only) watched = &e;
  }
  if (only && watched == nullptr) {
    std::printf("  entity %u is not in the match\n", *only);
    return;
  }
  for (const Entity& e : sim.entities()) {
    if (watched == nullptr) {
      print_one(sim, e);
      continue;
    }
    if (&e == watched) continue;
    const float gap = length(world_center(e, e.pose) - world_center(*watched, watched->pose)) -
                      e.bound_radius - watched->bound_radius;
    if (gap > kPrintoutNeighbourhood) continue;
    std::printf("  near, sphere gap %.6f:\n  ", double(gap));
    print_one(sim, e);
  }
  if (watched != nullptr) print_one(sim, *watched);
}

}  // namespace shiftcast
