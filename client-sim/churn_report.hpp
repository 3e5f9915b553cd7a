// The churn part of shiftcast-sim's report (client-sim/sim_report): ChurnCounters as named rows for the
// table and the JSON (one list, so both say the same), and the budgets a churn run is judged by beyond
// the profile's: nothing the server promised may be refused or lost.
//
//   for (const ChurnField& f : churn_fields(report.churn)) out += row(f.name, std::to_string(f.value));
//   churn_budget_misses(report.churn, [&](std::string line) { report.budgets_missed.push_back(line); });
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "client-sim/churn_counters.hpp"

namespace shiftcast {

struct ChurnField {
  std::string_view name;  // the JSON key under "churn", and the table's label
  std::uint64_t value;
};

std::vector<ChurnField> churn_fields(const ChurnCounters& c);
// Calls `miss` with one line per churn budget missed: a client id handed out twice, an admin call
// refused, a passing query unanswered, a subscription refused.
void churn_budget_misses(const ChurnCounters& c, const std::function<void(std::string)>& miss);

}  // namespace shiftcast
