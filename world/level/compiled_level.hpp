// Compiled levels: a level imported once, with its collision BSP and navmesh built, saved as one
// FlatBuffer (world/level/level.fbs, identifier "SCLV") that servers load in milliseconds.
//
//   LevelResult imported = import_level_file("configs/levels/arena.map");          // .map, .bsp or .obj
//   CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {});  // BSP, navmesh, PVS
//   std::vector<std::uint8_t> bytes = serialize_compiled_level(compiled.level);     // write to arena.level
//
//   LevelLoadResult loaded = load_compiled_level_file("arena.level");
//   if (!loaded.ok()) { log(loaded.message); return; }   // a LevelLoadError and the precise reason
//   const BspTree& tree = loaded.level.tree;            // checked: safe to query, share read-only
//
// Loading treats the bytes as untrusted: identifier, format version, the FlatBuffers verifier, a checksum
// over the whole buffer, the brush ranges, BspTree::check() and PotentiallyVisibleSet::from_parts all run
// before anything is returned, so corrupt or hostile files are rejected with a reason and never crash or
// yield a tree a query could walk out of. The navmesh bytes are covered by the checksum; Detour's own checks
// run when they are handed to NavMesh::from_data.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collision/bsp_build.hpp"
#include "collision/bsp_tree.hpp"
#include "world/level/level.hpp"
#include "world/level/navmesh.hpp"
#include "world/level/obj_import.hpp"
#include "world/level/pvs_compute.hpp"

namespace shiftcast {

// Written into every file and required on load. Bump it whenever existing fields change meaning;
// adding fields at the end of a table does not need a bump.
inline constexpr std::uint32_t kCompiledLevelVersion = 1;

// Where a level's potentially visible set came from (stored in the compiled file).
enum class VisibilityOrigin : std::uint8_t {
  kNone,      // the level ships no set: distance alone decides
  kImported,  // the source's own (a Quake III map's vis)
  kComputed,  // computed at compile time from the collision BSP (world/level/pvs_compute.hpp)
};
const char* to_string(VisibilityOrigin origin);
struct CompiledLevel;
// One line for tools and logs: "computed: 243 clusters, 31 bytes a row, 248 nodes; 100.0% of cluster pairs
// visible; 256-unit cells; 12.3 ms at compile time", or "none (distance alone decides)".
std::string describe_visibility(const CompiledLevel& compiled);

struct CompiledLevel {
  Level level;   // level.imported_visibility is empty here: compile_level moved it to `visibility`
  BspTree tree;  // brush ids are indices into level.brushes
  BspBuildStats bsp_stats;
  std::vector<std::uint8_t> navmesh;  // Detour data for NavMesh::from_data; empty when none was built
  std::int32_t navmesh_polygons = 0;
  double navmesh_build_ms = 0;
  PotentiallyVisibleSet visibility;  // empty: none (origin kNone)
  VisibilityOrigin visibility_origin = VisibilityOrigin::kNone;
  float visibility_cell_size = 0;  // computed sets: the grid's cell edge
  double visibility_build_ms = 0;  // computed sets: compile time spent on the set
};

std::vector<std::uint8_t> serialize_compiled_level(const CompiledLevel& compiled);

// Why a compiled level was rejected, in the order the checks run.
enum class LevelLoadError : std::uint8_t {
  kNone,
  kIo,             // the file could not be opened or read
  kTooSmall,       // shorter than a FlatBuffer header (root offset + identifier)
  kTooLarge,       // at least 2 GiB: beyond what a FlatBuffer can address
  kBadIdentifier,  // bytes 4..8 are not "SCLV": not a compiled level
  kWrongVersion,   // format_version is not kCompiledLevelVersion (a missing field reads as 0)
  kVerifyFailed,   // the FlatBuffers verifier found an offset, size or alignment outside the buffer, or
                   // a required vector missing
  kBadChecksum,    // the buffer is well formed but its bytes are not the ones that were written
  kBadLevel,       // brush plane ranges outside the plane array, or counts that disagree
  kBadTree,        // BspTree::check() failed (the message names the BspLoadError)
  kBadVisibility,  // the potentially visible set failed PotentiallyVisibleSet::from_parts (the message
                   // names the PvsError), or its origin is unknown
};

const char* to_string(LevelLoadError error);

struct LevelLoadResult {
  LevelLoadError error = LevelLoadError::kNone;
  std::string message;  // empty when ok; otherwise what was wrong, with the file name when known
  CompiledLevel level;

  bool ok() const { return error == LevelLoadError::kNone; }
};

LevelLoadResult load_compiled_level(std::span<const std::uint8_t> bytes);
LevelLoadResult load_compiled_level_file(const std::string& path);

// Recomputes and stores the checksum of a buffer changed after serialize_compiled_level (tests that
// build hostile-but-consistent files, tools that patch a field in place). Fails with the load error
// when the buffer does not get as far as the checksum check (identifier, version, verifier).
LevelLoadError reseal_compiled_level(std::span<std::uint8_t> bytes);

enum class CompileError : std::uint8_t {
  kNone,
  kBsp,      // build_bsp refused a brush (the message names it and the BspBuildError)
  kNavmesh,  // build_navmesh failed (the message is its error)
};

struct CompiledLevelResult {
  CompileError error = CompileError::kNone;
  std::string message;
  CompiledLevel level;

  bool ok() const { return error == CompileError::kNone; }
};

// Called before each step with a short description ("building BSP", "building navmesh"), for progress
// lines in tools; may be empty.
using CompileProgress = std::function<void(std::string_view step)>;

// Builds the collision BSP and the navmesh of an imported level, and its potentially visible set: the
// source's own (level.imported_visibility, widened where it is not conservative: pvs_conservative.hpp),
// else one computed on a grid (pvs_compute.hpp) unless `visibility.enabled` is off.
CompiledLevelResult compile_level(Level level, const BspBuildOptions& bsp_options,
                                  const NavmeshSettings& navmesh_settings,
                                  const CompileProgress& progress = {},
                                  const PvsComputeSettings& visibility = {});

// Imports a level source by its extension (case-insensitive): .bsp (Quake III IBSP 46), .map (Quake /
// Quake III / Valve 220 text), .obj (triangle mesh; `obj_options` gives its up axis, scale and the
// thickness of the brush behind each triangle). Any other extension is a LevelError naming it.
LevelResult import_level_file(const std::string& path, const ObjImportOptions& obj_options = {});

// A level file as the server hosts it: a compiled .level loaded and verified, or a source (.bsp, .map,
// .obj by import_level_file) compiled here with the default settings, so every program that loads one
// path (the server, shiftcast-sim, shiftcast-level simulate and replay) gets the same BSP bit for bit.
// `error` is empty on success, else one line naming the file and what was wrong.
struct LevelFileResult {
  std::string error;
  CompiledLevel level;

  bool ok() const { return error.empty(); }
};
LevelFileResult load_level_file(const std::string& path, const CompileProgress& progress = {});

}  // namespace shiftcast
