// TickHistory: the last second of a match, so raycasts, sweeps and overlaps can be asked "as of tick T"
// (lag compensation, as in Source's) from any thread while the match keeps ticking.
//
// The match thread publishes one immutable WorldView per tick; readers take shared pointers to the
// views either side of the time they ask for and interpolate between them. Nothing is ever locked
// for longer than a shared_ptr copy, and a reader holding old views keeps them alive on its own.
//
//   history.publish(std::move(view));               // match thread, once per tick
//   RewindView v = history.at(tick - 12.5);         // any thread
//   if (v.clamp != RewindClamp::kNone) ...          // asked outside the kept window: v says what it used
//   std::vector<Entity> posed; v.entities(posed);   // every entity at the interpolated time
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "world/match/entity.hpp"

namespace shiftcast {

struct PropModel;

struct WorldView {
  std::uint64_t tick = 0;
  std::vector<Entity> entities;  // sorted by id; poses at the end of `tick`
  // Keeps the prop models the entities point at alive as long as the view is.
  std::shared_ptr<const void> models;
};

enum class RewindClamp : std::uint8_t {
  kNone,
  kTooOld,    // asked before the oldest kept tick: the oldest was used
  kInFuture,  // asked after the newest tick: the newest was used
  kEmpty,     // nothing published yet
};
const char* to_string(RewindClamp clamp);

struct RewindView {
  std::shared_ptr<const WorldView> before;  // at floor(tick_used)
  std::shared_ptr<const WorldView> after;   // at ceil(tick_used) (same as before on whole ticks)
  double tick_used = 0;
  double alpha = 0;  // (tick_used − before.tick): 0 gives before's poses, 1 after's
  RewindClamp clamp = RewindClamp::kEmpty;

  // Entities present in both views, with positions and yaw interpolated; entities in only one of
  // them (spawned or removed between) as they are in the nearer one. Sorted by id.
  void entities(std::vector<Entity>& out) const;
};

class TickHistory {
 public:
  explicit TickHistory(int capacity_ticks);

  // Single writer (the match thread). Ticks must increase by one; a gap clears older entries.
  void publish(std::shared_ptr<const WorldView> view);
  std::shared_ptr<const WorldView> latest() const;
  std::shared_ptr<const WorldView> exact(std::uint64_t tick) const;  // null if not kept
  RewindView at(double tick) const;
  int capacity() const { return static_cast<int>(ring_.size()); }

 private:
  // Slot tick % capacity holds the view of `tick` while it is kept. Readers load newest_ and oldest_,
  // then the slots they need, and check each view's own tick: a slot the writer refilled in between
  // holds another tick, and the reader starts over with the new window (see tick_history.cpp).
  std::vector<std::atomic<std::shared_ptr<const WorldView>>> ring_;
  std::atomic<std::uint64_t> newest_{0};
  std::atomic<std::uint64_t> oldest_{0};  // oldest kept tick: newest − capacity + 1, or the last restart
  std::atomic<bool> any_{false};
};

}  // namespace shiftcast
