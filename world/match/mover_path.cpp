#include "world/match/mover_path.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

namespace shiftcast {

namespace {

bool pose_finite(const Pose& pose) {
  return is_finite(pose.position) && std::isfinite(pose.yaw);
}

bool known_mode(PathMode mode) {
  return mode == PathMode::kLoop || mode == PathMode::kPingPong || mode == PathMode::kOnce;
}

// Returns an empty string when the keys are acceptable, else the reason, naming the first bad key.
std::string check_keys(const std::vector<PathKey>& keys, PathMode mode) {
  std::ostringstream out;
  if (!known_mode(mode)) {
    out << "mover path: mode " << static_cast<int>(mode) << " is not loop, ping-pong or once";
    return out.str();
  }
  if (keys.empty()) return "mover path: needs at least one key";
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const PathKey& key = keys[i];
    if (!pose_finite(key.pose)) {
      out << "mover path: key " << i << " has a non-finite pose";
      return out.str();
    }
    if (!std::isfinite(key.time)) {
      out << "mover path: key " << i << " has a non-finite time";
      return out.str();
    }
    // Exactly 0, not "close to 0": the path's start is the first key, and at() maps every time before
    // it (and the wrap of a loop) onto that key.
    if (i == 0 && key.time != 0.0) {
      out << "mover path: key 0 has time " << key.time << ", the first key must be at time 0";
      return out.str();
    }
    if (i > 0 && !(key.time > keys[i - 1].time)) {
      out << "mover path: key " << i << " has time " << key.time << ", not after key " << i - 1 << "'s time "
          << keys[i - 1].time << " (times must strictly increase)";
      return out.str();
    }
  }
  return {};
}

// Position and yaw a fraction u of the way from a to b, in double so that the result at u = 0 and u = 1
// is the key itself and the path is monotone between keys.
Pose interpolate(const Pose& a, const Pose& b, double u) {
  const Vec3d pa = to_double(a.position);
  const Vec3d pb = to_double(b.position);
  const double ya = a.yaw;
  const double yb = b.yaw;
  return {to_float(pa + (pb - pa) * u), static_cast<float>(ya + (yb - ya) * u)};
}

}  // namespace

MoverPath MoverPath::make(std::vector<PathKey> keys, PathMode mode, std::string* error) {
  MoverPath path;
  std::string problem = check_keys(keys, mode);
  if (error != nullptr) *error = problem;
  if (!problem.empty()) return path;
  path.keys_ = std::move(keys);
  path.mode_ = mode;
  return path;
}

double MoverPath::period() const {
  if (keys_.empty()) return 0;
  const double last = keys_.back().time;
  return mode_ == PathMode::kPingPong ? 2 * last : last;
}

Pose MoverPath::at(double seconds) const {
  if (keys_.empty()) return {};
  const double duration = keys_.back().time;
  // Negative and NaN times are before the start; a single key (duration 0) never moves.
  if (!(seconds > 0) || duration == 0) return keys_.front().pose;

  double t = seconds;
  switch (mode_) {
    case PathMode::kOnce:
      if (t >= duration) return keys_.back().pose;
      break;
    case PathMode::kLoop:
      // A loop has no phase at infinity; the start is as good as any and keeps the pose finite.
      if (!std::isfinite(t)) return keys_.front().pose;
      // fmod is exact, so whole periods land on the first key exactly.
      t = std::fmod(t, duration);
      break;
    case PathMode::kPingPong:
      if (!std::isfinite(t)) return keys_.front().pose;
      t = std::fmod(t, 2 * duration);
      if (t > duration) t = 2 * duration - t;
      break;
  }

  // The segment [keys_[i].time, keys_[i + 1].time) holding t; t == duration only in ping-pong at the turn.
  const auto after = std::upper_bound(keys_.begin(), keys_.end(), t,
                                      [](double value, const PathKey& key) { return value < key.time; });
  if (after == keys_.end()) return keys_.back().pose;
  const PathKey& b = *after;
  const PathKey& a = *(after - 1);
  return interpolate(a.pose, b.pose, (t - a.time) / (b.time - a.time));
}

double MoverPath::max_point_speed(double reach) const {
  // A point at distance r from the reference point, turning about the vertical through it, moves at
  // |position'| + |yaw'|·r at most; both are constant on a segment, so the segment maxima are exact.
  // A loop's wrap from the last key back to the first is a jump, not a motion, and is not counted:
  // a loop meant to move continuously repeats its first pose as its last key.
  const double r = std::max(reach, 0.0);
  double fastest = 0;
  for (std::size_t i = 1; i < keys_.size(); ++i) {
    const PathKey& a = keys_[i - 1];
    const PathKey& b = keys_[i];
    const double travel = length(to_double(b.pose.position) - to_double(a.pose.position));
    const double turn = std::abs(double(b.pose.yaw) - double(a.pose.yaw));
    fastest = std::max(fastest, (travel + turn * r) / (b.time - a.time));
  }
  return fastest;
}

}  // namespace shiftcast
