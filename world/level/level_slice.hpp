// LevelSlice: the solid part of a level cut by a horizontal plane, as convex polygons seen from above, for
// floor plans (the spectator view's walls, docs/server.md "Pictures"). Exact against the stored planes:
// each polygon is one solid leaf's cell of the BSP tree (the intersection of the half-spaces on its
// root-to-leaf path) met with the plane z = height, clipped in double.
//
//   std::vector<SlicePolygon> walls = slice_solid(level.tree(), 40.0);
//   for (const SlicePolygon& p : walls) draw(p.points);   // counter-clockwise seen from above
//
// Which side counts: a point strictly inside a polygon is solid (BspTree::point_brush finds a brush there)
// and a point strictly outside every polygon is empty; a point on an edge may go either way, exactly as a
// point on a node plane goes to the front (empty) side in every query (collision/plane.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "collision/bsp_tree.hpp"

namespace shiftcast {

struct SlicePolygon {
  std::int32_t brush = -1;                    // the brush its leaf belongs to
  std::vector<std::array<double, 2>> points;  // convex, counter-clockwise seen from above (+z)
};

// Cells narrower than this (their area in square units) are left out: they are slivers left by clipping
// a cell along a plane it only touches, not solid anyone could see.
inline constexpr double kSliceMinArea = 1e-6;
// How far beyond the tree's bounds the starting square reaches, so the outermost cells close.
inline constexpr double kSliceMargin = 64.0;

std::vector<SlicePolygon> slice_solid(const BspTree& tree, double height);

}  // namespace shiftcast
