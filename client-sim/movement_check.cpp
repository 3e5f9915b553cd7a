#include "client-sim/movement_check.hpp"

#include <algorithm>

namespace shiftcast {

namespace {

// Rounding to the nearest quantum moves each coordinate by at most this, so a position that the server
// held free of the level is free again within this of its snapshot on every axis.
constexpr float kQuantizationHalfStep = kPositionQuantum / 2;

}  // namespace

MovementCheck::MovementCheck(const MotorConfig& config, const LevelMotorWorld& world, float dt)
    : config_(config), world_(world, config), dt_(dt) {}

Vec3 MovementCheck::step(std::uint64_t sequence, Vec3 feet, float yaw, MotorState& state,
                         const PlayerInput& input, std::uint64_t players_ack) {
  // One command per server tick: command `sequence` runs this many ticks after the snapshot's.
  const std::uint64_t ahead = sequence > players_ack ? sequence - players_ack : 0;
  world_.begin_move(feet, yaw, int(std::min<std::uint64_t>(ahead, kPredictionHistory)));
  return move_character(config_, world_, feet, state, input, dt_).position;
}

void MovementCheck::start(Vec3 feet, std::uint64_t last_sequence) {
  started_ = true;
  feet_ = settle(feet);
  state_ = {};
  last_sequence_ = last_sequence;
  last_sampled_ = last_sequence;
  players_ack_ = last_sequence;
  last_auth_ack_ = 0;
  stale_ = false;
  history_.fill({});
}

Vec3 MovementCheck::predict(std::uint64_t sequence, const PlayerInput& input) {
  if (!predicting_) {
    last_sequence_ = sequence;
    return feet_;
  }
  catch_up(last_sequence_);
  feet_ = step(sequence, feet_, yaw_, state_, input, players_ack_);
  yaw_ = input.yaw;
  last_sequence_ = sequence;
  Predicted& p = slot(sequence);
  p.sequence = sequence;
  p.input = input;
  p.feet = feet_;
  p.state = state_;
  return feet_;
}

std::optional<float> MovementCheck::on_authoritative(std::uint64_t acked, Vec3 position) {
  if (!predicting_) return follow(acked, position, nullptr);
  if (started_ && acked > players_ack_ && acked <= last_sequence_) players_ack_ = acked;
  if (!started_ || acked <= last_sampled_ || acked > last_sequence_) return std::nullopt;
  last_sampled_ = acked;
  Predicted& at = slot(acked);
  if (at.sequence != acked) {
    // Older than the history: nothing to compare with or replay; take the server's word.
    catch_up(last_sequence_);  // the motor state stays the predicted one
    feet_ = settle(position);
    ++corrections_;
    last_auth_ack_ = acked;
    last_auth_pos_ = position;
    return std::nullopt;
  }
  catch_up(acked);  // the history through `acked` is read below
  const float error = length(position - at.feet);
  if (error <= kSnapshotQuantizationError) {
    last_auth_ack_ = acked;
    last_auth_pos_ = position;
    return error;
  }

  ++corrections_;
  at.feet = settle(position);
  // The snapshot carries no velocity: keeping the predicted one would repeat the miss at every command
  // until the next correction (a player the server stopped keeps running in the prediction). The
  // server's displacement since the previous sample is the better guess: horizontally its mean velocity;
  // vertically only in a free flight (below).
  if (estimate_velocity_ && last_auth_ack_ != 0 && acked - last_auth_ack_ <= kMaxVelocityEstimateCommands) {
    const Vec3 v = (position - last_auth_pos_) * (1.0f / (float(acked - last_auth_ack_) * dt_));
    at.state.velocity.x = v.x;
    at.state.velocity.y = v.y;
    // In a free flight over the whole interval (predicted airborne after each of its commands) the feet
    // lie on the motor's parabola, so the vertical velocity at its end follows exactly:
    // v_end = dz / (k dt) - k g dt / 2. On the ground, across a take-off or a landing, or faster upward
    // than a jump (a step up, not a flight) the predicted one stays.
    bool flying = true;
    for (std::uint64_t s = last_auth_ack_; s <= acked && flying; ++s)
      flying = slot(s).sequence == s && !slot(s).state.on_ground;
    const float k = float(acked - last_auth_ack_);
    const float vz = v.z - 0.5f * k * config_.gravity * dt_;
    if (flying && vz <= config_.jump_speed) at.state.velocity.z = vz;
  }
  last_auth_ack_ = acked;
  last_auth_pos_ = position;
  replay_after(acked);
  return error;
}

std::optional<float> MovementCheck::on_authoritative(std::uint64_t acked, Vec3 feet,
                                                     const MotorState& motor) {
  if (!predicting_) return follow(acked, feet, &motor);
  if (started_ && acked > players_ack_ && acked <= last_sequence_) players_ack_ = acked;
  if (!started_ || acked <= last_sampled_ || acked > last_sequence_) return std::nullopt;
  last_sampled_ = acked;
  last_auth_ack_ = acked;  // for the fallback's velocity estimate, should a later frame lack the state
  last_auth_pos_ = feet;
  Predicted& at = slot(acked);
  if (at.sequence != acked) {
    // Older than the history: the later commands cannot be replayed; the server's state is still the
    // best start for the next one.
    catch_up(last_sequence_);  // the history after it as an eager replay left it
    feet_ = feet;
    state_ = motor;
    ++corrections_;
    return std::nullopt;
  }
  catch_up(acked);
  const float error = length(feet - at.feet);
  const MotorState& p = at.state;
  const bool same = error <= kExactPositionTolerance &&
                    length(motor.velocity - p.velocity) <= kExactVelocityTolerance &&
                    motor.on_ground == p.on_ground && motor.jump_held == p.jump_held &&
                    motor.ground_entity == p.ground_entity && motor.ground_brush == p.ground_brush &&
                    length(motor.ground_normal - p.ground_normal) <= kExactPositionTolerance;
  if (same) return error;
  ++corrections_;
  at.feet = feet;  // the server held it free of the level: no settling needed
  at.state = motor;
  replay_after(acked);
  return error;
}

std::optional<float> MovementCheck::follow(std::uint64_t acked, Vec3 feet, const MotorState* motor) {
  // Only a newer acknowledgement moves it: a late frame's older state must not undo a newer one.
  if (!started_ || acked <= last_sampled_) return std::nullopt;
  last_sampled_ = acked;
  feet_ = feet;
  if (motor != nullptr) state_ = *motor;
  return std::nullopt;
}

void MovementCheck::replay_after(std::uint64_t acked) {
  // Whatever was still due from an earlier correction is superseded: it starts before `acked`.
  stale_ = true;
  stale_from_ = acked;
  stale_players_ack_ = players_ack_;
  if (!deferred_replay_ || acked == last_sequence_) catch_up(last_sequence_);
}

void MovementCheck::catch_up(std::uint64_t upto) {
  if (!stale_ || upto < stale_from_) return;
  upto = std::min(upto, last_sequence_);
  // predict() catches up before it writes a slot, so the history still holds stale_from_ and after.
  const Predicted& at = slot(stale_from_);
  Vec3 feet = at.feet;
  MotorState state = at.state;
  float yaw = at.input.yaw;
  for (std::uint64_t s = stale_from_ + 1; s <= upto; ++s) {
    Predicted& p = slot(s);
    feet = step(s, feet, yaw, state, p.input, stale_players_ack_);
    yaw = p.input.yaw;
    p.feet = feet;
    p.state = state;
    ++replayed_commands_;
  }
  stale_from_ = upto;
  if (upto < last_sequence_) return;
  stale_ = false;
  feet_ = feet;
  state_ = state;
}

Vec3 MovementCheck::settle(Vec3 position) const {
  if (world_.free(position)) return position;
  // The nearest free neighbour on the half-quantum grid around it, upwards first (a floor is the usual
  // culprit); none: keep it, the motor reports stuck and the next snapshot corrects again.
  constexpr float kSteps[3] = {0, kQuantizationHalfStep, -kQuantizationHalfStep};
  for (float dz : {kQuantizationHalfStep, 0.0f, -kQuantizationHalfStep}) {
    for (float dx : kSteps) {
      for (float dy : kSteps) {
        const Vec3 candidate = position + Vec3{dx, dy, dz};
        if (world_.free(candidate)) return candidate;
      }
    }
  }
  return position;
}

}  // namespace shiftcast
