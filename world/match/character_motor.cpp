// The character motor, after the ideas of Quake III's bg_pmove.c and bg_slidemove.c (written anew here):
//
//   1. ground trace: probe ground_probe below the feet; walkable when normal.z >= cos(max_slope). This
//      first trace also detects a player that starts in solid (result.stuck, no motion).
//   2. jump (on walkable ground, button pressed and released since the last jump), then the walk move
//      (friction, acceleration along the ground plane, no gravity) or the air move (air acceleration,
//      gravity, sliding along a steep surface under the feet).
//   3. step slide move: collide and slide; when blocked, retry from step_height higher and keep that if it
//      got further and landed on walkable ground.
//   4. step down: a player that started on the ground and did not jump is put back on walkable ground up
//      to step_height below (stairs and ramps going down), then the final ground state.
//
// Gravity is integrated exactly for a free flight: the move uses the mid-tick velocity v − g·dt/2 and the
// player leaves with v − g·dt, so positions at tick boundaries lie on the true parabola (Quake's scheme).
// Velocities are kept in double inside a call; positions are float because every position is a trace
// result, and a trace result is what guarantees the player never ends in solid.
#include "world/match/character_motor.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace shiftcast {
namespace {

// Quake's OVERCLIP: clipping removes slightly more than the velocity's component into a plane, so the
// player leaves every surface it slid along at 0.1% of the approach speed instead of grazing it again
// through rounding.
constexpr double kOverclip = 1.001;
// A velocity component along a plane normal below this (units/s) counts as moving into the plane when
// clipping; above it the plane no longer matters. Quake's value: larger than the overclip residue of
// ordinary speeds (0.1% of 100 u/s), so a plane just clipped against is not clipped again.
constexpr double kIntoPlaneSpeed = 0.1;
// Two hit normals closer than this cosine (about 8 degrees) are the same surface hit twice through
// rounding; the velocity is then nudged off it by kSamePlaneNudge instead of clipped again (Quake).
constexpr double kSamePlaneCos = 0.99;
constexpr double kSamePlaneNudge = 1.0;  // units/s along the normal
// Ground friction stops a horizontal speed below this (units/s) outright, as Quake does, so a player
// does not creep for seconds at sub-unit speeds.
constexpr double kStopSpeed = 1.0;
// Moving up and away from the ground faster than this (units/s) leaves it (Quake's jump check in the
// ground trace): a jumping player is not re-grounded by the probe in the tick it leaves.
constexpr double kLiftOffSpeed = 10.0;
// A slope steeper than max_slope_degrees by float rounding of its stored normal is still walkable: a
// 45-degree .map ramp stores normal.z = float(√½), 6e-8 below cos 45°. 1e-5 is about 0.0008 degrees.
constexpr double kWalkableSlack = 1e-5;
// The stepped move must get this much further horizontally (units) than the plain slide to be taken, so
// rounding differences between two equally blocked moves (a tall wall) never count as a step.
constexpr double kMinStepGain = 1.0 / 64.0;

Vec3 down_by(Vec3 p, double distance) {
  return {p.x, p.y, float(double(p.z) - distance)};
}

double horizontal_distance_squared(Vec3 a, Vec3 b) {
  const double dx = double(a.x) - double(b.x);
  const double dy = double(a.y) - double(b.y);
  return dx * dx + dy * dy;
}

// Removes the component of v into the plane (and overbounce − 1 of it more); a component away from the
// plane is reduced by the same factor, so a velocity along the plane stays along it.
Vec3d clip_velocity(Vec3d v, Vec3d normal, double overbounce) {
  double into = dot(v, normal);
  into = into < 0.0 ? into * overbounce : into / overbounce;
  return v - normal * into;
}

bool ok_trace(const MotorHit& h) {
  return h.trace.status == QueryStatus::kOk && !h.trace.start_solid;
}

struct Context {
  const MotorConfig& config;
  const MotorWorld& world;
  double dt;
  double walkable_z;

  bool walkable(Vec3 normal) const { return double(normal.z) >= walkable_z; }
};

// What one collide-and-slide move did.
struct Slide {
  Vec3 position{};
  Vec3d velocity{};
  bool blocked = false;
  int clip_planes = 0;
  int touch_count = 0;
  std::array<MotorTouch, kMaxClipPlanes> touches{};
};

// Collide and slide for one tick from `start`. `contact` (may be null) is a plane the player already
// rests on: the motion is kept along it from the start. With gravity the move follows the mid-tick
// velocity and the end velocity is clipped alongside it.
Slide slide_move(const Context& ctx, Vec3 start, Vec3d velocity, bool gravity, const Vec3d* contact) {
  Slide out;
  out.position = start;
  Vec3d move_v = velocity;
  Vec3d end_v = velocity;
  if (gravity) {
    end_v.z -= double(ctx.config.gravity) * ctx.dt;
    move_v.z = 0.5 * (velocity.z + end_v.z);
  }
  // Planes the velocity must not go into: the resting contact, the original direction of motion (the
  // slide never turns the player back against it), then every surface hit.
  std::array<Vec3d, kMaxClipPlanes + 2> planes;
  int plane_count = 0;
  if (contact != nullptr) {
    move_v = clip_velocity(move_v, *contact, kOverclip);
    end_v = clip_velocity(end_v, *contact, kOverclip);
    planes[plane_count++] = *contact;
  }
  if (move_v != Vec3d{}) planes[plane_count++] = normalize(move_v);
  const int first_hit_plane = plane_count;

  double time_left = ctx.dt;
  for (int bump = 0; bump < kMaxClipPlanes; ++bump) {
    const Vec3 end = to_float(to_double(out.position) + move_v * time_left);
    if (end == out.position) break;
    const MotorHit hit = ctx.world.sweep(out.position, end);
    if (!ok_trace(hit)) {  // cannot happen from a trace result; if it does, stay put rather than guess
      out.blocked = true;
      move_v = end_v = Vec3d{};
      break;
    }
    const Vec3 from = out.position;
    out.position = hit.trace.end_position;
    if (!hit.trace.hit) break;

    out.blocked = true;
    const Vec3d normal = to_double(hit.trace.normal);
    const double elapsed = ctx.dt - time_left + time_left * double(hit.trace.fraction);
    // The velocity at the touch: linear in time between the start and end velocities (exact in free
    // flight, where move_v is the mid-tick velocity).
    const Vec3d touch_v = move_v + (end_v - move_v) * (2.0 * elapsed / ctx.dt - 1.0);
    out.touches[std::size_t(out.touch_count++)] =
        MotorTouch{hit.trace.normal, out.position,    float(elapsed / ctx.dt),
                   hit.entity,       hit.trace.brush, float(-dot(touch_v, normal))};
    // Time is used up to where the player stopped, not to the contact: the trace backs off along the
    // motion, which for a grazing approach gives back most of the motion, and the rest of the tick must
    // still be spent sliding (Quake's fraction is the backed-off one for the same reason).
    const Vec3d delta = to_double(end) - to_double(from);
    const double used = dot(to_double(out.position) - to_double(from), delta) / dot(delta, delta);
    time_left -= time_left * std::clamp(used, 0.0, 1.0);

    bool same_plane = false;
    for (int i = first_hit_plane; i < plane_count; ++i) {
      if (dot(normal, planes[i]) > kSamePlaneCos) same_plane = true;
    }
    if (same_plane) {
      move_v += normal * kSamePlaneNudge;
      continue;
    }
    planes[plane_count++] = normal;
    ++out.clip_planes;

    // Clip against the first plane the velocity goes into; if that sends it into a second plane, slide
    // along their crease; if the crease goes into a third, the player is wedged and stops.
    for (int i = 0; i < plane_count; ++i) {
      if (dot(move_v, planes[i]) >= kIntoPlaneSpeed) continue;
      Vec3d clip = clip_velocity(move_v, planes[i], kOverclip);
      Vec3d end_clip = clip_velocity(end_v, planes[i], kOverclip);
      bool wedged = false;
      for (int j = 0; j < plane_count && !wedged; ++j) {
        if (j == i || dot(clip, planes[j]) >= kIntoPlaneSpeed) continue;
        clip = clip_velocity(clip, planes[j], kOverclip);
        end_clip = clip_velocity(end_clip, planes[j], kOverclip);
        if (dot(clip, planes[i]) >= 0.0) continue;
        const Vec3d crease = normalize(cross(planes[i], planes[j]));
        clip = crease * dot(crease, move_v);
        end_clip = crease * dot(crease, end_v);
        for (int k = 0; k < plane_count; ++k) {
          if (k != i && k != j && dot(clip, planes[k]) < kIntoPlaneSpeed) wedged = true;
        }
      }
      if (wedged) {
        clip = end_clip = Vec3d{};
        time_left = 0.0;
      }
      move_v = clip;
      end_v = end_clip;
      break;
    }
    if (time_left <= 0.0) break;
  }
  out.velocity = gravity ? end_v : move_v;
  return out;
}

// Quake's ground acceleration: add speed along wish_dir up to wish_speed, at most accel·wish_speed·dt.
void accelerate(Vec3d& v, Vec3d wish_dir, double wish_speed, double accel, double dt) {
  const double add = wish_speed - dot(v, wish_dir);
  if (add <= 0.0) return;
  v += wish_dir * std::min(add, accel * dt * wish_speed);
}

// Quake's ground friction: the horizontal speed drops by max(speed, stop_speed)·friction·dt.
void apply_friction(Vec3d& v, const MotorConfig& config, double dt) {
  const double speed = std::sqrt(v.x * v.x + v.y * v.y);
  if (speed < kStopSpeed) {
    v.x = v.y = 0.0;
    return;
  }
  const double control = std::max(speed, double(config.stop_speed));
  const double kept = std::max(0.0, speed - control * double(config.friction) * dt) / speed;
  v = v * kept;
}

// What is under the feet, from a downward trace that reached `distance` below them.
struct Ground {
  bool contact = false;  // a surface within the probe distance
  bool walkable = false;
  MotorHit hit;
};

Ground classify_ground(const Context& ctx, const MotorHit& hit, double probe_length, Vec3d velocity) {
  Ground g;
  g.hit = hit;
  if (!hit.trace.hit || hit.trace.start_solid) return g;
  if (double(hit.trace.fraction) * probe_length > double(ctx.config.ground_probe)) return g;
  const Vec3d normal = to_double(hit.trace.normal);
  if (velocity.z > 0.0 && dot(velocity, normal) > kLiftOffSpeed) return g;
  g.contact = true;
  g.walkable = ctx.walkable(hit.trace.normal);
  return g;
}

void add_touch(MotorResult& result, const MotorTouch& touch) {
  if (result.touch_count < int(result.touches.size())) {
    result.touches[std::size_t(result.touch_count++)] = touch;
  }
}

void take_slide(MotorResult& result, const Slide& slide) {
  result.clip_planes = slide.clip_planes;
  for (int i = 0; i < slide.touch_count; ++i)
    add_touch(result, slide.touches[std::size_t(i)]);
}

}  // namespace

Shape player_shape(const MotorConfig& config) {
  return Shape::cylinder(config.radius, config.height);
}

MotorResult move_character(const MotorConfig& config, const MotorWorld& world, Vec3 feet, MotorState& state,
                           const PlayerInput& input, float dt) {
  MotorResult result;
  result.position = feet;
  if (!std::isfinite(dt) || dt <= 0.0f) return result;
  const Context ctx{config, world, double(dt),
                    std::cos(double(config.max_slope_degrees) * std::numbers::pi / 180.0) - kWalkableSlack};
  const PlayerInput in = input_valid(input) ? input : PlayerInput{};
  const bool jump_pressed = (in.buttons & kButtonJump) != 0;
  if (!jump_pressed) state.jump_held = false;
  Vec3d v = is_finite(state.velocity) ? to_double(state.velocity) : Vec3d{};

  // 1. Ground, and the stuck check.
  const double probe = double(config.ground_probe);
  const MotorHit start_probe = world.sweep(feet, down_by(feet, probe));
  if (!ok_trace(start_probe)) {
    result.stuck = true;
    state.on_ground = false;
    state.ground_normal = {};
    state.ground_entity = kNoEntity;
    state.ground_brush = kNoBrush;
    return result;
  }
  const Ground start_ground = classify_ground(ctx, start_probe, probe, v);
  bool walking = start_ground.walkable;
  if (walking && jump_pressed && !state.jump_held) {
    v.z = double(config.jump_speed);
    walking = false;
    state.jump_held = true;
    result.jumped = true;
  }
  // A steep surface under the feet (or the ground just jumped from) keeps the air move along it.
  const bool has_contact = start_ground.contact && !result.jumped;
  const Vec3d contact_normal = to_double(start_probe.trace.normal);

  // 2. Wish direction and speed: forward = (cos yaw, sin yaw), right = (sin yaw, −cos yaw).
  const double cy = std::cos(double(in.yaw));
  const double sy = std::sin(double(in.yaw));
  Vec3d forward{cy, sy, 0};
  Vec3d right{sy, -cy, 0};
  const double wish_speed =
      double(config.run_speed) * std::min(1.0, std::hypot(double(in.forward), double(in.right)));
  if (walking) {
    apply_friction(v, config, ctx.dt);
    // Wish along the ground plane, so walking up a ramp goes up it at full speed.
    forward = normalize(clip_velocity(forward, contact_normal, kOverclip));
    right = normalize(clip_velocity(right, contact_normal, kOverclip));
  }
  const Vec3d wish_dir = normalize(forward * double(in.forward) + right * double(in.right));
  if (wish_speed > 0.0 && wish_dir != Vec3d{}) {
    accelerate(v, wish_dir, wish_speed, double(walking ? config.ground_accelerate : config.air_accelerate),
               ctx.dt);
  }
  if (walking) {
    // Turn the velocity into the ground plane keeping its speed (Quake): no speed lost on slopes.
    const double speed = length(v);
    v = normalize(clip_velocity(v, contact_normal, kOverclip)) * speed;
  }

  // 3. Step slide move.
  const bool gravity = !walking;
  const Vec3d* contact = has_contact ? &contact_normal : nullptr;
  const Slide plain = slide_move(ctx, feet, v, gravity, contact);
  const Slide* taken = &plain;
  Vec3 position = plain.position;
  Vec3d velocity = plain.velocity;
  // Stepping needs something to step from: the ground, or a fall (Quake lets falling players catch
  // ledges but never lifts a rising one).
  Slide stepped;
  if (plain.blocked && (walking || plain.velocity.z <= 0.0)) {
    const MotorHit up = world.sweep(feet, {feet.x, feet.y, feet.z + config.step_height});
    const double raised = double(up.trace.end_position.z) - double(feet.z);
    if (ok_trace(up) && raised > 0.0) {
      stepped = slide_move(ctx, up.trace.end_position, v, gravity, contact);
      const MotorHit down = world.sweep(stepped.position, down_by(stepped.position, raised + probe));
      const double gain = std::sqrt(horizontal_distance_squared(down.trace.end_position, feet)) -
                          std::sqrt(horizontal_distance_squared(plain.position, feet));
      if (ok_trace(down) && down.trace.hit && ctx.walkable(down.trace.normal) && gain > kMinStepGain) {
        taken = &stepped;
        position = down.trace.end_position;
        velocity = stepped.velocity;
        const Vec3d n = to_double(down.trace.normal);
        if (dot(velocity, n) < 0.0) velocity = clip_velocity(velocity, n, kOverclip);
        result.stepped_up = true;
      }
    }
  }
  take_slide(result, *taken);

  // 4. Step down, and where the player ends up standing.
  Ground end_ground;
  if (walking && position == feet) {
    // Standing still: the start probe already found the floor; settle on it as a step down would.
    position = start_probe.trace.end_position;
    end_ground = start_ground;
  } else if (walking) {
    const double reach = double(config.step_height);
    const MotorHit down = world.sweep(position, down_by(position, reach));
    if (ok_trace(down) && down.trace.hit && ctx.walkable(down.trace.normal)) {
      result.stepped_down = double(down.trace.fraction) * reach > probe;
      position = down.trace.end_position;
      end_ground.contact = end_ground.walkable = true;
      end_ground.hit = down;
    } else {
      end_ground = classify_ground(ctx, down, reach, velocity);
    }
  } else {
    // Nothing moved within this call: the start probe still describes the ground.
    const MotorHit end_probe =
        position == feet ? start_probe : world.sweep(position, down_by(position, probe));
    end_ground = classify_ground(ctx, end_probe, probe, velocity);
  }
  if (end_ground.walkable) {
    const Vec3d n = to_double(end_ground.hit.trace.normal);
    const double into = -dot(velocity, n);
    if (walking) {
      // Kept on the ground (up a crest, down a step or ramp): turn the velocity along the new ground as
      // the walk move does, or the lift-off rule would throw the player off the crest next tick.
      velocity = normalize(clip_velocity(velocity, n, kOverclip)) * length(velocity);
    } else if (into > 0.0) {
      velocity = clip_velocity(velocity, n, kOverclip);  // landing: the speed into the ground is lost
    }
    add_touch(result, MotorTouch{end_ground.hit.trace.normal, position, 1.0f, end_ground.hit.entity,
                                 end_ground.hit.trace.brush, float(std::max(0.0, into))});
    state.on_ground = true;
    state.ground_normal = end_ground.hit.trace.normal;
    state.ground_entity = end_ground.hit.entity;
    state.ground_brush = end_ground.hit.trace.brush;
  } else {
    state.on_ground = false;
    state.ground_normal = {};
    state.ground_entity = kNoEntity;
    state.ground_brush = kNoBrush;
  }
  state.velocity = to_float(velocity);
  result.position = position;
  return result;
}

}  // namespace shiftcast
