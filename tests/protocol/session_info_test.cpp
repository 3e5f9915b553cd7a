// SessionInfo (protocol/session_info.hpp): what the server writes is what a client reads, in whole
// milliseconds, and a client refuses a table whose values could not come from a consistent server.
// Oracle: the values written, and the wire's millisecond rounding done by hand.
#include "protocol/session_info.hpp"

#include <gtest/gtest.h>

namespace shiftcast {
namespace {

const wire::SessionInfo* written(flatbuffers::FlatBufferBuilder& fbb, const SessionTiming& timing) {
  fbb.Finish(write_session_info(fbb, timing));
  return flatbuffers::GetRoot<wire::SessionInfo>(fbb.GetBufferPointer());
}

const wire::SessionInfo* raw(flatbuffers::FlatBufferBuilder& fbb, std::uint16_t tick_rate,
                             std::uint16_t snapshot_rate, std::uint32_t keepalive_ms,
                             std::uint32_t timeout_ms) {
  fbb.Finish(wire::CreateSessionInfo(fbb, tick_rate, snapshot_rate, keepalive_ms, timeout_ms));
  return flatbuffers::GetRoot<wire::SessionInfo>(fbb.GetBufferPointer());
}

TEST(SessionInfo, WhatTheServerWritesTheClientReads) {
  flatbuffers::FlatBufferBuilder fbb;
  const wire::SessionInfo* info = written(fbb, {64, 32, 0.1, 5.0});
  EXPECT_EQ(info->tick_rate(), 64);
  EXPECT_EQ(info->snapshot_rate(), 32);
  EXPECT_EQ(info->keepalive_interval_ms(), 100u);
  EXPECT_EQ(info->timeout_ms(), 5000u);
  const std::optional<SessionTiming> read = read_session_info(info);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->tick_rate, 64);
  EXPECT_EQ(read->snapshot_rate, 32);
  EXPECT_DOUBLE_EQ(read->keepalive_interval, 0.1);
  EXPECT_DOUBLE_EQ(read->timeout, 5.0);
}

TEST(SessionInfo, SecondsTravelAsWholeMillisecondsRoundedToNearest) {
  flatbuffers::FlatBufferBuilder fbb;
  const wire::SessionInfo* info = written(fbb, {20, 20, 0.2504, 2.0006});
  EXPECT_EQ(info->keepalive_interval_ms(), 250u);
  EXPECT_EQ(info->timeout_ms(), 2001u);
}

TEST(SessionInfo, AbsentOrInconsistentIsNothing) {
  EXPECT_FALSE(read_session_info(nullptr).has_value());
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
    flatbuffers::FlatBufferBuilder fbb;
    EXPECT_EQ(read_session_info(raw(fbb, c.tick, c.snapshot, c.keepalive_ms, c.timeout_ms)).has_value(),
              c.valid)
        << c.name;
  }
}

}  // namespace
}  // namespace shiftcast
