// Logging: the one place that names log levels and sets up the process's logger. shiftcast-server calls
// configure_logging once at startup, after the config is validated; every module then logs through
// spdlog's default logger (spdlog::info, spdlog::debug), which is the stderr logger "shiftcast".
// The level names (parse_log_level) live with the config (server/config/log_level.hpp).
//
//   auto level = parse_log_level(config.log_level);   // nothing for an unknown name
//   if (!level) fail("log level must be one of " + log_level_names_joined());
//   configure_logging(*level);
#pragma once

#include <spdlog/common.h>

#include "server/config/log_level.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace shiftcast {

inline constexpr char kLoggerName[] = "shiftcast";

// Creates (or reuses) the stderr logger "shiftcast" with time, level and thread id in every line, makes
// it spdlog's default logger and sets its level. Call from main only: spdlog's registry is process-wide.
void configure_logging(spdlog::level::level_enum level);

}  // namespace shiftcast
