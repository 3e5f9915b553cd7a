// The HTML report's per-server table (shiftcast-sim --html over several servers): one row per server of
// the report, in its order, each with that server's own verdict and figures, its text escaped; a run on
// one server has no such table. The page as a browser renders it is report_page_test's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client-sim/report_html.hpp"

namespace shiftcast {
namespace {

SimServerRow server_row(std::string label, bool met, std::vector<std::string> missed) {
  SimServerRow s;
  s.server = std::move(label);
  s.matches = 2;
  s.clients = 64;
  s.clients_connected = 64;
  s.judged = true;
  s.budgets_met = met;
  s.budgets_missed = std::move(missed);
  s.server_metrics_ok = true;
  return s;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
    ++n;
  return n;
}

TEST(ReportHtml, SeveralServersGetARowEachWithTheirOwnVerdict) {
  SimReport r;
  r.matches = 6;
  r.clients_per_match = 32;
  r.level = "oa_dm1";
  r.servers = {server_row("127.0.0.1:41001:41002", true, {}),
               server_row("127.0.0.1:42001:42002", false, {"input_ack_p99_ticks 3.83 > 3"}),
               server_row("127.0.0.1:43001:43002", true, {})};
  r.servers[2].judged = false;
  r.servers[2].matches = 0;
  const std::string page = report_html(r, {}, SimRunResult{});
  ASSERT_EQ(count_of(page, "id=\"servers\""), 1u);
  EXPECT_EQ(count_of(page, "<tr data-server="), 3u);
  const auto first = page.find(R"(<tr data-server="127.0.0.1:41001:41002" data-met="true">)");
  const auto second = page.find(R"(<tr data-server="127.0.0.1:42001:42002" data-met="false">)");
  const auto third = page.find(R"(<tr data-server="127.0.0.1:43001:43002" data-met="true">)");
  ASSERT_NE(first, std::string::npos) << page;
  ASSERT_NE(second, std::string::npos) << page;
  ASSERT_NE(third, std::string::npos) << page;
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);
  // The missed budget named, escaped for HTML; the server without a match is said not to be judged.
  EXPECT_NE(page.find("missed: input_ack_p99_ticks 3.83 &gt; 3", second), std::string::npos);
  EXPECT_EQ(page.find("3.83 > 3"), std::string::npos);
  EXPECT_NE(page.find("not judged (no match placed)", third), std::string::npos);
}

TEST(ReportHtml, OneServerHasNoServerTable) {
  SimReport r;
  r.servers = {server_row("127.0.0.1:40001:40002", true, {})};
  const std::string page = report_html(r, {}, SimRunResult{});
  EXPECT_EQ(page.find("id=\"servers\""), std::string::npos);
  EXPECT_EQ(page.find("<tr data-server="), std::string::npos);
}

}  // namespace
}  // namespace shiftcast
