// The Prometheus text parser: hand-written exposition text (labels with every escape, a histogram, HELP
// and TYPE, comments, blank lines, NaN and infinities, timestamps) read field by field; every malformed
// line refused with its line number; and the server's own MetricsRegistry rendering read back to the
// values that were recorded (a peer writer of the format).
#include "client-sim/prometheus_text.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "server/metrics.hpp"

namespace shiftcast {
namespace {

using LabelList = std::vector<std::pair<std::string, std::string>>;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(PrometheusText, ReadsHandWrittenExposition) {
  const std::string text =
      "# HELP shiftcast_tick_seconds Duration of one \\\\ match tick\\nsecond line\n"
      "# TYPE shiftcast_tick_seconds histogram\n"
      "shiftcast_tick_seconds_bucket{match=\"1\",le=\"0.0005\"} 3\n"
      "shiftcast_tick_seconds_bucket{match=\"1\",le=\"+Inf\"} 7\n"
      "shiftcast_tick_seconds_sum{match=\"1\"} 0.0123\n"
      "shiftcast_tick_seconds_count{match=\"1\"} 7\n"
      "# a plain comment, not HELP or TYPE\n"
      "#\n"
      "   \t\n"
      "\n"
      "odd_labels{path=\"C:\\\\dir\\\\\",quote=\"say \\\"hi\\\"\",nl=\"a\\nb\",empty=\"\"} -1.5e-3 "
      "1700000000000\n"
      "spaced_out { a = \"1\" , b=\"}{,=\" , } 2\r\n"
      "\tindented 4\n"
      "no_labels NaN\n"
      "neg_inf -Inf\n"
      "pos_inf Inf\n"
      "empty_braces{} 5\n"
      "colon:name:total 12";  // no final newline
  PrometheusText parsed = parse_prometheus_text(text);
  ASSERT_EQ(parsed.error, "");
  ASSERT_EQ(parsed.samples.size(), 12u);
  const std::vector<PrometheusSample>& s = parsed.samples;

  EXPECT_EQ(s[0].name, "shiftcast_tick_seconds_bucket");
  EXPECT_EQ(s[0].labels, (LabelList{{"match", "1"}, {"le", "0.0005"}}));
  EXPECT_EQ(s[0].value, 3);
  EXPECT_EQ(s[1].labels, (LabelList{{"match", "1"}, {"le", "+Inf"}}));
  EXPECT_EQ(s[1].value, 7);
  EXPECT_EQ(s[2].name, "shiftcast_tick_seconds_sum");
  EXPECT_DOUBLE_EQ(s[2].value, 0.0123);
  EXPECT_EQ(s[3].name, "shiftcast_tick_seconds_count");
  EXPECT_FALSE(s[3].timestamp_ms.has_value());

  EXPECT_EQ(s[4].name, "odd_labels");
  EXPECT_EQ(s[4].labels,
            (LabelList{{"path", "C:\\dir\\"}, {"quote", "say \"hi\""}, {"nl", "a\nb"}, {"empty", ""}}));
  EXPECT_DOUBLE_EQ(s[4].value, -1.5e-3);
  ASSERT_TRUE(s[4].timestamp_ms.has_value());
  EXPECT_EQ(*s[4].timestamp_ms, 1700000000000);
  ASSERT_NE(s[4].label("quote"), nullptr);
  EXPECT_EQ(*s[4].label("quote"), "say \"hi\"");
  EXPECT_EQ(s[4].label("le"), nullptr);

  EXPECT_EQ(s[5].name, "spaced_out");
  EXPECT_EQ(s[5].labels, (LabelList{{"a", "1"}, {"b", "}{,="}}));
  EXPECT_EQ(s[5].value, 2);
  EXPECT_EQ(s[6].name, "indented");
  EXPECT_EQ(s[6].value, 4);
  EXPECT_TRUE(std::isnan(s[7].value));
  EXPECT_EQ(s[8].value, -kInf);
  EXPECT_EQ(s[9].value, kInf);
  EXPECT_EQ(s[10].name, "empty_braces");
  EXPECT_TRUE(s[10].labels.empty());
  EXPECT_EQ(s[11].name, "colon:name:total");
  EXPECT_EQ(s[11].value, 12);

  EXPECT_EQ(parsed.types, (std::map<std::string, std::string>{{"shiftcast_tick_seconds", "histogram"}}));
  EXPECT_EQ(parsed.help.at("shiftcast_tick_seconds"), "Duration of one \\ match tick\nsecond line");
}

TEST(PrometheusText, RefusesMalformedLinesWithTheirNumber) {
  struct Case {
    std::string line;
    std::string message;
  };
  const std::vector<Case> cases{
      {"m{a=\"1\" 1", "',' or '}' expected"},
      {"m{a=\"1", "label a: bad escape or unterminated value"},
      {"m{a=\"x\\q\"} 1", "label a: bad escape or unterminated value"},
      {"m{a=1} 1", "'\"' expected for label a"},
      {"m{a} 1", "'=' expected after label a"},
      {"m{1a=\"1\"} 1", "invalid label name"},
      {"m{a=\"1\",a=\"2\"} 1", "label a given twice"},
      {"m 1 2 3", "trailing text"},
      {"m abc", "invalid value 'abc'"},
      {"m", "invalid value ''"},
      {"m +-1", "invalid value '+-1'"},
      {"m 0x10", "invalid value '0x10'"},
      {"m 1 12.5", "invalid timestamp '12.5'"},
      {"1m 1", "invalid metric name"},
      {"m{a=\"1\"}} 1", "invalid value '}'"},
      {"# TYPE m sometype", "TYPE m: unknown type 'sometype'"},
      {"# TYPE m counter extra", "TYPE m: trailing text"},
      {"# TYPE", "TYPE without a metric name"},
      {"# HELP 9x text", "HELP: invalid metric name"},
  };
  for (const Case& c : cases) {
    PrometheusText parsed = parse_prometheus_text("ok 1\n\n" + c.line + "\nok 2\n");
    EXPECT_TRUE(parsed.error.starts_with("line 3: ")) << c.line << " -> " << parsed.error;
    EXPECT_NE(parsed.error.find(c.message), std::string::npos) << c.line << " -> " << parsed.error;
    EXPECT_TRUE(parsed.samples.empty()) << c.line;  // a half-read page is not a page
  }
  PrometheusText twice = parse_prometheus_text("# TYPE m counter\n# TYPE m gauge\n");
  EXPECT_EQ(twice.error, "line 2: TYPE m: given twice");
}

TEST(PrometheusText, ValuesAsGoParsesThem) {
  EXPECT_EQ(parse_prometheus_value("1"), 1.0);
  EXPECT_EQ(parse_prometheus_value("-0.5"), -0.5);
  EXPECT_EQ(parse_prometheus_value("+2.5"), 2.5);
  EXPECT_EQ(parse_prometheus_value("1e3"), 1000.0);
  EXPECT_EQ(parse_prometheus_value("5e-05"), 5e-05);
  EXPECT_EQ(parse_prometheus_value(".5"), 0.5);
  EXPECT_EQ(parse_prometheus_value("+Inf"), kInf);
  EXPECT_EQ(parse_prometheus_value("Inf"), kInf);
  EXPECT_EQ(parse_prometheus_value("-inf"), -kInf);
  ASSERT_TRUE(parse_prometheus_value("NaN").has_value());
  EXPECT_TRUE(std::isnan(*parse_prometheus_value("NaN")));
  for (const char* bad : {"", "+", "-", "1x", "0x10", "--1", "+-1", "e3", "Infx", "1e999"}) {
    EXPECT_FALSE(parse_prometheus_value(bad).has_value()) << bad;
  }
}

// The server's renderer is the writer this parser exists for: what it renders must read back to the
// values recorded, escapes and histogram buckets included.
TEST(PrometheusText, ReadsTheServersOwnRendering) {
  MetricsRegistry registry;
  registry.counter("requests_total", "Requests", {{"path", "a\\b\"c\nd"}}).add(41);
  registry.gauge("process_cpu_seconds_total", "CPU").set(12.75);
  Histogram& h = registry.histogram("lat_seconds", "Latency", {{"match", "7"}}, {0.001, 0.01});
  for (double v : {0.0005, 0.001, 0.002, 0.5, 0.0001})
    h.observe(v);  // buckets: 3, 1, 1 (+Inf)
  PrometheusText parsed = parse_prometheus_text(registry.render());
  ASSERT_EQ(parsed.error, "");
  EXPECT_EQ(parsed.types.at("requests_total"), "counter");
  EXPECT_EQ(parsed.types.at("lat_seconds"), "histogram");
  std::map<std::string, double> buckets;
  double requests = -1, cpu = -1, count = -1, sum = -1;
  for (const PrometheusSample& s : parsed.samples) {
    if (s.name == "requests_total") {
      ASSERT_NE(s.label("path"), nullptr);
      EXPECT_EQ(*s.label("path"), "a\\b\"c\nd");
      requests = s.value;
    } else if (s.name == "process_cpu_seconds_total") {
      cpu = s.value;
    } else if (s.name == "lat_seconds_bucket") {
      ASSERT_NE(s.label("match"), nullptr);
      EXPECT_EQ(*s.label("match"), "7");
      buckets[*s.label("le")] = s.value;
    } else if (s.name == "lat_seconds_count") {
      count = s.value;
    } else if (s.name == "lat_seconds_sum") {
      sum = s.value;
    }
  }
  EXPECT_EQ(requests, 41);
  EXPECT_EQ(cpu, 12.75);
  EXPECT_EQ(buckets, (std::map<std::string, double>{{"0.001", 3}, {"0.01", 4}, {"+Inf", 5}}));
  EXPECT_EQ(count, 5);
  EXPECT_DOUBLE_EQ(sum, 0.0005 + 0.001 + 0.002 + 0.5 + 0.0001);
}

}  // namespace
}  // namespace shiftcast
