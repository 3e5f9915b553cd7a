#include "client-sim/churn_report.hpp"

#include <spdlog/fmt/fmt.h>

namespace shiftcast {

std::vector<ChurnField> churn_fields(const ChurnCounters& c) {
  return {
      {"sessions", std::uint64_t(c.sessions)},
      {"sessions_connected", std::uint64_t(c.sessions_connected)},
      {"reconnects", std::uint64_t(c.reconnects)},
      {"silent_drops", std::uint64_t(c.silent_drops)},
      {"goodbyes", std::uint64_t(c.goodbyes)},
      {"match_ended", std::uint64_t(c.match_ended)},
      {"sessions_failed", std::uint64_t(c.sessions_failed)},
      {"at_run_end", std::uint64_t(c.at_run_end)},
      {"at_run_end_connecting", std::uint64_t(c.at_run_end_connecting)},
      {"token_reuses", std::uint64_t(c.token_reuses)},
      {"matches_created", std::uint64_t(c.matches_created)},
      {"matches_ended", std::uint64_t(c.matches_ended)},
      {"admin_errors", std::uint64_t(c.admin_errors)},
      {"matches_alive_max", std::uint64_t(c.matches_alive_max)},
      {"invariant_violations", std::uint64_t(c.invariant_violations)},
      {"rpc_visits", std::uint64_t(c.rpc_visits)},
      {"rpc_visit_queries", std::uint64_t(c.rpc_visit_queries)},
      {"rpc_visit_failures", std::uint64_t(c.rpc_visit_failures)},
      {"rpc_abandoned", std::uint64_t(c.rpc_abandoned)},
      {"subscribers", std::uint64_t(c.subscribers)},
      {"subscribers_reading", std::uint64_t(c.subscribers_reading)},
      {"subscribers_never_reading", std::uint64_t(c.subscribers_never_reading)},
      {"subscriber_pushes", std::uint64_t(c.subscriber_pushes)},
      {"subscriber_event_gaps", std::uint64_t(c.subscriber_event_gaps)},
      {"subscribers_left", std::uint64_t(c.subscribers_left)},
      {"subscribers_cut_slow", std::uint64_t(c.subscribers_cut_slow)},
      {"subscribers_cut_timeout", std::uint64_t(c.subscribers_cut_timeout)},
      {"subscribers_cut_other", std::uint64_t(c.subscribers_cut_other)},
      {"subscribers_match_ended", std::uint64_t(c.subscribers_match_ended)},
      {"subscribers_never_cut", std::uint64_t(c.subscribers_never_cut)},
      {"subscribers_refused", std::uint64_t(c.subscribers_refused)},
      {"subscribers_at_run_end", std::uint64_t(c.subscribers_at_run_end)},
  };
}

void churn_budget_misses(const ChurnCounters& c, const std::function<void(std::string)>& miss) {
  if (!c.enabled) return;
  if (c.token_reuses > 0) miss(fmt::format("churn token_reuses {} > 0", c.token_reuses));
  if (c.admin_errors > 0) miss(fmt::format("churn admin_errors {} > 0", c.admin_errors));
  if (c.rpc_visit_failures > 0) miss(fmt::format("churn rpc_visit_failures {} > 0", c.rpc_visit_failures));
  if (c.subscribers_refused > 0) miss(fmt::format("churn subscribers_refused {} > 0", c.subscribers_refused));
  if (c.subscriber_event_gaps > 0)
    miss(fmt::format("churn subscriber_event_gaps {} > 0", c.subscriber_event_gaps));
  if (c.sessions_connected == 0) miss("churn: no session connected");
}

}  // namespace shiftcast
