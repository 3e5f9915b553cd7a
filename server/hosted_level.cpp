#include "server/hosted_level.hpp"

#include <filesystem>

namespace shiftcast {
namespace {

bool is_compiled(const std::string& path) {
  return std::filesystem::path(path).extension() == ".level";
}

}  // namespace

HostedLevelResult load_hosted_level(const LevelConfig& config, const ServerConfig& server) {
  HostedLevelResult result;
  auto hosted = std::make_shared<HostedLevel>();
  hosted->name = config.name;
  hosted->source = resolve_path(server, config.path);
  if (!std::filesystem::exists(hosted->source) && !config.fallback.empty()) {
    hosted->source = resolve_path(server, config.fallback);
    hosted->used_fallback = true;
  }
  if (is_compiled(hosted->source)) {
    LevelLoadResult loaded = load_compiled_level_file(hosted->source);
    if (!loaded.ok()) {
      result.error = hosted->source + ": " + to_string(loaded.error) + ": " + loaded.message;
      return result;
    }
    hosted->compiled = std::move(loaded.level);
  } else {
    LevelResult imported = import_level_file(hosted->source);
    if (!imported.ok()) {
      result.error = imported.error.describe();
      return result;
    }
    CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {});
    if (!compiled.ok()) {
      result.error = hosted->source + ": " + compiled.message;
      return result;
    }
    hosted->compiled = std::move(compiled.level);
  }
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
