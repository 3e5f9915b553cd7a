// Quake .map importer: the text format TrenchBroom and NetRadiant save, turned into a Level.
//
//   LevelResult r = import_map_file("configs/levels/arena.map");
//   if (!r.ok()) { log(r.error.describe()); return; }   // "arena.map:line 212: expected ')' ..."
//
// Accepted: entities `{ "key" "value" ... brushes }`, `//` comments, and brush faces in these forms:
//   standard (Quake, Quake III):  ( p0 ) ( p1 ) ( p2 ) TEX xoff yoff rot xscale yscale [c s v]
//   Valve 220:                    ( p0 ) ( p1 ) ( p2 ) TEX [ ux uy uz uo ] [ vx vy vz vo ] rot sx sy [c s v]
//   Q3 brush primitives:  brushDef { ( p0 ) ( p1 ) ( p2 ) ( ( 3 numbers ) ( 3 numbers ) ) TEX [c s v] }
// The form is chosen per face, so "mapversion" is informational. patchDef2/patchDef3 (curves) and
// brushDef3 (Doom 3 plane equations) blocks are skipped whole and counted in MapImportStats; a skipped
// brushDef3 still counts in Level::source_brushes.
//
// Planes: normal = normalize(cross(p0 − p1, p2 − p1)), d = normal·p0, computed in double; this is
// qbsp's, q3map2's and TrenchBroom's rule (all the same cross product), and it makes the normal point out
// of the brush. A normal whose two other components are below kAxialSnapEpsilon is snapped onto the axis.
//
// Contents, per face, then OR-ed over the brush's faces (q3map2's rule, which is why a water brush's
// hidden faces must be non-solid too): trailing flags `c s v` win when c != 0 (NetRadiant writes "0 0 0"
// on every Quake III face, meaning "from the shader"); otherwise the texture name decides, see
// contents_for_texture(). Without shader scripts the name is all we have. A brush is kept when its
// contents include kContentsPlayerSolid; otherwise it counts in Level::skipped_nonsolid.
//
// Entities: only worldspawn, func_group (TrenchBroom groups and layers) and func_detail brushes are static
// geometry; brushes of every other entity (doors, triggers, platforms) are skipped and counted in
// MapImportStats::skipped_entity_brushes. Spawn points: info_player_start, info_player_deathmatch and
// team_CTF_*spawn / team_CTF_*player, from "origin" and "angle" (or the yaw of "angles").
//
// Every parsed brush, kept or not, must enclose a volume inside ±kWorldExtent; otherwise the import fails
// naming the brush's line. Malformed text never throws: every error is a LevelError with the 1-based line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collision/plane.hpp"
#include "world/level/level.hpp"

namespace shiftcast {

// What the importer dropped beyond Level's own statistics. Level::source_brushes equals
// brushes.size() + skipped_nonsolid + skipped_entity_brushes + skipped_brushdef3.
struct MapImportStats {
  std::int32_t entities = 0;
  std::int32_t skipped_entity_brushes = 0;  // brushes of entities other than worldspawn/func_group/detail
  std::int32_t skipped_patches = 0;         // patchDef2 / patchDef3 blocks
  std::int32_t skipped_brushdef3 = 0;       // Doom 3 brushes
};

// Off-axis normal components below this are decimal-rounding noise (from points like 0.1) and are
// dropped, so nearly axial faces stay axial for the BSP. q3map2 snaps at |n_i| > 1 − 1e-5, which tilts
// by up to 4e-3 rad; this bound moves a face by at most 1e-3 units anywhere inside ±kWorldExtent.
inline constexpr double kAxialSnapEpsilon = 1e-9;

// Three points whose cross product is shorter than this (squared length of a double cross product of
// differences, in units^4) are collinear: no plane. Editors' points are at least one unit apart.
inline constexpr double kCollinearEpsilon = 1e-12;

LevelResult import_map(std::string_view text, const std::string& name, MapImportStats* stats = nullptr);
LevelResult import_map_file(const std::string& path, MapImportStats* stats = nullptr);

// The plane through three face points with the editors' orientation (see above), or nullopt when the
// points are collinear or not finite.
std::optional<Planed> plane_from_points(Vec3d p0, Vec3d p1, Vec3d p2);

// Content bits implied by a texture name (case-insensitive; the part after the last '/' decides):
//   clip, playerclip                          kContentsPlayerClip
//   monsterclip                               kContentsMonsterClip
//   trigger*                                  kContentsTrigger
//   names with water / slime / lava, and Quake's *-prefixed liquids   kContentsWater / Slime / Lava
//   names with fog                            kContentsFog
//   hint, hintskip, skip, areaportal, clusterportal, antiportal, origin, nodrawnonsolid, botclip,
//   donotenter, nodrop, lightgrid             0 (no contents at all)
//   everything else (caulk, nodraw, sky, ...) kContentsSolid
std::uint32_t contents_for_texture(std::string_view texture);

}  // namespace shiftcast
