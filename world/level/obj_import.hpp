// import_obj: Wavefront OBJ triangle meshes as levels. Meshes have no volume, so every triangle becomes a
// thin convex brush: its own plane (outward = the triangle's front, counter-clockwise winding), a parallel
// plane `thickness` behind it, and three planes perpendicular to the triangle through its edges. The
// result collides like the mesh seen from the front and feeds the BSP and navmesh builds like any level.
//
//   LevelResult r = import_obj_file("meshes/dungeon.obj", {.up_axis = 'y', .scale = 39.37f});
//   if (!r.ok()) { log(r.error.describe()); return; }   // "dungeon.obj:line 12: face index 0 ..."
//
// Reads `v` and `f` (v, v/vt, v/vt/vn, v//vn; negative indices count back from the last vertex read;
// polygons are fanned into triangles) and ignores every other statement. Degenerate triangles (no area)
// are skipped; Level::source_brushes counts the triangles before that. Errors name the 1-based line;
// nothing throws.
#pragma once

#include <string>
#include <string_view>

#include "world/level/level.hpp"

namespace shiftcast {

struct ObjImportOptions {
  char up_axis = 'z';  // 'z' for z-up files, 'y' for y-up files (most tools): (x, y, z) → (x, −z, y)
  float scale = 1.0f;  // to Quake units after the axis change, e.g. 39.37 for metres → inches; > 0
  // Depth of each triangle's brush behind its front face, in output (Quake) units. Thin enough that
  // the backs of two-sided geometry stay out of the way, thick enough for the BSP's kPlaneEpsilon and
  // for float plane offsets at level scale; back faces are not walls a player can touch from behind.
  float thickness = 2.0f;
};

LevelResult import_obj(std::string_view text, const std::string& name, const ObjImportOptions& options);
LevelResult import_obj_file(const std::string& path, const ObjImportOptions& options);

}  // namespace shiftcast
