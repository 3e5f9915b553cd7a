#include "world/level/level_mesh.hpp"

#include "collision/bsp_build.hpp"
#include "collision/convex_polytope.hpp"

namespace shiftcast {

LevelMesh level_mesh(const Level& level) {
  LevelMesh mesh;
  for (std::size_t b = 0; b < level.brushes.size(); ++b) {
    std::vector<Planed> planes;
    for (const Plane& p : level.brushes[b].planes)
      planes.push_back(to_double(p));
    const ConvexPolytope poly = polytope_from_planes(planes, kWorldExtent, kPlaneEpsilon);
    for (const PolytopeFace& face : poly.faces) {
      const auto first = std::int32_t(mesh.vertices.size());
      for (Vec3d v : face.vertices)
        mesh.vertices.push_back(to_float(v));
      for (std::size_t i = 1; i + 1 < face.vertices.size(); ++i) {
        mesh.triangles.push_back({first, first + std::int32_t(i), first + std::int32_t(i) + 1});
        mesh.triangle_brush.push_back(std::int32_t(b));
      }
    }
  }
  return mesh;
}

}  // namespace shiftcast
