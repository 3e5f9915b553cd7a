#include "server/hosted_level.hpp"

namespace shiftcast {
namespace {}  // namespace

HostedLevelResult load_hosted_level(const LevelConfig& config, const ServerConfig& server) {
  HostedLevelResult result;
  auto hosted = std::make_shared<HostedLevel>();
  hosted->name = config.name;
  hosted->source = level_source(server, config);
  hosted->used_fallback = hosted->source != resolve_path(server, config.path);
  LevelFileResult loaded = load_level_file(hosted->source);
  if (!loaded.ok()) {
    result.error = std::move(loaded.error);
    return result;
  }
  hosted->compiled = std::move(loaded.level);
  if (!hosted->compiled.navmesh.empty()) {
    std::string error;
    hosted->navmesh = NavMesh::from_data(hosted->compiled.navmesh, &error);
    if (hosted->navmesh == nullptr) {
      result.error = hosted->source + ": bad navmesh: " + error;
      return result;
    }
  }
  result.level = std::move(hosted);
  return result;
}

}  // namespace shiftcast
