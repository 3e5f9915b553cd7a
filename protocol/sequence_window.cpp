#include "protocol/sequence_window.hpp"

#include <bit>

namespace shiftcast {
namespace {

constexpr std::uint64_t kWindowBits = 64;

}  // namespace

bool ReceiveWindow::accept(std::uint64_t sequence) {
  if (sequence == 0) return false;
  if (sequence > newest_) {
    const std::uint64_t shift = sequence - newest_;
    // The old newest moves into the mask at bit shift - 1 (when it existed and still fits).
    std::uint64_t bits = shift < kWindowBits ? bits_ << shift : 0;
    if (newest_ != 0 && shift - 1 < kWindowBits) bits |= std::uint64_t{1} << (shift - 1);
    bits_ = bits;
    newest_ = sequence;
    return true;
  }
  if (sequence == newest_) return false;
  const std::uint64_t bit = newest_ - 1 - sequence;
  if (bit >= kWindowBits) return false;  // too old to tell a replay from a late packet: refuse
  const std::uint64_t mask = std::uint64_t{1} << bit;
  if (bits_ & mask) return false;
  bits_ |= mask;
  return true;
}

bool ReceiveWindow::seen(std::uint64_t sequence) const {
  if (sequence == 0 || sequence > newest_) return false;
  if (sequence == newest_) return true;
  const std::uint64_t bit = newest_ - 1 - sequence;
  return bit < kWindowBits && (bits_ >> bit) & 1;
}

std::uint32_t ReceiveWindow::ack_bits() const {
  return static_cast<std::uint32_t>(bits_);
}

void AckTracker::sent(std::uint64_t sequence) {
  if (sequence == 0) return;
  if (sequence > newest_sent_) {
    const std::uint64_t shift = sequence - newest_sent_;
    sent_bits_ = shift < kWindowBits ? sent_bits_ << shift : 0;
    acked_bits_ = shift < kWindowBits ? acked_bits_ << shift : 0;
    newest_sent_ = sequence;
    sent_bits_ |= 1;
    if (sequence >= next_) next_ = sequence + 1;
    return;
  }
  const std::uint64_t bit = newest_sent_ - sequence;
  if (bit < kWindowBits) sent_bits_ |= std::uint64_t{1} << bit;
}

std::vector<std::uint64_t> AckTracker::on_ack(std::uint64_t ack, std::uint32_t ack_bits) {
  std::vector<std::uint64_t> newly;
  const auto consider = [&](std::uint64_t sequence) {
    if (sequence == 0 || sequence > newest_sent_) return;  // never sent: a confused or lying peer
    const std::uint64_t bit = newest_sent_ - sequence;
    if (bit >= kWindowBits) return;  // fell out of the window: already given up as lost
    const std::uint64_t mask = std::uint64_t{1} << bit;
    if (!(sent_bits_ & mask) || (acked_bits_ & mask)) return;
    acked_bits_ |= mask;
    newly.push_back(sequence);
  };
  // Oldest first, so the result comes out ascending.
  for (int i = 31; i >= 0; --i) {
    if ((ack_bits >> i) & 1 && ack > static_cast<std::uint64_t>(i) + 1) consider(ack - 1 - i);
  }
  consider(ack);
  return newly;
}

bool AckTracker::acked(std::uint64_t sequence) const {
  if (sequence == 0 || sequence > newest_sent_) return false;
  const std::uint64_t bit = newest_sent_ - sequence;
  return bit < kWindowBits && (acked_bits_ >> bit) & 1;
}

std::uint64_t AckTracker::newest_missing_below(std::uint64_t sequence) const {
  if (sequence == 0 || newest_sent_ == 0) return 0;
  // Bits at or beyond `first` hold the sequences below `sequence`.
  const std::uint64_t first = sequence > newest_sent_ ? 0 : newest_sent_ - sequence + 1;
  if (first >= kWindowBits) return 0;
  const std::uint64_t missing = sent_bits_ & ~acked_bits_ & (~std::uint64_t{0} << first);
  if (missing == 0) return 0;
  return newest_sent_ - static_cast<std::uint64_t>(std::countr_zero(missing));
}

}  // namespace shiftcast
