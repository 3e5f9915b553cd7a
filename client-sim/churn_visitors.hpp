// ChurnVisitors: the passing RPC traffic of a churn run (client-sim/churn_runner.hpp), on a thread and
// io_context of its own: connections that ask a few questions and close, connections that send half a
// frame and vanish, and contact subscribers that stay a while, some of which never read a byte (the
// server must cut those off, SlowConsumer or its write timeout, and never hold their backlog forever).
// Internal to the simulator.
//
//   ChurnVisitors visitors(rpc_endpoint, options.admin_key);
//   visitors.visit(match_id, /*half_frame=*/false);                 // from any thread
//   visitors.subscribe(match_id, /*lifetime=*/12.5, /*never_read=*/true);
//   visitors.stop();  ChurnCounters c = visitors.counters();         // the visitor and subscriber fields
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "client-sim/churn_counters.hpp"

namespace shiftcast {

// A never-reading subscriber's kernel receive buffer: small, so the server's writes stall after a few
// pushes and its slow-consumer bounds are reached in seconds rather than after megabytes.
inline constexpr int kNeverReadReceiveBufferBytes = 4096;
// At its end a never-reading subscriber reads for this long to learn whether the server cut it: the
// backlog the server wrote before closing comes first, then the end of the stream.
inline constexpr double kSubscriberDrainSeconds = 3;
// A passing query connection gets this long for its answers.
inline constexpr double kVisitTimeoutSeconds = 5;

class ChurnVisitors {
 public:
  // `never_read_subscriptions`: SubscribeContacts requests a never-reading connection sends.
  ChurnVisitors(const boost::asio::ip::tcp::endpoint& rpc, std::string api_key, int never_read_subscriptions);
  ~ChurnVisitors();
  ChurnVisitors(const ChurnVisitors&) = delete;
  ChurnVisitors& operator=(const ChurnVisitors&) = delete;

  void visit(std::uint32_t match_id, bool half_frame);
  void subscribe(std::uint32_t match_id, double lifetime_seconds, bool never_read);
  // Closes what is still open (a subscriber counted as it stands) and joins the thread.
  void stop();
  ChurnCounters counters() const;

  struct Shared;  // the counters and what the connections share (churn_visitors.cpp)

 private:
  boost::asio::io_context context_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace shiftcast
