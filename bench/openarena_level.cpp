#include "bench/openarena_level.hpp"

#include <cstdio>
#include <filesystem>
#include <string>

namespace shiftcast {

int load_openarena_level(const char* program, const char* map, OpenArenaLevel& out) {
  const std::filesystem::path path = std::filesystem::path(SHIFTCAST_SOURCE_DIR) / "data" / "openarena" /
                                     "maps" / (std::string(map) + ".bsp");
  if (!std::filesystem::exists(path)) {
    std::printf("%s: skipped: %s is missing (run scripts/fetch-openarena-maps.sh)\n", program, path.c_str());
    return kLevelMissing;
  }
  LevelResult imported = import_level_file(path.string());
  if (!imported.ok()) {
    std::fprintf(stderr, "%s: %s\n", program, imported.error.describe().c_str());
    return kLevelFailed;
  }
  CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {});
  if (!compiled.ok()) {
    std::fprintf(stderr, "%s: %s\n", program, compiled.message.c_str());
    return kLevelFailed;
  }
  out.compiled = std::move(compiled.level);
  std::string error;
  out.navmesh = NavMesh::from_data(out.compiled.navmesh, &error);
  if (out.navmesh == nullptr) {
    std::fprintf(stderr, "%s: navmesh: %s\n", program, error.c_str());
    return kLevelFailed;
  }
  return kLevelLoaded;
}

std::unique_ptr<MatchSetup> make_openarena_match(const char* program, const OpenArenaLevel& level,
                                                 int tick_rate, int players, int projectiles, int props,
                                                 std::uint32_t seed) {
  SimulationConfig sim;
  sim.tick_rate = tick_rate;
  MatchSetupConfig config;
  config.kind = SceneKind::kMatch;
  config.players = players;
  config.projectiles = projectiles;
  config.props = props;
  config.seed = seed;
  MatchSetupResult made =
      MatchSetup::create(level.compiled.tree, level.compiled.level, level.navmesh.get(), sim, config);
  if (!made.ok()) std::fprintf(stderr, "%s: cannot build the match: %s\n", program, made.error.c_str());
  return std::move(made.scene);
}

}  // namespace shiftcast
