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

std::size_t ContactTracker::KeyHash::operator()(const Key& k) const {
  std::uint64_t h = (std::uint64_t(k.a) << 32) ^ k.b;
  h ^= std::uint64_t(std::uint32_t(k.brush)) * 0x9e3779b97f4a7c15ull;
  h ^= h >> 29;
  return std::size_t(h * 0xbf58476d1ce4e5b9ull);
}

void ContactTracker::touch(const Contact& contact) {
  Contact c = contact;
  // One key per touching pair however it was found: entity pairs ordered, the level always second.
  if (c.b != kNoEntity && c.b < c.a) {
    std::swap(c.a, c.b);
    c.normal = -c.normal;
  }
  const Key key{c.a, c.b, c.b == kNoEntity ? c.brush : kNoBrush};
  auto [it, inserted] = current_.try_emplace(key, Entry{c});
  if (!inserted && c.time < it->second.contact.time) it->second.contact = c;
}

void ContactTracker::keep_alive(std::span<const EntityId> sleeping) {
  if (sleeping.empty()) return;
  const auto asleep = [&](EntityId id) { return std::binary_search(sleeping.begin(), sleeping.end(), id); };
  for (const auto& [key, entry] : previous_) {
    if (asleep(key.a) || asleep(key.b)) current_.try_emplace(key, Entry{entry.contact, true});
  }
}

void ContactTracker::forget(EntityId id) {
  for (auto it = current_.begin(); it != current_.end();) {
    it = (it->first.a == id || it->first.b == id) ? current_.erase(it) : std::next(it);
  }
}

void ContactTracker::finish(std::uint64_t tick, std::vector<Contact>& out) {
  out.clear();
  for (auto& [key, entry] : current_) {
    // Sleeping touches carry over without a record: a crate asleep on the floor is not news every tick.
    if (entry.silent) continue;
    Contact& contact = entry.contact;
    contact.tick = tick;
    contact.phase = previous_.count(key) != 0 ? ContactPhase::kPersist : ContactPhase::kBegin;
    out.push_back(contact);
  }
  for (const auto& [key, entry] : previous_) {
    if (current_.count(key) != 0) continue;
    Contact end = entry.contact;
    end.tick = tick;
    end.time = 1;  // the touch ended at some time in the tick; reported at its end
    end.phase = ContactPhase::kEnd;
    end.relative_speed = 0;
    out.push_back(end);
  }
  std::sort(out.begin(), out.end(), contact_before);
  previous_.swap(current_);
  current_.clear();
}

}  // namespace shiftcast
