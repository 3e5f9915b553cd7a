// PlayerInput: what a player pressed for one tick (one "usercmd"), as the wire carries it in
// wire::InputCommand and as the simulation applies it (world/match/player_input.hpp adds the validity rule).
// It lives in protocol/ so that clients, which build on protocol/ alone, send the simulation's own type.
#pragma once

#include <cstdint>

namespace shiftcast {

inline constexpr std::uint8_t kButtonJump = 1u << 0;
inline constexpr std::uint8_t kButtonFire = 1u << 1;

struct PlayerInput {
  float forward = 0;  // [-1, 1]: along the view yaw
  float right = 0;    // [-1, 1]: to the right of the view yaw
  float yaw = 0;      // radians, view direction about +z
  float pitch = 0;    // radians, positive looks up (aims projectiles)
  std::uint8_t buttons = 0;

  bool operator==(const PlayerInput&) const = default;
};

}  // namespace shiftcast
