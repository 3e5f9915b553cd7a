// The report's outputs: the JSON read back by the strict reader (parse_json) with every required key and
// the report's values, its escaping; the table and the progress line.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "client-sim/sim_report.hpp"
#include "server/config/json_value.hpp"
#include "tests/client-sim/report_fixtures.hpp"

namespace shiftcast {
namespace {

using namespace report_fixtures;

// ---- Output ---------------------------------------------------------------------------------------

TEST(ReportJson, HasEveryRequiredKeyWithTheReportsValues) {
  SimReport r = make_report(report_options(), troubled_run(), kBefore, kAfter);
  const std::string text = report_json(r);
  const JsonParse p = parse_json(text);
  ASSERT_TRUE(p.ok()) << p.error;
  const JsonValue& j = p.value;
  for (const char* key : {"clients",
                          "clients_connected",
                          "clients_predicting",
                          "clients_failed",
                          "events_lost",
                          "input_ack_ms",
                          "rpc_ms",
                          "bandwidth_kbps",
                          "server_tick_ms",
                          "budgets_met",
                          "budgets_missed",
                          "failures",
                          "tick_rate_achieved",
                          "snapshot_rate_achieved",
                          "packet_loss_down",
                          "movement_error",
                          "server_cpu_percent",
                          "server_cpu_percent_per_player",
                          "sim_cpu_percent",
                          "sim_cpu_percent_per_client",
                          "invariant_violations",
                          "event_order_violations",
                          "snapshot_continuity_violations",
                          "rpc_errors",
                          "input_ack_p99_ticks",
                          "load_seconds",
                          "server_late_ticks",
                          "connect_seconds",
                          "client_late_ticks",
                          "rpc_errors_by_code",
                          "snapshot_rate_expected"}) {
    EXPECT_TRUE(j.has(key)) << key;
  }
  for (const char* key : {"input_ack_ms", "server_tick_ms", "movement_error"}) {
    for (const char* p : {"p50", "p95", "p99", "max", "count"})
      EXPECT_TRUE(j[key].has(p)) << key << "." << p;
  }
  EXPECT_EQ(j["clients"].as_number(), 4);
  EXPECT_EQ(j["clients_connected"].as_number(), 2);
  EXPECT_EQ(j["clients_predicting"].as_number(), r.clients_predicting);
  EXPECT_EQ(j["clients_failed"].as_number(), 3);
  EXPECT_EQ(j["events_lost"].as_number(), 2);
  EXPECT_EQ(j["input_ack_ms"]["p50"].as_number(), 30);
  EXPECT_EQ(j["input_ack_ms"]["p99"].as_number(), 60);
  EXPECT_EQ(j["input_ack_p99_ticks"].as_number(), r.input_ack_p99_ticks);  // shortest round trip: exact
  EXPECT_EQ(j["rpc_ms"]["raycast"]["p50"].as_number(), 2);
  EXPECT_EQ(j["rpc_ms"]["raycast_rewound"]["p99"].as_number(), 70);
  EXPECT_EQ(j["bandwidth_kbps"]["up"].as_number(), r.bandwidth_up_kbps);
  EXPECT_EQ(j["bandwidth_kbps"]["down"].as_number(), r.bandwidth_down_kbps);
  EXPECT_EQ(j["packet_loss_down"].as_number(), r.packet_loss_down);
  EXPECT_EQ(j["server_tick_ms"]["p95"].as_number(), r.server_tick_ms.p95);
  EXPECT_EQ(j["server_tick_ms"]["count"].as_number(), 10);
  EXPECT_EQ(j["rpc_errors_by_code"]["RateLimited"].as_number(), 2);
  EXPECT_EQ(j["movement_error"]["p999"].as_number(), r.movement_error.p999);
  EXPECT_EQ(j["sim_cpu_percent"].as_number(), r.sim_cpu_percent);
  EXPECT_EQ(j["sim_cpu_percent_per_client"].as_number(), r.sim_cpu_percent_per_client);
  EXPECT_EQ(j["level"].as_string(), "arena");
  EXPECT_EQ(j["budgets_met"].as_bool(), false);
  ASSERT_TRUE(j["budgets_missed"].is_array());
  ASSERT_EQ(j["budgets_missed"].items.size(), r.budgets_missed.size());
  for (std::size_t i = 0; i < r.budgets_missed.size(); ++i) {
    EXPECT_EQ(j["budgets_missed"].items[i].as_string(), r.budgets_missed[i]);
  }
  ASSERT_EQ(j["failures"].items.size(), 2u);
  EXPECT_EQ(j["failures"].items[1].as_string(), "refused \"full\" (1)");
  EXPECT_EQ(report_json(r), text);  // stable
}

TEST(ReportJson, EscapesStringsAndNullsNonFiniteNumbers) {
  SimReport r;
  r.level = "tab\there \"q\" back\\slash\nline \x01 caf\xC3\xA9";
  r.failures = {"bad \xFF byte", "cut \xE2\x82", "surrogate \xED\xA0\x80"};
  r.load_seconds = std::numeric_limits<double>::quiet_NaN();
  r.tick_rate_achieved = std::numeric_limits<double>::infinity();
  r.input_ack_ms.p99 = -std::numeric_limits<double>::infinity();
  r.bandwidth_up_kbps = 1e-7;
  r.server_cpu_percent = 123456789.125;
  const std::string text = report_json(r);
  EXPECT_EQ(text.find('\xFF'), std::string::npos);
  // Valid non-ASCII UTF-8 is written as it is: never as \u escapes, so never as surrogate pairs.
  EXPECT_NE(text.find("caf\xC3\xA9"), std::string::npos);
  const JsonParse p = parse_json(text);
  ASSERT_TRUE(p.ok()) << p.error;
  const JsonValue& j = p.value;
  EXPECT_EQ(j["level"].as_string(), "tab\there \"q\" back\\slash\nline \x01 caf\xC3\xA9");
  ASSERT_EQ(j["failures"].items.size(), 3u);
  EXPECT_EQ(j["failures"].items[0].as_string(), "bad \xEF\xBF\xBD byte");  // U+FFFD
  EXPECT_EQ(j["failures"].items[1].as_string(), "cut \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(j["failures"].items[2].as_string(), "surrogate \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  // Written as null, not left out: operator[] reads a missing member as null too.
  for (const JsonValue* nulled :
       {j.member("load_seconds"), j.member("tick_rate_achieved"), j["input_ack_ms"].member("p99")}) {
    ASSERT_NE(nulled, nullptr);
    EXPECT_TRUE(nulled->is_null());
  }
  EXPECT_EQ(j["bandwidth_kbps"]["up"].as_number(), 1e-7);
  EXPECT_EQ(j["server_cpu_percent"].as_number(), 123456789.125);
  EXPECT_TRUE(j["rpc_ms"].is_object());
  EXPECT_TRUE(j["rpc_ms"].members.empty());
  EXPECT_NE(text.find("\"rpc_ms\": {}"), std::string::npos);
}

TEST(ReportTable, ShowsEverySectionAndTheVerdict) {
  SimReport bad = make_report(report_options(), troubled_run(), kBefore, kAfter);
  std::string table = format_report_table(bad);
  for (const char* part :
       {"clients\n", "rates", "latency (ms)", "rpc (ms)", "bandwidth and loss", "reliability\n",
        "movement (units)", "server ", "timed out (2)", "raycast_rewound", "RateLimited"}) {
    EXPECT_NE(table.find(part), std::string::npos) << part;
  }
  const std::string verdict = "\nbudgets: MISSED\n";
  ASSERT_NE(table.find(verdict), std::string::npos);
  std::string expected_tail = verdict;
  for (const std::string& line : bad.budgets_missed)
    expected_tail += "  " + line + "\n";
  EXPECT_TRUE(table.ends_with(expected_tail)) << table;
  // The percentile columns line up: every row's p50 figure ends in the header's "p50" column.
  std::size_t header = table.find("latency (ms)");
  std::size_t p50_end = table.find("p50", header) - header + 3;
  std::size_t row = table.find("  input to acknowledgement");
  EXPECT_EQ(table.substr(row + p50_end - 5, 5), "30.00");

  SimRunResult run;
  run.load_seconds = 10;
  run.clients = {healthy_client()};
  EXPECT_TRUE(
      format_report_table(make_report(report_options(), run, kBefore, kAfter)).ends_with("\nbudgets: met\n"));
}

TEST(ProgressLine, ShowsRatesOverTheLastInterval) {
  SimProgress previous;
  previous.elapsed = 11;
  previous.snapshots = 184000;
  previous.commands = 320000;
  previous.events = 1000;
  previous.rpc_calls = 11000;
  SimProgress now;
  now.elapsed = 12;
  now.clients = 512;
  now.connected = 512;
  now.snapshots = 200000;  // +16000
  now.commands = 352000;   // +32000
  now.events = 1250;       // +250
  now.rpc_calls = 12000;   // +1000
  now.input_ack_p99_ms = 18.24;
  EXPECT_EQ(format_progress_line(now, previous, 1.0),
            "t=12s clients 512/512 failed 0 snapshots/s 16k commands/s 32k events/s 250 rpc/s 1.0k ack p99 "
            "18.2 ms");
  // The same change over two seconds: half the rates.
  EXPECT_EQ(format_progress_line(now, previous, 2.0),
            "t=12s clients 512/512 failed 0 snapshots/s 8.0k commands/s 16k events/s 125 rpc/s 500 ack p99 "
            "18.2 ms");
  // While connecting (elapsed 0); counts that went back read as 0, never wrap; no time, no rate.
  SimProgress connecting;
  connecting.clients = 4;
  connecting.connected = 1;
  connecting.failed = 1;
  EXPECT_EQ(format_progress_line(connecting, now, 1.0),
            "connecting clients 1/4 failed 1 snapshots/s 0 commands/s 0 events/s 0 rpc/s 0 ack p99 0.0 ms");
  EXPECT_EQ(format_progress_line(now, {}, 0.0),
            "t=12s clients 512/512 failed 0 snapshots/s 0 commands/s 0 events/s 0 rpc/s 0 ack p99 18.2 ms");
}

}  // namespace
}  // namespace shiftcast
