// WorkerPulse: when a match worker last showed it runs, as one atomic any thread reads without a lock.
// Every tick of every match on the worker stamps it, and so does a probe the Agones heartbeat posts to
// the worker (an idle worker ticks nothing but must still count as alive); a worker whose event loop is
// stuck stamps nothing, and the heartbeat (server/agones/heartbeat.hpp) stops vouching for the process.
//
//   pulse.stamp(std::chrono::steady_clock::now());   // the worker's thread, once per tick: one store
//   auto last = pulse.last();                         // any thread
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace shiftcast {

class WorkerPulse {
 public:
  using Clock = std::chrono::steady_clock;

  explicit WorkerPulse(Clock::time_point start = Clock::now()) { stamp(start); }
  void stamp(Clock::time_point t) { ns_.store(t.time_since_epoch().count(), std::memory_order_relaxed); }
  Clock::time_point last() const {
    return Clock::time_point(Clock::duration(ns_.load(std::memory_order_relaxed)));
  }

 private:
  std::atomic<Clock::rep> ns_{0};
};

}  // namespace shiftcast
