#include "world/level.hpp"

#include "collision/bsp_build.hpp"
#include "collision/convex_polytope.hpp"

namespace shiftcast {

std::string LevelError::describe() const {
  if (offset == 0) return file + ": " + what;
  return file + (is_line ? ":line " : "@byte ") + std::to_string(offset) + ": " + what;
}

LevelResult level_failure(std::string file, std::uint64_t offset, bool is_line, std::string what) {
  LevelResult r;
  r.failed = true;
  r.error = {std::move(file), offset, is_line, std::move(what)};
  return r;
}

std::uint64_t fnv1a64(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < size; ++i)
    h = (h ^ bytes[i]) * 0x100000001b3ull;
  return h;
}

void compute_level_bounds(Level& level) {
  level.bounds = {};
  for (const Brush& brush : level.brushes) {
    std::vector<Planed> planes;
    for (const Plane& p : brush.planes)
      planes.push_back(to_double(p));
    const Aabbd box = polytope_from_planes(planes, kWorldExtent, kPlaneEpsilon).bounds();
    if (box.empty()) continue;
    level.bounds.grow(to_float(box.min));
    level.bounds.grow(to_float(box.max));
  }
}

}  // namespace shiftcast
