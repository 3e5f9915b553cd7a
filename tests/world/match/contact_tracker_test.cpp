// ContactTracker against a plain model of its contract (world/match/contact.hpp): random ticks of touches
// (duplicates, pairs given in either order, level brushes), sleepers carried silently, removed entities
// forgotten mid-tick, and the records of every tick compared field by field. The model is the rule as
// the header states it, kept in an ordered map: the first arrival of a pair in a tick decides the entry,
// a later touch replaces its contact only when strictly earlier, a carried pair never replaces a touch;
// begin or persist for this tick's non-silent pairs, end for last tick's pairs not seen this tick.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

#include "tests/support/seeded_random.hpp"
#include "world/match/contact.hpp"

namespace shiftcast {
namespace {

class ModelTracker {
 public:
  void touch(Contact c) {
    if (c.b != kNoEntity && c.b < c.a) {
      std::swap(c.a, c.b);
      c.normal = -c.normal;
    }
    const Key key{c.a, c.b, c.b == kNoEntity ? c.brush : kNoBrush};
    const auto it = current_.find(key);
    if (it == current_.end()) {
      current_.emplace(key, Entry{c, false});
    } else if (c.time < it->second.contact.time) {
      it->second.contact = c;
    }
  }
  void keep_alive(const std::vector<EntityId>& sleeping) {
    for (const auto& [key, entry] : previous_) {
      const bool asleep = std::binary_search(sleeping.begin(), sleeping.end(), std::get<0>(key)) ||
                          std::binary_search(sleeping.begin(), sleeping.end(), std::get<1>(key));
      if (asleep && !current_.contains(key)) current_.emplace(key, Entry{entry.contact, true});
    }
  }
  void forget(EntityId id) {
    std::erase_if(current_, [id](const auto& kv) {
      return std::get<0>(kv.first) == id || std::get<1>(kv.first) == id;
    });
  }
  std::vector<Contact> finish(std::uint64_t tick) {
    std::vector<Contact> out;
    for (auto& [key, entry] : current_) {
      if (entry.silent) continue;
      entry.contact.tick = tick;
      entry.contact.phase = previous_.contains(key) ? ContactPhase::kPersist : ContactPhase::kBegin;
      out.push_back(entry.contact);
    }
    for (const auto& [key, entry] : previous_) {
      if (current_.contains(key)) continue;
      Contact end = entry.contact;
      end.tick = tick;
      end.time = 1;
      end.phase = ContactPhase::kEnd;
      end.relative_speed = 0;
      out.push_back(end);
    }
    std::sort(out.begin(), out.end(), contact_before);
    previous_ = std::move(current_);
    current_.clear();
    return out;
  }

 private:
  using Key = std::tuple<EntityId, EntityId, std::int32_t>;
  struct Entry {
    Contact contact;
    bool silent;
  };
  std::map<Key, Entry> current_, previous_;
};

TEST(ContactTracker, AgreesWithTheModelOverRandomTicks) {
  std::mt19937 rng(1717);
  ContactTracker tracker;
  ModelTracker model;
  std::vector<Contact> out;
  std::size_t records = 0, ends = 0, persists = 0, silent_ticks = 0;
  for (std::uint64_t tick = 1; tick <= 3000; ++tick) {
    const int touches = uniform_int(rng, 0, 24);
    std::vector<EntityId> sleeping;
    for (EntityId id = 1; id <= 12; ++id) {
      if (uniform_int(rng, 0, 3) == 0) sleeping.push_back(id);
    }
    const bool carry_first = uniform_int(rng, 0, 1) == 0;
    if (carry_first) {
      tracker.keep_alive(sleeping);
      model.keep_alive(sleeping);
    }
    for (int i = 0; i < touches; ++i) {
      Contact c;
      c.a = EntityId(uniform_int(rng, 1, 12));
      c.b = uniform_int(rng, 0, 2) == 0 ? kNoEntity : EntityId(uniform_int(rng, 1, 12));
      if (c.b == c.a) c.b = kNoEntity;
      c.brush = std::int32_t(uniform_int(rng, 0, 3));
      c.time = float(uniform_int(rng, 0, 4)) / 4.0f;  // ties on purpose
      c.point = {uniform_float(rng, -10, 10), uniform_float(rng, -10, 10), 0};
      c.normal = {0, 0, uniform_int(rng, 0, 1) ? 1.0f : -1.0f};
      c.relative_speed = uniform_float(rng, 0, 100);
      tracker.touch(c);
      model.touch(c);
      if (uniform_int(rng, 0, 40) == 0) {
        const EntityId gone = EntityId(uniform_int(rng, 1, 12));
        tracker.forget(gone);
        model.forget(gone);
      }
    }
    if (!carry_first) {
      tracker.keep_alive(sleeping);
      model.keep_alive(sleeping);
    }
    tracker.finish(tick, out);
    const std::vector<Contact> expected = model.finish(tick);
    ASSERT_EQ(out, expected) << "tick " << tick;
    records += out.size();
    for (const Contact& c : out) {
      ends += c.phase == ContactPhase::kEnd;
      persists += c.phase == ContactPhase::kPersist;
    }
    silent_ticks += tracker.active() > out.size() ? 1 : 0;
  }
  // The run exercised every path: begins, persists, ends, and pairs carried silently.
  EXPECT_GT(records, 10000u);
  EXPECT_GT(ends, 1000u);
  EXPECT_GT(persists, 1000u);
  EXPECT_GT(silent_ticks, 100u);
}

}  // namespace
}  // namespace shiftcast
