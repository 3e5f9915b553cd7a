// Players: the character motor for each player in id order, against the level, props and the players
// that already moved this tick, then firing. A player runs each command it was given this tick
// (Simulation::set_inputs) once, in order, one motor step of dt each, as a Quake server runs user commands;
// without set_inputs it runs its last input once.
#include <cmath>
#include <span>

#include "world/match/entity_sweep.hpp"
#include "world/match/simulation_state_internal.hpp"

namespace shiftcast {

namespace {

// Where shots leave from: eye height as a fraction of the player's height (Quake: 50 of 56 units).
constexpr float kEyeHeightFraction = 50.0f / 56.0f;

// The farthest the motor can take a player's feet in one tick, for gathering its candidates once: its
// speed after a full tick of acceleration, a jump and gravity, a step up and a step down, and the probe.
float reach_in_one_tick(const MotorConfig& m, Vec3 velocity, float dt) {
  const float speed = length(velocity) + m.run_speed + m.jump_speed + m.gravity * dt;
  return speed * dt + 2 * m.step_height + m.ground_probe;
}

class PlayerWorld final : public MotorWorld {
 public:
  PlayerWorld(SimulationState& state, const Entity& self, std::span<const EntityId> candidates)
      : state_(state), self_(self), candidates_(candidates) {}

  MotorHit sweep(Vec3 from, Vec3 to) const override {
    // Players walk through projectiles: a projectile that meets a player is resolved by the projectile.
    return to_motor_hit(state_.sweep_among(self_, from, to, false, kLayerProjectile, kNoEntity, candidates_));
  }

 private:
  SimulationState& state_;
  const Entity& self_;
  std::span<const EntityId> candidates_;
};

void fire(SimulationState& s, const Entity& player, const PlayerInput& input) {
  const float cp = std::cos(input.pitch);
  const Vec3 dir{cp * std::cos(input.yaw), cp * std::sin(input.yaw), std::sin(input.pitch)};
  const Vec3 eye = player.pose.position + Vec3{0, 0, s.config.motor.height * kEyeHeightFraction};
  // A shot from inside a wall or ceiling is not fired (it would start in solid).
  if (s.level.overlap(Shape::sphere(s.config.projectile_radius), eye).overlap) return;
  Entity e;
  e.kind = EntityKind::kProjectile;
  e.shape = Shape::sphere(s.config.projectile_radius);
  e.pose = {eye, 0};
  e.velocity = dir * s.config.projectile_speed;
  e.layer = kLayerProjectile;
  e.mask = kMaskProjectile;
  e.owner = player.id;
  s.spawned.push_back(e);
  ++s.counters.projectiles_fired;
}

// One command: one motor step of dt for player i, its touches, and firing (the cooldown counts the
// player's commands, so a player's own time is its commands).
void run_command(SimulationState& s, std::size_t i, const PlayerInput& input, int fire_ticks) {
  EntityExtra& x = s.extras[i];
  const Entity self = s.entities[i];
  // Every sweep of this step stays within reach of its start: gather what it can meet once.
  Aabb box = world_box(self, self.pose);
  const float reach = reach_in_one_tick(s.config.motor, x.motor.velocity, s.dt) + kContactDistance;
  box.min -= Vec3{reach, reach, reach};
  box.max += Vec3{reach, reach, reach};
  s.grid.query(box, s.player_candidates);
  const PlayerWorld world(s, self, s.player_candidates);
  const MotorResult r = move_character(s.config.motor, world, self.pose.position, x.motor, input, s.dt);

  Entity& e = s.entities[i];  // s.sweep does not add or remove entities, so the reference holds
  e.pose.position = r.position;
  e.pose.yaw = input.yaw;
  e.velocity = x.motor.velocity;
  for (int k = 0; k < r.touch_count; ++k) {
    const MotorTouch& touch = r.touches[std::size_t(k)];
    s.record_touch(e.id, touch.entity, touch.brush, touch.position, touch.normal, touch.time,
                   touch.speed_into);
  }

  if (x.fire_cooldown > 0) --x.fire_cooldown;
  if ((input.buttons & kButtonFire) != 0 && x.fire_cooldown == 0) {
    fire(s, e, input);
    x.fire_cooldown = fire_ticks;
  }
}

}  // namespace

void move_players(SimulationState& s) {
  const int fire_ticks = std::max(1, int(std::lround(s.config.fire_interval * float(s.config.tick_rate))));
  for (std::size_t i = 0; i < s.entities.size(); ++i) {
    if (s.entities[i].kind != EntityKind::kPlayer || s.extras[i].dead) continue;
    EntityExtra& x = s.extras[i];
    if (!x.has_commands) {
      run_command(s, i, x.input, fire_ticks);  // no set_inputs: the last input once, as ever
    } else {
      // Exactly the commands the player sent, each once; none: it waits (no motor step).
      for (const PlayerInput& input : x.commands) {
        x.input = input;
        run_command(s, i, input, fire_ticks);
      }
      x.commands.clear();
      x.has_commands = false;
    }
    s.place_in_grid(s.entities[i], x.start_pose);
  }
}

}  // namespace shiftcast
