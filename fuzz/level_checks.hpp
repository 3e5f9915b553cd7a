// What every importer promises about a Level it returns (world/level/level.hpp), checked by the importer
// targets: parallel arrays agree, every plane is finite with a unit normal, every brush has planes.
#pragma once

#include <cmath>

#include "fuzz/fuzz_support.hpp"
#include "world/level/level.hpp"

namespace shiftcast::fuzz {

inline void check_level(const LevelResult& r) {
  if (!r.ok()) {
    require(!r.error.what.empty(), "importer: an error without a reason");
    return;
  }
  const Level& level = r.level;
  require(level.brush_contents.size() == level.brushes.size(), "importer: brush_contents size");
  require(level.brush_surface_flags.size() == level.brushes.size(), "importer: brush_surface_flags size");
  for (const Brush& brush : level.brushes) {
    require(!brush.planes.empty(), "importer: a brush without planes");
    for (const Plane& p : brush.planes) {
      require(std::isfinite(p.normal.x) && std::isfinite(p.normal.y) && std::isfinite(p.normal.z) &&
                  std::isfinite(p.d),
              "importer: a non-finite plane");
      const double len = std::sqrt(double(p.normal.x) * p.normal.x + double(p.normal.y) * p.normal.y +
                                   double(p.normal.z) * p.normal.z);
      require(std::fabs(len - 1.0) < 1e-3, "importer: a plane normal that is not unit length");
    }
  }
  for (const SpawnPoint& s : level.spawns)
    require(std::isfinite(s.origin.x) && std::isfinite(s.origin.y) && std::isfinite(s.origin.z),
            "importer: a non-finite spawn point");
}

}  // namespace shiftcast::fuzz
