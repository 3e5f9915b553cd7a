// PlayerInput: what a client sends for one tick (one "usercmd"). The simulation applies exactly one per
// player per tick; the server fills it from the network, bots and tests fill it directly.
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

// Values outside the ranges above (or NaN) are not applied: the simulation counts them and treats the
// input as "no input". The check is here so the server refuses the same inputs the simulation would.
bool input_valid(const PlayerInput& input);

}  // namespace shiftcast
