// Target: the reliable-event receiver fed any sequence of events (duplicates, gaps, reordering, absurd
// sequence numbers), as they arrive in ServerFrames.
// Promise: each event is delivered once, in order, as the first copy that arrived; events_received() is
// one past the last delivered; at most max_buffered events wait ahead of a gap; every event received is
// counted as delivered (now or later), duplicate, gap or overflow.
//
// Input: u8 max_buffered | items, each u8 op | (op bit 0: u64 absolute sequence, else i8 offset from the
// next expected) | u8 payload (the event's tick, to tell copies apart). op bit 1: take() afterwards.
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "protocol/reliable_events.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  using namespace shiftcast::fuzz;
  Input in(data, size);
  const std::size_t max_buffered = in.u8() % 70;
  ReliableEventReceiver receiver(max_buffered);
  std::map<std::uint64_t, std::uint64_t> first_tick;  // sequence -> tick of the first copy received
  std::uint64_t expected = 1;                         // the next sequence take() must yield
  std::uint64_t received = 0;
  auto drain = [&] {
    for (const wire::ContactEvent& e : receiver.take()) {
      require(e.sequence() == expected, "receiver: delivered out of order or twice");
      const auto it = first_tick.find(e.sequence());
      require(it != first_tick.end() && it->second == e.tick(), "receiver: delivered a later copy");
      ++expected;
    }
    require(receiver.events_received() == expected, "receiver: events_received is not one past the last");
  };
  while (!in.empty()) {
    const std::uint8_t op = in.u8();
    std::uint64_t sequence;
    if (op & 1) {
      sequence = in.u64();
    } else {
      const auto offset = static_cast<std::int8_t>(in.u8());
      sequence = receiver.events_received() + static_cast<std::uint64_t>(std::int64_t{offset});
    }
    const std::uint64_t tick = in.u8();
    const wire::ContactEvent event(sequence, tick, 0, 0, 0, 3, 1, 0, 0, {}, {}, 0, 0);
    // The first copy that the receiver keeps (not a duplicate of a held or delivered one, not dropped as
    // overflow) is the one it must deliver.
    const std::uint64_t next = receiver.events_received();
    if (sequence >= next && sequence - next <= max_buffered && !first_tick.contains(sequence))
      first_tick.emplace(sequence, tick);
    receiver.receive(event);
    ++received;
    require(receiver.buffered() <= max_buffered, "receiver: buffered beyond its bound");
    const ReceiverCounters& c = receiver.counters();
    require(c.delivered + c.duplicates + c.overflow + receiver.buffered() == received,
            "receiver: an event neither delivered, buffered nor counted as refused");
    if (op & 2) drain();
  }
  drain();
  return 0;
}
