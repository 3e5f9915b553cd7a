// What a ServerConfig says beyond its fields: paths resolved against the config file's directory, a key
// file's line, the UDP listener's effective address. Reading is server_config_reader.cpp, the settings
// tables server_config_keys.cpp, validate() server_config_validation.cpp.
#include "server/config/server_config.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace shiftcast {

namespace fs = std::filesystem;

const std::string& effective_udp_bind_address(const ServerConfig& config) {
  return config.udp_bind_address.empty() ? config.bind_address : config.udp_bind_address;
}

std::string resolve_path(const ServerConfig& config, const std::string& path) {
  if (path.empty() || config.config_dir.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(config.config_dir) / path).lexically_normal().string();
}

std::string read_key_file_line(const ServerConfig& config, const std::string& path) {
  std::string resolved = resolve_path(config, path);
  std::ifstream in(resolved);
  if (!in) throw ConfigError("cannot read " + resolved + ": " + std::strerror(errno));
  std::string line;
  std::getline(in, line);
  constexpr char kSpace[] = " \t\r\n";
  std::size_t begin = line.find_first_not_of(kSpace);
  if (begin == std::string::npos) throw ConfigError(resolved + ": the first line is empty");
  return line.substr(begin, line.find_last_not_of(kSpace) - begin + 1);
}

std::string level_source(const ServerConfig& config, const LevelConfig& level) {
  std::string source = resolve_path(config, level.path);
  std::error_code ec;
  if (!fs::exists(source, ec) && !level.fallback.empty()) source = resolve_path(config, level.fallback);
  return source;
}

}  // namespace shiftcast
