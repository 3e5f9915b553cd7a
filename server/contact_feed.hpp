// ContactFeed: how a match's contacts leave its worker thread. After every tick the match publishes one
// immutable ContactBatch. With a fan-out executor (the server's: an RPC thread's io_context) publishing
// costs the worker one post, whatever the number of subscribers: the fan-out hands the shared
// batch to every subscriber, which filters it there and posts what passes to its own connection. Without
// one (tests that step a match by hand) every subscriber gets the batch on the publishing thread.
// Subscribing and unsubscribing may happen on any thread and never block a tick for longer than a
// pointer copy.
//
//   ContactFeed feed(rpc_context.get_executor(), 1024);  // at most 1024 subscribers
//   if (!feed.add(subscriber)) refuse(...);             // any thread; false: the feed is full
//   feed.publish(std::make_shared<ContactBatch>(...));  // the match's worker, once per tick
//   feed.remove(subscriber.get());                      // any thread
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "protocol/shiftcast_generated.h"
#include "world/match/contact.hpp"
#include "world/match/entity.hpp"

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

// Batches handed to the fan-out executor and not yet fanned out: beyond it (about four seconds of ticks
// at 64 Hz) the RPC side is hopelessly behind; the worker stops posting and every subscriber is told it
// lost batches (lost_batches) once the fan-out caught up.
inline constexpr std::size_t kMaxFanoutBacklog = 256;

class ContactSubscriber {
 public:
  virtual ~ContactSubscriber() = default;
  // On the fan-out executor (or the publisher's thread without one): must not block. `batch` stays
  // valid as long as it is held.
  virtual void deliver(std::shared_ptr<const ContactBatch> batch) = 0;
  // The match ended (EndMatch or shutdown): no more batches will come. After every batch.
  virtual void match_ended(std::uint32_t match_id) = 0;
  // Batches were dropped before reaching this subscriber (the fan-out fell kMaxFanoutBacklog behind).
  virtual void lost_batches() = 0;
};

class ContactFeed {
 public:
  // Delivers on the publishing thread; no bound on subscribers.
  ContactFeed();
  // Fans out on `fanout`, which must run handlers one at a time in posting order (an io_context run by
  // one thread, as every RPC thread's is), so batches keep their tick order; at most `max_subscribers`
  // (0: no bound).
  ContactFeed(boost::asio::any_io_executor fanout, std::size_t max_subscribers);
  ~ContactFeed();
  ContactFeed(const ContactFeed&) = delete;
  ContactFeed& operator=(const ContactFeed&) = delete;

  // False (and nothing added) when the feed holds max_subscribers already.
  bool add(std::shared_ptr<ContactSubscriber> subscriber);
  void remove(const ContactSubscriber* subscriber);
  bool empty() const;
  std::size_t size() const;
  std::size_t max_subscribers() const { return max_subscribers_; }
  // The publisher's thread only (the match's worker): O(1) with a fan-out executor.
  void publish(const std::shared_ptr<const ContactBatch>& batch);
  void end(std::uint32_t match_id);  // tells every subscriber (after every batch) and drops them

 private:
  using List = std::vector<std::shared_ptr<ContactSubscriber>>;
  struct Fanout;
  mutable std::mutex write_mutex_;  // serialises add/remove (copy-on-write); publish only loads
  std::atomic<std::shared_ptr<const List>> list_{std::make_shared<const List>()};
  std::size_t max_subscribers_ = 0;
  std::shared_ptr<Fanout> fanout_;  // null: inline delivery
};

}  // namespace shiftcast
