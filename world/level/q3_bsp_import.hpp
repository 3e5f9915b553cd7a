// Quake III Arena map import: reads a compiled map (IBSP version 46, as written by q3map and q3map2 for
// Quake III, OpenArena and their mods) into a Level, the collision input every consumer builds from.
//
//   LevelResult r = import_q3_bsp_file("data/openarena/maps/oa_dm4.bsp");
//   if (!r.ok()) { log(r.error.describe()); return; }   // "oa_dm4.bsp@byte 4096: plane 12 ..."
//   BspBuildResult built = build_bsp(r.level.brushes, {});
//
// What is taken: the world model's (model 0) brushes whose shader contents block players (CONTENTS_SOLID
// or CONTENTS_PLAYERCLIP), with every brush side's plane (q3map's bevel sides included: they support the
// brush, so they change nothing but add planes); curved patches of player-solid shaders, tessellated and
// turned into thin brushes, one per triangle; and the spawn points of the entity lump. Brush models
// (doors, platforms) are entities and are not part of the static level. The potentially visible set
// (q3map's clusters and their rows, cut by its rendering tree) goes to level.imported_visibility.
//
// Every world-model brush is accounted for exactly once:
//   level.source_brushes == (level.brushes.size() − level.patch_brushes)   kept
//                           + level.skipped_nonsolid                       contents block nothing
//                           + stats.degenerate_brushes                     no volume, or not closed
// Kept brushes come first in level.brushes, in file order; patch brushes follow.
//
// The input is untrusted: every lump range, count and index is checked, and any violation is returned
// as a LevelError naming the byte offset of the offending field or record. Nothing throws.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "world/level/level.hpp"

namespace shiftcast {

struct Q3ImportOptions {
  // Patches are tessellated like the game's cm_patch.c: each 3x3 quadratic piece is split along u and v
  // until the curve lies within this distance (units) of its chords. The game's collision uses 16; 4
  // (the renderer's default r_subdivisions) keeps players' feet on the surface they see, at about four
  // times the triangles on strongly curved patches.
  float patch_flatness = 4.0f;
  // Upper bound on the segments per quadratic piece and direction, whatever the flatness asks for.
  int patch_max_subdivision = 16;
  // Thickness (units) of the brush behind each patch triangle. Patches are one-sided: the triangle's
  // front (where the map's vertex normals point) is the surface, the brush extends this far behind it.
  // Thin enough not to poke through the backs of walls, thick enough that no query tunnels (swept
  // queries are exact against any thickness > 0).
  float patch_thickness = 4.0f;
  // Import curved patches at all (off: the brush-only collision of early engines).
  bool import_patches = true;
  // Import the map's potentially visible set (the visibility lump with the rendering tree's nodes,
  // leafs and planes) into level.imported_visibility; a map without one gets none.
  bool import_visibility = true;
};

// Counts beyond the ones Level keeps, for tools, logs and the accounting above.
struct Q3ImportStats {
  std::int32_t degenerate_brushes = 0;    // solid world brushes with no volume or not closed: dropped
  std::int32_t patch_triangles = 0;       // triangles from solid patches, before dropping degenerate ones
  std::int32_t degenerate_triangles = 0;  // slivers and collapsed triangles: no brush made
  std::int32_t nonsolid_patches = 0;      // patches whose shader blocks nothing (skipped)
  std::int32_t playerclip_brushes = 0;    // kept brushes that only clip players (no CONTENTS_SOLID)
  std::int32_t entities = 0;              // entities in the entity lump
};

LevelResult import_q3_bsp(std::span<const std::uint8_t> bytes, const std::string& name,
                          const Q3ImportOptions& options = {}, Q3ImportStats* stats = nullptr);

// Reads the file, then import_q3_bsp with the file's path as the name in errors.
LevelResult import_q3_bsp_file(const std::string& path, const Q3ImportOptions& options = {},
                               Q3ImportStats* stats = nullptr);

}  // namespace shiftcast
