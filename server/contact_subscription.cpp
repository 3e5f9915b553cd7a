#include "server/contact_subscription.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <utility>

namespace shiftcast {

bool ContactFilter::passes(const ContactRecord& r) const {
  if (kinds != 0 && (kinds & ((1u << r.a_kind) | (1u << r.b_kind))) == 0) return false;
  if (phases != 0 && (phases & (1u << static_cast<unsigned>(r.contact.phase))) == 0) return false;
  if (entities.empty()) return true;
  const auto named = [&](EntityId id) {
    return id != kNoEntity && std::binary_search(entities.begin(), entities.end(), id);
  };
  return named(r.contact.a) || named(r.contact.b);
}

ContactSubscription::ContactSubscription(std::uint64_t id, ContactFilter filter,
                                         std::weak_ptr<ContactSink> sink,
                                         boost::asio::any_io_executor executor)
    : id_(id), filter_(std::move(filter)), sink_(std::move(sink)), executor_(std::move(executor)) {}

bool ContactSubscription::any_passes(const ContactBatch& batch) const {
  return std::any_of(batch.records.begin(), batch.records.end(),
                     [&](const auto& r) { return filter_.passes(r); });
}

void ContactSubscription::deliver(std::shared_ptr<const ContactBatch> batch) {
  // The fan-out (an RPC thread): a scan that stops at the first record that passes, and at most one post.
  if (cancelled_.load() || overflowed_.load() || batch == nullptr || !any_passes(*batch)) return;
  if (posted_.fetch_add(1) >= kMaxPostedBatches) {
    posted_.fetch_sub(1);
    return overflow();
  }
  boost::asio::post(executor_, [self = shared_from_this(), batch = std::move(batch)] {
    self->posted_.fetch_sub(1);
    if (const auto sink = self->sink_.lock()) sink->on_contacts(self->id_, batch);
  });
}

void ContactSubscription::lost_batches() {
  // A gap in the stream: the subscription ends rather than number events across it.
  if (cancelled_.load() || overflowed_.load()) return;
  overflow();
}

void ContactSubscription::overflow() {
  overflowed_.store(true);
  boost::asio::post(executor_, [self = shared_from_this()] {
    if (const auto sink = self->sink_.lock()) sink->on_overflow(self->id_);
  });
}

void ContactSubscription::match_ended(std::uint32_t) {
  if (cancelled_.load()) return;
  boost::asio::post(executor_, [self = shared_from_this()] {
    if (const auto sink = self->sink_.lock()) sink->on_match_ended(self->id_);
  });
}

}  // namespace shiftcast
