#include "server/rejections.hpp"

#include <spdlog/spdlog.h>

#include <utility>

#include "protocol/envelope.hpp"

namespace shiftcast {

Rejections::Rejections(MetricsRegistry& registry, std::string channel) : channel_(std::move(channel)) {
  for (std::size_t i = 1; i < kCodes; ++i) {
    auto code = static_cast<wire::ErrorCode>(i);
    counters_[i] = &registry.counter("shiftcast_rejected_total", "Inbound messages or connections refused",
                                     {{"channel", channel_}, {"reason", to_string(code)}});
  }
}

std::size_t Rejections::index(wire::ErrorCode code) {
  auto i = static_cast<std::size_t>(code);
  return i == 0 || i >= kCodes ? static_cast<std::size_t>(wire::ErrorCode::Internal) : i;
}

void Rejections::reject(wire::ErrorCode code, std::string_view peer, std::string_view detail) {
  std::size_t i = index(code);
  counters_[i]->add();
  spdlog::debug("{}: rejected because {} from {}: {}", channel_, to_string(static_cast<wire::ErrorCode>(i)),
                peer, detail);
}

std::uint64_t Rejections::count(wire::ErrorCode code) const {
  auto i = static_cast<std::size_t>(code);
  return i == 0 || i >= kCodes ? 0 : counters_[i]->value();
}

}  // namespace shiftcast
