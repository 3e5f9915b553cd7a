// TokenBucket against closed forms: tokens after t idle seconds = min(burst, start + rate * t) minus the
// costs taken, and retry_after_ms = ceil((cost - tokens) / rate * 1000). The randomized run uses a power
// of two rate and times on a 1/1024 s grid, so every quantity is exact in binary and the comparison is
// exact; the non-dyadic run checks the defining property instead (waiting retry_after_ms is enough).
#include "server/token_bucket.hpp"
#include "tests/support/seeded_random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace shiftcast {
namespace {

constexpr std::uint32_t kNever = std::numeric_limits<std::uint32_t>::max();

TEST(TokenBucket, StartsFullAndRefillsAtTheRateUpToTheBurst) {
  TokenBucket bucket(8, 20, 100.0);
  EXPECT_EQ(bucket.available(100.0), 20.0);
  EXPECT_TRUE(bucket.take(20, 100.0));
  EXPECT_EQ(bucket.available(100.0), 0.0);
  EXPECT_EQ(bucket.available(100.5), std::min(20.0, 0 + 8 * 0.5));
  EXPECT_EQ(bucket.available(101.25), std::min(20.0, 0 + 8 * 1.25));
  EXPECT_EQ(bucket.available(200.0), 20.0);  // capped
}

TEST(TokenBucket, RefusesWithoutTakingAndSaysWhenToRetry) {
  TokenBucket bucket(8, 20, 0.0);
  ASSERT_TRUE(bucket.take(16, 0.0));  // 4 left
  std::uint32_t retry = 0;
  EXPECT_FALSE(bucket.take(5, 0.0, &retry));
  EXPECT_EQ(retry, 125u);                 // (5 - 4) / 8 s
  EXPECT_EQ(bucket.available(0.0), 4.0);  // a refusal takes nothing
  EXPECT_FALSE(bucket.take(5, 127 / 1024.0, &retry));
  EXPECT_EQ(retry, 1u);  // 1/128 token short at 8/s = 0.977 ms, rounded up
  EXPECT_TRUE(bucket.take(5, 0.125));
  EXPECT_EQ(bucket.available(0.125), 0.0);
  // Beyond the burst, never; nonsense costs, never.
  EXPECT_FALSE(bucket.take(21, 1000.0, &retry));
  EXPECT_EQ(retry, kNever);
  EXPECT_FALSE(bucket.take(-1, 1000.0, &retry));
  EXPECT_EQ(retry, kNever);
  EXPECT_FALSE(bucket.take(std::nan(""), 1000.0, &retry));
  EXPECT_EQ(retry, kNever);
  EXPECT_TRUE(bucket.take(20, 1000.0));  // exactly the burst passes
  EXPECT_TRUE(bucket.take(0, 1000.0));
}

TEST(TokenBucket, ZeroRateNeverRefills) {
  TokenBucket bucket(0, 3, 0.0);
  EXPECT_TRUE(bucket.take(3, 0.0));
  std::uint32_t retry = 0;
  EXPECT_FALSE(bucket.take(1, 1e6, &retry));
  EXPECT_EQ(retry, kNever);
}

TEST(TokenBucket, TimeGoingBackwardsAddsNothing) {
  TokenBucket bucket(8, 20, 10.0);
  ASSERT_TRUE(bucket.take(20, 10.0));
  EXPECT_EQ(bucket.available(9.0), 0.0);
  EXPECT_EQ(bucket.available(10.5), 4.0);  // measured from 10.0, not from 9.0
}

TEST(TokenBucket, RandomRunMatchesTheClosedFormExactly) {
  std::mt19937 rng(1234);
  for (double rate : {1.0, 8.0, 64.0, 1024.0, 131072.0}) {
    const double burst = UniformInt<int>(1, 200)(rng);
    double now = 5.0;
    TokenBucket bucket(rate, burst, now);
    double tokens = burst;  // the oracle
    for (int step = 0; step < 5000; ++step) {
      double dt = UniformInt<int>(0, 512)(rng) / 1024.0;
      now += dt;
      tokens = std::min(burst, tokens + rate * dt);
      double cost = UniformInt<int>(0, static_cast<int>(burst) + 2)(rng);
      std::uint32_t retry = 0;
      bool taken = bucket.take(cost, now, &retry);
      ASSERT_EQ(taken, cost <= tokens) << "rate " << rate << " step " << step;
      if (taken) {
        tokens -= cost;
      } else if (cost > burst) {
        ASSERT_EQ(retry, kNever);
      } else {
        ASSERT_EQ(retry, static_cast<std::uint32_t>(std::ceil((cost - tokens) / rate * 1000.0)));
      }
      ASSERT_EQ(bucket.available(now), tokens);
    }
  }
}

TEST(TokenBucket, WaitingRetryAfterIsEnoughForAnyRate) {
  std::mt19937 rng(99);
  UniformReal<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 2000; ++trial) {
    double rate = 0.1 + unit(rng) * 100000;
    double burst = 1 + unit(rng) * 20000;
    double now = unit(rng) * 1000;  // seconds of a steady clock
    TokenBucket bucket(rate, burst, now);
    ASSERT_TRUE(bucket.take(burst * unit(rng), now));
    double cost = 1 + unit(rng) * (burst - 1);
    std::uint32_t retry = 0;
    if (bucket.take(cost, now, &retry)) continue;
    ASSERT_NE(retry, kNever);
    TokenBucket copy = bucket;
    EXPECT_TRUE(copy.take(cost, now + retry / 1000.0)) << "rate " << rate << " retry " << retry;
    if (retry > 1) {
      EXPECT_FALSE(bucket.take(cost, now + (retry - 1.5) / 1000.0)) << "rate " << rate << " retry " << retry;
    }
  }
}

}  // namespace
}  // namespace shiftcast
