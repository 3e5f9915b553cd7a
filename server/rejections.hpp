// Rejections: how a channel (the UDP match endpoint, the TCP RPC server) accounts for every inbound
// thing it refuses. Each refusal is counted under its typed reason in
// shiftcast_rejected_total{channel, reason} and logged at debug level, so an operator sees floods in
// the metrics and can turn on debug logging to see who sends them. Counting is lock-free and safe from
// any thread; all counters exist from construction, so a dashboard sees zeros rather than gaps.
//
//   Rejections udp_rejections(registry, "udp");
//   if (v.error != wire::ErrorCode::Ok) return udp_rejections.reject(v.error, peer, "envelope");
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/shiftcast_generated.h"
#include "server/metrics.hpp"

namespace shiftcast {

class Rejections {
 public:
  // `registry` must outlive this object.
  Rejections(MetricsRegistry& registry, std::string channel);

  // Ok or a code outside the enum (a caller's bug) is counted as Internal.
  void reject(wire::ErrorCode code, std::string_view peer, std::string_view detail);
  std::uint64_t count(wire::ErrorCode code) const;
  const std::string& channel() const { return channel_; }

 private:
  static constexpr std::size_t kCodes = static_cast<std::size_t>(wire::ErrorCode::MAX) + 1;
  static std::size_t index(wire::ErrorCode code);

  std::string channel_;
  std::array<Counter*, kCodes> counters_{};  // indexed by code; Ok's entry stays null
};

}  // namespace shiftcast
