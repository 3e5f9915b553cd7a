// The run second by second, for the report page's plots over time (client-sim/report_html.hpp). Fed
// from the progress callback (once a second during the load) and, when the server's metrics can be
// scraped, from a scrape each second for the server's tick time.
//
//   ReportTimeline timeline;
//   run_simulation(options, level, [&](const SimProgress& p) {
//     timeline.add(p, scrape_server_metrics(options));   // or a failed scrape: no tick point
//   }, ...);
//   report_html(report, timeline.points(), result);
#pragma once

#include <vector>

#include "client-sim/server_metrics.hpp"
#include "client-sim/sim_runner.hpp"

namespace shiftcast {

// One second of the load. Rates are over the time since the point before; the first point has none (the
// totals before it were read up to a second before the load started, so its rates would count
// connecting traffic too). Latencies are the percentiles of what was acknowledged or answered in that
// time.
struct TimelinePoint {
  double t = 0;  // seconds since the load started
  int connected = 0;
  int failed = 0;
  double input_ack_p50_ms = 0;
  double input_ack_p99_ms = 0;
  double rpc_p99_ms = 0;
  bool has_rates = false;
  double up_kbps = 0;  // per connected client, IP/UDP headers included
  double down_kbps = 0;
  bool has_server_tick = false;  // both scrapes around this second were read
  double server_tick_p99_ms = 0;
};

class ReportTimeline {
 public:
  // A progress report; those from before the load (elapsed 0, connecting) only set the starting totals.
  void add(const SimProgress& progress, const ServerMetrics& server);
  const std::vector<TimelinePoint>& points() const { return points_; }

 private:
  std::vector<TimelinePoint> points_;
  SimProgress previous_;
  ServerMetrics previous_server_;
};

}  // namespace shiftcast
