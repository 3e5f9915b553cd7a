// ClientConnection::take_commands: every command received runs exactly once, in order, paid for by the
// command credit (one per server tick, saved up to kMaxCommandsPerTick). Oracles: brute-force counts over
// long runs (a client sending twice the tick rate runs exactly one command per tick), and hand-worked
// schedules (a 3-tick stall caught up at once, the queue bound's drops).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/support/channel_harness.hpp"

namespace shiftcast::channel_test {
namespace {

#ifdef SHIFTCAST_SANITIZE
constexpr int kLongRun = 200;
#else
constexpr int kLongRun = 2000;
#endif

struct CreditRun {
  Connected p;
  std::vector<std::uint64_t> ran;  // sequences, in the order the ticks ran them
  double now = kStart + 0.1;

  void send(int commands) {
    for (int i = 0; i < commands; ++i) {
      const std::uint64_t s = p.client.last_command_sequence() + 1;
      ASSERT_EQ(
          p.connection().on_packet(p.client.send_command(command_input(s), 0, now), kClientAddress, now),
          wire::ErrorCode::Ok);
    }
  }
  ClientConnection::CommandTake tick() {
    std::vector<PlayerInput> taken;
    const ClientConnection::CommandTake t = p.connection().take_commands(taken);
    EXPECT_EQ(taken.size(), t.run);
    for (const PlayerInput& in : taken)
      ran.push_back(command_sequence(in));
    now += 1.0 / 64;
    return t;
  }
  // Each sequence 1..n exactly once, ascending.
  bool ran_in_order_once(std::uint64_t first, std::uint64_t last) const {
    if (ran.size() != last - first + 1) return false;
    for (std::size_t i = 0; i < ran.size(); ++i)
      if (ran[i] != first + i) return false;
    return true;
  }
};

TEST(CommandCredit, OneCommandPerTickRunsEachTheTickItArrives) {
  CreditRun r;
  for (int t = 0; t < kLongRun; ++t) {
    r.send(1);
    const auto take = r.tick();
    ASSERT_EQ(take.run, 1u);
    ASSERT_EQ(take.waiting, 0u);
  }
  EXPECT_TRUE(r.ran_in_order_once(1, kLongRun));
  EXPECT_EQ(r.p.connection().run_ack(), std::uint64_t(kLongRun));
  EXPECT_EQ(r.p.connection().counters().starved_ticks, 0u);
}

TEST(CommandCredit, AClientSendingTwicePerTickIsHeldToOnePerTick) {
  CreditRun r;
  std::uint64_t dropped = 0;
  std::size_t waiting = 0;
  for (int t = 0; t < kLongRun; ++t) {
    r.send(2);
    const auto take = r.tick();
    ASSERT_EQ(take.run, 1u) << "tick " << t;  // never more than the tick's credit
    ASSERT_LT(take.waiting, kMaxQueuedCommands);
    dropped += take.dropped;
    waiting = take.waiting;
  }
  // Brute force: kLongRun commands ran, the queue is full (one under the bound after the tick's run),
  // the rest were dropped, all counted.
  const ConnectionCounters& c = r.p.connection().counters();
  EXPECT_EQ(r.ran.size(), std::size_t(kLongRun));
  EXPECT_EQ(c.commands_run, std::uint64_t(kLongRun));
  EXPECT_EQ(dropped, c.commands_dropped);
  EXPECT_EQ(waiting, kMaxQueuedCommands - 1);
  EXPECT_EQ(c.commands_run + c.commands_dropped + waiting, 2u * kLongRun);
  for (std::size_t i = 1; i < r.ran.size(); ++i)
    ASSERT_LT(r.ran[i - 1], r.ran[i]);  // in order, none twice
}

TEST(CommandCredit, AThreeTickStallIsCaughtUpAtOnce) {
  CreditRun r;
  for (int t = 0; t < 10; ++t) {
    r.send(1);
    r.tick();
  }
  // Three ticks without commands (they were held up on the way), then all four arrive together.
  for (int t = 0; t < 3; ++t)
    EXPECT_EQ(r.tick().run, 0u);
  r.send(4);
  const auto burst = r.tick();
  EXPECT_EQ(burst.run, 4u);
  EXPECT_EQ(burst.waiting, 0u);
  for (int t = 0; t < 10; ++t) {
    r.send(1);
    EXPECT_EQ(r.tick().run, 1u);
  }
  EXPECT_TRUE(r.ran_in_order_once(1, 24));
  EXPECT_EQ(r.p.connection().counters().starved_ticks, 3u);
  EXPECT_EQ(r.p.connection().counters().command_waits, 0u);
}

TEST(CommandCredit, ALongerStallIsCaughtUpByTheCreditCapAndThenWaits) {
  CreditRun r;
  for (int t = 0; t < 6; ++t)
    EXPECT_EQ(r.tick().run, 0u);  // six starved ticks save up kMaxCommandsPerTick, no more
  r.send(6);
  const auto burst = r.tick();
  EXPECT_EQ(burst.run, kMaxCommandsPerTick);
  EXPECT_EQ(burst.waiting, 6u - kMaxCommandsPerTick);
  const auto next = r.tick();
  EXPECT_EQ(next.run, 1u);
  EXPECT_EQ(r.tick().run, 1u);
  EXPECT_EQ(r.tick().run, 0u);
  EXPECT_TRUE(r.ran_in_order_once(1, 6));
  EXPECT_EQ(r.p.connection().counters().command_waits, 2u + 1u);
}

TEST(CommandCredit, TheQueueBoundDropsTheOldestAndCountsIt) {
  CreditRun r;
  const std::size_t sent = kMaxQueuedCommands + 7;
  r.send(int(sent));
  const auto first = r.tick();
  EXPECT_EQ(first.dropped, 7u);
  EXPECT_EQ(r.p.connection().counters().commands_dropped, 7u);
  EXPECT_EQ(first.run, 1u);
  std::uint64_t dropped_later = 0;
  for (int t = 0; t < int(kMaxQueuedCommands); ++t)
    dropped_later += r.tick().dropped;
  EXPECT_EQ(dropped_later, 0u);  // reported once
  EXPECT_TRUE(r.ran_in_order_once(8, sent));
}

}  // namespace
}  // namespace shiftcast::channel_test
