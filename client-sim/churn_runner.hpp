// run_churn: shiftcast-sim's churn mode (SimOptions::churn, the profile's [churn] table or --churn), the
// load of a soak (scripts/soak.sh, docs/soak.md). For options.duration seconds it plays a ChurnPlan
// (client-sim/churn_plan.hpp) against the server with real clients:
// - players join with a fresh token (IssueConnectToken over the admin RPC, a client id never used
//   before), play, and leave with a goodbye or silently (socket closed, the server times them out);
//   a player whose match is ended sees MatchEnded and joins the replacement at once with a fresh token;
// - matches are created and ended over the admin RPC all along;
// - passing RPC connections and contact subscribers come and go (client-sim/churn_visitors.hpp).
// Each session is checked like any client of run_simulation (events in order, none lost while it was
// connected, snapshot continuity) and appears as one entry of SimRunResult::clients; ChurnCounters count
// every outcome. A session ended by our own silent drop or by its match's end is not a failure.
//
//   SimRunResult r = run_churn(options, level, progress, [&] { after = scrape_server_metrics(options); });
//
// Threads: the calling thread plays the plan and makes the admin calls; options.threads client threads
// (client-sim/client_thread) play the sessions; one more thread runs the visitors.
#pragma once

#include <functional>

#include "client-sim/sim_runner.hpp"

namespace shiftcast {

SimRunResult run_churn(const SimOptions& options, const SimLevel& level,
                       const std::function<void(const SimProgress&)>& progress,
                       const std::function<void()>& before_end_matches = {});

}  // namespace shiftcast
