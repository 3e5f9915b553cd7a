#include "world/level/level.hpp"

#include <charconv>
#include <cmath>

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

namespace {

// Parses exactly `count` space-separated finite numbers ("x y z"); a leading '+' is accepted, as some
// editors write it. False on anything else.
bool parse_numbers(std::string_view text, double* out, int count) {
  std::size_t pos = 0;
  for (int k = 0; k < count; ++k) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t'))
      ++pos;
    const char* begin = text.data() + pos;
    const char* end = text.data() + text.size();
    if (begin < end && *begin == '+') ++begin;
    const auto [ptr, ec] = std::from_chars(begin, end, out[k]);
    if (ec != std::errc() || !std::isfinite(out[k])) return false;
    pos = std::size_t(ptr - text.data());
  }
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t'))
    ++pos;
  return pos == text.size();
}

// Values quoted in errors are cut to this many bytes: a corrupt file may hold megabytes in one value.
constexpr std::size_t kMaxQuotedValue = 40;

std::string quoted(const std::string& value) {
  std::string out(1, '"');
  out.append(value, 0, kMaxQuotedValue);
  out.append(value.size() > kMaxQuotedValue ? "...\"" : "\"");
  return out;
}

}  // namespace

bool is_player_spawn(std::string_view classname) {
  return classname == "info_player_deathmatch" || classname == "info_player_start" ||
         classname == "team_CTF_redspawn" || classname == "team_CTF_bluespawn" ||
         classname == "team_CTF_redplayer" || classname == "team_CTF_blueplayer";
}

SpawnKeyError spawn_from_keys(const SpawnKeys& keys, SpawnPoint& out) {
  out = {};
  out.classname = std::string(keys.classname);
  double v[3];
  if (keys.origin == nullptr) return {"origin", out.classname + " has no \"origin\""};
  if (!parse_numbers(*keys.origin, v, 3) || std::abs(v[0]) > kWorldExtent || std::abs(v[1]) > kWorldExtent ||
      std::abs(v[2]) > kWorldExtent) {
    return {"origin",
            "\"origin\" must be three finite numbers inside the world, got " + quoted(*keys.origin)};
  }
  out.origin = to_float(Vec3d{v[0], v[1], v[2]});
  if (keys.angle != nullptr) {
    if (!parse_numbers(*keys.angle, v, 1)) {
      return {"angle", "\"angle\" must be a finite number, got " + quoted(*keys.angle)};
    }
    out.yaw_degrees = float(v[0]);
  } else if (keys.angles != nullptr) {
    if (!parse_numbers(*keys.angles, v, 3)) {
      return {"angles", "\"angles\" must be three finite numbers, got " + quoted(*keys.angles)};
    }
    out.yaw_degrees = float(v[1]);
  }
  return {};
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
