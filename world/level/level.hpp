// Level: what every importer produces and every consumer (BSP build, navmesh, compiled file, server)
// reads: convex brushes with their content and surface flags, spawn points, and where it came from.
//
//   LevelResult r = import_map_file("configs/levels/arena.map", {});
//   if (!r.ok()) { log(r.error.describe()); return; }
//   const Level& level = r.level;
//
// Importers never throw on bad input: they return a LevelError naming the file, the byte offset or line,
// and what was wrong.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collision/aabb.hpp"
#include "collision/brush.hpp"
#include "world/level/potentially_visible_set.hpp"

namespace shiftcast {

// Content bits, with Quake III's values so imported maps keep theirs unchanged.
inline constexpr std::uint32_t kContentsSolid = 0x1;
inline constexpr std::uint32_t kContentsLava = 0x8;
inline constexpr std::uint32_t kContentsSlime = 0x10;
inline constexpr std::uint32_t kContentsWater = 0x20;
inline constexpr std::uint32_t kContentsFog = 0x40;
inline constexpr std::uint32_t kContentsPlayerClip = 0x10000;
inline constexpr std::uint32_t kContentsMonsterClip = 0x20000;
inline constexpr std::uint32_t kContentsTrigger = 0x40000000;
// What blocks a player: the brushes that go into the collision BSP.
inline constexpr std::uint32_t kContentsPlayerSolid = kContentsSolid | kContentsPlayerClip;

struct SpawnPoint {
  Vec3 origin;  // where the entity's origin is (Quake: the player's box centre, 24 above the feet)
  float yaw_degrees = 0;
  std::string classname;  // e.g. info_player_deathmatch
};

struct Level {
  std::string name;                                // file name it came from
  std::uint64_t source_hash = 0;                   // FNV-1a 64 of the source file's bytes
  std::vector<Brush> brushes;                      // only brushes whose contents block players
  std::vector<std::uint32_t> brush_contents;       // one per brush
  std::vector<std::uint32_t> brush_surface_flags;  // one per brush: OR of its sides' surface flags
  std::vector<SpawnPoint> spawns;
  Aabb bounds;  // of all brushes
  // The source's own potentially visible set (a Quake III map's vis), empty when it has none;
  // compile_level moves it to CompiledLevel::visibility.
  PotentiallyVisibleSet imported_visibility;

  // Import statistics, for the tool and the logs.
  std::int32_t source_brushes = 0;    // brushes in the source, of every content
  std::int32_t skipped_nonsolid = 0;  // water, fog, triggers and other non-blocking contents
  std::int32_t patches = 0;           // curved surfaces tessellated
  std::int32_t patch_brushes = 0;     // thin brushes made from patch triangles
};

struct LevelError {
  std::string file;
  std::uint64_t offset = 0;  // byte offset for binary files, 1-based line for text; 0 if not known
  bool is_line = false;
  std::string what;

  std::string describe() const;  // "file:line 12: what" or "file@byte 4096: what"
};

struct LevelResult {
  Level level;
  LevelError error;
  bool failed = false;

  bool ok() const { return !failed; }
};

LevelResult level_failure(std::string file, std::uint64_t offset, bool is_line, std::string what);

// Quake's player spawn entities: info_player_deathmatch, info_player_start and the team_CTF_ red/blue
// spawn and player points. One list for every importer.
bool is_player_spawn(std::string_view classname);

// The values of a spawn entity's keys, null where the key is absent. "angle" (yaw) wins over "angles"
// (pitch yaw roll), as in the game.
struct SpawnKeys {
  std::string_view classname;
  const std::string* origin = nullptr;
  const std::string* angle = nullptr;
  const std::string* angles = nullptr;
};

// Why a spawn's keys cannot be used: which key, and what was wrong; `key` is empty when they can.
struct SpawnKeyError {
  std::string key;
  std::string what;
};

// Fills `out` from the keys: origin must be three finite numbers within the world, angle one, angles
// three. Shared by the importers so a spawn means the same in every source format.
SpawnKeyError spawn_from_keys(const SpawnKeys& keys, SpawnPoint& out);

// FNV-1a 64 over bytes: the source hash stored in compiled levels.
std::uint64_t fnv1a64(const void* data, std::size_t size);

// Fills bounds from the brushes' vertices (computed in double); call after the brushes are final.
void compute_level_bounds(Level& level);

}  // namespace shiftcast
