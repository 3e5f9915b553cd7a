// MovementCheck: a simulated client's prediction of its own player, and the check of that prediction
// against the server's authoritative positions. Each command is predicted with the same character motor
// the server runs, over the level and the other players at their newest snapshot poses
// (client-sim/prediction_world: the server's own sweep steps); the feet and motor state after
// each command are kept for the last kPredictionHistory commands. A ServerFrame that acknowledged command
// A and carries the player's exact state after it (ServerFrame.own: feet P and motor state) gives one
// sample, |P - predicted feet after A|, and any miss is corrected exactly: feet and motor state = the
// server's, every command after A applied again. A frame without it (an older server) falls back to the
// snapshot's quantized position: a miss beyond quantization moves the feet only (the motor state
// predicted after A kept, or its velocity estimated from the server's positions).
//
//   MovementCheck check(MotorConfig{}, world, 1.0f / tick_rate);
//   check.start(first_snapshot_position, session.last_command_sequence());
//   each tick:      check.predict(sequence, input);            // then send the command
//   each snapshot:  check.set_players(others);                 // the other players it shows
//                   if (auto e = check.on_authoritative(ack, own.feet, own.motor)) samples.push(*e);
//                   (no ServerFrame.own: check.on_authoritative(ack, snapshot_own_position))
//   the bot reads:  check.feet(), check.motor()
//
// A client that does not predict (set_predicting(false): a load test predicts on a sample of its clients,
// client-sim/sim_options.hpp predict_fraction) follows the server instead: predict() runs no motor,
// feet() and motor() are the newest authoritative state, and on_authoritative() gives no sample. What it
// sends is unchanged, so the server cannot tell the two apart.
//
// A correction's replay of the later commands is deferred until something needs them: the next command's
// prediction, the bot reading feet() or motor(), a newer acknowledgement's comparison (only up to that
// command), or the other players changing (set_players, world()). So a burst of frames that each miss
// replays once, not once per frame; and since the replay still runs before the world it was due in
// changes, with the snapshot timing it was due with, its results are bit for bit the eager replay's
// (set_deferred_replay(false) replays at once: the test's oracle).
//
// Without other entities near the player, or with players standing still, the prediction is the server's
// own computation, so the samples are snapshot quantization alone (at most kSnapshotQuantizationError);
// a player blocked by another that moved since the snapshot, pushed by a prop or standing on one, shows
// as a larger sample and is then corrected (the replay runs in the same prediction world).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include "client-sim/prediction_world.hpp"
#include "protocol/wire_constants.hpp"
#include "world/match/character_motor.hpp"

namespace shiftcast {

// Commands whose prediction is kept: two seconds at 64 Hz, far more than a round trip on any network a
// load test runs on.
inline constexpr std::size_t kPredictionHistory = 128;
// The farthest a snapshot position can be from the server's own: half a quantum on each axis
// (sqrt(3) / 2 quanta), plus the float rounding of dequantizing coordinates of a few thousand units.
// A velocity estimated from two snapshots further apart than this many commands is too stale to use.
inline constexpr std::uint64_t kMaxVelocityEstimateCommands = 4;
inline constexpr float kSnapshotQuantizationError = 0.8661f * kPositionQuantum + 1.0f / 1024;
// With the server's exact state (ServerFrame.own) a prediction within these of it is the server's own
// computation up to float noise: no replay (a replay costs a motor run per unacknowledged command).
inline constexpr float kExactPositionTolerance = 1.0f / 1024;  // units
inline constexpr float kExactVelocityTolerance = 1.0f / 64;    // units/s: 1/4096 unit a tick at 64 Hz

class MovementCheck {
 public:
  MovementCheck(const MotorConfig& config, const LevelMotorWorld& world, float dt);

  bool started() const { return started_; }
  // Before start(): off, the client steers by the server's state and is never sampled (above).
  void set_predicting(bool on) { predicting_ = on; }
  bool predicting() const { return predicting_; }
  // The first authoritative position; the next predicted command is last_sequence + 1.
  void start(Vec3 feet, std::uint64_t last_sequence);
  // The other players of the newest snapshot (ascending ids, self left out): what the next predictions
  // and corrections are blocked by.
  void set_players(std::span<const SnapshotPlayer> players, std::uint64_t snapshot_tick = 0) {
    catch_up(last_sequence_);
    world_.set_players(players, snapshot_tick);
  }
  // clear_players / add_player without a scratch vector. The caller is about to change the world: a
  // deferred replay runs first, in the world it was due in.
  PredictionWorld& world() {
    catch_up(last_sequence_);
    return world_;
  }
  // A correction also takes the horizontal velocity from the server's positions (its displacement since
  // the previous sample, at most kMaxVelocityEstimateCommands back) instead of the predicted one. Off:
  // a correction moves the feet only (a teleport is then followed exactly).
  void set_estimate_velocity(bool on) { estimate_velocity_ = on; }
  // Applies command `sequence` (the one after the last predicted) and returns the new feet.
  Vec3 predict(std::uint64_t sequence, const PlayerInput& input);
  // The server put the player at `position` after applying command `acked`. Returns the error sample
  // for the first report of each newer acknowledged command the history still holds, nothing otherwise.
  std::optional<float> on_authoritative(std::uint64_t acked, Vec3 position);
  // The server's exact state after command `acked` (ServerFrame.own): the sample is |feet - predicted
  // feet after `acked`| with no quantization in it, and any miss (position, velocity or ground state)
  // restarts the prediction from exactly `feet` and `motor`, every later command replayed. No velocity
  // is estimated. Returns the sample as the other overload does.
  std::optional<float> on_authoritative(std::uint64_t acked, Vec3 feet, const MotorState& motor);

  // The newest prediction (a deferred replay done first).
  Vec3 feet() {
    catch_up(last_sequence_);
    return feet_;
  }
  const MotorState& motor() {
    catch_up(last_sequence_);
    return state_;
  }
  std::uint64_t last_sequence() const { return last_sequence_; }
  std::uint64_t corrections() const { return corrections_; }
  // Commands run again after corrections, for the cost (the forward predictions not counted).
  std::uint64_t replayed_commands() const { return replayed_commands_; }
  // Off: every correction replays the later commands at once (the results are the same, the cost not).
  void set_deferred_replay(bool on) { deferred_replay_ = on; }
  const PredictionWorld& world() const { return world_; }

 private:
  struct Predicted {
    std::uint64_t sequence = 0;
    PlayerInput input;
    Vec3 feet{};
    MotorState state;
  };
  Predicted& slot(std::uint64_t sequence) { return history_[sequence % kPredictionHistory]; }
  // `position` from a snapshot, moved out of solid when quantization pushed it in.
  Vec3 settle(Vec3 position) const;
  // Command `sequence` from `feet`, the own player turned by `yaw` (its previous command's, as on the
  // server), the other players extrapolated to the tick it runs at as seen from the snapshot that
  // acknowledged `players_ack`.
  Vec3 step(std::uint64_t sequence, Vec3 feet, float yaw, MotorState& state, const PlayerInput& input,
            std::uint64_t players_ack);
  // A client that does not predict takes the server's state after `acked` (motor: null from a snapshot
  // position alone) when it is newer than the last it took.
  std::optional<float> follow(std::uint64_t acked, Vec3 feet, const MotorState* motor);
  // Every command after `acked` to be applied again from its history slot's (corrected) feet and state:
  // now without deferred replay, else by the next catch_up.
  void replay_after(std::uint64_t acked);
  // Runs the deferred replay through command `upto` (at most the last predicted; through the last, feet_
  // and state_ too).
  void catch_up(std::uint64_t upto);

  MotorConfig config_;
  PredictionWorld world_;
  float dt_;
  bool started_ = false;
  Vec3 feet_{};
  float yaw_ = 0;  // of the last command predicted
  MotorState state_;
  std::uint64_t last_sequence_ = 0;
  std::uint64_t last_sampled_ = 0;
  std::uint64_t players_ack_ = 0;
  bool estimate_velocity_ = false;
  std::uint64_t last_auth_ack_ = 0;  // the previous sample: acknowledged command and server position
  Vec3 last_auth_pos_{};             // the command the newest snapshot (the players' poses) acknowledged
  std::uint64_t corrections_ = 0;
  std::uint64_t replayed_commands_ = 0;
  bool deferred_replay_ = true;
  bool predicting_ = true;
  // A replay is due: the slots after stale_from_ (and feet_, state_) are from before a correction; it
  // runs with the players' timing of when it fell due.
  bool stale_ = false;
  std::uint64_t stale_from_ = 0;
  std::uint64_t stale_players_ack_ = 0;
  std::array<Predicted, kPredictionHistory> history_{};
};

}  // namespace shiftcast
