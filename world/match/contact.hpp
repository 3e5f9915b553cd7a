// Contacts: the product a match streams to players and services. One record for every touch that
// starts, persists or ends in a tick, between two entities or an entity and a level brush.
//
//   ContactTracker tracker;
//   tracker.touch(contact);          // during the tick, every touch found (duplicates keep the earliest)
//   tracker.keep_alive(sleepers);    // pairs of sleeping entities carry over silently
//   tracker.finish(tick, out);       // begin / persist for this tick's touches, end for the vanished ones
//
// Order is deterministic: by time within the tick, then a, then b, then brush, then phase. A pair is
// keyed by (a, b, brush) with a < b for entity pairs and b = kNoEntity for the level, so the same touch
// is the same key however it was found.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collision/trace_result.hpp"
#include "collision/vec3.hpp"
#include "world/match/entity.hpp"

namespace shiftcast {

enum class ContactPhase : std::uint8_t { kBegin, kPersist, kEnd };
const char* to_string(ContactPhase phase);

struct Contact {
  std::uint64_t tick = 0;
  float time = 0;  // fraction of the tick at which the touch happened (0 for resting touches)
  ContactPhase phase = ContactPhase::kBegin;
  EntityId a = kNoEntity;
  EntityId b = kNoEntity;  // kNoEntity: the level, then `brush` names the brush
  std::int32_t brush = kNoBrush;
  Vec3 point{};
  Vec3 normal{};             // unit, from a towards b (towards the level surface for level touches)
  float separation = 0;      // >= 0 touching; < 0 overlapping (an invariant violation, also counted)
  float relative_speed = 0;  // closing speed along the normal at the touch, units/s (>= 0 approaching)

  bool operator==(const Contact&) const = default;
};

// The deterministic order above.
bool contact_before(const Contact& x, const Contact& y);

class ContactTracker {
 public:
  void touch(const Contact& contact);
  // Writes this tick's records into `out` (cleared first), sorted; ends for pairs touched last tick and
  // not this one carry their last point and normal. Touches from sleeping entities are kept by
  // `keep_alive` so a crate asleep on the floor does not end its contact.
  void finish(std::uint64_t tick, std::vector<Contact>& out);
  // Carries every pair that involves a sleeping entity (ids sorted ascending) into this tick without a
  // record: one pass over the pairs for all sleepers.
  void keep_alive(std::span<const EntityId> sleeping);
  // Ends every pair that involves a removed entity at the next finish().
  void forget(EntityId id);
  std::size_t active() const { return previous_.size(); }

 private:
  struct Key {
    EntityId a, b;
    std::int32_t brush;
    auto operator<=>(const Key&) const = default;
  };
  struct Entry {
    Key key;
    Contact contact;
    bool silent = false;  // carried by keep_alive: kept, not reported
  };
  // Flat and sorted instead of hashed (issue 17: the node maps cost an allocation per carried contact per
  // tick). This tick's touches accumulate in arrival order and are merged by key in finish(): the first
  // arrival of a key decides the entry (and whether it is silent), a later one replaces its contact only
  // when strictly earlier in the tick, as a map's try_emplace would.
  std::vector<Entry> current_;        // arrival order until finish()
  std::vector<Entry> previous_;       // last tick's, sorted by key, one per key
  std::vector<Entry> merged_;         // finish()'s scratch (last tick's buffer, reused)
  std::vector<std::uint32_t> order_;  // finish()'s scratch: indices of current_ sorted by key
};

}  // namespace shiftcast
