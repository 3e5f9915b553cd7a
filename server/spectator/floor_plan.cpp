#include "server/spectator/floor_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "server/config/json_text.hpp"
#include "world/level/level_slice.hpp"

namespace shiftcast {
namespace {

double ground_area(const std::vector<Vec3>& polygon) {
  double twice = 0;
  for (std::size_t i = 0, n = polygon.size(); i < n; ++i) {
    const Vec3& a = polygon[i];
    const Vec3& b = polygon[(i + 1) % n];
    twice += double(a.x) * b.y - double(a.y) * b.x;
  }
  return std::fabs(twice) / 2;
}

// Numbers in the plan: a hundredth of a unit is finer than a pixel at any zoom the view offers.
void append_number(std::string& out, double v) {
  double rounded = std::round(v * 100) / 100;
  if (rounded == 0) rounded = 0;      // no "-0"
  out += fmt::format("{}", rounded);  // the shortest text that reads back as this double
}

}  // namespace

std::vector<FloorBand> floor_bands(const std::vector<std::vector<Vec3>>& polygons) {
  struct Span {
    double lo, hi, area;
  };
  std::vector<Span> spans;
  for (const auto& p : polygons) {
    if (p.empty()) continue;
    double lo = p[0].z, hi = p[0].z;
    for (const Vec3& v : p) {
      lo = std::min(lo, double(v.z));
      hi = std::max(hi, double(v.z));
    }
    spans.push_back({lo, hi, ground_area(p)});
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.lo < b.lo; });
  std::vector<FloorBand> bands;
  for (const Span& s : spans) {
    if (bands.empty() || s.lo > bands.back().max_z + kFloorGap) {
      bands.push_back({s.lo, s.hi, s.area});
    } else {
      bands.back().max_z = std::max(bands.back().max_z, s.hi);
      bands.back().area += s.area;
    }
  }
  return bands;
}

const FloorPlanCache::LevelData& FloorPlanCache::level_data(const HostedLevel& level) {
  auto it = levels_.find(level.name);
  if (it != levels_.end()) return it->second;
  LevelData data;
  if (level.navmesh) data.navmesh = level.navmesh->walkable_polygons();
  data.floors = floor_bands(data.navmesh);
  const Aabb& bounds = level.compiled.tree.bounds();
  if (data.floors.empty()) {
    data.floors.push_back(
        {bounds.empty() ? 0.0 : double(bounds.min.z), bounds.empty() ? 0.0 : double(bounds.max.z), 0});
    data.default_z = data.floors[0].min_z + kSliceAboveFloor;
  } else {
    // The default cut is at the floor with the most ground, leaving out the top of the level's outer
    // hull (a roof or a sky brush: navmesh is built there too, but nobody plays on it).
    const double roof = bounds.empty() ? 0.0 : double(bounds.max.z) - kFloorGap;
    const FloorBand* best = &data.floors.front();
    for (const FloorBand& f : data.floors) {
      if (f.min_z < roof && (best->min_z >= roof || f.area > best->area)) best = &f;
    }
    data.default_z = best->min_z + kSliceAboveFloor;
  }
  return levels_.emplace(level.name, std::move(data)).first->second;
}

std::shared_ptr<const std::string> FloorPlanCache::get(const HostedLevel& level, std::optional<double> z) {
  std::lock_guard lock(mutex_);
  const LevelData& data = level_data(level);
  const Aabb& bounds = level.compiled.tree.bounds();
  const double height = std::round(z.value_or(data.default_z));
  if (!std::isfinite(height)) return nullptr;
  if (!bounds.empty() && (height < bounds.min.z - kFloorGap || height > bounds.max.z + kFloorGap))
    return nullptr;
  const auto key = std::make_pair(level.name, long(height));
  if (auto it = plans_.find(key); it != plans_.end()) return it->second;

  std::string out = fmt::format(R"({{"level":"{}","bounds":[)", json_escaped(level.name));
  const Vec3 lo = bounds.empty() ? Vec3{} : bounds.min, hi = bounds.empty() ? Vec3{} : bounds.max;
  for (double v : {double(lo.x), double(lo.y), double(lo.z), double(hi.x), double(hi.y), double(hi.z)}) {
    if (out.back() != '[') out += ',';
    append_number(out, v);
  }
  out += R"(],"floors":[)";
  for (std::size_t i = 0; i < data.floors.size(); ++i) {
    out += i == 0 ? "{" : ",{";
    out += R"("min_z":)";
    append_number(out, data.floors[i].min_z);
    out += R"(,"max_z":)";
    append_number(out, data.floors[i].max_z);
    out += '}';
  }
  out += R"(],"navmesh":[)";
  for (std::size_t i = 0; i < data.navmesh.size(); ++i) {
    out += i == 0 ? "[" : ",[";
    for (const Vec3& v : data.navmesh[i]) {
      for (float c : {v.x, v.y, v.z}) {
        if (out.back() != '[') out += ',';
        append_number(out, c);
      }
    }
    out += ']';
  }
  out += R"(],"slice_z":)";
  append_number(out, height);
  out += R"(,"solid":[)";
  const std::vector<SlicePolygon> solid = slice_solid(level.compiled.tree, height);
  for (std::size_t i = 0; i < solid.size(); ++i) {
    out += i == 0 ? "[" : ",[";
    for (const auto& p : solid[i].points) {
      for (double c : p) {
        if (out.back() != '[') out += ',';
        append_number(out, c);
      }
    }
    out += ']';
  }
  out += "]}";
  auto plan = std::make_shared<const std::string>(std::move(out));
  if (plans_.size() >= kMaxCachedSlices) plans_.erase(plans_.begin());
  plans_.emplace(key, plan);
  return plan;
}

}  // namespace shiftcast
