// The own player's exact state as a ServerFrame carries it (ServerFrame.own, written by the server's
// own_state_on_wire): the feet and the motor state after the acknowledged command, ready for
// MovementCheck::on_authoritative to restart the prediction from.
//
//   if (const auto own = session.own_state()) check.on_authoritative(session.input_ack(),
//   exact_own_state(*own));
#pragma once

#include "collision/vec3.hpp"
#include "protocol/shiftcast_generated.h"
#include "world/match/character_motor.hpp"

namespace shiftcast {

struct ExactOwnState {
  Vec3 feet{};
  MotorState motor;
};

inline ExactOwnState exact_own_state(const wire::OwnState& own) {
  const auto vec = [](const wire::Vec3f& v) { return Vec3{v.x(), v.y(), v.z()}; };
  ExactOwnState s;
  s.feet = vec(own.position());
  s.motor.velocity = vec(own.velocity());
  s.motor.ground_normal = vec(own.ground_normal());
  s.motor.on_ground = (own.flags() & 1) != 0;
  s.motor.jump_held = (own.flags() & 2) != 0;
  s.motor.ground_entity = own.ground_entity();
  s.motor.ground_brush = own.ground_brush();
  return s;
}

}  // namespace shiftcast
