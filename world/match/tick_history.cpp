// The ring of views behind rewinds: one writer (the match thread), any number of readers, no locks
// beyond the atomic shared_ptr's own.
//
// Protocol. The writer stores a view in slot tick % capacity, then moves oldest_ and newest_ on
// (newest_ last, with release). A reader loads newest_ (acquire) and oldest_, picks the ticks it needs
// within [oldest, newest], loads their slots and checks that each view carries the tick it expected.
// Tick numbers only increase, so a view with the expected tick is that tick's one and only view;
// anything else (another tick, or null) means the writer refilled or cleared the slot after the window
// was read, and the reader starts over with the current window, which may now clamp the request. Every
// failed attempt is one the writer made progress during, so readers never block the writer and finish
// as soon as it leaves them the few hundred nanoseconds one attempt takes (the match publishes once per
// tick, milliseconds apart).
#include "world/match/tick_history.hpp"

#include <algorithm>
#include <cmath>

namespace shiftcast {

const char* to_string(RewindClamp clamp) {
  switch (clamp) {
    case RewindClamp::kNone:
      return "none";
    case RewindClamp::kTooOld:
      return "too_old";
    case RewindClamp::kInFuture:
      return "in_future";
    case RewindClamp::kEmpty:
      return "empty";
  }
  return "unknown";
}

namespace {

// Entities in only one of the two views are taken when that view is the nearer one: before for
// alpha < 0.5, after from 0.5 on. At alpha 0 the view is exactly `before`.
constexpr double kNearerSwitch = 0.5;

Entity interpolated(const Entity& before, const Entity& after, double alpha) {
  // Fields other than the pose (shape, layers, velocity) come from the nearer view; the pose is
  // blended in double so alpha 0 reproduces `before` exactly and rounding happens once.
  Entity e = alpha < kNearerSwitch ? before : after;
  const Vec3d a = to_double(before.pose.position);
  const Vec3d b = to_double(after.pose.position);
  e.pose.position = to_float(a + (b - a) * alpha);
  const double yaw_a = before.pose.yaw;
  const double yaw_b = after.pose.yaw;
  e.pose.yaw = float(yaw_a + (yaw_b - yaw_a) * alpha);
  return e;
}

}  // namespace

void RewindView::entities(std::vector<Entity>& out) const {
  out.clear();
  if (before == nullptr) return;
  const std::vector<Entity>& a = before->entities;
  if (after == nullptr || after == before || alpha == 0.0) {
    out.assign(a.begin(), a.end());
    return;
  }
  const std::vector<Entity>& b = after->entities;
  const bool keep_before_only = alpha < kNearerSwitch;
  out.reserve(std::max(a.size(), b.size()));
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].id < b[j].id)) {
      if (keep_before_only) out.push_back(a[i]);
      ++i;
    } else if (i == a.size() || b[j].id < a[i].id) {
      if (!keep_before_only) out.push_back(b[j]);
      ++j;
    } else {
      out.push_back(interpolated(a[i], b[j], alpha));
      ++i;
      ++j;
    }
  }
}

TickHistory::TickHistory(int capacity_ticks) : ring_(std::size_t(std::max(1, capacity_ticks))) {}

void TickHistory::publish(std::shared_ptr<const WorldView> view) {
  if (view == nullptr) return;
  const std::uint64_t tick = view->tick;
  const std::uint64_t capacity = ring_.size();
  // Only this thread writes, so its own earlier stores are read back relaxed.
  const bool any = any_.load(std::memory_order_relaxed);
  const std::uint64_t newest = newest_.load(std::memory_order_relaxed);
  // Time never runs backwards for readers: a tick that is not after the newest (a caller bug) is dropped
  // rather than allowed to replace a view a reader may be interpolating towards.
  if (any && tick <= newest) return;

  std::uint64_t oldest = oldest_.load(std::memory_order_relaxed);
  if (!any || tick != newest + 1) {
    // A gap (or the first tick) restarts the window: everything older is dropped, so nothing kept
    // straddles missing ticks and the old views (and their models) are freed now.
    for (auto& slot : ring_)
      slot.store(nullptr);
    oldest = tick;
  } else if (tick - oldest >= capacity) {
    oldest = tick - capacity + 1;
  }
  ring_[tick % capacity].store(std::move(view));
  oldest_.store(oldest, std::memory_order_release);
  newest_.store(tick, std::memory_order_release);
  any_.store(true, std::memory_order_release);
}

namespace {

std::shared_ptr<const WorldView> load_tick(
    const std::vector<std::atomic<std::shared_ptr<const WorldView>>>& ring, std::uint64_t tick) {
  std::shared_ptr<const WorldView> s = ring[tick % ring.size()].load(std::memory_order_acquire);
  return s != nullptr && s->tick == tick ? s : nullptr;
}

}  // namespace

std::shared_ptr<const WorldView> TickHistory::latest() const {
  for (;;) {
    if (!any_.load(std::memory_order_acquire)) return nullptr;
    std::shared_ptr<const WorldView> s = load_tick(ring_, newest_.load(std::memory_order_acquire));
    if (s != nullptr) return s;
  }
}

std::shared_ptr<const WorldView> TickHistory::exact(std::uint64_t tick) const {
  for (;;) {
    if (!any_.load(std::memory_order_acquire)) return nullptr;
    const std::uint64_t newest = newest_.load(std::memory_order_acquire);
    const std::uint64_t oldest = oldest_.load(std::memory_order_acquire);
    if (oldest > newest) continue;  // a restart is under way: the two were read across it
    if (tick < oldest || tick > newest) return nullptr;
    std::shared_ptr<const WorldView> s = load_tick(ring_, tick);
    if (s != nullptr) return s;
  }
}

RewindView TickHistory::at(double tick) const {
  for (;;) {
    if (!any_.load(std::memory_order_acquire)) return {};
    const std::uint64_t newest = newest_.load(std::memory_order_acquire);
    const std::uint64_t oldest = oldest_.load(std::memory_order_acquire);
    if (oldest > newest) continue;
    RewindView view;
    view.clamp = RewindClamp::kNone;
    view.tick_used = tick;
    // NaN compares false everywhere; it gets the newest tick, the answer of a query that does not rewind.
    if (!(tick <= double(newest))) {
      view.clamp = RewindClamp::kInFuture;
      view.tick_used = double(newest);
    } else if (tick < double(oldest)) {
      view.clamp = RewindClamp::kTooOld;
      view.tick_used = double(oldest);
    }
    const double floor_tick = std::floor(view.tick_used);
    const auto lo = std::uint64_t(floor_tick);
    view.alpha = view.tick_used - floor_tick;
    view.before = load_tick(ring_, lo);
    if (view.before == nullptr) continue;
    if (view.alpha == 0.0) {
      view.after = view.before;
    } else {
      view.after = load_tick(ring_, lo + 1);
      if (view.after == nullptr) continue;
    }
    return view;
  }
}

}  // namespace shiftcast
