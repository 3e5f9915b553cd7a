#include "protocol/reliable_events.hpp"

#include <algorithm>

namespace shiftcast {

wire::ErrorCode ReliableEventSender::push(const wire::ContactEvent& event) {
  if (event.sequence() != next_) return wire::ErrorCode::BadArgument;
  if (pending() >= max_pending_) return wire::ErrorCode::SlowConsumer;
  // Compact lazily: the acknowledged prefix is dropped once it is at least half the storage, so each
  // event is moved O(1) times on average.
  if (head_ > 0 && head_ * 2 >= queue_.size()) {
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head_));
    carrier_.erase(carrier_.begin(), carrier_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
  queue_.push_back(event);
  carrier_.push_back({});
  ++next_;
  return wire::ErrorCode::Ok;
}

wire::ErrorCode ReliableEventSender::on_ack(std::uint64_t events_received) {
  const wire::ErrorCode result = events_received > next_ ? wire::ErrorCode::BadArgument : wire::ErrorCode::Ok;
  const std::uint64_t upto = std::min(events_received, next_);
  if (upto <= acked_) return result;
  acked_ = upto;
  while (head_ < queue_.size() && queue_[head_].sequence() < upto)
    ++head_;
  if (head_ == queue_.size()) {
    queue_.clear();
    carrier_.clear();
    head_ = 0;
  }
  return result;
}

void ReliableEventSender::due(std::uint64_t newest_acked_packet, std::vector<wire::ContactEvent>& out) const {
  out.clear();
  for (std::size_t i = head_; i < queue_.size(); ++i) {
    const Carried& c = carrier_[i];
    if (c.sends < redundant_sends_ || c.packet <= newest_acked_packet) out.push_back(queue_[i]);
  }
}

void ReliableEventSender::sent(std::span<const wire::ContactEvent> events, std::uint64_t packet_sequence) {
  // Both ascending by sequence: one merge-like pass.
  std::size_t i = head_;
  for (const wire::ContactEvent& e : events) {
    while (i < queue_.size() && queue_[i].sequence() < e.sequence())
      ++i;
    if (i < queue_.size() && queue_[i].sequence() == e.sequence()) {
      carrier_[i].packet = packet_sequence;
      ++carrier_[i].sends;
    }
  }
}

std::span<const wire::ContactEvent> ReliableEventSender::oldest(std::size_t byte_budget) const {
  const std::size_t count = std::min(pending(), byte_budget / kContactEventBytes);
  return {queue_.data() + head_, count};
}

void ReliableEventReceiver::receive(const wire::ContactEvent& event) {
  const std::uint64_t sequence = event.sequence();
  if (sequence < next_ || ahead_.contains(sequence)) {
    ++counters_.duplicates;
    return;
  }
  if (sequence > next_) {
    if (sequence - next_ > max_buffered_) {
      ++counters_.overflow;
      return;
    }
    ++counters_.gaps;
    ahead_.emplace(sequence, event);
    return;
  }
  delivered_.push_back(event);
  ++counters_.delivered;
  ++next_;
  // The gap just closed may free a run of buffered events.
  for (auto it = ahead_.begin(); it != ahead_.end() && it->first == next_; it = ahead_.erase(it)) {
    delivered_.push_back(it->second);
    ++counters_.delivered;
    ++next_;
  }
}

void ReliableEventReceiver::receive(std::span<const wire::ContactEvent> events) {
  for (const auto& e : events)
    receive(e);
}

std::vector<wire::ContactEvent> ReliableEventReceiver::take() {
  std::vector<wire::ContactEvent> out;
  out.swap(delivered_);
  return out;
}

}  // namespace shiftcast
