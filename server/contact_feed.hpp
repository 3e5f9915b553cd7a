// ContactFeed: how a match's contacts leave its worker thread. After every tick the match publishes one
// immutable ContactBatch; every subscriber (RPC SubscribeContacts streams) gets a shared pointer to it
// and must return at once (post the work to its own thread). Subscribing and unsubscribing may happen
// on any thread and never block a tick for longer than a pointer copy.
//
//   feed.add(subscriber);                           // any thread
//   feed.publish(std::make_shared<ContactBatch>(...));   // the match's worker, once per tick
//   feed.remove(subscriber.get());                  // any thread
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "shiftcast_generated.h"
#include "world/contact.hpp"
#include "world/entity.hpp"

namespace shiftcast {

// Wire kinds of the two sides of a contact: EntityKind values, and kKindLevel for the level.
inline constexpr std::uint8_t kKindLevel = 3;

struct ContactRecord {
  Contact contact;
  std::uint8_t a_kind = 0;
  std::uint8_t b_kind = kKindLevel;
};

struct ContactBatch {
  std::uint32_t match_id = 0;
  std::uint64_t tick = 0;
  std::vector<ContactRecord> records;  // the tick's contacts, deterministic order
};

// The one conversion from a contact to its wire form, for UDP players and RPC subscribers alike.
wire::ContactEvent to_wire(const ContactRecord& record, std::uint64_t sequence);

class ContactSubscriber {
 public:
  virtual ~ContactSubscriber() = default;
  // On the match's worker: must not block. `batch` stays valid as long as it is held.
  virtual void deliver(std::shared_ptr<const ContactBatch> batch) = 0;
  // The match ended (EndMatch or shutdown): no more batches will come.
  virtual void match_ended(std::uint32_t match_id) = 0;
};

class ContactFeed {
 public:
  void add(std::shared_ptr<ContactSubscriber> subscriber);
  void remove(const ContactSubscriber* subscriber);
  bool empty() const;
  void publish(const std::shared_ptr<const ContactBatch>& batch);
  void end(std::uint32_t match_id);  // tells every subscriber and drops them

 private:
  using List = std::vector<std::shared_ptr<ContactSubscriber>>;
  mutable std::mutex write_mutex_;  // serialises add/remove (copy-on-write); publish only loads
  std::atomic<std::shared_ptr<const List>> list_{std::make_shared<const List>()};
};

}  // namespace shiftcast
