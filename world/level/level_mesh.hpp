// LevelMesh: the faces of a level's brushes as one indexed triangle mesh, for the consumers that want
// triangles rather than planes: Recast (navmesh), and the peer libraries in the benchmarks (Bullet, Embree).
//
// Faces are computed in double by clipping each brush's planes (collision/convex_polytope) and fanned into
// triangles with outward winding (counter-clockwise seen from outside). Faces of a brush that lie inside
// another brush are kept: the mesh is the brushes' surfaces, not the union's.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "world/level/level.hpp"

namespace shiftcast {

struct LevelMesh {
  std::vector<Vec3> vertices;
  std::vector<std::array<std::int32_t, 3>> triangles;
  std::vector<std::int32_t> triangle_brush;  // the brush each triangle came from
};

LevelMesh level_mesh(const Level& level);

}  // namespace shiftcast
