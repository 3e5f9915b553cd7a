// The report page's timeline (client-sim/report_timeline.hpp): rates per second and per connected client
// from the progress totals, latencies as the progress gave them, and the server's tick p99 from two
// scrapes, against values computed by hand.
#include "client-sim/report_timeline.hpp"

#include <gtest/gtest.h>

namespace shiftcast {
namespace {

SimProgress progress(double elapsed, int connected, std::uint64_t up, std::uint64_t down) {
  SimProgress p;
  p.elapsed = elapsed;
  p.clients = 10;
  p.connected = connected;
  p.bytes_up = up;
  p.bytes_down = down;
  p.input_ack_p50_ms = 12.5;
  p.input_ack_p99_ms = 20;
  p.rpc_p99_ms = 3;
  return p;
}

// Tick time buckets of 1 and 2 ms (and +Inf), cumulative counts.
ServerMetrics scrape(std::uint64_t up_to_1ms, std::uint64_t up_to_2ms) {
  ServerMetrics m;
  m.ok = true;
  m.tick_bucket_bounds = {0.001, 0.002};
  m.tick_bucket_counts = {up_to_1ms, up_to_2ms, up_to_2ms};
  return m;
}

TEST(ReportTimeline, RatesArePerSecondAndPerConnectedClient) {
  ReportTimeline t;
  ServerMetrics unreachable;                         // ok = false
  t.add(progress(0, 10, 1000, 2000), scrape(0, 0));  // connecting: only the starting totals
  EXPECT_TRUE(t.points().empty());
  // The first second of the load: no rates (the totals before it are from before the load).
  t.add(progress(1, 10, 1000, 2000), scrape(0, 0));
  // 2 s later, 10 clients sent 50,000 bytes more and received 100,000: 20 and 40 kbit/s each.
  t.add(progress(3, 10, 51000, 102000), scrape(90, 100));
  // Then 0.5 s with 8 connected: 8,000 bytes up is 16 kbit/s each; the scrape failed, so no tick point.
  t.add(progress(3.5, 8, 59000, 102000), unreachable);
  ASSERT_EQ(t.points().size(), 3u);
  EXPECT_FALSE(t.points()[0].has_rates);
  const TimelinePoint& a = t.points()[1];
  EXPECT_DOUBLE_EQ(a.t, 3);
  ASSERT_TRUE(a.has_rates);
  EXPECT_DOUBLE_EQ(a.up_kbps, 20);
  EXPECT_DOUBLE_EQ(a.down_kbps, 40);
  EXPECT_EQ(a.connected, 10);
  EXPECT_DOUBLE_EQ(a.input_ack_p50_ms, 12.5);
  EXPECT_DOUBLE_EQ(a.rpc_p99_ms, 3);
  // 90 ticks within 1 ms, 10 in (1, 2]: the 99th of 100 is 9/10 into the second bucket, 1.9 ms.
  ASSERT_TRUE(a.has_server_tick);
  EXPECT_NEAR(a.server_tick_p99_ms, 1.9, 1e-9);
  const TimelinePoint& b = t.points()[2];
  EXPECT_DOUBLE_EQ(b.up_kbps, 16);
  EXPECT_DOUBLE_EQ(b.down_kbps, 0);
  EXPECT_FALSE(b.has_server_tick);
}

}  // namespace
}  // namespace shiftcast
