#include "world/match/bot_driver.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "collision/pose.hpp"

namespace shiftcast {

namespace {

float distance_xy(Vec3 a, Vec3 b) {
  const float dx = b.x - a.x;
  const float dy = b.y - a.y;
  return std::sqrt(dx * dx + dy * dy);
}

// Into (−π, π], so yaws stay far inside input_valid's range however long a bot turns one way.
float wrap_angle(float a) {
  a = std::remainder(a, 2 * kPi);
  return a <= -kPi ? a + 2 * kPi : a;
}

// A direction this short is no direction: the bot is on its corner or its target.
constexpr float kMinAimDistance = 1.0f / 16;

}  // namespace

std::uint32_t bot_seed(std::uint32_t seed, std::uint32_t bot_index) {
  // splitmix64's finaliser over both halves: every input bit reaches every output bit.
  std::uint64_t z = (std::uint64_t(seed) << 32 | bot_index) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return std::uint32_t(z >> 32);
}

BotDriver::BotDriver(const BotConfig& config, std::uint32_t seed, std::uint32_t bot_index)
    : config_(config), rng_(bot_seed(seed, bot_index)) {
  config_.tick_rate = std::max(1, config_.tick_rate);
  nav_rng_ = next();
  corners_.reserve(64);
}

bool BotDriver::chance(float per_second) {
  const double p = double(per_second) / double(config_.tick_rate);
  // One draw whatever p is, so the stream's position never depends on the configured rates' values.
  const std::uint32_t draw = next();
  if (!(p > 0)) return false;
  if (p >= 1) return true;
  return draw < std::uint32_t(p * 4294967296.0);
}

float BotDriver::unit() {
  return float(next() >> 8) * (1.0f / 16777216.0f);
}

int BotDriver::ticks(float seconds) const {
  return std::max(1, int(std::lround(double(seconds) * double(config_.tick_rate))));
}

void BotDriver::repath(NavQuery& nav, Vec3 feet) {
  ++repaths_;
  corner_ = 0;
  no_progress_ticks_ = 0;
  best_distance_ = std::numeric_limits<float>::infinity();
  for (int attempt = 0; attempt < config_.goal_attempts; ++attempt) {
    const std::optional<Vec3> goal = nav.random_point(nav_rng_);
    if (goal && nav.find_path(feet, *goal, corners_) && !corners_.empty()) return;
  }
  // Off the navmesh (on a crate, a lift, in the air) or boxed in: run somewhere and try again.
  ++failed_paths_;
  corners_.clear();
  wander_ticks_ = ticks(config_.wander_seconds);
  wander_yaw_ = wrap_angle(unit() * 2 * kPi);
}

int BotDriver::pick_target(const BotSenses& senses, Vec3 eye) const {
  int best = -1;
  float best_d2 = config_.fire_range * config_.fire_range;
  for (std::size_t i = 0; i < senses.players.size(); ++i) {
    if (int(i) == senses.self) continue;
    const Vec3 d = senses.players[i] + Vec3{0, 0, config_.aim_height} - eye;
    const float d2 = length_squared(d);
    if (d2 <= best_d2 && d2 > kMinAimDistance * kMinAimDistance) {
      best_d2 = d2;
      best = int(i);
    }
  }
  if (best >= 0 && senses.level != nullptr) {
    const Vec3 d = senses.players[std::size_t(best)] + Vec3{0, 0, config_.aim_height} - eye;
    const float distance = length(d);
    if (senses.level->raycast(eye, d, distance).hit) return -1;
  }
  return best;
}

PlayerInput BotDriver::think(NavQuery& nav, const BotSenses& senses) {
  const Vec3 feet = senses.feet;
  const bool on_ground = senses.motor == nullptr || senses.motor->on_ground;
  if (jump_cooldown_ > 0) --jump_cooldown_;
  bool jump = false;

  // Where to run: the path's next corner, or the wander direction.
  if (wander_ticks_ > 0) {
    --wander_ticks_;
    move_yaw_ = wander_yaw_;
  } else {
    if (!has_path()) repath(nav, feet);
    while (has_path() && distance_xy(feet, corners_[corner_]) < config_.corner_radius) {
      ++corner_;
      best_distance_ = std::numeric_limits<float>::infinity();
      no_progress_ticks_ = 0;
    }
    if (has_path()) {
      const Vec3 corner = corners_[corner_];
      const float d = distance_xy(feet, corner);
      if (d < best_distance_ - config_.progress_distance || std::isinf(best_distance_)) {
        best_distance_ = d;
        no_progress_ticks_ = 0;
      } else {
        ++no_progress_ticks_;
      }
      move_yaw_ = std::atan2(corner.y - feet.y, corner.x - feet.x);
      // Blocked by a step too high, a crate or another player: a jump usually clears it.
      if (no_progress_ticks_ >= ticks(config_.blocked_seconds) && on_ground && jump_cooldown_ == 0)
        jump = true;
      if (no_progress_ticks_ >= ticks(config_.stuck_seconds)) corner_ = corners_.size();  // repath next tick
    } else if (wander_ticks_ > 0) {
      move_yaw_ = wander_yaw_;
    }
  }

  if (strafe_ticks_ > 0) {
    --strafe_ticks_;
  } else if (chance(config_.strafe_per_second)) {
    strafe_ticks_ = ticks(config_.strafe_seconds);
    strafe_ = (next() & 1u) != 0 ? 1.0f : -1.0f;
  } else {
    strafe_ = 0;
  }
  if (chance(config_.jump_per_second) && on_ground && jump_cooldown_ == 0) jump = true;

  PlayerInput input;
  float view_yaw = move_yaw_;
  if (senses.may_fire && chance(config_.fire_per_second)) {
    const Vec3 eye = feet + Vec3{0, 0, config_.eye_height};
    const int target = pick_target(senses, eye);
    if (target >= 0) {
      const Vec3 d = senses.players[std::size_t(target)] + Vec3{0, 0, config_.aim_height} - eye;
      view_yaw = std::atan2(d.y, d.x);
      input.pitch = std::atan2(d.z, std::sqrt(d.x * d.x + d.y * d.y));
    }
    input.buttons |= kButtonFire;
    ++fire_presses_;
  }
  if (jump) {
    input.buttons |= kButtonJump;
    jump_cooldown_ = ticks(config_.jump_cooldown_seconds);
    ++jumps_;
  }

  // The run direction (plus the strafe across it) expressed in the view frame, since the view may be
  // turned towards a target: forward is along the view yaw, right is (sin yaw, −cos yaw) (z up).
  const float mc = std::cos(move_yaw_);
  const float ms = std::sin(move_yaw_);
  Vec3 move{mc + strafe_ * ms, ms - strafe_ * mc, 0};
  move = normalize(move);
  const float vc = std::cos(view_yaw);
  const float vs = std::sin(view_yaw);
  input.forward = std::clamp(move.x * vc + move.y * vs, -1.0f, 1.0f);
  input.right = std::clamp(move.x * vs - move.y * vc, -1.0f, 1.0f);
  input.yaw = wrap_angle(view_yaw);
  return input;
}

}  // namespace shiftcast
