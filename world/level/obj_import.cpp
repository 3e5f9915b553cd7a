#include "world/level/obj_import.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "collision/bsp_build.hpp"

namespace shiftcast {
namespace {

// A triangle whose doubled area is below this fraction of its longest edge squared is a sliver with an
// angle under ~1e-7 radians: its edge planes would be numerically meaningless, so it is skipped.
constexpr double kDegenerateRelative = 1e-7;
// Absolute floor on the same test, in output units squared: triangles smaller than this cannot hold a
// brush the BSP build would keep (kPlaneEpsilon is 1/1024).
constexpr double kDegenerateArea2 = 1e-8;
// Vertices must lie within this distance of the origin on every axis after scaling: half the BSP's world
// box, which leaves room for the brush thickness and keeps float plane offsets meaningful.
constexpr double kMaxCoordinate = kWorldExtent / 2;

struct FaceRef {
  std::uint64_t line;
  std::int64_t index;  // already resolved to 0-based, maybe out of range (checked at the end)
};

std::string_view trim_cr(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.remove_suffix(1);
  }
  return line;
}

// Splits on spaces and tabs; comments start at '#'.
std::vector<std::string_view> tokens(std::string_view line) {
  if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
      ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
      ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool parse_double(std::string_view s, double& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);  // from_chars rejects a leading '+'
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool parse_index(std::string_view s, std::int64_t& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

Vec3d to_quake(Vec3d v, const ObjImportOptions& options) {
  // y-up → z-up by a rotation about x (determinant +1), so counter-clockwise stays counter-clockwise.
  if (options.up_axis == 'y') v = {v.x, -v.z, v.y};
  return v * double(options.scale);
}

// The thin brush of triangle abc (counter-clockwise seen from its front), or false when degenerate.
bool triangle_brush(Vec3d a, Vec3d b, Vec3d c, double thickness, Brush& out) {
  const Vec3d n_raw = cross(b - a, c - a);
  const double area2 = length(n_raw);
  const double longest2 = std::max({length_squared(b - a), length_squared(c - b), length_squared(a - c)});
  if (!(area2 > kDegenerateArea2) || !(area2 > kDegenerateRelative * longest2)) return false;
  const Vec3d n = n_raw * (1.0 / area2);
  out.planes.clear();
  out.planes.push_back(to_float(plane_through(n, a)));
  out.planes.push_back(to_float(plane_through(-n, a - n * thickness)));
  const Vec3d corners[3] = {a, b, c};
  for (int i = 0; i < 3; ++i) {
    const Vec3d p = corners[i];
    const Vec3d q = corners[(i + 1) % 3];
    // The interior lies to the left of p→q seen from the front, so edge × n points away from it.
    const Vec3d m = normalize(cross(q - p, n));
    out.planes.push_back(to_float(plane_through(m, p)));
  }
  return true;
}

}  // namespace

LevelResult import_obj(std::string_view text, const std::string& name, const ObjImportOptions& options) {
  if (options.up_axis != 'y' && options.up_axis != 'z') {
    return level_failure(name, 0, false, "up_axis must be 'y' or 'z'");
  }
  if (!(options.scale > 0.0f) || !std::isfinite(options.scale)) {
    return level_failure(name, 0, false, "scale must be positive and finite");
  }
  if (!(options.thickness > 0.0f) || !std::isfinite(options.thickness)) {
    return level_failure(name, 0, false, "thickness must be positive and finite");
  }

  std::vector<Vec3d> vertices;
  std::vector<FaceRef> refs;              // every face corner, in order
  std::vector<std::uint32_t> face_sizes;  // corners per face
  std::uint64_t line_number = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t eol = text.find('\n', pos);
    const std::size_t end = eol == std::string_view::npos ? text.size() : eol;
    const std::string_view line = trim_cr(text.substr(pos, end - pos));
    ++line_number;
    pos = end + 1;

    const std::vector<std::string_view> t = tokens(line);
    if (t.empty()) {
      if (eol == std::string_view::npos) break;
      continue;
    }
    if (t[0] == "v") {
      // Some exporters append w or vertex colours; only the position matters here.
      if (t.size() < 4) return level_failure(name, line_number, true, "vertex needs three coordinates");
      Vec3d v;
      for (int i = 0; i < 3; ++i) {
        double value = 0;
        if (!parse_double(t[i + 1], value)) {
          return level_failure(name, line_number, true, "bad number '" + std::string(t[i + 1]) + "'");
        }
        if (!std::isfinite(value)) {
          return level_failure(name, line_number, true,
                               "non-finite coordinate '" + std::string(t[i + 1]) + "'");
        }
        v[i] = value;
      }
      v = to_quake(v, options);
      if (!(std::fabs(v.x) < kMaxCoordinate && std::fabs(v.y) < kMaxCoordinate &&
            std::fabs(v.z) < kMaxCoordinate)) {
        return level_failure(name, line_number, true, "vertex outside the world after scaling");
      }
      vertices.push_back(v);
    } else if (t[0] == "f") {
      if (t.size() < 4) return level_failure(name, line_number, true, "face needs at least three vertices");
      for (std::size_t i = 1; i < t.size(); ++i) {
        const std::string_view corner = t[i];
        const std::string_view v_part = corner.substr(0, corner.find('/'));
        std::int64_t index = 0;
        if (!parse_index(v_part, index)) {
          return level_failure(name, line_number, true, "bad face index '" + std::string(corner) + "'");
        }
        if (index == 0) return level_failure(name, line_number, true, "face index 0 (OBJ counts from 1)");
        // Negative indices are relative to the vertices read so far; positive ones may name later ones.
        const std::int64_t resolved = index < 0 ? std::int64_t(vertices.size()) + index : index - 1;
        if (resolved < 0) {
          return level_failure(name, line_number, true,
                               "face index " + std::to_string(index) + " before the first vertex");
        }
        refs.push_back({line_number, resolved});
      }
      face_sizes.push_back(std::uint32_t(t.size() - 1));
    }
    // vt, vn, vp, o, g, s, l, p, usemtl, mtllib and anything else carry nothing a brush needs.
    if (eol == std::string_view::npos) break;
  }

  LevelResult result;
  Level& level = result.level;
  level.name = name;
  level.source_hash = fnv1a64(text.data(), text.size());

  std::size_t r = 0;
  Brush brush;
  for (const std::uint32_t size : face_sizes) {
    for (std::uint32_t i = 0; i < size; ++i) {
      const FaceRef& ref = refs[r + i];
      if (ref.index >= std::int64_t(vertices.size())) {
        return level_failure(name, ref.line, true,
                             "face index " + std::to_string(ref.index + 1) + " out of range (" +
                                 std::to_string(vertices.size()) + " vertices)");
      }
    }
    const Vec3d a = vertices[std::size_t(refs[r].index)];
    for (std::uint32_t i = 1; i + 1 < size; ++i) {
      ++level.source_brushes;
      const Vec3d b = vertices[std::size_t(refs[r + i].index)];
      const Vec3d c = vertices[std::size_t(refs[r + i + 1].index)];
      if (!triangle_brush(a, b, c, double(options.thickness), brush)) continue;
      level.brushes.push_back(brush);
      level.brush_contents.push_back(kContentsSolid);
      level.brush_surface_flags.push_back(0);
    }
    r += size;
  }
  compute_level_bounds(level);
  return result;
}

LevelResult import_obj_file(const std::string& path, const ObjImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return level_failure(path, 0, false, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return level_failure(path, 0, false, "read error");
  return import_obj(buffer.str(), path, options);
}

}  // namespace shiftcast
