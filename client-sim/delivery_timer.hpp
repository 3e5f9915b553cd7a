// DeliveryTimer: one steady_timer per client thread that wakes the thread's clients when a datagram held
// in one of their network-condition links (client-sim/network_conditions.hpp) falls due, so conditioned
// datagrams are sent and received at their due time, not at the next client tick. Clients register each
// time their earliest due time may have moved earlier; the timer is armed at the earliest registration.
// Internal to the simulator; used only when the run has network conditions.
//
//   DeliveryTimer timer(context, epoch);
//   timer.wake_at(due, &client);   // client implements DeliveryTarget; due in the clients' seconds
//   ... on the timer: client.deliver_due(now) for every registration due; the client registers again
//   timer.forget(&client);         // before a client is destroyed mid-run
//   timer.cancel();                // at the end, so the io_context can run out of work
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <queue>
#include <vector>

namespace shiftcast {

class DeliveryTarget {
 public:
  // Delivers whatever is due at `now` and registers its next due time again (if it has one).
  virtual void deliver_due(double now) = 0;

 protected:
  ~DeliveryTarget() = default;
};

class DeliveryTimer {
 public:
  DeliveryTimer(boost::asio::io_context& context, std::chrono::steady_clock::time_point epoch);

  void wake_at(double due, DeliveryTarget* target);
  // Drops every registration of `target`: a client destroyed while the run goes on (churn) calls it from
  // its destructor, so the timer never wakes a client that is gone.
  void forget(const DeliveryTarget* target);
  void cancel();
  std::size_t registrations() const { return heap_.size(); }

 private:
  struct Entry {
    double due;
    DeliveryTarget* target;
    bool operator>(const Entry& o) const { return due > o.due; }
  };
  void arm(double due);
  void on_timer();
  double now() const;

  boost::asio::steady_timer timer_;
  std::chrono::steady_clock::time_point epoch_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
  std::vector<DeliveryTarget*> round_;  // the targets of one firing, reused
  double armed_at_ = 0;
  bool armed_ = false;
  bool cancelled_ = false;
  bool firing_ = false;
};

}  // namespace shiftcast
