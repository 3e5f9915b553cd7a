// The load report as one self-contained page (shiftcast-sim --html FILE): the budgets' verdict on top,
// the run's key figures, then plots over time (clients connected, server tick p99, input-to-ack p50 and
// p99, bandwidth up and down per client, RPC shot latency) and histograms (input-to-ack, prediction
// error), all inline SVG with labelled axes and units. No script, no external resource: the file opens
// offline in any browser and can be mailed or attached to a CI run as it is.
//
//   std::ofstream(options.html_path) << report_html(report, timeline.points(), result);
#pragma once

#include <span>
#include <string>

#include "client-sim/report_timeline.hpp"
#include "client-sim/sim_report.hpp"
#include "client-sim/sim_runner.hpp"

namespace shiftcast {

// `run` supplies the raw samples the histograms count (its clients' input-to-ack and prediction error).
// Every chart is an <svg> with a data-chart attribute naming it (clients, server_tick, input_ack,
// bandwidth, rpc, input_ack_histogram, prediction_error_histogram); the verdict is the element with
// id "verdict" and a data-met attribute of "true" or "false". A run over several servers adds the table
// with id "servers": a row per server (data-server its HOST:RPC_PORT:HTTP_PORT, data-met its own verdict).
std::string report_html(const SimReport& report, std::span<const TimelinePoint> timeline,
                        const SimRunResult& run);

}  // namespace shiftcast
