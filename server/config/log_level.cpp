#include "server/config/log_level.hpp"

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

}  // namespace shiftcast
