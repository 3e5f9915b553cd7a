// MoverPath: where a kinematic prop (door, lift, moving platform) is at any time. A list of keyed poses
// with times; the pose between keys is linear in position and yaw, and the path repeats (loop) or runs
// back and forth (ping-pong). Because the pose is a function of time, the simulation knows a mover's
// whole motion over a tick before anything else moves, which is what lets riders and pushed players
// follow it exactly.
//
//   MoverPath lift = MoverPath::make({{{{0, 0, 0}, 0}, 0}, {{{0, 0, 128}, 0}, 2}},
//                                    PathMode::kPingPong);   // 2 s up, 2 s down
//   Pose p = lift.at(seconds);
#pragma once

#include <span>
#include <string>
#include <vector>

#include "collision/pose.hpp"

namespace shiftcast {

struct PathKey {
  Pose pose;
  double time = 0;  // seconds from the path's start; strictly increasing
};

enum class PathMode : std::uint8_t { kLoop, kPingPong, kOnce };

class MoverPath {
 public:
  MoverPath() = default;
  // Keys must be at least one, with finite poses and strictly increasing times from 0; `error` says
  // which key is wrong otherwise and the path is empty (at() then returns the identity pose).
  static MoverPath make(std::vector<PathKey> keys, PathMode mode, std::string* error = nullptr);

  // Times before 0 (and NaN) give the first key; kOnce holds the last key from its time on; kLoop jumps
  // from the last key back to the first at every period (repeat the first pose as the last key for a
  // continuous loop); kPingPong runs the keys backwards in the second half of its period.
  Pose at(double seconds) const;
  double period() const;  // loop: last key time; ping-pong: twice that; once: last key time
  bool empty() const { return keys_.empty(); }
  std::span<const PathKey> keys() const { return keys_; }
  // Fastest any point within `reach` of the reference point moves along the path (units/s): for speedboxes.
  double max_point_speed(double reach) const;

 private:
  std::vector<PathKey> keys_;
  PathMode mode_ = PathMode::kLoop;
};

}  // namespace shiftcast
