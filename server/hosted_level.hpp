// HostedLevel: a level the server hosts matches on, loaded once at startup and shared read-only by every
// match and every query thread that uses it (DESIGN.md section 4).
//
//   HostedLevelResult r = load_hosted_level(level_config, config_dir);
//   if (!r.ok()) fail(r.error);                  // names the file and the reason
//   std::shared_ptr<const HostedLevel> level = r.level;
#pragma once

#include <memory>
#include <string>

#include "server/config/server_config.hpp"
#include "world/level/compiled_level.hpp"
#include "world/level/navmesh.hpp"

namespace shiftcast {

struct HostedLevel {
  std::string name;    // the name CreateMatch uses
  std::string source;  // the file it was loaded from (the configured path, or its fallback)
  bool used_fallback = false;
  CompiledLevel compiled;
  std::unique_ptr<NavMesh> navmesh;  // null when the level has none
};

struct HostedLevelResult {
  std::shared_ptr<const HostedLevel> level;
  std::string error;
  bool ok() const { return level != nullptr; }
};

// A compiled .level is loaded as it is; a source (.bsp, .map, .obj) is imported and compiled (BSP and
// navmesh). The configured path is used when it exists, else the fallback.
HostedLevelResult load_hosted_level(const LevelConfig& config, const ServerConfig& server);

}  // namespace shiftcast
