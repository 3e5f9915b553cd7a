#include "world/level/q3_bsp_import.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "collision/bsp_build.hpp"
#include "collision/convex_polytope.hpp"
#include "world/level/quake_lexer_internal.hpp"

namespace shiftcast {
namespace {

// ---- The file format (q3map's qfiles.h, IBSP version 46), little-endian throughout. ----

constexpr std::uint32_t kMagic = 0x50534249;  // "IBSP" read as a little-endian int
constexpr std::int32_t kVersion = 46;
constexpr int kLumpCount = 17;
constexpr std::size_t kHeaderSize = 8 + 8 * kLumpCount;

enum Lump : int {
  kEntities = 0,
  kShaders = 1,
  kPlanes = 2,
  kNodes = 3,
  kLeafs = 4,
  kModels = 7,
  kBrushes = 8,
  kBrushSides = 9,
  kDrawVerts = 10,
  kSurfaces = 13,
  kVisibility = 16,
};

// Record sizes of the lumps read here.
constexpr std::size_t kShaderSize = 72;      // char name[64]; int surfaceFlags; int contentFlags
constexpr std::size_t kPlaneSize = 16;       // float normal[3]; float dist
constexpr std::size_t kModelSize = 40;       // float mins[3], maxs[3]; int firstSurface, numSurfaces,
                                             // firstBrush, numBrushes
constexpr std::size_t kBrushSize = 12;       // int firstSide, numSides, shaderNum
constexpr std::size_t kBrushSideSize = 8;    // int planeNum, shaderNum
constexpr std::size_t kDrawVertSize = 44;    // float xyz[3], st[2], lightmap[2], normal[3]; byte color[4]
constexpr std::size_t kSurfaceSize = 104;    // see read_surface
constexpr std::size_t kDrawVertNormal = 28;  // offset of normal[3] in a draw vertex
constexpr std::size_t kNodeSize = 36;        // int planeNum; int children[2]; int mins[3], maxs[3]
constexpr std::size_t kLeafSize = 48;        // int cluster, area; int mins[3], maxs[3]; 4 ints of lists
constexpr std::size_t kVisHeaderSize = 8;    // int numClusters; int bytesPerCluster; then the rows

constexpr std::int32_t kSurfacePatch = 2;  // MST_PATCH

// A plane normal whose length is within this of 1 is normalised in double; further off, the file is
// corrupt. Matches the BSP build's own kNonUnitNormal limit.
constexpr double kUnitNormalTolerance = 1e-3;

// Patch triangles with an altitude below this (units) are slivers: the gap they leave is far below any
// shape's size, and their brushes would be thinner than the build can split cleanly. 64 times the
// build's kPlaneEpsilon.
constexpr double kMinPatchTriangleAltitude = 1.0 / 16.0;

// Control grids larger than this per side are not produced by any q3map (the engine's own grid limit is
// MAX_GRID_SIZE = 129 after subdivision); larger ones are treated as corrupt.
constexpr std::int32_t kMaxPatchControlSide = 129;

// A bound on patch triangles over the whole map, so a corrupt file cannot make the import allocate without
// limit. The largest stock maps need a few tens of thousands.
constexpr std::int64_t kMaxPatchTriangles = std::int64_t(1) << 21;

// Reads little-endian fields from the file, never past its end (callers check ranges first; the reads
// check again so a missed check is a wrong answer, never an out-of-bounds read).
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}

  std::size_t size() const { return bytes_.size(); }
  bool has(std::uint64_t offset, std::uint64_t length) const {
    return offset <= bytes_.size() && length <= bytes_.size() - offset;
  }
  std::int32_t i32(std::size_t offset) const { return std::int32_t(u32(offset)); }
  std::uint32_t u32(std::size_t offset) const {
    if (!has(offset, 4)) return 0;
    return std::uint32_t(bytes_[offset]) | std::uint32_t(bytes_[offset + 1]) << 8 |
           std::uint32_t(bytes_[offset + 2]) << 16 | std::uint32_t(bytes_[offset + 3]) << 24;
  }
  float f32(std::size_t offset) const { return std::bit_cast<float>(u32(offset)); }
  Vec3 vec3(std::size_t offset) const { return {f32(offset), f32(offset + 4), f32(offset + 8)}; }
  std::span<const std::uint8_t> bytes(std::size_t offset, std::size_t length) const {
    if (!has(offset, length)) return {};
    return bytes_.subspan(offset, length);
  }

 private:
  std::span<const std::uint8_t> bytes_;
};

struct LumpRange {
  std::size_t offset = 0;
  std::size_t count = 0;  // records
  std::size_t record_size = 1;
  std::size_t at(std::size_t index) const { return offset + index * record_size; }
};

struct Shader {
  std::uint32_t surface_flags = 0;
  std::uint32_t contents = 0;
};

// Import state for one file; every error goes through fail() so it carries the file name.
class Importer {
 public:
  Importer(std::span<const std::uint8_t> bytes, const std::string& name, const Q3ImportOptions& options,
           Q3ImportStats& stats)
      : in_(bytes), name_(name), options_(options), stats_(stats) {}

  LevelResult run();

 private:
  struct Failure {
    std::uint64_t offset;
    std::string what;
  };
  // The first failure wins; later checks of the same pass are skipped by callers testing failed().
  bool fail(std::uint64_t offset, std::string what) {
    if (!failure_) failure_ = Failure{offset, std::move(what)};
    return false;
  }
  bool failed() const { return failure_.has_value(); }

  bool read_header();
  bool read_lump(int lump, std::size_t record_size, const char* what, LumpRange& out);
  bool read_shaders();
  bool read_plane(std::int32_t index, Planed& out);
  bool read_world_model();
  bool read_brushes();
  bool read_patches();
  bool read_patch(std::size_t surface_offset, const Shader& shader, std::int32_t shader_num);
  bool read_entities();
  bool read_visibility();
  bool add_spawn(const std::vector<std::pair<std::string, std::string>>& keys, std::size_t offset);

  Reader in_;
  const std::string& name_;
  const Q3ImportOptions& options_;
  Q3ImportStats& stats_;
  std::optional<Failure> failure_;

  std::array<LumpRange, kLumpCount> lumps_{};
  std::vector<Shader> shaders_;
  LumpRange planes_, brushes_, sides_, verts_, surfaces_, models_, nodes_, leafs_;
  std::int64_t world_first_brush_ = 0, world_brush_count_ = 0;
  std::int64_t world_first_surface_ = 0, world_surface_count_ = 0;
  std::int64_t patch_triangles_made_ = 0;
  Level level_;
};

std::string str(std::int64_t v) {
  return std::to_string(v);
}

bool Importer::read_header() {
  if (!in_.has(0, kHeaderSize)) {
    return fail(in_.size(), "file is " + str(std::int64_t(in_.size())) + " bytes, shorter than the " +
                                str(kHeaderSize) + "-byte IBSP header");
  }
  if (in_.u32(0) != kMagic) return fail(0, "not a Quake III map: the magic is not \"IBSP\"");
  const std::int32_t version = in_.i32(4);
  if (version != kVersion) {
    return fail(4, "IBSP version " + str(version) + " is not supported (only 46, Quake III Arena)");
  }
  for (int i = 0; i < kLumpCount; ++i) {
    const std::size_t entry = 8 + 8 * std::size_t(i);
    const std::int32_t offset = in_.i32(entry);
    const std::int32_t length = in_.i32(entry + 4);
    if (offset < 0 || length < 0 || !in_.has(std::uint64_t(offset), std::uint64_t(length))) {
      return fail(entry, "lump " + str(i) + " (offset " + str(offset) + ", length " + str(length) +
                             ") lies outside the " + str(std::int64_t(in_.size())) + "-byte file");
    }
    lumps_[i] = {std::size_t(offset), std::size_t(length), 1};
  }
  return true;
}

bool Importer::read_lump(int lump, std::size_t record_size, const char* what, LumpRange& out) {
  const LumpRange& raw = lumps_[lump];
  if (raw.count % record_size != 0) {
    return fail(8 + 8 * std::size_t(lump) + 4, std::string(what) + " lump length " + str(raw.count) +
                                                   " is not a multiple of its " + str(record_size) +
                                                   "-byte record");
  }
  out = {raw.offset, raw.count / record_size, record_size};
  return true;
}

bool Importer::read_shaders() {
  LumpRange lump;
  if (!read_lump(kShaders, kShaderSize, "shaders", lump)) return false;
  shaders_.resize(lump.count);
  for (std::size_t i = 0; i < lump.count; ++i) {
    shaders_[i].surface_flags = in_.u32(lump.at(i) + 64);
    shaders_[i].contents = in_.u32(lump.at(i) + 68);
  }
  return true;
}

bool Importer::read_plane(std::int32_t index, Planed& out) {
  const std::size_t at = planes_.at(std::size_t(index));
  const Vec3d n = to_double(in_.vec3(at));
  const double d = in_.f32(at + 12);
  if (!is_finite(n) || !std::isfinite(d)) {
    return fail(at, "plane " + str(index) + " is not finite");
  }
  const double len = length(n);
  if (std::abs(len - 1.0) > kUnitNormalTolerance) {
    return fail(at, "plane " + str(index) + " normal has length " + std::to_string(len) + ", not 1");
  }
  // Normalising n alone would move the plane; scale d with it so the plane stays where it was.
  out = {n * (1.0 / len), d / len};
  return true;
}

bool Importer::read_world_model() {
  if (models_.count == 0) return fail(lumps_[kModels].offset, "the models lump is empty (no world model)");
  const std::size_t at = models_.at(0);
  world_first_surface_ = in_.i32(at + 24);
  world_surface_count_ = in_.i32(at + 28);
  world_first_brush_ = in_.i32(at + 32);
  world_brush_count_ = in_.i32(at + 36);
  if (world_first_surface_ < 0 || world_surface_count_ < 0 ||
      world_first_surface_ + world_surface_count_ > std::int64_t(surfaces_.count)) {
    return fail(at + 24, "world model surfaces [" + str(world_first_surface_) + ", +" +
                             str(world_surface_count_) + ") outside the " + str(surfaces_.count) +
                             " surfaces");
  }
  if (world_first_brush_ < 0 || world_brush_count_ < 0 ||
      world_first_brush_ + world_brush_count_ > std::int64_t(brushes_.count)) {
    return fail(at + 32, "world model brushes [" + str(world_first_brush_) + ", +" + str(world_brush_count_) +
                             ") outside the " + str(brushes_.count) + " brushes");
  }
  return true;
}

bool Importer::read_brushes() {
  level_.source_brushes = std::int32_t(world_brush_count_);
  std::vector<Planed> planes;
  for (std::int64_t b = world_first_brush_; b < world_first_brush_ + world_brush_count_; ++b) {
    const std::size_t at = brushes_.at(std::size_t(b));
    const std::int64_t first_side = in_.i32(at);
    const std::int64_t side_count = in_.i32(at + 4);
    const std::int32_t shader_num = in_.i32(at + 8);
    if (first_side < 0 || side_count < 0 || first_side + side_count > std::int64_t(sides_.count)) {
      return fail(at, "brush " + str(b) + " sides [" + str(first_side) + ", +" + str(side_count) +
                          ") outside the " + str(sides_.count) + " brush sides");
    }
    if (shader_num < 0 || std::size_t(shader_num) >= shaders_.size()) {
      return fail(at + 8, "brush " + str(b) + " shader " + str(shader_num) + " outside the " +
                              str(shaders_.size()) + " shaders");
    }
    // The engine takes a brush's contents from its own shader (cm_load.c), not from its sides.
    const std::uint32_t contents = shaders_[std::size_t(shader_num)].contents;
    if ((contents & kContentsPlayerSolid) == 0) {
      ++level_.skipped_nonsolid;
      continue;
    }
    planes.clear();
    std::uint32_t surface_flags = 0;
    for (std::int64_t s = first_side; s < first_side + side_count; ++s) {
      const std::size_t side_at = sides_.at(std::size_t(s));
      const std::int32_t plane_num = in_.i32(side_at);
      const std::int32_t side_shader = in_.i32(side_at + 4);
      if (plane_num < 0 || std::size_t(plane_num) >= planes_.count) {
        return fail(side_at, "brush side " + str(s) + " plane " + str(plane_num) + " outside the " +
                                 str(planes_.count) + " planes");
      }
      if (side_shader < 0 || std::size_t(side_shader) >= shaders_.size()) {
        return fail(side_at + 4, "brush side " + str(s) + " shader " + str(side_shader) + " outside the " +
                                     str(shaders_.size()) + " shaders");
      }
      Planed plane;
      if (!read_plane(plane_num, plane)) return false;
      planes.push_back(plane);
      surface_flags |= shaders_[std::size_t(side_shader)].surface_flags;
    }
    // No volume (planes exclude each other) or not closed (too few sides): nothing a player can touch.
    const ConvexPolytope poly = polytope_from_planes(planes, kWorldExtent, kPlaneEpsilon);
    const bool open = std::any_of(poly.faces.begin(), poly.faces.end(),
                                  [](const PolytopeFace& f) { return f.source == kWorldFace; });
    if (poly.empty() || open) {
      ++stats_.degenerate_brushes;
      continue;
    }
    Brush brush;
    brush.planes.reserve(planes.size());
    for (const Planed& p : planes)
      brush.planes.push_back(to_float(p));
    level_.brushes.push_back(std::move(brush));
    level_.brush_contents.push_back(contents);
    level_.brush_surface_flags.push_back(surface_flags);
    if ((contents & kContentsSolid) == 0) ++stats_.playerclip_brushes;
  }
  return true;
}

// ---- Patches ----

// Segments a quadratic Bezier piece needs so every chord stays within `flatness` of the curve: the
// curve's second derivative is the constant 2(p0 − 2p1 + p2), so with n equal steps in t the largest
// chord gap is |p0 − 2p1 + p2| / (4n²).
int segments_for(Vec3d p0, Vec3d p1, Vec3d p2, double flatness, int max_segments) {
  const double bend = length(p0 - p1 * 2.0 + p2);
  const double n = std::ceil(std::sqrt(bend / (4.0 * flatness)));
  if (!(n >= 1.0)) return 1;
  return n >= double(max_segments) ? max_segments : int(n);
}

Vec3d bezier(Vec3d p0, Vec3d p1, Vec3d p2, double t) {
  const double s = 1.0 - t;
  return p0 * (s * s) + p1 * (2.0 * s * t) + p2 * (t * t);
}

// One sample direction of a patch: for each output sample, the piece it lies in and its parameter there.
// Pieces share their edge samples, so the tessellation has no cracks inside a patch.
struct Sample {
  int piece;
  double t;
};

std::vector<Sample> samples_along(const std::vector<int>& segments) {
  std::vector<Sample> out;
  for (std::size_t piece = 0; piece < segments.size(); ++piece) {
    for (int k = 0; k < segments[piece]; ++k)
      out.push_back({int(piece), double(k) / segments[piece]});
  }
  out.push_back({int(segments.size()) - 1, 1.0});
  return out;
}

// A brush of `thickness` behind the triangle (a, b, c) whose front faces along `front` (unit): the
// triangle's plane, the same plane moved back, and a plane through each edge perpendicular to the
// triangle. Returns nothing for slivers.
std::optional<Brush> triangle_brush(Vec3d a, Vec3d b, Vec3d c, Vec3d front, double thickness) {
  const Vec3d corners[3] = {a, b, c};
  const double twice_area = length(cross(b - a, c - a));
  Brush brush;
  brush.planes.push_back(to_float(plane_through(front, a)));
  brush.planes.push_back(to_float(Planed{-front, -(dot(front, a) - thickness)}));
  for (int i = 0; i < 3; ++i) {
    const Vec3d p = corners[i];
    const Vec3d q = corners[(i + 1) % 3];
    const Vec3d r = corners[(i + 2) % 3];
    const double edge = length(q - p);
    if (!(edge > 0.0) || !(twice_area / edge >= kMinPatchTriangleAltitude)) return std::nullopt;
    Vec3d out = normalize(cross(q - p, front));
    if (dot(out, r - p) > 0.0) out = -out;
    brush.planes.push_back(to_float(plane_through(out, p)));
  }
  return brush;
}

bool Importer::read_patch(std::size_t surface_offset, const Shader& shader, std::int32_t surface_index) {
  const std::int64_t first_vert = in_.i32(surface_offset + 12);
  const std::int64_t vert_count = in_.i32(surface_offset + 16);
  const std::int32_t width = in_.i32(surface_offset + 96);
  const std::int32_t height = in_.i32(surface_offset + 100);
  const std::string label = "patch surface " + str(surface_index);
  if (width < 3 || height < 3 || width % 2 == 0 || height % 2 == 0 || width > kMaxPatchControlSide ||
      height > kMaxPatchControlSide) {
    return fail(surface_offset + 96, label + " control grid " + str(width) + "x" + str(height) +
                                         " is not odd and within 3.." + str(kMaxPatchControlSide));
  }
  if (vert_count != std::int64_t(width) * height) {
    return fail(surface_offset + 16, label + " has " + str(vert_count) + " vertices for a " + str(width) +
                                         "x" + str(height) + " grid");
  }
  if (first_vert < 0 || first_vert + vert_count > std::int64_t(verts_.count)) {
    return fail(surface_offset + 12, label + " vertices [" + str(first_vert) + ", +" + str(vert_count) +
                                         ") outside the " + str(verts_.count) + " draw vertices");
  }
  // Control points, row-major: point (i, j) with i along the width.
  std::vector<Vec3d> ctrl(static_cast<std::size_t>(vert_count));
  std::vector<Vec3d> ctrl_normal(static_cast<std::size_t>(vert_count));
  for (std::int64_t k = 0; k < vert_count; ++k) {
    const std::size_t at = verts_.at(std::size_t(first_vert + k));
    ctrl[std::size_t(k)] = to_double(in_.vec3(at));
    ctrl_normal[std::size_t(k)] = to_double(in_.vec3(at + kDrawVertNormal));
    if (!is_finite(ctrl[std::size_t(k)])) {
      return fail(at, label + " control point " + str(k) + " is not finite");
    }
    // Normals only vote on which side is the front; a non-finite one gets no vote.
    if (!is_finite(ctrl_normal[std::size_t(k)])) ctrl_normal[std::size_t(k)] = {};
  }
  const auto at = [&](const std::vector<Vec3d>& grid, int i, int j) -> const Vec3d& {
    return grid[std::size_t(j) * std::size_t(width) + std::size_t(i)];
  };

  // Like cm_patch.c: a column of pieces is split as finely as its most curved row needs (and likewise for
  // rows), which keeps the grid regular and crack-free.
  const double flatness = options_.patch_flatness;
  const int max_segments = options_.patch_max_subdivision;
  std::vector<int> u_segments((width - 1) / 2, 1);
  std::vector<int> v_segments((height - 1) / 2, 1);
  for (int pu = 0; pu < int(u_segments.size()); ++pu) {
    for (int j = 0; j < height; ++j) {
      u_segments[pu] =
          std::max(u_segments[pu], segments_for(at(ctrl, 2 * pu, j), at(ctrl, 2 * pu + 1, j),
                                                at(ctrl, 2 * pu + 2, j), flatness, max_segments));
    }
  }
  for (int pv = 0; pv < int(v_segments.size()); ++pv) {
    for (int i = 0; i < width; ++i) {
      v_segments[pv] =
          std::max(v_segments[pv], segments_for(at(ctrl, i, 2 * pv), at(ctrl, i, 2 * pv + 1),
                                                at(ctrl, i, 2 * pv + 2), flatness, max_segments));
    }
  }
  const std::vector<Sample> us = samples_along(u_segments);
  const std::vector<Sample> vs = samples_along(v_segments);
  const std::int64_t triangles = 2 * std::int64_t(us.size() - 1) * std::int64_t(vs.size() - 1);
  patch_triangles_made_ += triangles;
  if (patch_triangles_made_ > kMaxPatchTriangles) {
    return fail(surface_offset, label + " brings the patch triangles past " + str(kMaxPatchTriangles));
  }
  stats_.patch_triangles += std::int32_t(triangles);

  // Evaluate the biquadratic surface (positions, and the vertex normals for the front vote) on the grid.
  const int nu = int(us.size());
  const int nv = int(vs.size());
  std::vector<Vec3d> grid(std::size_t(nu) * std::size_t(nv));
  std::vector<Vec3d> grid_normal(grid.size());
  for (int jv = 0; jv < nv; ++jv) {
    for (int iu = 0; iu < nu; ++iu) {
      const Sample su = us[std::size_t(iu)];
      const Sample sv = vs[std::size_t(jv)];
      for (int which = 0; which < 2; ++which) {
        const std::vector<Vec3d>& src = which == 0 ? ctrl : ctrl_normal;
        Vec3d rows[3];
        for (int r = 0; r < 3; ++r) {
          const int j = 2 * sv.piece + r;
          rows[r] = bezier(at(src, 2 * su.piece, j), at(src, 2 * su.piece + 1, j),
                           at(src, 2 * su.piece + 2, j), su.t);
        }
        const Vec3d value = bezier(rows[0], rows[1], rows[2], sv.t);
        (which == 0 ? grid : grid_normal)[std::size_t(jv) * std::size_t(nu) + std::size_t(iu)] = value;
      }
    }
  }
  const auto g = [&](const std::vector<Vec3d>& v, int i, int j) -> const Vec3d& {
    return v[std::size_t(j) * std::size_t(nu) + std::size_t(i)];
  };

  // Two triangles per grid cell, wound so cross(b − a, c − a) = du × dv. Which side is the front is
  // decided once per patch by the map's vertex normals, which q3map points at the visible side (on the
  // stock OpenArena maps every triangle's normals agree with du × dv); the winding decides alone only
  // when the normals do not (all zero, or they cancel out).
  struct Triangle {
    Vec3d a, b, c;
  };
  std::vector<Triangle> tris;
  tris.reserve(std::size_t(triangles));
  double vote = 0.0;
  for (int j = 0; j + 1 < nv; ++j) {
    for (int i = 0; i + 1 < nu; ++i) {
      const Vec3d p1 = g(grid, i, j), p2 = g(grid, i + 1, j), p3 = g(grid, i + 1, j + 1),
                  p4 = g(grid, i, j + 1);
      const Vec3d n1 = g(grid_normal, i, j), n2 = g(grid_normal, i + 1, j), n3 = g(grid_normal, i + 1, j + 1),
                  n4 = g(grid_normal, i, j + 1);
      tris.push_back({p1, p2, p4});
      tris.push_back({p2, p3, p4});
      vote += dot(cross(p2 - p1, p4 - p1), n1 + n2 + n4) + dot(cross(p3 - p2, p4 - p2), n2 + n3 + n4);
    }
  }
  const double front_sign = vote < 0.0 ? -1.0 : 1.0;
  const std::uint32_t contents = shader.contents;
  for (const Triangle& t : tris) {
    const Vec3d winding = cross(t.b - t.a, t.c - t.a);
    const double len = length(winding);
    std::optional<Brush> brush;
    if (len > 0.0 && std::isfinite(len)) {
      const Vec3d front = winding * (front_sign / len);
      brush = triangle_brush(t.a, t.b, t.c, front, options_.patch_thickness);
    }
    if (!brush) {
      ++stats_.degenerate_triangles;
      continue;
    }
    level_.brushes.push_back(std::move(*brush));
    level_.brush_contents.push_back(contents);
    level_.brush_surface_flags.push_back(shader.surface_flags);
    ++level_.patch_brushes;
  }
  ++level_.patches;
  return true;
}

bool Importer::read_patches() {
  for (std::int64_t s = world_first_surface_; s < world_first_surface_ + world_surface_count_; ++s) {
    const std::size_t at = surfaces_.at(std::size_t(s));
    if (in_.i32(at + 8) != kSurfacePatch) continue;
    const std::int32_t shader_num = in_.i32(at);
    if (shader_num < 0 || std::size_t(shader_num) >= shaders_.size()) {
      return fail(at, "surface " + str(s) + " shader " + str(shader_num) + " outside the " +
                          str(shaders_.size()) + " shaders");
    }
    const Shader& shader = shaders_[std::size_t(shader_num)];
    if ((shader.contents & kContentsPlayerSolid) == 0) {
      ++stats_.nonsolid_patches;
      continue;
    }
    if (!read_patch(at, shader, std::int32_t(s))) return false;
  }
  return true;
}

// ---- Entities ----

// The entity lump is text: { "key" "value" ... } blocks, with // comments, read like the engine's
// COM_Parse (quoted strings without escapes, or bare words). It ends at its first NUL, as a C string.

bool Importer::add_spawn(const std::vector<std::pair<std::string, std::string>>& keys, std::size_t offset) {
  SpawnKeys spawn_keys;
  for (const auto& [key, value] : keys) {
    if (key == "classname") spawn_keys.classname = value;
    if (key == "origin") spawn_keys.origin = &value;
    if (key == "angle") spawn_keys.angle = &value;
    if (key == "angles") spawn_keys.angles = &value;
  }
  if (!is_player_spawn(spawn_keys.classname)) return true;
  SpawnPoint spawn;
  const SpawnKeyError error = spawn_from_keys(spawn_keys, spawn);
  if (!error.key.empty()) return fail(offset, spawn.classname + ": " + error.what);
  level_.spawns.push_back(std::move(spawn));
  return true;
}

bool Importer::read_entities() {
  const LumpRange& lump = lumps_[kEntities];
  const std::span<const std::uint8_t> raw = in_.bytes(lump.offset, lump.count);
  std::string_view text(reinterpret_cast<const char*>(raw.data()), raw.size());
  text = text.substr(0, text.find('\0'));
  QuakeLexer lexer(text);
  std::vector<std::pair<std::string, std::string>> keys;
  const auto at = [&](const Token& t) { return lump.offset + t.offset; };
  const auto is_text = [](const Token& t) {
    return t.kind == TokenKind::kString || t.kind == TokenKind::kWord;
  };
  for (;;) {
    Token token = lexer.next();
    if (token.kind == TokenKind::kError)
      return fail(at(token), std::string(token.text) + " in the entity lump");
    if (token.kind == TokenKind::kEnd) return true;
    if (token.kind != TokenKind::kOpenBrace) {
      return fail(at(token), "expected '{' to open an entity in the entity lump");
    }
    const std::size_t entity_offset = at(token);
    keys.clear();
    for (;;) {
      token = lexer.next();
      if (token.kind == TokenKind::kError)
        return fail(at(token), std::string(token.text) + " in the entity lump");
      if (token.kind == TokenKind::kCloseBrace) break;
      if (!is_text(token)) return fail(at(token), "expected a key or '}' in the entity lump");
      const std::string key(token.text);
      const std::size_t key_offset = at(token);
      token = lexer.next();
      if (token.kind == TokenKind::kError)
        return fail(at(token), std::string(token.text) + " in the entity lump");
      if (!is_text(token)) return fail(key_offset, "entity key \"" + key + "\" has no value");
      keys.emplace_back(key, std::string(token.text));
    }
    ++stats_.entities;
    if (!add_spawn(keys, entity_offset)) return false;
  }
}

// ---- The potentially visible set ----

// q3map's rendering tree (nodes, leafs, planes) becomes the set's cluster tree node for node: a leaf child
// -(leaf + 1) becomes the leaf's cluster, and the visibility lump's rows are taken as they are. A map
// without visibility (an empty lump, no clusters, no nodes: q3map -novis, or a vis stage never run) gets
// no set; anything present but inconsistent is an error, since a wrong set would cull what players see.
bool Importer::read_visibility() {
  const LumpRange& vis = lumps_[kVisibility];
  if (vis.count == 0 || nodes_.count == 0) return true;
  const std::size_t header = 8 + 8 * std::size_t(kVisibility);
  if (vis.count < kVisHeaderSize)
    return fail(header + 4, "visibility lump of " + str(vis.count) + " bytes has no header");
  const std::int32_t clusters = in_.i32(vis.offset);
  const std::int32_t bytes_per_cluster = in_.i32(vis.offset + 4);
  if (clusters < 0 || bytes_per_cluster < 0 ||
      std::uint64_t(clusters) * std::uint64_t(bytes_per_cluster) > vis.count - kVisHeaderSize) {
    return fail(vis.offset, "visibility: " + str(clusters) + " clusters of " + str(bytes_per_cluster) +
                                " bytes do not fit the " + str(vis.count) + "-byte lump");
  }
  if (clusters == 0) return true;
  if (nodes_.count > std::size_t(std::numeric_limits<std::int32_t>::max()))
    return fail(lumps_[kNodes].offset, "too many nodes");

  std::vector<PvsNode> nodes(nodes_.count);
  for (std::size_t i = 0; i < nodes_.count; ++i) {
    const std::size_t at = nodes_.at(i);
    const std::int32_t plane = in_.i32(at);
    if (plane < 0 || std::size_t(plane) >= planes_.count)
      return fail(at, "node " + str(std::int64_t(i)) + " plane " + str(plane) + " outside the " +
                          str(planes_.count) + " planes");
    nodes[i].normal = in_.vec3(planes_.at(std::size_t(plane)));
    nodes[i].distance = in_.f32(planes_.at(std::size_t(plane)) + 12);
    for (int side = 0; side < 2; ++side) {
      const std::int64_t child = in_.i32(at + 4 + 4 * std::size_t(side));
      if (child >= 0) {
        // Index range and the tree's shape are from_parts' checks.
        nodes[i].children[side] = std::int32_t(child);
        continue;
      }
      const std::int64_t leaf = -(child + 1);
      if (std::uint64_t(leaf) >= leafs_.count)
        return fail(at + 4 + 4 * std::size_t(side), "node " + str(std::int64_t(i)) + " leaf " + str(leaf) +
                                                        " outside the " + str(leafs_.count) + " leafs");
      const std::int32_t cluster = in_.i32(leafs_.at(std::size_t(leaf)));
      if (cluster < -1 || cluster >= clusters)
        return fail(leafs_.at(std::size_t(leaf)), "leaf " + str(leaf) + " cluster " + str(cluster) +
                                                      " outside the " + str(clusters) + " clusters");
      nodes[i].children[side] = cluster < 0 ? -1 : -cluster - 2;
    }
  }
  const std::span<const std::uint8_t> rows =
      in_.bytes(vis.offset + kVisHeaderSize, std::size_t(clusters) * std::size_t(bytes_per_cluster));
  PvsResult set = PotentiallyVisibleSet::from_parts(std::move(nodes), clusters, bytes_per_cluster,
                                                    std::vector<std::uint8_t>(rows.begin(), rows.end()));
  if (!set.ok())
    return fail(vis.offset, std::string("visibility refused: ") + to_string(set.error) + ": " + set.detail);
  level_.imported_visibility = std::move(set.set);
  return true;
}

LevelResult Importer::run() {
  const auto finish = [&]() {
    if (failure_) return level_failure(name_, failure_->offset, false, failure_->what);
    LevelResult r;
    r.level = std::move(level_);
    return r;
  };
  if (!(options_.patch_flatness > 0.0f) || !std::isfinite(options_.patch_flatness) ||
      options_.patch_max_subdivision < 1 || !(options_.patch_thickness > 0.0f) ||
      !std::isfinite(options_.patch_thickness)) {
    fail(0, "invalid Q3ImportOptions: flatness and thickness must be finite and > 0, subdivision >= 1");
    return finish();
  }
  level_.name = name_;
  level_.source_hash = fnv1a64(in_.bytes(0, in_.size()).data(), in_.size());
  if (read_header() && read_shaders() && read_lump(kPlanes, kPlaneSize, "planes", planes_) &&
      read_lump(kModels, kModelSize, "models", models_) &&
      read_lump(kBrushes, kBrushSize, "brushes", brushes_) &&
      read_lump(kBrushSides, kBrushSideSize, "brush sides", sides_) &&
      read_lump(kDrawVerts, kDrawVertSize, "draw vertices", verts_) &&
      read_lump(kSurfaces, kSurfaceSize, "surfaces", surfaces_) &&
      read_lump(kNodes, kNodeSize, "nodes", nodes_) && read_lump(kLeafs, kLeafSize, "leafs", leafs_) &&
      read_world_model() && read_brushes() && (!options_.import_patches || read_patches()) &&
      read_entities() && (!options_.import_visibility || read_visibility())) {
    compute_level_bounds(level_);
  }
  return finish();
}

}  // namespace

LevelResult import_q3_bsp(std::span<const std::uint8_t> bytes, const std::string& name,
                          const Q3ImportOptions& options, Q3ImportStats* stats) {
  Q3ImportStats local;
  Q3ImportStats& out = stats ? *stats : local;
  out = {};
  return Importer(bytes, name, options, out).run();
}

LevelResult import_q3_bsp_file(const std::string& path, const Q3ImportOptions& options,
                               Q3ImportStats* stats) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return level_failure(path, 0, false, "cannot open the file");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) return level_failure(path, 0, false, "read error");
  return import_q3_bsp(bytes, path, options, stats);
}

}  // namespace shiftcast
