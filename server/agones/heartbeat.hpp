// HeartbeatJudge: whether the process may tell Agones it is healthy right now. Pure: the workers' last
// signs of life (server/worker_pulse.hpp) and the time go in, "beat" or "withhold, worker i silent for so
// long" comes out. The Agones SDK client asks it before every POST /health; a stalled match worker stops
// the pings, and after the GameServer's failure threshold the sidecar marks the pod Unhealthy.
//
//   HeartbeatJudge judge(std::chrono::milliseconds(5000));
//   Heartbeat h = judge.judge(now, {pulse0.last(), pulse1.last()});
//   if (h.beat) post_health(); else log("worker {} silent for {} ms", h.stalled_worker, ...);
#pragma once

#include <chrono>
#include <span>

namespace shiftcast {

struct Heartbeat {
  bool beat = true;
  int stalled_worker = -1;                        // the silent worker that decided it (the longest silent)
  std::chrono::steady_clock::duration silence{};  // that worker's time since its last sign of life
};

class HeartbeatJudge {
 public:
  using Clock = std::chrono::steady_clock;

  // A worker silent for longer than `max_silence` is stalled.
  explicit HeartbeatJudge(Clock::duration max_silence) : max_silence_(max_silence) {}
  // Beat when every worker was heard of within max_silence before `now` (no workers: beat). A last sign
  // of life after `now` (another thread's clock read later) counts as silence 0.
  Heartbeat judge(Clock::time_point now, std::span<const Clock::time_point> last_signs) const;
  Clock::duration max_silence() const { return max_silence_; }

 private:
  Clock::duration max_silence_;
};

}  // namespace shiftcast
