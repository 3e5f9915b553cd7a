// Packet sequences, acks and replay protection (netcode/reliable's model). Each direction numbers its
// packets from 1. The receiver keeps the newest sequence and a bitmask of the 64 before it: a sequence
// already seen, or older than the window, is refused (DuplicatePacket) before its payload is used. The
// header it sends back acks the newest and, in 32 bits, the 32 before it.
#pragma once

#include <cstdint>
#include <vector>

namespace shiftcast {

class ReceiveWindow {
 public:
  // True (and recorded) for a sequence never seen and not older than newest - 64; false otherwise.
  // Call only after the packet authenticated, so forged sequences cannot move the window.
  bool accept(std::uint64_t sequence);
  // Recorded as received; false for sequences older than the window (they are refused all the same).
  bool seen(std::uint64_t sequence) const;
  std::uint64_t ack() const { return newest_; }  // 0: nothing received
  std::uint32_t ack_bits() const;                // bit i: ack - 1 - i received

 private:
  std::uint64_t newest_ = 0;
  std::uint64_t bits_ = 0;  // bit i: newest_ - 1 - i received
};

// Sender side: which of our sequences the peer has acknowledged. on_ack returns the sequences newly
// acknowledged by one (ack, ack_bits) pair, ascending, each exactly once over the connection. It tracks
// the newest 64 sequences sent: an ack for a sequence never sent, or older than that window (given up
// as lost), is ignored.
class AckTracker {
 public:
  // Records a packet sent with `sequence` (normally take_sequence()'s; a larger one moves next_sequence).
  void sent(std::uint64_t sequence);
  std::vector<std::uint64_t> on_ack(std::uint64_t ack, std::uint32_t ack_bits);
  bool acked(std::uint64_t sequence) const;
  // The newest packet sent before `sequence` and not acknowledged (lost, or still on its way behind a
  // newer one: reordered), within the window; 0 when there is none.
  std::uint64_t newest_missing_below(std::uint64_t sequence) const;
  std::uint64_t next_sequence() const { return next_; }  // the sequence the next packet gets
  std::uint64_t take_sequence() { return next_++; }

 private:
  std::uint64_t next_ = 1;
  std::uint64_t newest_sent_ = 0;
  std::uint64_t sent_bits_ = 0;   // bit i: newest_sent_ - i sent
  std::uint64_t acked_bits_ = 0;  // bit i: newest_sent_ - i acknowledged
};

}  // namespace shiftcast
