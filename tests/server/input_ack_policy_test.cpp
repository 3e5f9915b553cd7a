// End to end, over loopback against the real shiftcast-server: when a command's acknowledgement goes
// ([match] input_ack_delay_ticks). At 64 Hz ticks and 32 Hz snapshots a snapshot frame is never more than
// a tick away, so with the default delay of 1 every acknowledgement rides a snapshot frame and the client
// is sent no frame without one; with 0 a command that ran on a tick between snapshots is acknowledged in a
// frame of its own. Oracle: the client session's own counters (every authentic packet, and of those the
// snapshots) and the acknowledgements of the commands it sent.
#include <gtest/gtest.h>

#include "tests/support/server_fixture.hpp"

namespace shiftcast {
namespace {

constexpr int kCommands = 64;
constexpr double kViewTickUnknown = 0;

class InputAckPolicy : public ServerTest, public ::testing::WithParamInterface<int> {};

TEST_P(InputAckPolicy, AcknowledgementsRideSnapshotFramesUnlessAskedEveryTick) {
  const int delay = GetParam();
  start(test_server_config(), "--input-ack-delay-ticks " + std::to_string(delay));
  UdpTestClient c(server_.ports().udp, token(1));
  ASSERT_TRUE(c.connect());
  ASSERT_TRUE(c.pump_until([&] { return c.session().own_entity() != 0; }));

  const ClientCounters before = c.session().counters();
  for (int i = 0; i < kCommands; ++i) {
    PlayerInput input;
    input.forward = 1;
    c.send_command(input, kViewTickUnknown);
    const std::uint64_t sent = c.session().last_command_sequence();
    ASSERT_TRUE(c.pump_until([&] { return c.session().input_ack() >= sent; })) << "command " << sent;
  }
  const ClientCounters& after = c.session().counters();
  const std::uint64_t packets = after.packets_accepted - before.packets_accepted;
  const std::uint64_t snapshots = (after.snapshots_received + after.snapshots_skipped) -
                                  (before.snapshots_received + before.snapshots_skipped);
  // Every command was acknowledged, each by a frame that arrived after it was sent.
  ASSERT_GE(packets, std::uint64_t(kCommands));
  if (delay >= 1) {
    // No frame without a snapshot: no input-ack frame, and no keep-alive (a frame every other tick).
    EXPECT_EQ(packets, snapshots);
  } else {
    // A command sent right after a snapshot frame runs on the tick between and is acknowledged alone;
    // the client waits for each acknowledgement, so that is about every other command.
    EXPECT_GT(packets - snapshots, std::uint64_t(kCommands / 4));
  }
  c.disconnect();
  EXPECT_EQ(server_.stop(), 0);
}

INSTANTIATE_TEST_SUITE_P(DelayTicks, InputAckPolicy, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "Delay" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace shiftcast
