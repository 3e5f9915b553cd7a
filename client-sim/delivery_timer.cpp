#include "client-sim/delivery_timer.hpp"

namespace shiftcast {

DeliveryTimer::DeliveryTimer(boost::asio::io_context& context, std::chrono::steady_clock::time_point epoch)
    : timer_(context), epoch_(epoch) {}

double DeliveryTimer::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_).count();
}

void DeliveryTimer::wake_at(double due, DeliveryTarget* target) {
  if (cancelled_) return;
  heap_.push({due, target});
  // While firing, on_timer arms once at the end.
  if (!firing_ && (!armed_ || due < armed_at_)) arm(due);
}

void DeliveryTimer::arm(double due) {
  armed_ = true;
  armed_at_ = due;
  timer_.expires_at(epoch_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(due)));
  // Re-arming cancels the previous wait: its handler sees operation_aborted and does nothing.
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) on_timer();
  });
}

void DeliveryTimer::on_timer() {
  armed_ = false;
  firing_ = true;
  const double t = now();
  // A target registers again from deliver_due; those registrations wait for the next round even when
  // already due, so one round always ends.
  round_.clear();
  while (!heap_.empty() && heap_.top().due <= t) {
    round_.push_back(heap_.top().target);
    heap_.pop();
  }
  for (DeliveryTarget* target : round_)
    if (target != nullptr) target->deliver_due(t);
  firing_ = false;
  if (!heap_.empty() && !cancelled_) arm(heap_.top().due);
}

void DeliveryTimer::forget(const DeliveryTarget* target) {
  std::vector<Entry> kept;
  kept.reserve(heap_.size());
  for (; !heap_.empty(); heap_.pop())
    if (heap_.top().target != target) kept.push_back(heap_.top());
  for (const Entry& e : kept)
    heap_.push(e);
  // A target of the round being delivered may destroy another one of the same round.
  for (DeliveryTarget*& t : round_)
    if (t == target) t = nullptr;
}

void DeliveryTimer::cancel() {
  cancelled_ = true;
  armed_ = false;
  timer_.cancel();
  heap_ = {};
}

}  // namespace shiftcast
