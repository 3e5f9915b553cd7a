#include "server/contact_feed.hpp"

namespace shiftcast {

wire::ContactEvent to_wire(const ContactRecord& record, std::uint64_t sequence) {
  const Contact& c = record.contact;
  return wire::ContactEvent(sequence, c.tick, c.time, static_cast<std::uint8_t>(c.phase), record.a_kind,
                            record.b_kind, c.a, c.b, c.brush, wire::Vec3f(c.point.x, c.point.y, c.point.z),
                            wire::Vec3f(c.normal.x, c.normal.y, c.normal.z), c.separation, c.relative_speed);
}

void ContactFeed::add(std::shared_ptr<ContactSubscriber> subscriber) {
  std::lock_guard lock(write_mutex_);
  auto next = std::make_shared<List>(*list_.load());
  next->push_back(std::move(subscriber));
  list_.store(std::move(next));
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

void ContactFeed::publish(const std::shared_ptr<const ContactBatch>& batch) {
  // One atomic load: a subscriber added meanwhile gets the next tick, one removed meanwhile may get this
  // one (it must tolerate a late batch, which it does by checking its own state on its thread).
  const std::shared_ptr<const List> list = list_.load();
  for (const auto& s : *list)
    s->deliver(batch);
}

void ContactFeed::end(std::uint32_t match_id) {
  std::shared_ptr<const List> list;
  {
    std::lock_guard lock(write_mutex_);
    list = list_.load();
    list_.store(std::make_shared<const List>());
  }
  for (const auto& s : *list)
    s->match_ended(match_id);
}

}  // namespace shiftcast
