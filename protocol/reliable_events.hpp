// Reliable, ordered contact events over the unreliable packet channel. The sender numbers events from 1
// and keeps each one until the peer's cumulative acknowledgement (ClientFrame.events_received: every
// event below it was delivered) passes it. Every outgoing frame carries the oldest unacknowledged events
// that fit: at snapshot rates that costs a few resends of each event and needs no timers, and an event
// is never later than the first frame after it got through. The receiver delivers each event once, in
// order, and buffers a bounded number that arrive ahead of a gap (reordered frames).
//
//   sender.push(to_wire(record, sender.next_sequence()));   // SlowConsumer: the peer fell too far behind
//   auto events = sender.oldest(byte_budget);              // into the frame, oldest first
//   sender.on_ack(frame.events_received());                  // when the peer's frame arrives
//
//   receiver.receive(events_from_frame);
//   for (const auto& e : receiver.take()) ...                // in order, exactly once
//   frame.events_received = receiver.events_received();
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "protocol/shiftcast_generated.h"

namespace shiftcast {

inline constexpr std::size_t kContactEventBytes = sizeof(wire::ContactEvent);

class ReliableEventSender {
 public:
  explicit ReliableEventSender(std::size_t max_pending) : max_pending_(max_pending) {}

  std::uint64_t next_sequence() const { return next_; }
  // Queues `event`, whose sequence must be next_sequence() (BadArgument otherwise). SlowConsumer, and
  // nothing queued, when max_pending events already wait for their acknowledgement.
  wire::ErrorCode push(const wire::ContactEvent& event);
  // The peer's cumulative acknowledgement. Older and repeated ones change nothing; one beyond what was
  // ever sent is a lying peer: BadArgument, and only what was sent is released.
  wire::ErrorCode on_ack(std::uint64_t events_received);
  // The oldest unacknowledged events that fit `byte_budget` (kContactEventBytes each), oldest first.
  // Valid until the next push or on_ack.
  std::span<const wire::ContactEvent> oldest(std::size_t byte_budget) const;
  // Every unacknowledged event, oldest first (the bit-packed frame takes the prefix that fits). Valid
  // until the next push or on_ack.
  std::span<const wire::ContactEvent> unacknowledged() const { return {queue_.data() + head_, pending()}; }
  std::size_t pending() const { return queue_.size() - head_; }
  std::uint64_t acked() const { return acked_; }  // the newest events_received seen

 private:
  std::size_t max_pending_;
  std::uint64_t next_ = 1;
  std::uint64_t acked_ = 1;
  std::vector<wire::ContactEvent> queue_;  // [head_, end) unacknowledged, ascending sequence
  std::size_t head_ = 0;
};

struct ReceiverCounters {
  std::uint64_t delivered = 0;
  std::uint64_t duplicates = 0;  // an event already delivered or already buffered
  std::uint64_t gaps = 0;        // an event that arrived ahead of the next expected one
  std::uint64_t overflow = 0;    // ahead by more than the buffer holds: dropped, the sender resends it
};

class ReliableEventReceiver {
 public:
  explicit ReliableEventReceiver(std::size_t max_buffered) : max_buffered_(max_buffered) {}

  void receive(const wire::ContactEvent& event);
  void receive(std::span<const wire::ContactEvent> events);
  // Every event delivered since the last take, in sequence order.
  std::vector<wire::ContactEvent> take();
  // The next sequence expected: every event below it was delivered (ClientFrame.events_received).
  std::uint64_t events_received() const { return next_; }
  std::size_t buffered() const { return ahead_.size(); }
  const ReceiverCounters& counters() const { return counters_; }

 private:
  std::size_t max_buffered_;
  std::uint64_t next_ = 1;
  std::map<std::uint64_t, wire::ContactEvent> ahead_;  // arrived before an older one
  std::vector<wire::ContactEvent> delivered_;
  ReceiverCounters counters_;
};

}  // namespace shiftcast
