// The match's world as every snapshot of one tick carries it: each entity quantized once (position in
// the wire's 1/16 unit, yaw in its kind's step, the sleep flag), ascending by id as the simulation keeps
// them. Match::send_frames builds it once per snapshot tick and shares it among its clients' frames; the
// snapshot pipeline benchmark builds it the same way.
//
//   auto world = std::make_shared<SnapshotState>();
//   quantize_world(sim.entities(), *world);
#pragma once

#include <cstdint>
#include <span>

#include "protocol/snapshot_delta.hpp"
#include "world/match/entity.hpp"

namespace shiftcast {

inline void quantize_world(std::span<const Entity> entities, SnapshotState& out) {
  out.clear();
  out.reserve(entities.size());
  for (const Entity& e : entities) {
    const auto kind = static_cast<std::uint8_t>(e.kind);
    out.emplace_back(e.id, kind, std::uint8_t(e.asleep ? 1 : 0), quantize_entity_yaw(e.pose.yaw, kind),
                     quantize_position(wire::Vec3f(e.pose.position.x, e.pose.position.y, e.pose.position.z)));
  }
}

}  // namespace shiftcast
