// The files parse_sim_options (sim_options.cpp) reads besides the command line: a load profile
// (configs/load/*.toml: [run], [budgets] and [behaviour], applied onto a SimOptions) and the few keys of
// the server's own config the simulator needs (addresses, the admin key file, the [[level]] entries).
// Problems are appended to `errors`, one line each, so every one is reported at once; a file that is
// missing or not TOML throws SimUsageError. Internal to the simulator.
//
//   std::vector<std::string> errors;
//   load_profile(profile_path, options, errors);
//   ServerFile server = read_server_file(config_path, errors);
//   options.level_file = level_file_from(server, options.level, errors);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client-sim/sim_options.hpp"

namespace shiftcast::sim_config_files {

inline constexpr std::int64_t kMaxPort = 65535;

// Sets `o`'s fields from the profile's tables; unknown tables or keys and wrong types are errors.
void load_profile(const std::string& path, SimOptions& o, std::vector<std::string>& errors);

struct LevelEntry {
  std::string name, path, fallback;  // paths resolved against the config's directory
};

struct ServerFile {
  std::string path;
  std::optional<std::string> host;
  std::optional<std::int64_t> rpc_port, http_port;
  std::string admin_key_file;  // resolved; empty when the config has none
  std::vector<LevelEntry> levels;
};

ServerFile read_server_file(const std::string& path, std::vector<std::string>& errors);

// The first line of the key file, surrounding whitespace trimmed, as the server reads it.
std::string read_admin_key(const std::string& path, std::vector<std::string>& errors);

// A non-empty path naming a regular file.
bool is_file(const std::string& path);

// The file of `level` among the server's [[level]] entries: its path, else its fallback.
std::string level_file_from(const ServerFile& server, const std::string& level,
                            std::vector<std::string>& errors);

}  // namespace shiftcast::sim_config_files
