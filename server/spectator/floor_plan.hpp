// FloorPlan: a level seen from above for the spectator view (docs/server.md, "Pictures": the plan JSON):
// its walkable navmesh polygons, the height bands they form (floors), and the solid cells cut at a
// height (world/level/level_slice.hpp). Computed once per level and height and kept, since a level never
// changes while it is hosted.
//
//   FloorPlanCache plans;                                     // one per server
//   std::shared_ptr<const std::string> json = plans.get(level, z);   // any thread
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/hosted_level.hpp"

namespace shiftcast {

struct FloorBand {
  double min_z = 0;
  double max_z = 0;
  double area = 0;  // walkable area seen from above, square units
};

// Navmesh polygons whose heights lie closer than this belong to one floor (a stair or ramp joins the bands
// it connects); a gap wider than a standing player starts another.
inline constexpr double kFloorGap = 72.0;
// Where the default cut is taken above the largest floor: a player's waist, where walls block them.
inline constexpr double kSliceAboveFloor = 40.0;
// Heights are cached at whole units: a request for 40.3 gets the plan cut at 40.
inline constexpr std::size_t kMaxCachedSlices = 64;

std::vector<FloorBand> floor_bands(const std::vector<std::vector<Vec3>>& polygons);

class FloorPlanCache {
 public:
  // The plan cut at `z` (rounded to a whole unit), or at the default height when `z` is nothing. Null when
  // `z` is outside the level's bounds (grown by one floor gap) or not finite.
  std::shared_ptr<const std::string> get(const HostedLevel& level, std::optional<double> z);

 private:
  struct LevelData {
    std::vector<std::vector<Vec3>> navmesh;
    std::vector<FloorBand> floors;
    double default_z = 0;
  };
  const LevelData& level_data(const HostedLevel& level);  // under mutex_
  std::mutex mutex_;
  std::map<std::string, LevelData> levels_;  // by level name (unique in a server)
  std::map<std::pair<std::string, long>, std::shared_ptr<const std::string>> plans_;
};

}  // namespace shiftcast
