// Navmesh: where a player-sized agent can walk, built by Recast from a level's brushes and queried with
// Detour. Compiled levels store the Detour tile bytes (NavmeshBuild::data); the server and the client
// simulator load them once into an immutable NavMesh and give every thread its own NavQuery.
//
//   NavmeshBuild built = build_navmesh(level, {});
//   if (!built.ok()) { log(built.error); return; }
//   std::string error;
//   std::unique_ptr<NavMesh> mesh = NavMesh::from_data(std::move(built.data), &error);   // null on error
//   NavQuery query(*mesh);                         // one per thread; the mesh is shared read-only
//   std::vector<Vec3> corners;
//   if (query.find_path(from, to, corners)) ...    // z-up Quake coordinates, feet on the ground
//
// Recast and Detour are y-up; every coordinate crosses between the two conventions in navmesh.cpp's
// to_detour / from_detour and nowhere else. Loading validates the whole tile image first, because Detour
// trusts every count and index in it: corrupt bytes give an error, never a crash. (Validation is
// structural; integrity against bit rot is the compiled level's checksum's job.)
//
// Heights are the navmesh's approximation of the floor: flat floors on the cell_height grid come out
// 1/32 above it, other flat floors less than one cell_height above; on ramps and stairs the detail mesh
// can be off by up to about a step (agent_climb) either way. Callers that place characters let the
// motor settle them onto the real floor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collision/vec3.hpp"
#include "world/level/level.hpp"

class dtNavMesh;
class dtNavMeshQuery;
class dtQueryFilter;

namespace shiftcast {

// Every distance in Quake units. Defaults: the Quake player (DESIGN.md section 3) on a grid whose cells
// make its height and step whole (the radius rounds up to 2 cells of 8, erring on the side of walls).
struct NavmeshSettings {
  float agent_radius = 15;
  float agent_height = 56;
  float agent_climb = 18;  // the step height
  // Surfaces up to this steepness are walkable; compared with kSlopeToleranceDegrees of slack so that
  // authored 45-degree ramps stay walkable as in Quake (MIN_WALK_NORMAL 0.7 ≈ 45.6 degrees).
  float max_slope_degrees = 45;
  float cell_size = 8;  // horizontal voxel size: about half the radius, Recast's advice
  // Vertical voxel size: 2 makes 56 and 18 whole cells; 4 would round the climb down to 16 and turn a
  // Quake step (18) into a wall. Heights are limited to 8191 cells (16382 units) by Recast's spans.
  float cell_height = 2;
  float edge_max_length = 480;        // polygon edges along walls are split beyond this
  float edge_max_error = 10;          // how far a simplified wall contour may stray from the voxels
  float region_min_size = 64;         // islands smaller than a square of this side are dropped
  float region_merge_size = 160;      // regions smaller than a square of this side merge into neighbours
  float detail_sample_distance = 48;  // spacing of height samples on the detail mesh
  float detail_sample_max_error = 2;  // how far the detail mesh may stray from the voxel surface
  // Recast voxelises surfaces, not volumes, so the inside of a closed brush (under a pillar, inside a
  // thick wall) would become sealed walkable islands. Filling every brush's interior column by column
  // removes them; turn off only for levels made of open meshes where it cannot matter.
  bool fill_brush_interiors = true;
  // Memory guard: a solo mesh's voxel grid over the level's bounds must not exceed this many columns.
  std::int64_t max_grid_columns = std::int64_t(1) << 24;
};

// The slack on max_slope_degrees, see above.
inline constexpr float kSlopeToleranceDegrees = 0.6f;

struct NavmeshBuild {
  std::vector<std::uint8_t> data;  // dtCreateNavMeshData output: what compiled levels store
  std::string error;               // empty on success
  int polygons = 0;
  int vertices = 0;
  int grid_width = 0;  // voxel columns along x and y
  int grid_height = 0;
  double build_ms = 0;

  bool ok() const { return error.empty(); }
};

NavmeshBuild build_navmesh(const Level& level, const NavmeshSettings& settings);

// An immutable Detour navmesh. All access after loading is read-only, so any number of threads may
// query it at once, each through its own NavQuery.
class NavMesh {
 public:
  // Validates the tile image (sizes, counts, every index Detour follows, finite coordinates) and loads
  // it. Returns null and sets *error (when given) on corrupt data.
  static std::unique_ptr<NavMesh> from_data(std::vector<std::uint8_t> data, std::string* error);

  ~NavMesh();
  NavMesh(const NavMesh&) = delete;
  NavMesh& operator=(const NavMesh&) = delete;

  int polygon_count() const;
  const dtNavMesh& detour() const { return *nav_; }
  // Every walkable ground polygon's corners in shiftcast's z-up frame, in Detour's order: for
  // drawing floor plans (server/spectator). Detour's detail triangles are left out, so a corner's height
  // is the polygon's, within the build's detail sample error of the ground.
  std::vector<std::vector<Vec3>> walkable_polygons() const;

 private:
  friend class NavQuery;
  NavMesh() = default;

  // For random points: every walkable polygon with the running total of ground (xy) areas up to it.
  struct AreaEntry {
    std::uint32_t poly_ref;
    double cumulative_area;
  };

  // Detour points into data_ and writes its links there while loading, so the bytes live exactly as
  // long as nav_ (declared after, destroyed first) and Detour never frees them (no DT_TILE_FREE_DATA).
  std::vector<std::uint8_t> data_;
  struct DetourDeleter {
    void operator()(dtNavMesh* nav) const;
  };
  std::unique_ptr<dtNavMesh, DetourDeleter> nav_;
  std::vector<AreaEntry> area_table_;
};

// The half size of the box searched around a query point for the nearest navmesh polygon: a player's
// width either way, and down to the floor from a standing player's head.
inline constexpr Vec3 kDefaultSearchHalfExtents{64, 64, 128};

// Per-thread query state over a shared NavMesh (Detour's query object holds A* node pools, so its
// methods cannot be const or shared). The NavMesh must outlive it.
class NavQuery {
 public:
  explicit NavQuery(const NavMesh& mesh);
  ~NavQuery();
  NavQuery(const NavQuery&) = delete;
  NavQuery& operator=(const NavQuery&) = delete;

  // False when Detour could not allocate its node pool; every query then fails.
  bool ok() const { return query_ != nullptr; }

  // The closest point on the navmesh within the box p ± half_extents, if any.
  std::optional<Vec3> nearest_point(Vec3 p, Vec3 half_extents = kDefaultSearchHalfExtents);

  // The corners of the shortest path from the navmesh point nearest `from` to the one nearest `to`,
  // both ends included. False (and an empty path) when either end is off the navmesh or `to` cannot
  // be reached: a partial path is not returned, since walking it would not arrive.
  bool find_path(Vec3 from, Vec3 to, std::vector<Vec3>& straight_path,
                 Vec3 half_extents = kDefaultSearchHalfExtents);

  // A point uniformly distributed over the navmesh's ground area. Deterministic in rng_state, which it
  // advances; no hidden or global random state.
  std::optional<Vec3> random_point(std::uint32_t& rng_state);

 private:
  bool nearest(Vec3 p, Vec3 half_extents, std::uint32_t& ref, float out[3]);

  const NavMesh& mesh_;
  dtNavMeshQuery* query_ = nullptr;
  std::unique_ptr<dtQueryFilter> filter_;
  std::vector<std::uint32_t> path_;  // reused between calls
};

}  // namespace shiftcast
