#include "server/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace shiftcast {
namespace {

// Milliseconds, because tick-level events are a few ms apart; the thread id tells match workers apart.
constexpr char kLogPattern[] = "[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] [tid %t] %v";

}  // namespace

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
