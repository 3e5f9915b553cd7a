// ShotLog: the raycasts a match answered lately, so the spectator view can draw them as lines (a disputed
// hit can be seen at the pose it was judged against). Query threads push; the spectator feed reads what
// came since its cursor. A match keeps the log only while somebody watches, so an unwatched match pays
// nothing per query.
//
//   log.watch(+1);                                   // a viewer arrived
//   if (log.watched()) log.push(recorded_raycast);   // query thread
//   std::vector<RecordedQuery> shots = log.since(cursor);   // the feed, with its own cursor
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "world/match/match_recording.hpp"

namespace shiftcast {

// Shots kept: more than a frame's worth at any sane query rate; older ones are dropped unread.
inline constexpr std::size_t kShotLogCapacity = 64;

class ShotLog {
 public:
  void watch(int delta) { watchers_.fetch_add(delta, std::memory_order_relaxed); }
  bool watched() const { return watchers_.load(std::memory_order_relaxed) > 0; }
  // Raycasts only; other queries are ignored.
  void push(const RecordedQuery& query);
  // The shots pushed after `cursor` (oldest first, at most kShotLogCapacity); `cursor` moves past them.
  std::vector<RecordedQuery> since(std::uint64_t& cursor) const;

 private:
  struct Entry {
    std::uint64_t sequence;
    RecordedQuery query;
  };
  mutable std::mutex mutex_;
  std::deque<Entry> entries_;
  std::uint64_t next_ = 1;
  std::atomic<int> watchers_{0};
};

}  // namespace shiftcast
