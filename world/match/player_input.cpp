#include "world/match/player_input.hpp"

#include <cmath>

namespace shiftcast {

namespace {
// Yaw and pitch are angles in radians; anything beyond a few turns is not a view direction but garbage.
constexpr float kMaxAngle = 64.0f;
}  // namespace

bool input_valid(const PlayerInput& input) {
  const auto in_unit = [](float v) { return std::isfinite(v) && v >= -1.0f && v <= 1.0f; };
  const auto angle = [](float v) { return std::isfinite(v) && std::abs(v) <= kMaxAngle; };
  return in_unit(input.forward) && in_unit(input.right) && angle(input.yaw) && angle(input.pitch) &&
         (input.buttons & ~(kButtonJump | kButtonFire)) == 0;
}

}  // namespace shiftcast
