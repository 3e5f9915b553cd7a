#include "server/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <utility>

namespace shiftcast {
namespace {

constexpr std::array<std::pair<std::string_view, spdlog::level::level_enum>, 7> kLogLevels{{
    {"trace", spdlog::level::trace},
    {"debug", spdlog::level::debug},
    {"info", spdlog::level::info},
    {"warn", spdlog::level::warn},
    {"error", spdlog::level::err},
    {"critical", spdlog::level::critical},
    {"off", spdlog::level::off},
}};

// Milliseconds, because tick-level events are a few ms apart; the thread id tells match workers apart.
constexpr char kLogPattern[] = "[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] [tid %t] %v";

}  // namespace

std::optional<spdlog::level::level_enum> parse_log_level(std::string_view name) {
  for (const auto& [level_name, level] : kLogLevels) {
    if (level_name == name) return level;
  }
  return std::nullopt;
}

std::string log_level_names_joined() {
  std::string out;
  for (const auto& [level_name, level] : kLogLevels) {
    if (!out.empty()) out += ", ";
    out += level_name;
  }
  return out;
}

void configure_logging(spdlog::level::level_enum level) {
  std::shared_ptr<spdlog::logger> logger = spdlog::get(kLoggerName);
  if (!logger) logger = spdlog::stderr_color_mt(kLoggerName);
  logger->set_pattern(kLogPattern);
  logger->set_level(level);
  // Warnings and errors reach the terminal at once, even if the process is killed right after.
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

}  // namespace shiftcast
