#include "world/match/contact.hpp"

#include <algorithm>
#include <tuple>

namespace shiftcast {

const char* to_string(ContactPhase phase) {
  switch (phase) {
    case ContactPhase::kBegin:
      return "begin";
    case ContactPhase::kPersist:
      return "persist";
    case ContactPhase::kEnd:
      return "end";
  }
  return "unknown";
}

bool contact_before(const Contact& x, const Contact& y) {
  return std::tie(x.time, x.a, x.b, x.brush, x.phase) < std::tie(y.time, y.a, y.b, y.brush, y.phase);
}

void ContactTracker::touch(const Contact& contact) {
  Contact c = contact;
  // One key per touching pair however it was found: entity pairs ordered, the level always second.
  if (c.b != kNoEntity && c.b < c.a) {
    std::swap(c.a, c.b);
    c.normal = -c.normal;
  }
  current_.push_back({Key{c.a, c.b, c.b == kNoEntity ? c.brush : kNoBrush}, c, false});
}

void ContactTracker::keep_alive(std::span<const EntityId> sleeping) {
  if (sleeping.empty()) return;
  const auto asleep = [&](EntityId id) { return std::binary_search(sleeping.begin(), sleeping.end(), id); };
  for (const Entry& entry : previous_) {
    if (asleep(entry.key.a) || asleep(entry.key.b)) current_.push_back({entry.key, entry.contact, true});
  }
}

void ContactTracker::forget(EntityId id) {
  std::erase_if(current_, [id](const Entry& e) { return e.key.a == id || e.key.b == id; });
}

namespace {

// A pair touched last tick and not this one ends: its last point and normal, at the end of the tick.
Contact ended(const Contact& last, std::uint64_t tick) {
  Contact end = last;
  end.tick = tick;
  end.time = 1;  // the touch ended at some time in the tick; reported at its end
  end.phase = ContactPhase::kEnd;
  end.relative_speed = 0;
  return end;
}

}  // namespace

void ContactTracker::finish(std::uint64_t tick, std::vector<Contact>& out) {
  out.clear();
  // Merge this tick's arrivals by key: stable, so equal keys stay in arrival order. A later touch replaces
  // the contact when strictly earlier in the tick; a later carried (silent) arrival changes nothing.
  order_.resize(current_.size());
  for (std::uint32_t i = 0; i < order_.size(); ++i)
    order_[i] = i;
  std::stable_sort(order_.begin(), order_.end(),
                   [&](std::uint32_t x, std::uint32_t y) { return current_[x].key < current_[y].key; });
  merged_.clear();
  for (const std::uint32_t i : order_) {
    const Entry& e = current_[i];
    if (!merged_.empty() && merged_.back().key == e.key) {
      if (!e.silent && e.contact.time < merged_.back().contact.time) merged_.back().contact = e.contact;
      continue;
    }
    merged_.push_back(e);
  }
  // Walk both sorted lists at once: a key in both persists, only in this tick's begins, only in the last
  // tick's ends.
  auto last = previous_.begin();
  for (Entry& entry : merged_) {
    for (; last != previous_.end() && last->key < entry.key; ++last)
      out.push_back(ended(last->contact, tick));
    const bool persists = last != previous_.end() && last->key == entry.key;
    if (persists) ++last;
    // Sleeping touches carry over without a record: a crate asleep on the floor is not news every tick.
    if (entry.silent) continue;
    entry.contact.tick = tick;
    entry.contact.phase = persists ? ContactPhase::kPersist : ContactPhase::kBegin;
    out.push_back(entry.contact);
  }
  for (; last != previous_.end(); ++last)
    out.push_back(ended(last->contact, tick));
  std::sort(out.begin(), out.end(), contact_before);
  previous_.swap(merged_);
  current_.clear();
}

}  // namespace shiftcast
