// The own player's exact state on the wire (ServerFrame.own): the feet and the character motor's state
// after the command the frame acknowledges, unquantized, so the client's prediction restarts from
// exactly what the server holds. Match::send_frames and send_keepalives fill it per client:
//
//   const std::optional<wire::OwnState> own = own_state(sim, player);   // nothing before it spawned
//   send(connection.build_frame(tick, world, focus, now, own ? &*own : nullptr));
//
// The reader's side is client-sim/own_state.hpp (a client links protocol alone, so it cannot share this).
#pragma once

#include <optional>

#include "collision/vec3.hpp"
#include "protocol/shiftcast_generated.h"
#include "world/match/character_motor.hpp"
#include "world/match/simulation.hpp"

namespace shiftcast {

inline constexpr std::uint8_t kOwnStateOnGround = 1;
inline constexpr std::uint8_t kOwnStateJumpHeld = 2;

inline wire::OwnState own_state_on_wire(Vec3 feet, const MotorState& m) {
  const auto flags =
      std::uint8_t((m.on_ground ? kOwnStateOnGround : 0) | (m.jump_held ? kOwnStateJumpHeld : 0));
  return wire::OwnState(wire::Vec3f(feet.x, feet.y, feet.z),
                        wire::Vec3f(m.velocity.x, m.velocity.y, m.velocity.z),
                        wire::Vec3f(m.ground_normal.x, m.ground_normal.y, m.ground_normal.z), m.ground_entity,
                        m.ground_brush, flags);
}

// The player's state as the simulation holds it now (after the newest command it ran); nothing when it is
// not (or no longer) a player of `sim`.
inline std::optional<wire::OwnState> own_state(const Simulation& sim, EntityId player) {
  const Entity* e = sim.find(player);
  const MotorState* m = sim.motor_state(player);
  if (e == nullptr || m == nullptr) return std::nullopt;
  return own_state_on_wire(e->pose.position, *m);
}

}  // namespace shiftcast
