#include "world/level/navmesh.hpp"

#include <DetourCommon.h>
#include <DetourNavMesh.h>
#include <DetourNavMeshBuilder.h>
#include <DetourNavMeshQuery.h>
#include <Recast.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "world/level/level_mesh.hpp"

namespace shiftcast {

static_assert(sizeof(dtPolyRef) == sizeof(std::uint32_t), "built for Debian's 32-bit dtPolyRef");

namespace {

// The one crossing between shiftcast's z-up frame and Recast/Detour's y-up frame: a rotation about x
// (determinant +1), so counter-clockwise faces stay counter-clockwise and up faces get +y normals.
void to_detour(Vec3 p, float out[3]) {
  out[0] = p.x;
  out[1] = p.z;
  out[2] = -p.y;
}
Vec3 from_detour(const float* p) {
  return {p[0], -p[2], p[1]};
}

// The only polygon flag: "walkable ground". Detour's filters exclude polygons without a flag they include.
constexpr unsigned short kPolyFlagWalk = 0x1;
constexpr int kMaxVertsPerPoly = DT_VERTS_PER_POLYGON;

// Detour limits, mirrored so bad settings or data become errors instead of overflows. Recast squares
// voxel distances in int (twice over), so grid sides and edge lengths stay below 32767 voxels.
constexpr int kMaxGridSide = 32767;
// Recast marks portal edges with bit 15 of a polygon index, so one tile holds fewer polygons than that.
constexpr int kMaxTilePolys = 0x7fff;
// |coordinate| bound for navmesh data and query inputs: 2^21 is twice kWorldExtent, and keeps Detour's
// float → int tile-location casts in range for any tile at least kMinTileWidth wide.
constexpr float kMaxCoordinate = float(1 << 21);
constexpr float kMinTileWidth = 1.0f;
// Counts in a tile image above this are corrupt: it keeps every size product inside an int as Detour
// computes it (the largest element is 36 bytes).
constexpr std::int64_t kMaxTileCount = std::int64_t(1) << 24;
// The nearest point Detour reports must lie inside the searched box; this much slack absorbs rounding.
constexpr float kSearchBoxSlack = 1e-3f;
// How far above the world's cell_height grid the voxel grid starts (see build_navmesh). Large against
// float rounding of heights at level scale (about 1e-3), small against any step; ioquake3 keeps the
// same 1/32 between a player and the floor.
constexpr float kVoxelLift = 1.0f / 32.0f;

constexpr int kMaxQueryNodes = 4096;    // A* node pool per NavQuery (Detour's limit is 65535)
constexpr int kMaxPathPolys = 4096;     // polygons on one path corridor
constexpr int kMaxStraightPath = 1024;  // corners of one path

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Recast reports why a stage failed only through its context's log; keep the errors.
class CapturingContext : public rcContext {
 public:
  CapturingContext() : rcContext(true) { enableTimer(false); }
  std::string errors;

 protected:
  void doLog(const rcLogCategory category, const char* msg, const int len) override {
    if (category != RC_LOG_ERROR) return;
    if (!errors.empty()) errors += "; ";
    errors.append(msg, std::size_t(std::max(0, len)));
  }
};

struct RecastDeleter {
  void operator()(rcHeightfield* p) const { rcFreeHeightField(p); }
  void operator()(rcCompactHeightfield* p) const { rcFreeCompactHeightfield(p); }
  void operator()(rcContourSet* p) const { rcFreeContourSet(p); }
  void operator()(rcPolyMesh* p) const { rcFreePolyMesh(p); }
  // rcPolyMeshDetail has no destructor of its own: only rcFreePolyMeshDetail releases its arrays.
  void operator()(rcPolyMeshDetail* p) const { rcFreePolyMeshDetail(p); }
};
template <typename T>
using RecastPtr = std::unique_ptr<T, RecastDeleter>;

bool positive_finite(float v) {
  return v > 0.0f && std::isfinite(v);
}

std::string check_settings(const NavmeshSettings& s) {
  if (!positive_finite(s.agent_radius) || !positive_finite(s.agent_height) || !(s.agent_climb >= 0.0f) ||
      !std::isfinite(s.agent_climb)) {
    return "agent radius and height must be positive, climb non-negative";
  }
  if (!(s.max_slope_degrees > 0.0f && s.max_slope_degrees < 90.0f))
    return "max_slope_degrees must be in (0, 90)";
  if (!positive_finite(s.cell_size) || !positive_finite(s.cell_height)) return "cell sizes must be positive";
  if (!positive_finite(s.edge_max_length) || !(s.edge_max_error >= 0.0f) ||
      !std::isfinite(s.edge_max_error) || !(s.region_min_size >= 0.0f) || !std::isfinite(s.region_min_size) ||
      !(s.region_merge_size >= 0.0f) || !std::isfinite(s.region_merge_size) ||
      !(s.detail_sample_distance >= 0.0f) || !std::isfinite(s.detail_sample_distance) ||
      !(s.detail_sample_max_error >= 0.0f) || !std::isfinite(s.detail_sample_max_error)) {
    return "edge, region and detail settings must be finite and non-negative";
  }
  if (s.edge_max_length / s.cell_size > float(kMaxGridSide)) return "edge_max_length too long for cell_size";
  if (s.region_min_size / s.cell_size > 4096.0f || s.region_merge_size / s.cell_size > 4096.0f) {
    return "region sizes too large for cell_size";
  }
  if (s.agent_height / s.cell_height > float(RC_SPAN_MAX_HEIGHT) ||
      s.agent_radius / s.cell_size > float(kMaxGridSide)) {
    return "agent too large for the cell sizes";
  }
  return {};
}

// Adds each brush's interior as unwalkable spans: per voxel column, the part of the vertical line
// through the column's centre that lies inside the brush. The centre line's extent lies within what the
// brush's own surface triangles rasterise into that column, so the spans only merge with (and never
// rise above) the surface spans, whose top keeps its walkable flag.
void fill_brush_interiors(rcContext* ctx, const Level& level, const LevelMesh& mesh, rcHeightfield& hf,
                          int merge_threshold) {
  std::vector<Aabb> boxes(level.brushes.size());
  for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
    for (const std::int32_t v : mesh.triangles[t])
      boxes[std::size_t(mesh.triangle_brush[t])].grow(mesh.vertices[std::size_t(v)]);
  }
  const double cs = hf.cs;
  const double ch = hf.ch;
  for (std::size_t b = 0; b < level.brushes.size(); ++b) {
    const Aabb& box = boxes[b];
    if (box.empty()) continue;
    // Detour x = Quake x; Detour z = −Quake y.
    const int x0 = std::max(0, int(std::floor((box.min.x - hf.bmin[0]) / cs)));
    const int x1 = std::min(hf.width - 1, int(std::floor((box.max.x - hf.bmin[0]) / cs)));
    const int z0 = std::max(0, int(std::floor((-box.max.y - hf.bmin[2]) / cs)));
    const int z1 = std::min(hf.height - 1, int(std::floor((-box.min.y - hf.bmin[2]) / cs)));
    for (int iz = z0; iz <= z1; ++iz) {
      for (int ix = x0; ix <= x1; ++ix) {
        const double qx = hf.bmin[0] + (ix + 0.5) * cs;
        const double qy = -(hf.bmin[2] + (iz + 0.5) * cs);
        double lo = -std::numeric_limits<double>::infinity();
        double hi = std::numeric_limits<double>::infinity();
        for (const Plane& plane : level.brushes[b].planes) {
          const Planed p = to_double(plane);
          const double rhs = p.d - p.normal.x * qx - p.normal.y * qy;
          if (std::fabs(p.normal.z) < 1e-9) {
            if (rhs <= 0.0) lo = hi;  // the column's centre line misses the brush
          } else if (p.normal.z > 0.0) {
            hi = std::min(hi, rhs / p.normal.z);
          } else {
            lo = std::max(lo, rhs / p.normal.z);
          }
          if (!(lo < hi)) break;
        }
        if (!(lo < hi)) continue;
        const double smin = std::ceil((lo - hf.bmin[1]) / ch);
        const double smax = std::floor((hi - hf.bmin[1]) / ch);
        const double top = double(RC_SPAN_MAX_HEIGHT);
        if (!(smax > smin) || smax < 0.0 || smin > top) continue;
        rcAddSpan(ctx, hf, ix, iz, static_cast<unsigned short>(std::clamp(smin, 0.0, top)),
                  static_cast<unsigned short>(std::clamp(smax, 0.0, top)), RC_NULL_AREA, merge_threshold);
      }
    }
  }
}

NavmeshBuild build_failure(std::string what, std::chrono::steady_clock::time_point start) {
  NavmeshBuild b;
  b.error = std::move(what);
  b.build_ms = elapsed_ms(start);
  return b;
}

}  // namespace

NavmeshBuild build_navmesh(const Level& level, const NavmeshSettings& settings) {
  const auto start = std::chrono::steady_clock::now();
  if (std::string bad = check_settings(settings); !bad.empty())
    return build_failure("settings: " + bad, start);

  const LevelMesh mesh = level_mesh(level);
  if (mesh.triangles.empty()) return build_failure("level has no brush faces", start);
  std::vector<float> verts(mesh.vertices.size() * 3);
  for (std::size_t i = 0; i < mesh.vertices.size(); ++i) {
    if (!is_finite(mesh.vertices[i])) return build_failure("non-finite brush vertex", start);
    to_detour(mesh.vertices[i], &verts[i * 3]);
  }
  std::vector<int> tris;
  tris.reserve(mesh.triangles.size() * 3);
  for (const auto& t : mesh.triangles)
    tris.insert(tris.end(), t.begin(), t.end());
  const int nverts = int(mesh.vertices.size());
  const int ntris = int(mesh.triangles.size());

  rcConfig cfg{};
  cfg.cs = settings.cell_size;
  cfg.ch = settings.cell_height;
  cfg.walkableSlopeAngle = settings.max_slope_degrees + kSlopeToleranceDegrees;
  cfg.walkableHeight = int(std::ceil(settings.agent_height / cfg.ch));
  cfg.walkableClimb = int(std::floor(settings.agent_climb / cfg.ch));
  cfg.walkableRadius = int(std::ceil(settings.agent_radius / cfg.cs));
  cfg.maxEdgeLen = int(settings.edge_max_length / cfg.cs);
  cfg.maxSimplificationError = settings.edge_max_error / cfg.cs;
  cfg.minRegionArea = int(std::lround(std::pow(settings.region_min_size / cfg.cs, 2.0f)));
  cfg.mergeRegionArea = int(std::lround(std::pow(settings.region_merge_size / cfg.cs, 2.0f)));
  cfg.maxVertsPerPoly = kMaxVertsPerPoly;
  // Recast's own advice: below about one cell, detail sampling only adds noise; 0 turns it off.
  cfg.detailSampleDist =
      settings.detail_sample_distance < 0.9f * cfg.cs ? 0.0f : settings.detail_sample_distance;
  cfg.detailSampleMaxError = settings.detail_sample_max_error;
  rcCalcBounds(verts.data(), nverts, cfg.bmin, cfg.bmax);
  // Snap the voxel grid to the world's: brush faces on the Quake grid then fall on cell boundaries, so
  // walls voxelise without half-cell jitter. Vertically the grid sits kVoxelLift above the world grid:
  // a flat face exactly on a cell boundary would otherwise be voxelised one whole cell high (Recast
  // gives every span at least one cell), and with the lift such floors come out kVoxelLift high instead.
  // Off-grid floors round up, never down: the navmesh is at most one cell_height above the floor.
  cfg.bmin[0] = std::floor(cfg.bmin[0] / cfg.cs) * cfg.cs;
  cfg.bmin[2] = std::floor(cfg.bmin[2] / cfg.cs) * cfg.cs;
  cfg.bmin[1] = std::floor(cfg.bmin[1] / cfg.ch) * cfg.ch - cfg.ch + std::min(kVoxelLift, cfg.ch / 4);
  rcCalcGridSize(cfg.bmin, cfg.bmax, cfg.cs, &cfg.width, &cfg.height);
  if (cfg.width > kMaxGridSide || cfg.height > kMaxGridSide ||
      std::int64_t(cfg.width) * cfg.height > settings.max_grid_columns) {
    return build_failure("level too large for one navmesh tile at cell_size " + std::to_string(cfg.cs) +
                             " (" + std::to_string(cfg.width) + " x " + std::to_string(cfg.height) +
                             " columns)",
                         start);
  }
  if ((cfg.bmax[1] - cfg.bmin[1]) / cfg.ch > float(RC_SPAN_MAX_HEIGHT)) {
    return build_failure("level too tall for cell_height " + std::to_string(cfg.ch), start);
  }

  CapturingContext ctx;
  const auto fail = [&](const char* stage) {
    std::string what = std::string("recast ") + stage + " failed";
    if (!ctx.errors.empty()) what += ": " + ctx.errors;
    return build_failure(what, start);
  };

  RecastPtr<rcHeightfield> hf(rcAllocHeightfield());
  if (!hf || !rcCreateHeightfield(&ctx, *hf, cfg.width, cfg.height, cfg.bmin, cfg.bmax, cfg.cs, cfg.ch)) {
    return fail("heightfield");
  }
  std::vector<unsigned char> areas(std::size_t(ntris), RC_NULL_AREA);
  rcMarkWalkableTriangles(&ctx, cfg.walkableSlopeAngle, verts.data(), nverts, tris.data(), ntris,
                          areas.data());
  if (!rcRasterizeTriangles(&ctx, verts.data(), nverts, tris.data(), areas.data(), ntris, *hf,
                            cfg.walkableClimb)) {
    return fail("rasterization");
  }
  if (settings.fill_brush_interiors) fill_brush_interiors(&ctx, level, mesh, *hf, cfg.walkableClimb);
  rcFilterLowHangingWalkableObstacles(&ctx, cfg.walkableClimb, *hf);
  rcFilterLedgeSpans(&ctx, cfg.walkableHeight, cfg.walkableClimb, *hf);
  rcFilterWalkableLowHeightSpans(&ctx, cfg.walkableHeight, *hf);

  RecastPtr<rcCompactHeightfield> chf(rcAllocCompactHeightfield());
  if (!chf || !rcBuildCompactHeightfield(&ctx, cfg.walkableHeight, cfg.walkableClimb, *hf, *chf)) {
    return fail("compact heightfield");
  }
  hf.reset();
  if (!rcErodeWalkableArea(&ctx, cfg.walkableRadius, *chf)) return fail("erosion");
  // Watershed regions: the best polygons for open arenas, which is what shooters mostly are.
  if (!rcBuildDistanceField(&ctx, *chf)) return fail("distance field");
  if (!rcBuildRegions(&ctx, *chf, 0, cfg.minRegionArea, cfg.mergeRegionArea)) return fail("regions");

  RecastPtr<rcContourSet> cset(rcAllocContourSet());
  if (!cset || !rcBuildContours(&ctx, *chf, cfg.maxSimplificationError, cfg.maxEdgeLen, *cset)) {
    return fail("contours");
  }
  RecastPtr<rcPolyMesh> pmesh(rcAllocPolyMesh());
  if (!pmesh || !rcBuildPolyMesh(&ctx, *cset, cfg.maxVertsPerPoly, *pmesh)) return fail("polygon mesh");
  RecastPtr<rcPolyMeshDetail> dmesh(rcAllocPolyMeshDetail());
  if (!dmesh ||
      !rcBuildPolyMeshDetail(&ctx, *pmesh, *chf, cfg.detailSampleDist, cfg.detailSampleMaxError, *dmesh)) {
    return fail("detail mesh");
  }
  if (pmesh->npolys == 0) return build_failure("no walkable area for the agent", start);
  if (pmesh->npolys > kMaxTilePolys || pmesh->nverts >= 0xffff) {
    return build_failure(
        "too many polygons for one navmesh tile (" + std::to_string(pmesh->npolys) + "); raise cell_size",
        start);
  }
  for (int i = 0; i < pmesh->npolys; ++i) {
    pmesh->flags[i] = pmesh->areas[i] == RC_WALKABLE_AREA ? kPolyFlagWalk : 0;
  }
  // Recast lifts detail vertices one cell_height above the voxel tops they sample (upstream marks the
  // offset "is this necessary?"); polygon corners are not lifted. Undo it so that heights from the
  // detail mesh (nearest and random points) and from the corners (paths) agree.
  for (int i = 0; i < dmesh->nverts; ++i)
    dmesh->verts[i * 3 + 1] -= cfg.ch;

  dtNavMeshCreateParams params{};
  params.verts = pmesh->verts;
  params.vertCount = pmesh->nverts;
  params.polys = pmesh->polys;
  params.polyAreas = pmesh->areas;
  params.polyFlags = pmesh->flags;
  params.polyCount = pmesh->npolys;
  params.nvp = pmesh->nvp;
  params.detailMeshes = dmesh->meshes;
  params.detailVerts = dmesh->verts;
  params.detailVertsCount = dmesh->nverts;
  params.detailTris = dmesh->tris;
  params.detailTriCount = dmesh->ntris;
  params.walkableHeight = settings.agent_height;
  params.walkableRadius = settings.agent_radius;
  params.walkableClimb = settings.agent_climb;
  rcVcopy(params.bmin, pmesh->bmin);
  rcVcopy(params.bmax, pmesh->bmax);
  params.cs = cfg.cs;
  params.ch = cfg.ch;
  params.buildBvTree = true;
  unsigned char* nav_data = nullptr;
  int nav_size = 0;
  if (!dtCreateNavMeshData(&params, &nav_data, &nav_size)) {
    return build_failure("dtCreateNavMeshData rejected the polygon mesh", start);
  }
  NavmeshBuild out;
  out.data.assign(nav_data, nav_data + nav_size);
  dtFree(nav_data);
  out.polygons = pmesh->npolys;
  out.vertices = pmesh->nverts;
  out.grid_width = cfg.width;
  out.grid_height = cfg.height;
  out.build_ms = elapsed_ms(start);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Loading

namespace {

bool coordinate_ok(const float* v) {
  for (int i = 0; i < 3; ++i) {
    if (!std::isfinite(v[i]) || std::fabs(v[i]) > kMaxCoordinate) return false;
  }
  return true;
}

template <typename T>
T read_at(const std::uint8_t* base, std::size_t offset) {
  T value;
  std::memcpy(&value, base + offset, sizeof(T));
  return value;
}

std::int64_t align4(std::int64_t x) {
  return (x + 3) & ~std::int64_t(3);
}

// Checks everything Detour's addTile and queries follow without checking: the size implied by the
// header's counts, every vertex, neighbour, detail and BV-tree index, finite coordinates. Only what
// dtCreateNavMeshData produces for a solo mesh is accepted (one layer, no off-mesh connections).
std::string validate_tile(const std::vector<std::uint8_t>& data) {
  if (data.size() < sizeof(dtMeshHeader)) return "truncated: shorter than a tile header";
  const std::uint8_t* base = data.data();
  const auto h = read_at<dtMeshHeader>(base, 0);
  if (h.magic != DT_NAVMESH_MAGIC) return "not Detour navmesh data (bad magic)";
  if (h.version != DT_NAVMESH_VERSION)
    return "unsupported Detour navmesh version " + std::to_string(h.version);
  const std::int64_t counts[] = {h.polyCount,       h.vertCount,      h.maxLinkCount, h.detailMeshCount,
                                 h.detailVertCount, h.detailTriCount, h.bvNodeCount,  h.offMeshConCount};
  for (const std::int64_t c : counts) {
    if (c < 0 || c > kMaxTileCount) return "corrupt header: count out of range";
  }
  if (h.polyCount < 1 || h.polyCount > kMaxTilePolys) return "corrupt header: polygon count";
  if (h.vertCount < 3 || h.vertCount >= 0xffff) return "corrupt header: vertex count";
  // addTile writes links[maxLinkCount − 1] unconditionally.
  if (h.maxLinkCount < 1) return "corrupt header: link count";
  if (h.offMeshConCount != 0 || h.offMeshBase != h.polyCount) return "off-mesh connections are not supported";
  if (h.detailMeshCount != h.polyCount || h.detailTriCount < h.polyCount)
    return "corrupt header: detail mesh";
  if (h.bvNodeCount > 2 * std::int64_t(h.polyCount)) return "corrupt header: BV tree size";
  if (h.x != 0 || h.y != 0 || h.layer != 0) return "not a solo navmesh tile (tile coordinates)";
  if (!coordinate_ok(h.bmin) || !coordinate_ok(h.bmax) || h.bmax[0] - h.bmin[0] < kMinTileWidth ||
      h.bmax[2] - h.bmin[2] < kMinTileWidth || !(h.bmax[1] >= h.bmin[1])) {
    return "corrupt header: bounds";
  }
  if (!std::isfinite(h.walkableHeight) || !std::isfinite(h.walkableRadius) ||
      !std::isfinite(h.walkableClimb) || !(h.bvQuantFactor > 0.0f) || !std::isfinite(h.bvQuantFactor)) {
    return "corrupt header: agent or BV parameters";
  }

  const std::int64_t header_size = align4(sizeof(dtMeshHeader));
  const std::int64_t verts_size = align4(std::int64_t(sizeof(float)) * 3 * h.vertCount);
  const std::int64_t polys_size = align4(std::int64_t(sizeof(dtPoly)) * h.polyCount);
  const std::int64_t links_size = align4(std::int64_t(sizeof(dtLink)) * h.maxLinkCount);
  const std::int64_t detail_meshes_size = align4(std::int64_t(sizeof(dtPolyDetail)) * h.detailMeshCount);
  const std::int64_t detail_verts_size = align4(std::int64_t(sizeof(float)) * 3 * h.detailVertCount);
  const std::int64_t detail_tris_size = align4(std::int64_t(4) * h.detailTriCount);
  const std::int64_t bv_size = align4(std::int64_t(sizeof(dtBVNode)) * h.bvNodeCount);
  const std::int64_t expected = header_size + verts_size + polys_size + links_size + detail_meshes_size +
                                detail_verts_size + detail_tris_size + bv_size;
  if (expected != std::int64_t(data.size())) {
    return "size " + std::to_string(data.size()) + " does not match the header (" + std::to_string(expected) +
           " bytes): truncated or corrupt";
  }
  const std::size_t verts_at = std::size_t(header_size);
  const std::size_t polys_at = verts_at + std::size_t(verts_size);
  const std::size_t detail_meshes_at = polys_at + std::size_t(polys_size + links_size);
  const std::size_t detail_verts_at = detail_meshes_at + std::size_t(detail_meshes_size);
  const std::size_t detail_tris_at = detail_verts_at + std::size_t(detail_verts_size);
  const std::size_t bv_at = detail_tris_at + std::size_t(detail_tris_size);

  for (std::int64_t i = 0; i < h.vertCount; ++i) {
    const auto v = read_at<std::array<float, 3>>(base, verts_at + std::size_t(i) * 12);
    if (!coordinate_ok(v.data())) return "corrupt vertex " + std::to_string(i);
  }
  for (std::int64_t i = 0; i < h.detailVertCount; ++i) {
    const auto v = read_at<std::array<float, 3>>(base, detail_verts_at + std::size_t(i) * 12);
    if (!coordinate_ok(v.data())) return "corrupt detail vertex " + std::to_string(i);
  }
  for (std::int64_t i = 0; i < h.polyCount; ++i) {
    const auto p = read_at<dtPoly>(base, polys_at + std::size_t(i) * sizeof(dtPoly));
    const std::string which = "corrupt polygon " + std::to_string(i);
    // Detour copies vertCount vertices into fixed arrays of DT_VERTS_PER_POLYGON.
    if (p.vertCount < 3 || p.vertCount > DT_VERTS_PER_POLYGON) return which + ": vertex count";
    if (p.getType() != DT_POLYTYPE_GROUND) return which + ": type";
    for (int j = 0; j < p.vertCount; ++j) {
      if (p.verts[j] >= h.vertCount) return which + ": vertex index";
      // Internal neighbours become polygon references that queries follow unchecked. External links
      // (bit 15) point at neighbour tiles, which a solo mesh never has, so Detour never follows them.
      const unsigned short nei = p.neis[j];
      if (nei != 0 && !(nei & DT_EXT_LINK) && nei > h.polyCount) return which + ": neighbour index";
    }
    const auto d = read_at<dtPolyDetail>(base, detail_meshes_at + std::size_t(i) * sizeof(dtPolyDetail));
    if (std::int64_t(d.vertBase) + d.vertCount > h.detailVertCount ||
        std::int64_t(d.triBase) + d.triCount > h.detailTriCount || d.triCount < 1) {
      return which + ": detail range";
    }
    // Detour's closest-point-on-boundary search dereferences the best edge it found without checking
    // that it found one: every detail mesh needs a triangle edge flagged as the polygon's boundary.
    bool has_boundary = false;
    for (int t = 0; t < d.triCount; ++t) {
      const auto tri =
          read_at<std::array<std::uint8_t, 4>>(base, detail_tris_at + (std::size_t(d.triBase) + t) * 4);
      for (int k = 0; k < 3; ++k) {
        if (tri[k] >= p.vertCount + d.vertCount) return which + ": detail triangle index";
        if ((tri[3] >> (k * 2)) & DT_DETAIL_EDGE_BOUNDARY) has_boundary = true;
      }
    }
    if (!has_boundary) return which + ": detail mesh without a boundary edge";
  }
  for (std::int64_t i = 0; i < h.bvNodeCount; ++i) {
    const auto node = read_at<dtBVNode>(base, bv_at + std::size_t(i) * sizeof(dtBVNode));
    // A leaf names a polygon; an internal node skips −i nodes ahead (negating INT_MIN would overflow).
    if (node.i >= 0 ? node.i >= h.polyCount : node.i < -h.bvNodeCount) {
      return "corrupt BV tree node " + std::to_string(i);
    }
  }
  return {};
}

// dtCreateNavMeshData reserves 2n BV nodes but writes 2n − 1; the zeroed last one reads as a leaf naming
// polygon 0 with empty bounds at the tile's minimum corner, which queries clamped onto that corner then
// report. Turn it into a one-step skip, which no traversal can report.
void seal_bv_sentinel(std::vector<std::uint8_t>& data) {
  const auto h = read_at<dtMeshHeader>(data.data(), 0);
  if (h.bvNodeCount != 2 * h.polyCount) return;
  const std::size_t at = data.size() - align4(std::int64_t(sizeof(dtBVNode)) * h.bvNodeCount) +
                         std::size_t(h.bvNodeCount - 1) * sizeof(dtBVNode);
  dtBVNode node = read_at<dtBVNode>(data.data(), at);
  const dtBVNode zero{};
  if (std::memcmp(&node, &zero, sizeof(node)) != 0) return;
  node.i = -1;
  std::memcpy(data.data() + at, &node, sizeof(node));
}

double ground_area(const float* verts, const dtPoly& poly) {
  double area = 0;
  const float* a = &verts[poly.verts[0] * 3];
  for (int j = 2; j < poly.vertCount; ++j) {
    area += std::fabs(double(dtTriArea2D(a, &verts[poly.verts[j - 1] * 3], &verts[poly.verts[j] * 3])));
  }
  return area;
}

}  // namespace

void NavMesh::DetourDeleter::operator()(dtNavMesh* nav) const {
  dtFreeNavMesh(nav);
}

NavMesh::~NavMesh() = default;

std::unique_ptr<NavMesh> NavMesh::from_data(std::vector<std::uint8_t> data, std::string* error) {
  const auto failed = [&](std::string what) -> std::unique_ptr<NavMesh> {
    if (error) *error = "navmesh: " + what;
    return nullptr;
  };
  if (std::string bad = validate_tile(data); !bad.empty()) return failed(bad);
  seal_bv_sentinel(data);

  std::unique_ptr<NavMesh> mesh(new NavMesh());
  // std::vector's buffer comes from operator new, aligned for every Detour struct in the image.
  mesh->data_ = std::move(data);
  mesh->nav_.reset(dtAllocNavMesh());
  if (!mesh->nav_) return failed("out of memory");
  const dtStatus status = mesh->nav_->init(mesh->data_.data(), int(mesh->data_.size()), 0);
  if (dtStatusFailed(status))
    return failed("Detour refused the tile (status " + std::to_string(status) + ")");

  const dtNavMesh& nav = *mesh->nav_;
  double total = 0;
  for (int t = 0; t < nav.getMaxTiles(); ++t) {
    const dtMeshTile* tile = nav.getTile(t);
    if (!tile || !tile->header) continue;
    const dtPolyRef base = nav.getPolyRefBase(tile);
    for (int i = 0; i < tile->header->polyCount; ++i) {
      const dtPoly& poly = tile->polys[i];
      if (!(poly.flags & kPolyFlagWalk)) continue;
      const double area = ground_area(tile->verts, poly);
      if (!(area > 0.0)) continue;
      total += area;
      mesh->area_table_.push_back({base | dtPolyRef(i), total});
    }
  }
  return mesh;
}

int NavMesh::polygon_count() const {
  const dtMeshTile* tile = detour().getTile(0);
  return tile && tile->header ? tile->header->polyCount : 0;
}

std::vector<std::vector<Vec3>> NavMesh::walkable_polygons() const {
  std::vector<std::vector<Vec3>> out;
  const dtNavMesh& nav = detour();
  for (int t = 0; t < nav.getMaxTiles(); ++t) {
    const dtMeshTile* tile = nav.getTile(t);
    if (!tile || !tile->header) continue;
    for (int i = 0; i < tile->header->polyCount; ++i) {
      const dtPoly& poly = tile->polys[i];
      if (!(poly.flags & kPolyFlagWalk) || poly.getType() != DT_POLYTYPE_GROUND) continue;
      std::vector<Vec3>& corners = out.emplace_back();
      for (int k = 0; k < poly.vertCount; ++k)
        corners.push_back(from_detour(&tile->verts[poly.verts[k] * 3]));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Queries

namespace {

// Query inputs Detour can digest: finite, and inside the coordinate bound its tile lookups assume.
bool query_point_ok(Vec3 p) {
  return is_finite(p) && std::fabs(p.x) <= kMaxCoordinate && std::fabs(p.y) <= kMaxCoordinate &&
         std::fabs(p.z) <= kMaxCoordinate;
}

// A splitmix-style step: a Weyl increment hashed to 24 bits, so any seed (0 included) gives a
// well-mixed, platform-independent stream in [0, 1).
float next_unit(std::uint32_t& state) {
  state += 0x9e3779b9u;
  std::uint32_t z = state;
  z = (z ^ (z >> 16)) * 0x85ebca6bu;
  z = (z ^ (z >> 13)) * 0xc2b2ae35u;
  z ^= z >> 16;
  return float(z >> 8) * (1.0f / 16777216.0f);
}

}  // namespace

NavQuery::NavQuery(const NavMesh& mesh) : mesh_(mesh), filter_(std::make_unique<dtQueryFilter>()) {
  query_ = dtAllocNavMeshQuery();
  if (query_ && dtStatusFailed(query_->init(&mesh.detour(), kMaxQueryNodes))) {
    dtFreeNavMeshQuery(query_);
    query_ = nullptr;
  }
  filter_->setIncludeFlags(kPolyFlagWalk);
  filter_->setExcludeFlags(0);
  path_.resize(kMaxPathPolys);
}

NavQuery::~NavQuery() {
  dtFreeNavMeshQuery(query_);
}

bool NavQuery::nearest(Vec3 p, Vec3 half_extents, std::uint32_t& ref, float out[3]) {
  ref = 0;
  if (!query_ || !query_point_ok(p) || !query_point_ok(half_extents)) return false;
  float center[3];
  float extents[3];
  to_detour(p, center);
  to_detour(half_extents, extents);
  for (float& e : extents)
    e = std::fabs(e);
  dtPolyRef found = 0;
  if (dtStatusFailed(query_->findNearestPoly(center, extents, filter_.get(), &found, out)) || found == 0) {
    return false;
  }
  // Detour may report a polygon whose nearest point lies outside the searched box (its BV tree matches
  // whole polygons); the contract here is the box.
  for (int i = 0; i < 3; ++i) {
    if (std::fabs(out[i] - center[i]) > extents[i] + kSearchBoxSlack) return false;
  }
  ref = found;
  return true;
}

std::optional<Vec3> NavQuery::nearest_point(Vec3 p, Vec3 half_extents) {
  std::uint32_t ref = 0;
  float point[3];
  if (!nearest(p, half_extents, ref, point)) return std::nullopt;
  return from_detour(point);
}

bool NavQuery::find_path(Vec3 from, Vec3 to, std::vector<Vec3>& straight_path, Vec3 half_extents) {
  straight_path.clear();
  std::uint32_t start_ref = 0;
  std::uint32_t end_ref = 0;
  float start[3];
  float end[3];
  if (!nearest(from, half_extents, start_ref, start) || !nearest(to, half_extents, end_ref, end))
    return false;
  int count = 0;
  const dtStatus status = query_->findPath(start_ref, end_ref, start, end, filter_.get(), path_.data(),
                                           &count, int(path_.size()));
  // A partial corridor ends at the polygon closest to an unreachable goal.
  if (dtStatusFailed(status) || dtStatusDetail(status, DT_PARTIAL_RESULT) || count == 0 ||
      path_[std::size_t(count - 1)] != end_ref) {
    return false;
  }
  float corners[kMaxStraightPath * 3];
  int corner_count = 0;
  const dtStatus straight = query_->findStraightPath(start, end, path_.data(), count, corners, nullptr,
                                                     nullptr, &corner_count, kMaxStraightPath, 0);
  if (dtStatusFailed(straight) || dtStatusDetail(straight, DT_BUFFER_TOO_SMALL) || corner_count == 0) {
    return false;
  }
  straight_path.reserve(std::size_t(corner_count));
  for (int i = 0; i < corner_count; ++i)
    straight_path.push_back(from_detour(&corners[i * 3]));
  return true;
}

std::optional<Vec3> NavQuery::random_point(std::uint32_t& rng_state) {
  const std::vector<NavMesh::AreaEntry>& table = mesh_.area_table_;
  if (!query_ || table.empty()) return std::nullopt;
  const double pick = double(next_unit(rng_state)) * table.back().cumulative_area;
  auto it = std::upper_bound(table.begin(), table.end(), pick, [](double value, const NavMesh::AreaEntry& e) {
    return value < e.cumulative_area;
  });
  if (it == table.end()) --it;
  const dtMeshTile* tile = nullptr;
  const dtPoly* poly = nullptr;
  if (dtStatusFailed(mesh_.detour().getTileAndPolyByRef(it->poly_ref, &tile, &poly))) return std::nullopt;
  float verts[DT_VERTS_PER_POLYGON * 3];
  float tri_areas[DT_VERTS_PER_POLYGON];
  for (int j = 0; j < poly->vertCount; ++j)
    dtVcopy(&verts[j * 3], &tile->verts[poly->verts[j] * 3]);
  const float s = next_unit(rng_state);
  const float t = next_unit(rng_state);
  float point[3];
  dtRandomPointInConvexPoly(verts, poly->vertCount, tri_areas, s, t, point);
  // The polygon is flat between its corners; the detail mesh has the ground's real height.
  float height = 0;
  if (dtStatusSucceed(query_->getPolyHeight(it->poly_ref, point, &height))) point[1] = height;
  return from_detour(point);
}

}  // namespace shiftcast
