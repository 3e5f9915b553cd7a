// The shared ground of the character-motor tests (tests/world/character_motor*_test.cpp): the tick, the
// tolerances, a MotorWorld over a level's BSP alone, a floor and a player standing on it, and inputs.
//
// Everything is in namespace shiftcast::character_motor_test; the tests live there too and use it
// unqualified.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <numbers>
#include <utility>
#include <vector>

#include "collision/brush.hpp"
#include "collision/bsp_build.hpp"
#include "world/match/character_motor.hpp"

namespace shiftcast::character_motor_test {

inline constexpr float kDt = 1.0f / 128.0f;
inline constexpr double kPi = std::numbers::pi;
// Positions are float traces of float inputs: a few ulps at a few hundred units, summed over ticks.
inline constexpr float kPositionTolerance = 1e-3f;
// Velocities are stored as float between ticks while the oracles run in double.
inline constexpr double kSpeedTolerance = 1e-3;
inline const MotorConfig kConfig{};

inline BspTree build(const std::vector<Brush>& brushes) {
  BspBuildResult built = build_bsp(brushes, {});
  EXPECT_EQ(built.error, BspBuildError::kNone);
  return std::move(built.tree);
}

class LevelWorld : public MotorWorld {
 public:
  explicit LevelWorld(const BspTree& tree) : tree_(tree) {}
  MotorHit sweep(Vec3 from, Vec3 to) const override { return {tree_.trace(player_shape(kConfig), from, to)}; }

 protected:
  const BspTree& tree_;
};

inline const Brush kFloor = brush_from_box({-2048, -2048, -64}, {2048, 2048, 0});
inline const Vec3 kOnFloor{0, 0, kSurfaceBackoff};

inline PlayerInput run(float forward, float yaw = 0, float right = 0, std::uint8_t buttons = 0) {
  return {forward, right, yaw, 0, buttons};
}

}  // namespace shiftcast::character_motor_test
