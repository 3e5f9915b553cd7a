// Logging: the one place that names log levels and sets up the process's logger. shiftcast-server calls
// configure_logging once at startup, after the config is validated; every module then logs through
// spdlog's default logger (spdlog::info, spdlog::debug), which is the stderr logger "shiftcast".
// Config validation and the command line use parse_log_level, so both accept the same names.
//
//   auto level = parse_log_level(config.log_level);   // nothing for an unknown name
//   if (!level) fail("log level must be one of " + log_level_names_joined());
//   configure_logging(*level);
#pragma once

#include <spdlog/common.h>

#include <optional>
#include <string>
#include <string_view>

namespace shiftcast {

inline constexpr char kLoggerName[] = "shiftcast";

// trace, debug, info, warn, error, critical, off (exactly these, lower case).
std::optional<spdlog::level::level_enum> parse_log_level(std::string_view name);
// "trace, debug, info, warn, error, critical, off", for error messages.
std::string log_level_names_joined();

// Creates (or reuses) the stderr logger "shiftcast" with time, level and thread id in every line, makes
// it spdlog's default logger and sets its level. Call from main only: spdlog's registry is process-wide.
void configure_logging(spdlog::level::level_enum level);

}  // namespace shiftcast
