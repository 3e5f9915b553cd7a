#include "protocol/session_info.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shiftcast {

namespace {

constexpr double kMillisecondsPerSecond = 1000;

std::uint32_t to_milliseconds(double seconds) {
  const double ms = std::round(seconds * kMillisecondsPerSecond);
  return std::uint32_t(std::clamp(ms, 0.0, double(std::numeric_limits<std::uint32_t>::max())));
}

std::uint16_t to_rate(int rate) {
  return std::uint16_t(std::clamp(rate, 0, int(std::numeric_limits<std::uint16_t>::max())));
}

}  // namespace

SessionInfoFields to_session_info(const SessionTiming& timing) {
  return {to_rate(timing.tick_rate), to_rate(timing.snapshot_rate),
          to_milliseconds(timing.keepalive_interval), to_milliseconds(timing.timeout)};
}

std::optional<SessionTiming> read_session_info(const std::optional<SessionInfoFields>& info) {
  if (!info) return std::nullopt;
  if (info->tick_rate == 0 || info->snapshot_rate == 0 || info->snapshot_rate > info->tick_rate ||
      info->keepalive_interval_ms == 0 || info->timeout_ms <= info->keepalive_interval_ms) {
    return std::nullopt;
  }
  return SessionTiming{info->tick_rate, info->snapshot_rate,
                       info->keepalive_interval_ms / kMillisecondsPerSecond,
                       info->timeout_ms / kMillisecondsPerSecond};
}

}  // namespace shiftcast
