// SessionInfo (protocol/session_info.hpp): what the server writes is what a client reads, in whole
// milliseconds, and a client refuses fields whose values could not come from a consistent server.
// Oracle: the values written, and the wire's millisecond rounding done by hand.
#include "protocol/session_info.hpp"

#include <gtest/gtest.h>

namespace shiftcast {
namespace {

TEST(SessionInfo, WhatTheServerWritesTheClientReads) {
  const SessionInfoFields info = to_session_info({64, 32, 0.1, 5.0});
  EXPECT_EQ(info.tick_rate, 64);
  EXPECT_EQ(info.snapshot_rate, 32);
  EXPECT_EQ(info.keepalive_interval_ms, 100u);
  EXPECT_EQ(info.timeout_ms, 5000u);
  const std::optional<SessionTiming> read = read_session_info(info);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->tick_rate, 64);
  EXPECT_EQ(read->snapshot_rate, 32);
  EXPECT_DOUBLE_EQ(read->keepalive_interval, 0.1);
  EXPECT_DOUBLE_EQ(read->timeout, 5.0);
}

TEST(SessionInfo, SecondsTravelAsWholeMillisecondsRoundedToNearest) {
  const SessionInfoFields info = to_session_info({20, 20, 0.2504, 2.0006});
  EXPECT_EQ(info.keepalive_interval_ms, 250u);
  EXPECT_EQ(info.timeout_ms, 2001u);
}

TEST(SessionInfo, AbsentOrInconsistentIsNothing) {
  EXPECT_FALSE(read_session_info(std::nullopt).has_value());
  struct Case {
    const char* name;
    std::uint16_t tick, snapshot;
    std::uint32_t keepalive_ms, timeout_ms;
    bool valid;
  };
  const Case cases[] = {
      {"consistent", 128, 1, 1, 2, true},
      {"no tick rate", 0, 0, 100, 5000, false},
      {"no snapshot rate", 64, 0, 100, 5000, false},
      {"snapshots faster than ticks", 32, 64, 100, 5000, false},
      {"no keep-alive interval", 64, 32, 0, 5000, false},
      {"timeout equal to the keep-alive interval", 64, 32, 100, 100, false},
      {"timeout shorter than the keep-alive interval", 64, 32, 100, 50, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(
        read_session_info(SessionInfoFields{c.tick, c.snapshot, c.keepalive_ms, c.timeout_ms}).has_value(),
        c.valid)
        << c.name;
  }
}

}  // namespace
}  // namespace shiftcast
