// Log level names: the one list the config ([log] level), the command line and the logger share, so all
// accept the same names. The logger itself is set up by server/logging.hpp.
//
//   auto level = parse_log_level(config.log_level);   // nothing for an unknown name
//   if (!level) fail("log level must be one of " + log_level_names_joined());
#pragma once

#include <spdlog/common.h>

#include <optional>
#include <string>
#include <string_view>

namespace shiftcast {

// trace, debug, info, warn, error, critical, off (exactly these, lower case).
std::optional<spdlog::level::level_enum> parse_log_level(std::string_view name);
// "trace, debug, info, warn, error, critical, off", for error messages.
std::string log_level_names_joined();

}  // namespace shiftcast
