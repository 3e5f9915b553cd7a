#include "server/contact_feed.hpp"

#include <boost/asio/post.hpp>

namespace shiftcast {

wire::ContactEvent to_wire(const ContactRecord& record, std::uint64_t sequence) {
  const Contact& c = record.contact;
  return wire::ContactEvent(sequence, c.tick, c.time, static_cast<std::uint8_t>(c.phase), record.a_kind,
                            record.b_kind, c.a, c.b, c.brush, wire::Vec3f(c.point.x, c.point.y, c.point.z),
                            wire::Vec3f(c.normal.x, c.normal.y, c.normal.z), c.separation, c.relative_speed);
}

// Shared with the posted fan-out tasks, which may outlive the feed (a match forgotten meanwhile). A plain
// executor, not a strand: the tasks may also outlive the io_context (destroyed with it at exit), and a
// strand's state must not (it unlinks itself from its io_context's service).
struct ContactFeed::Fanout {
  explicit Fanout(boost::asio::any_io_executor executor_in) : executor(std::move(executor_in)) {}
  const boost::asio::any_io_executor executor;  // runs one task at a time, in posting order
  std::atomic<std::size_t> pending{0};          // tasks posted and not yet run
  bool stalled = false;                         // publisher only: batches were dropped
};

ContactFeed::ContactFeed() = default;

ContactFeed::ContactFeed(boost::asio::any_io_executor fanout, std::size_t max_subscribers)
    : max_subscribers_(max_subscribers), fanout_(std::make_shared<Fanout>(std::move(fanout))) {}

ContactFeed::~ContactFeed() = default;

bool ContactFeed::add(std::shared_ptr<ContactSubscriber> subscriber) {
  std::lock_guard lock(write_mutex_);
  const std::shared_ptr<const List> current = list_.load();
  if (max_subscribers_ != 0 && current->size() >= max_subscribers_) return false;
  auto next = std::make_shared<List>(*current);
  next->push_back(std::move(subscriber));
  list_.store(std::move(next));
  return true;
}

void ContactFeed::remove(const ContactSubscriber* subscriber) {
  std::lock_guard lock(write_mutex_);
  auto next = std::make_shared<List>(*list_.load());
  std::erase_if(*next, [&](const auto& s) { return s.get() == subscriber; });
  list_.store(std::move(next));
}

bool ContactFeed::empty() const {
  return list_.load()->empty();
}

std::size_t ContactFeed::size() const {
  return list_.load()->size();
}

void ContactFeed::publish(const std::shared_ptr<const ContactBatch>& batch) {
  // One atomic load: a subscriber added meanwhile gets the next tick, one removed meanwhile may get this
  // one (it must tolerate a late batch, which it does by checking its own state on its thread).
  std::shared_ptr<const List> list = list_.load();
  if (fanout_ == nullptr) {
    for (const auto& s : *list)
      s->deliver(batch);
    return;
  }
  // The worker's whole share of the subscriptions: one post, whatever their number and filters.
  Fanout& f = *fanout_;
  if (f.stalled) {
    // Tell everyone about the gap once the fan-out has caught up, before any later batch.
    if (f.pending.load() != 0) return;
    f.stalled = false;
    f.pending.fetch_add(1);
    boost::asio::post(f.executor, [fanout = fanout_, list] {
      for (const auto& s : *list)
        s->lost_batches();
      fanout->pending.fetch_sub(1);
    });
  }
  if (f.pending.load() >= kMaxFanoutBacklog) {
    f.stalled = true;
    return;
  }
  f.pending.fetch_add(1);
  boost::asio::post(f.executor, [fanout = fanout_, list = std::move(list), batch] {
    for (const auto& s : *list)
      s->deliver(batch);
    fanout->pending.fetch_sub(1);
  });
}

void ContactFeed::end(std::uint32_t match_id) {
  std::shared_ptr<const List> list;
  {
    std::lock_guard lock(write_mutex_);
    list = list_.load();
    list_.store(std::make_shared<const List>());
  }
  auto tell = [list, match_id] {
    for (const auto& s : *list)
      s->match_ended(match_id);
  };
  if (fanout_ == nullptr) return tell();
  // Through the fan-out, so the end follows the last batch.
  boost::asio::post(fanout_->executor, std::move(tell));
}

}  // namespace shiftcast
