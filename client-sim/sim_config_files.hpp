// The files parse_sim_options (sim_options.cpp) reads besides the command line: a load profile
// (configs/load/*.toml: [run], [budgets] and [behaviour], applied onto a SimOptions) and the server's own
// config, through the server's reader, for the few keys the simulator needs (addresses, the admin key
// file, the [[level]] entries).
// Problems are appended to `errors`, one line each, so every one is reported at once; a file that is
// missing or not TOML throws SimUsageError. Internal to the simulator.
//
//   std::vector<std::string> errors;
//   load_profile(profile_path, options, errors);
//   if (auto server = read_server_config(config_path, errors))
//     options.level_file = level_file_from(*server, options.level, errors);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client-sim/sim_options.hpp"
#include "server/config/server_config.hpp"

namespace shiftcast::sim_config_files {

inline constexpr std::int64_t kMaxPort = 65535;

// Sets `o`'s fields from the profile's tables; unknown tables or keys and wrong types are errors.
void load_profile(const std::string& path, SimOptions& o, std::vector<std::string>& errors);

// The server's config read by the server's own reader (server/config/server_config.hpp), so the load
// tester accepts exactly the files the server accepts; nothing when it is refused (the reasons are in
// `errors`). Throws SimUsageError when the file does not exist. Not validated: the key and level files it
// names belong to the server's machine, and the simulator needs only a few of its keys.
std::optional<ServerConfig> read_server_config(const std::string& path, std::vector<std::string>& errors);

// The address to reach the server's RPC and HTTP on: rpc_bind_address, loopback for "every interface".
std::string server_host(const ServerConfig& server);

// The admin key from the config's admin_key_file, read as the server reads it.
std::string read_admin_key(const ServerConfig& server, std::vector<std::string>& errors);

// A non-empty path naming a regular file.
bool is_file(const std::string& path);

// The file of `level` among the server's [[level]] entries, chosen as the server chooses it.
std::string level_file_from(const ServerConfig& server, const std::string& level,
                            std::vector<std::string>& errors);

}  // namespace shiftcast::sim_config_files
