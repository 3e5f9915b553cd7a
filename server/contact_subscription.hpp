// ContactSubscription: one RPC SubscribeContacts stream, as the match's ContactFeed sees it. deliver() runs
// on the feed's fan-out executor (an RPC thread, never the match's worker), so the filtering of a tick's
// contacts costs the match nothing whatever the number of subscriptions: it checks whether anything in
// the batch passes the filter and, if so, posts the batch to the connection's executor, where the
// connection numbers the events and writes them. The number of batches posted and not yet taken is
// bounded: a connection thread that falls that far behind gets one overflow notice instead of more work,
// and so does a subscription whose feed had to drop batches (lost_batches).
//
//   auto sub = std::make_shared<ContactSubscription>(id, filter, sink, strand);
//   if (!match->contact_feed().add(sub)) refuse(...);   // the connection's thread; the match is full
//   ...
//   sub->cancel();                           // no more posts after this returns
//   match->contact_feed().remove(sub.get());
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <memory>
#include <vector>

#include "server/contact_feed.hpp"

namespace shiftcast {

// SubscribeContacts' filter: kinds bit k = EntityKind k (3: the level) on either side; phases bit k =
// ContactPhase k; entities: either side is one of them. Zero (or empty) accepts everything.
struct ContactFilter {
  std::vector<EntityId> entities;  // sorted ascending
  std::uint8_t kinds = 0;
  std::uint8_t phases = 0;

  bool passes(const ContactRecord& record) const;
};

inline constexpr std::uint8_t kAllContactKinds = 0x0f;
inline constexpr std::uint8_t kAllContactPhases = 0x07;
// Batches posted to a connection and not yet taken before the subscription counts as overflowed (about
// four seconds of ticks at 64 Hz): far beyond any connection thread that is merely busy.
inline constexpr int kMaxPostedBatches = 256;

// Where a subscription's batches go, on the executor given to the subscription.
class ContactSink {
 public:
  virtual ~ContactSink() = default;
  virtual void on_contacts(std::uint64_t subscription, const std::shared_ptr<const ContactBatch>& batch) = 0;
  virtual void on_match_ended(std::uint64_t subscription) = 0;
  virtual void on_overflow(std::uint64_t subscription) = 0;  // kMaxPostedBatches were waiting
};

class ContactSubscription final : public ContactSubscriber,
                                  public std::enable_shared_from_this<ContactSubscription> {
 public:
  ContactSubscription(std::uint64_t id, ContactFilter filter, std::weak_ptr<ContactSink> sink,
                      boost::asio::any_io_executor executor);

  void deliver(std::shared_ptr<const ContactBatch> batch) override;
  void match_ended(std::uint32_t match_id) override;
  void lost_batches() override;
  // Any thread: nothing more is posted after this returns (posts already made still run and are ignored
  // by the sink, which has forgotten the subscription).
  void cancel() { cancelled_.store(true); }

  std::uint64_t id() const { return id_; }
  const ContactFilter& filter() const { return filter_; }

 private:
  bool any_passes(const ContactBatch& batch) const;
  void overflow();

  const std::uint64_t id_;
  const ContactFilter filter_;
  const std::weak_ptr<ContactSink> sink_;
  const boost::asio::any_io_executor executor_;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> overflowed_{false};
  std::atomic<int> posted_{0};
};

}  // namespace shiftcast
