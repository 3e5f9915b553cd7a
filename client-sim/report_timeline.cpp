#include "client-sim/report_timeline.hpp"

#include <algorithm>

#include "client-sim/sim_report.hpp"

namespace shiftcast {
namespace {

constexpr double kBitsPerByte = 8;
constexpr double kBitsPerKilobit = 1000;

}  // namespace

void ReportTimeline::add(const SimProgress& progress, const ServerMetrics& server) {
  if (progress.elapsed > 0) {
    TimelinePoint p;
    p.t = progress.elapsed;
    p.connected = progress.connected;
    p.failed = progress.failed;
    p.input_ack_p50_ms = progress.input_ack_p50_ms;
    p.input_ack_p99_ms = progress.input_ack_p99_ms;
    p.rpc_p99_ms = progress.rpc_p99_ms;
    const double seconds = progress.elapsed - previous_.elapsed;
    const double clients = std::max(1, progress.connected);
    if (previous_.elapsed > 0 && seconds > 0) {
      p.has_rates = true;
      const auto kbps = [&](std::uint64_t now, std::uint64_t before) {
        return double(now - std::min(now, before)) * kBitsPerByte / kBitsPerKilobit / seconds / clients;
      };
      p.up_kbps = kbps(progress.bytes_up, previous_.bytes_up);
      p.down_kbps = kbps(progress.bytes_down, previous_.bytes_down);
    }
    if (server.ok && previous_server_.ok) {
      p.has_server_tick = true;
      p.server_tick_p99_ms = server_tick_ms_between(previous_server_, server).p99;
    }
    points_.push_back(p);
  }
  previous_ = progress;
  previous_server_ = server;
}

}  // namespace shiftcast
