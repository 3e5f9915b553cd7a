#include "client-sim/prediction_world.hpp"

#include <algorithm>

#include "collision/narrow_phase.hpp"
#include "world/match/entity_sweep.hpp"
#include "world/match/simulation.hpp"

namespace shiftcast {

PredictionWorld::PredictionWorld(const LevelMotorWorld& level, const MotorConfig& config)
    : level_(level), shape_(player_shape(config)) {
  // As Simulation::add_player makes a player, so the per-entity step sees what the server's sees. The
  // bounds are the shape's, whatever the pose: computed once, not per player per snapshot.
  prototype_.kind = EntityKind::kPlayer;
  prototype_.shape = shape_;
  prototype_.layer = kLayerPlayer;
  prototype_.mask = kMaskPlayer;
  compute_entity_bounds(prototype_);
  cull_radius_ = 2 * (prototype_.bound_radius + length(prototype_.local_center)) + kContactDistance;
}

void PredictionWorld::set_players(std::span<const SnapshotPlayer> players, std::uint64_t snapshot_tick) {
  clear_players(snapshot_tick);
  for (const SnapshotPlayer& p : players)
    add_player(p);
}

void PredictionWorld::clear_players(std::uint64_t snapshot_tick) {
  if (snapshot_tick != tick_) {
    previous_.clear();
    for (std::size_t k = 0; k < others_.size(); ++k)
      previous_.emplace_back(others_[k].id, shown_[k]);
    previous_tick_ = tick_;
    tick_ = snapshot_tick;
  }
  others_.clear();
  shown_.clear();
  velocity_.clear();
  left_out_.clear();
}

void PredictionWorld::add_player(const SnapshotPlayer& p) {
  Vec3 velocity{};
  if (tick_ != 0 && previous_tick_ != 0 && tick_ > previous_tick_ &&
      tick_ - previous_tick_ <= kMaxVelocityGapTicks) {
    const auto it = std::lower_bound(previous_.begin(), previous_.end(), p.id,
                                     [](const auto& q, EntityId id) { return q.first < id; });
    if (it != previous_.end() && it->first == p.id) {
      velocity = (p.feet - it->second) * (1.0f / float(tick_ - previous_tick_));
      if (length(velocity) > kMaxExtrapolatedStep) velocity = {};
    }
  }
  Entity& e = others_.emplace_back(prototype_);
  e.id = p.id;
  e.pose = {p.feet, p.yaw};
  shown_.push_back(p.feet);
  velocity_.push_back(velocity);
  left_out_.push_back(0);
}

void PredictionWorld::begin_move(Vec3 feet, float yaw, int ticks_after_snapshot) {
  yaw_ = yaw;
  const Pose own{feet, yaw};
  for (std::size_t k = 0; k < others_.size(); ++k) {
    Entity& other = others_[k];
    // The server moves players in id order: in the command's tick a lower id has moved, a higher not yet.
    const int ticks = std::max(0, ticks_after_snapshot - (other.id > own_ ? 1 : 0));
    other.pose.position = shown_[k] + velocity_[k] * float(ticks);
    left_out_[k] = 0;
    if (length(other.pose.position - feet) > cull_radius_) continue;
    left_out_[k] = shape_distance(shape_, own, other.shape, other.pose).overlapping ? 1 : 0;
  }
}

MotorHit PredictionWorld::sweep(Vec3 from, Vec3 to) const {
  // The level exactly as the server's player sweep (SimulationState::sweep_among) asks it.
  SweepHit best = sweep_level(level_.tree(), shape_, from, to);
  if (best.start_solid && best.t == 0) return to_motor_hit(best);
  // A distance cull: only players the swept cylinder can reach; the step's own bounding test follows.
  near_start_.clear();
  const Vec3 lo = min(from, to) - Vec3{cull_radius_, cull_radius_, cull_radius_};
  const Vec3 hi = max(from, to) + Vec3{cull_radius_, cull_radius_, cull_radius_};
  for (std::size_t k = 0; k < others_.size(); ++k) {
    const Vec3 p = others_[k].pose.position;
    if (left_out_[k] != 0 || p.x < lo.x || p.y < lo.y || p.z < lo.z || p.x > hi.x || p.y > hi.y || p.z > hi.z)
      continue;
    const Entity& other = others_[k];
    const EntityStep step = sweep_entity_step(other, {other.pose, other.pose}, shape_, yaw_, from, to, best);
    if (step.searched) ++entity_sweeps_;
    if (step.started_near) near_start_.push_back(k);
  }
  // The server's skin guard after the steps, in the same (ascending id) order.
  for (std::size_t k : near_start_) {
    const Entity& other = others_[k];
    if (skin_guard(other, {other.pose, other.pose}, shape_, yaw_, from, best)) break;
  }
  return to_motor_hit(best);
}

}  // namespace shiftcast
