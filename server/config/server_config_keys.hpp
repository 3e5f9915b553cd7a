// The rows of every ServerConfig setting: each [section] key of the TOML file, its command-line flag, the
// field it sets and the values it accepts (config_settings.hpp's Setting), one table for the server's
// sections and one each for [[level]] and [[initial_match]] elements. The reader and apply_override
// (server_config_reader.cpp) and validate() (server_config_validation.cpp) all read these same rows.
// Internal to the server's config code.
//
//   for (const auto& s : server_config_keys::server_settings()) if (s.flag == "udp-port") ...
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/config/config_settings.hpp"
#include "server/config/server_config.hpp"

namespace shiftcast::server_config_keys {

// [network], [match], [interest], [rpc], [security], [log], [shutdown], [recording], [http], [agones].
std::span<const config_settings::Setting<ServerConfig>> server_settings();
// One [[level]] element's keys.
std::span<const config_settings::Setting<LevelConfig>> level_settings();
// One [[initial_match]] element's keys.
std::span<const config_settings::Setting<InitialMatchConfig>> match_settings();

// The arrays of tables' names, as written between [[ ]].
inline constexpr std::string_view kLevelArray = "level";
inline constexpr std::string_view kMatchArray = "initial_match";

// Every section a file may have, as written there ("[network]", ..., "[[level]]", "[[initial_match]]"):
// the candidates of an unknown section's "did you mean".
std::vector<std::string> section_names();

}  // namespace shiftcast::server_config_keys
