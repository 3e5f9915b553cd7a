// Reliable, ordered contact events over the unreliable packet channel. The sender numbers events from 1
// and keeps each one until the peer's cumulative acknowledgement (ClientFrame.events_received: every
// event below it was delivered) passes it. A frame carries the oldest unacknowledged events that are due:
// each event rides in the first `redundant_sends` frames it fits, and after that only once the packet
// that last carried it is settled (the peer acknowledged it, or a newer one), never while it may still
// arrive. One send (the default) costs each event once on a clean link; a lost frame then holds the events
// behind it back about a round trip, until its loss is known. More sends buy that round trip back on
// lossy links: a hole then needs that many frames in a row lost (at 5% loss and three sends, 1 in 8,000).
// (Resending every unacknowledged event in every frame, as before version 4, cost nothing at 32 players,
// but at 768 on two cores the acknowledgements lag, every frame filled with resends, and writing them took
// a third of the server.) The receiver delivers each event once, in order, and buffers a bounded number
// that arrive ahead of a gap (reordered frames).
//
//   ReliableEventSender sender(max_pending, redundant_sends);
//
//   sender.push(to_wire(record, sender.next_sequence()));   // SlowConsumer: the peer fell too far behind
//   sender.due(newest_acked_packet, events);                 // oldest first; write the prefix that fits
//   sender.sent(events_written, packet_sequence);            // the frame's packet carries them
//   sender.on_ack(frame.events_received());                  // when the peer's frame arrives
//
//   receiver.receive(events_from_frame);
//   for (const auto& e : receiver.take()) ...                // in order, exactly once
//   frame.events_received = receiver.events_received();
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "protocol/shiftcast_generated.h"

namespace shiftcast {

inline constexpr std::size_t kContactEventBytes = sizeof(wire::ContactEvent);
// Frames an unacknowledged event rides in back to back before it waits for its packet to settle
// (ConnectionSettings::event_sends, the server's [match] event_sends).
inline constexpr int kDefaultEventSends = 1;
inline constexpr int kMaxEventSends = 4;

class ReliableEventSender {
 public:
  // `redundant_sends` is clamped to 1..kMaxEventSends.
  explicit ReliableEventSender(std::size_t max_pending, int redundant_sends = kDefaultEventSends)
      : max_pending_(max_pending), redundant_sends_(std::clamp(redundant_sends, 1, kMaxEventSends)) {}

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
  // Every unacknowledged event, oldest first. Valid until the next push or on_ack.
  std::span<const wire::ContactEvent> unacknowledged() const { return {queue_.data() + head_, pending()}; }
  // The unacknowledged events due, oldest first, into `out` (cleared): sent fewer than
  // `redundant_sends` times, or last sent in a packet no newer than `newest_acked_packet` (the newest
  // of our packets the peer acknowledged).
  void due(std::uint64_t newest_acked_packet, std::vector<wire::ContactEvent>& out) const;
  // `events` (what a frame took of due()'s, ascending) went out in packet `packet_sequence`.
  void sent(std::span<const wire::ContactEvent> events, std::uint64_t packet_sequence);
  std::size_t pending() const { return queue_.size() - head_; }
  std::uint64_t acked() const { return acked_; }  // the newest events_received seen

 private:
  std::size_t max_pending_;
  int redundant_sends_;
  std::uint64_t next_ = 1;
  std::uint64_t acked_ = 1;
  std::vector<wire::ContactEvent> queue_;  // [head_, end) unacknowledged, ascending sequence
  struct Carried {
    std::uint64_t packet = 0;  // the packet that last carried it (0: none yet)
    int sends = 0;
  };
  std::vector<Carried> carrier_;  // per queue_ entry
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
