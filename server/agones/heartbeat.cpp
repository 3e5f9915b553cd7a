#include "server/agones/heartbeat.hpp"

namespace shiftcast {

Heartbeat HeartbeatJudge::judge(Clock::time_point now, std::span<const Clock::time_point> last_signs) const {
  Heartbeat h;
  for (std::size_t i = 0; i < last_signs.size(); ++i) {
    const Clock::duration silence = now > last_signs[i] ? now - last_signs[i] : Clock::duration::zero();
    if (silence > max_silence_ && (h.beat || silence > h.silence)) {
      h.beat = false;
      h.stalled_worker = int(i);
      h.silence = silence;
    }
  }
  return h;
}

}  // namespace shiftcast
