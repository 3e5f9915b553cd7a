// The character motor: how a player moves through the level and around other entities in one tick,
// Quake style. Collide and slide (at most kMaxClipPlanes clip planes a move), step up stairs up to
// step_height, step down and stick to the floor while walking down stairs and ramps, ground detection
// with a walkable slope limit, gravity and jump.
//
//   MotorConfig config;                       // from the match config (DESIGN.md §3 defaults)
//   MotorState state;                         // per player, persistent across ticks
//   MotorResult r = move_character(config, world, feet, state, input, dt);
//   feet = r.position;                        // never inside solid: every step is a sweep
//
// The motor does not know what it collides with: `MotorWorld::sweep` is the player's own cylinder swept
// against the level and every blocking entity (the simulation answers it with the BSP and the grid).
// Riding and pushing by moving platforms happen outside, in the simulation, before the motor runs: the
// platform's motion is applied to the player as a sweep, then the motor moves the player relative to it.
#pragma once

#include <array>
#include <cstdint>

#include "collision/trace_result.hpp"
#include "collision/vec3.hpp"
#include "world/match/entity.hpp"
#include "world/match/player_input.hpp"

namespace shiftcast {

inline constexpr int kMaxClipPlanes = 4;

struct MotorConfig {
  float radius = 15;
  float height = 56;
  float step_height = 18;
  float gravity = 800;     // units/s²
  float run_speed = 320;   // units/s
  float jump_speed = 270;  // units/s, upward
  float max_slope_degrees = 45;
  float ground_accelerate = 10;  // Quake's pm_accelerate
  float air_accelerate = 1;
  float friction = 6;
  float stop_speed = 100;
  // How far below the feet the ground probe looks: a player within this of a walkable floor stands on it.
  float ground_probe = 0.25f;
};

// The player's own shape for a config: upright cylinder, reference point at the feet.
Shape player_shape(const MotorConfig& config);

struct MotorHit {
  TraceResult trace;
  EntityId entity = kNoEntity;  // the entity hit, or kNoEntity for the level (then trace.brush names it)
};

class MotorWorld {
 public:
  virtual ~MotorWorld() = default;
  // The player's cylinder (player_shape) swept from→to against everything that blocks it.
  virtual MotorHit sweep(Vec3 from, Vec3 to) const = 0;
};

struct MotorState {
  Vec3 velocity{};
  bool on_ground = false;
  Vec3 ground_normal{};  // of the walkable ground while on_ground, else zero (steep is not ground)
  EntityId ground_entity = kNoEntity;  // a prop the player stands on (riding), else kNoEntity
  std::int32_t ground_brush = kNoBrush;
  bool jump_held = false;  // jump needs a release between jumps
};

struct MotorTouch {
  Vec3 normal{};
  Vec3 position{};  // where the player's feet were when it touched
  float time = 0;   // fraction of the tick at the touch
  EntityId entity = kNoEntity;
  std::int32_t brush = kNoBrush;
  float speed_into = 0;  // speed along -normal at the touch (units/s)
};

struct MotorResult {
  Vec3 position{};
  int clip_planes = 0;  // planes clipped against in the slide
  bool stepped_up = false;
  bool stepped_down = false;
  bool jumped = false;
  bool stuck = false;  // started in solid: not moved (the simulation's invariant check re-places it)
  int touch_count = 0;
  std::array<MotorTouch, kMaxClipPlanes + 2> touches{};  // slide hits, then the ground, in order
};

MotorResult move_character(const MotorConfig& config, const MotorWorld& world, Vec3 feet, MotorState& state,
                           const PlayerInput& input, float dt);

}  // namespace shiftcast
