// HeartbeatJudge: the health ping is sent only while every match worker showed a sign of life within the
// limit. Oracle: the silences computed by hand from the times the test passes (no clock is read).
#include "server/agones/heartbeat.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace shiftcast {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const Clock::time_point kT0 = Clock::time_point(std::chrono::hours(1000));

TEST(HeartbeatJudge, BeatsWhileEveryWorkerIsWithinTheLimit) {
  const HeartbeatJudge judge(milliseconds(500));
  const std::vector<Clock::time_point> signs{kT0, kT0 + milliseconds(100), kT0 - milliseconds(500)};
  const Heartbeat h = judge.judge(kT0 + milliseconds(0), signs);
  EXPECT_TRUE(h.beat);  // silences 0, 0 (a sign after now), 500: exactly the limit still beats
  EXPECT_EQ(h.stalled_worker, -1);
}

TEST(HeartbeatJudge, OneSilentWorkerWithholdsAndIsNamed) {
  const HeartbeatJudge judge(milliseconds(500));
  const std::vector<Clock::time_point> signs{kT0, kT0 - milliseconds(501), kT0 - milliseconds(50)};
  const Heartbeat h = judge.judge(kT0, signs);
  EXPECT_FALSE(h.beat);
  EXPECT_EQ(h.stalled_worker, 1);
  EXPECT_EQ(h.silence, milliseconds(501));
}

TEST(HeartbeatJudge, TheLongestSilenceIsReported) {
  const HeartbeatJudge judge(milliseconds(100));
  const std::vector<Clock::time_point> signs{kT0 - milliseconds(300), kT0 - milliseconds(900),
                                             kT0 - milliseconds(200)};
  const Heartbeat h = judge.judge(kT0, signs);
  EXPECT_FALSE(h.beat);
  EXPECT_EQ(h.stalled_worker, 1);
  EXPECT_EQ(h.silence, milliseconds(900));
}

TEST(HeartbeatJudge, AWorkerThatResumesBeatsAgain) {
  // One worker's sign of life over time: ticking, stuck for a second, ticking again.
  const HeartbeatJudge judge(milliseconds(250));
  std::vector<Clock::time_point> signs{kT0};
  EXPECT_TRUE(judge.judge(kT0 + milliseconds(200), signs).beat);
  EXPECT_FALSE(judge.judge(kT0 + milliseconds(1000), signs).beat);
  signs[0] = kT0 + milliseconds(1010);
  EXPECT_TRUE(judge.judge(kT0 + milliseconds(1020), signs).beat);
}

TEST(HeartbeatJudge, NoWorkersBeats) {
  const HeartbeatJudge judge(milliseconds(1));
  EXPECT_TRUE(judge.judge(kT0, {}).beat);
}

}  // namespace
}  // namespace shiftcast
