// DeliveryTimer: targets are woken in due order, a target registering again from deliver_due is woken
// again (in a later round, so a round always ends), the earliest registration re-arms a later one, and
// cancel() drops everything so the io_context runs out of work. Due times lie in the past (the timer's
// epoch is an hour back), so nothing waits: the oracle is the order and count of the calls.
#include "client-sim/delivery_timer.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace shiftcast {
namespace {

struct Recorder final : DeliveryTarget {
  Recorder(std::string name, std::vector<std::string>& log) : name(std::move(name)), log(log) {}
  void deliver_due(double now) override {
    log.push_back(name);
    EXPECT_GT(now, 0);
    if (again > 0) {
      --again;
      timer->wake_at(next_due, this);
    }
  }
  std::string name;
  std::vector<std::string>& log;
  DeliveryTimer* timer = nullptr;
  int again = 0;
  double next_due = 0;
};

TEST(DeliveryTimer, WakesTargetsInDueOrderAndAgainWhenTheyAsk) {
  boost::asio::io_context context;
  DeliveryTimer timer(context, std::chrono::steady_clock::now() - std::chrono::hours(1));
  std::vector<std::string> log;
  Recorder a("a", log), b("b", log), c("c", log);
  for (Recorder* r : {&a, &b, &c})
    r->timer = &timer;
  a.again = 2;  // asks twice more, each time due at once
  a.next_due = 1;
  timer.wake_at(30, &a);
  timer.wake_at(10, &b);  // earlier than the armed time: re-arms
  timer.wake_at(20, &c);
  EXPECT_EQ(timer.registrations(), 3u);
  context.run();
  EXPECT_EQ(log, (std::vector<std::string>{"b", "c", "a", "a", "a"}));
  EXPECT_EQ(timer.registrations(), 0u);
}

TEST(DeliveryTimer, CancelDropsEveryRegistration) {
  boost::asio::io_context context;
  const auto epoch = std::chrono::steady_clock::now();
  DeliveryTimer timer(context, epoch);
  std::vector<std::string> log;
  Recorder a("a", log);
  timer.wake_at(3600, &a);  // an hour from now: only cancel lets run() return
  timer.cancel();
  EXPECT_EQ(timer.registrations(), 0u);
  timer.wake_at(0, &a);  // refused once cancelled
  context.run();
  EXPECT_TRUE(log.empty());
  EXPECT_LT(std::chrono::steady_clock::now() - epoch, std::chrono::minutes(1));
}

// Churn destroys clients mid-run: a forgotten target is never woken, whether its registration is still
// waiting or it is later in the very round another target is being delivered in.
TEST(DeliveryTimer, AForgottenTargetIsNeverWoken) {
  boost::asio::io_context context;
  DeliveryTimer timer(context, std::chrono::steady_clock::now() - std::chrono::hours(1));
  std::vector<std::string> log;
  Recorder a("a", log), b("b", log), c("c", log), d("d", log);
  struct Forgetter final : DeliveryTarget {
    void deliver_due(double) override { timer->forget(victim); }
    DeliveryTimer* timer = nullptr;
    const DeliveryTarget* victim = nullptr;
  } forgetter;
  forgetter.timer = &timer;
  forgetter.victim = &d;
  timer.wake_at(10, &a);
  timer.wake_at(20, &b);
  timer.wake_at(30, &b);
  timer.wake_at(40, &c);
  timer.wake_at(45, &forgetter);
  timer.wake_at(50, &d);  // same round as the forgetter (both long due), after it
  timer.forget(&b);
  EXPECT_EQ(timer.registrations(), 4u);
  context.run();
  EXPECT_EQ(log, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(timer.registrations(), 0u);
}

}  // namespace
}  // namespace shiftcast
