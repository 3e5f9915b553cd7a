// RpcConnection's contact subscriptions: SubscribeContacts adds a ContactSubscription to the match's feed
// (at most max_subscriptions_per_connection here and the match's own bound there, else RpcError
// TooManyConnections); the batches it posts here are filtered, numbered per subscription from 1 without gaps,
// and pushed as ContactPush frames carrying the subscribe request's id. A push that finds more than
// subscriber_max_pending_bytes still queued cuts the subscription instead (RpcError SlowConsumer), so no
// event is ever numbered and then dropped.
#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "server/rpc_connection.hpp"

namespace shiftcast {

void RpcConnection::subscribe(const wire::SubscribeContacts& request, std::uint64_t request_id) {
  const std::shared_ptr<MatchHandle> match = shared_->directory.find(request.match_id());
  if (match == nullptr || match->ended()) {
    return refuse(wire::ErrorCode::UnknownMatch, request_id, fmt::format("no match {}", request.match_id()));
  }
  ContactFilter filter;
  filter.kinds = request.kinds();
  filter.phases = request.phases();
  if ((filter.kinds & ~kAllContactKinds) != 0 || (filter.phases & ~kAllContactPhases) != 0) {
    return refuse(wire::ErrorCode::BadArgument, request_id,
                  fmt::format("kinds 0x{:x} or phases 0x{:x} name bits that mean nothing", filter.kinds,
                              filter.phases));
  }
  if (const auto* entities = request.entities()) {
    if (entities->size() > kMaxSubscriptionEntities) {
      return refuse(
          wire::ErrorCode::BadArgument, request_id,
          fmt::format("{} entities is over the limit of {}", entities->size(), kMaxSubscriptionEntities));
    }
    filter.entities.assign(entities->begin(), entities->end());
    if (std::find(filter.entities.begin(), filter.entities.end(), kNoEntity) != filter.entities.end()) {
      return refuse(wire::ErrorCode::BadArgument, request_id, "entity id 0 names no entity");
    }
    std::sort(filter.entities.begin(), filter.entities.end());
  }
  const std::size_t per_connection = std::size_t(shared_->settings.max_subscriptions_per_connection);
  if (subscriptions_.size() >= per_connection) {
    return refuse(wire::ErrorCode::TooManyConnections, request_id,
                  fmt::format("a connection holds at most {} subscriptions", per_connection));
  }
  const std::uint64_t id = next_subscription_++;
  auto subscriber =
      std::make_shared<ContactSubscription>(id, std::move(filter), weak_from_this(), socket_.get_executor());
  // In the feed before the reply leaves, so a client that has the reply gets every later tick. The feed's
  // posts run on this strand after this handler, so the reply still precedes the first push.
  if (!match->contact_feed().add(subscriber)) {
    return refuse(wire::ErrorCode::TooManyConnections, request_id,
                  fmt::format("match {} has its maximum of {} subscriptions", match->id(),
                              match->contact_feed().max_subscribers()));
  }
  subscriptions_[id] = Subscription{subscriber, match, match->id(), request_id, 0};
  send(wire::Message::SubscribeContactsReply, wire::CreateSubscribeContactsReply(fbb_, id).Union(),
       request_id);
  // A match that ended while we subscribed may have told its feed before the add: ask again.
  if (match->ended()) on_match_ended(id);
}

void RpcConnection::unsubscribe(const wire::UnsubscribeContacts& request, std::uint64_t request_id) {
  const auto it = subscriptions_.find(request.subscription_id());
  if (it == subscriptions_.end()) {
    return refuse(wire::ErrorCode::BadArgument, request_id,
                  fmt::format("no subscription {} on this connection", request.subscription_id()));
  }
  it->second.subscriber->cancel();
  if (const auto match = it->second.match.lock()) match->contact_feed().remove(it->second.subscriber.get());
  subscriptions_.erase(it);
  send(wire::Message::UnsubscribeContactsReply,
       wire::CreateUnsubscribeContactsReply(fbb_, request.subscription_id()).Union(), request_id);
}

void RpcConnection::on_contacts(std::uint64_t subscription,
                                const std::shared_ptr<const ContactBatch>& batch) {
  const auto it = subscriptions_.find(subscription);
  if (it == subscriptions_.end() || closing_) return;
  Subscription& s = it->second;
  const ContactFilter& filter = s.subscriber->filter();
  const auto passing = std::count_if(batch->records.begin(), batch->records.end(),
                                     [&](const ContactRecord& r) { return filter.passes(r); });
  if (passing == 0) return;
  if (pending_bytes() > shared_->settings.subscriber_max_pending_bytes) {
    return cut(it, wire::ErrorCode::SlowConsumer,
               fmt::format("subscription {}: {} bytes waiting to be written, over the limit of {}",
                           subscription, pending_bytes(), shared_->settings.subscriber_max_pending_bytes));
  }
  std::size_t next = 0;
  while (next < batch->records.size()) {
    events_.clear();
    for (; next < batch->records.size() && events_.size() < kMaxEventsPerPush; ++next) {
      if (filter.passes(batch->records[next])) events_.push_back(to_wire(batch->records[next], ++s.sequence));
    }
    if (events_.empty()) break;
    shared_->metrics.contact_events->add(events_.size());
    fbb_.Clear();
    const auto vector = fbb_.CreateVectorOfStructs(events_);
    send(wire::Message::ContactPush, wire::CreateContactPush(fbb_, subscription, s.match_id, vector).Union(),
         s.request_id);
  }
}

void RpcConnection::on_match_ended(std::uint64_t subscription) {
  const auto it = subscriptions_.find(subscription);
  if (it == subscriptions_.end() || closing_) return;
  const std::uint64_t request_id = it->second.request_id;
  const std::uint32_t match_id = it->second.match_id;
  it->second.subscriber->cancel();
  if (const auto match = it->second.match.lock()) match->contact_feed().remove(it->second.subscriber.get());
  subscriptions_.erase(it);
  // Not a refusal: the stream's normal end, told with the code that says why.
  send_error(wire::ErrorCode::MatchEnded, request_id,
             fmt::format("match {} ended: subscription {} is closed", match_id, subscription));
}

void RpcConnection::on_overflow(std::uint64_t subscription) {
  const auto it = subscriptions_.find(subscription);
  if (it == subscriptions_.end() || closing_) return;
  cut(it, wire::ErrorCode::SlowConsumer,
      fmt::format("subscription {}: {} batches were waiting for this connection's thread", subscription,
                  kMaxPostedBatches));
}

void RpcConnection::cut(std::map<std::uint64_t, Subscription>::iterator it, wire::ErrorCode code,
                        std::string_view detail) {
  const std::uint64_t request_id = it->second.request_id;
  it->second.subscriber->cancel();
  if (const auto match = it->second.match.lock()) match->contact_feed().remove(it->second.subscriber.get());
  subscriptions_.erase(it);
  refuse(code, request_id, detail);
}

void RpcConnection::drop_subscriptions() {
  for (auto& [id, s] : subscriptions_) {
    s.subscriber->cancel();
    if (const auto match = s.match.lock()) match->contact_feed().remove(s.subscriber.get());
  }
  subscriptions_.clear();
}

}  // namespace shiftcast
