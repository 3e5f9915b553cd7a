// ClientThread: one of run_simulation's client threads (sim_runner.cpp). It owns an io_context, its
// clients' UDP sockets, a drift-free client tick timer and one pipelined RPC channel per server for its
// clients' shots; the calling thread steers all of them through RunShared's phase and reads PublishedTotals
// for the progress line. Internal to the simulator.
//
//   auto t = std::make_unique<ClientThread>(options, level, run, epoch, unix_now);
//   t->add(index, std::move(token), server, identity);   // before start, on the calling thread
//   t->connect_rpc(rpc_endpoints);  t->start(first_tick);   // one endpoint per server
//   run.phase.store(Phase::kStop);  t->join();  // then t->clients() hold the stats
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client-sim/sim_client.hpp"
#include "client-sim/sim_runner.hpp"

namespace shiftcast::client_thread {

using Clock = std::chrono::steady_clock;

// Each admin step (connecting, a batch of calls, ending the matches) must finish within this.
inline constexpr double kAdminTimeoutSeconds = 10;

enum class Phase : int { kConnecting, kLoad, kStop };

Clock::duration to_duration(double seconds);
double seconds_between(Clock::time_point a, Clock::time_point b);

// Wakes the calling thread when a client connects or fails, so the connect phase ends as soon as it can.
struct Wakeup {
  std::mutex mutex;
  std::condition_variable cv;
  std::uint64_t generation = 0;

  void notify() {
    {
      std::lock_guard lock(mutex);
      ++generation;
    }
    cv.notify_one();
  }
  void wait_until(Clock::time_point deadline, std::uint64_t& seen) {
    std::unique_lock lock(mutex);
    cv.wait_until(lock, deadline, [&] { return generation != seen; });
    seen = generation;
  }
};

// What a client thread publishes each tick for the progress line: plain stores, no locks.
struct PublishedTotals {
  std::atomic<int> connected{0};
  std::atomic<int> failed{0};
  std::atomic<std::uint64_t> snapshots{0};
  std::atomic<std::uint64_t> commands{0};
  std::atomic<std::uint64_t> events{0};
  std::atomic<std::uint64_t> rpc_calls{0};
  std::atomic<std::uint64_t> late_ticks{0};
  std::atomic<std::uint64_t> bytes_up{0};
  std::atomic<std::uint64_t> bytes_down{0};
  std::array<std::atomic<std::uint64_t>, kAckBuckets> acks{};
  std::array<std::atomic<std::uint64_t>, kAckBuckets> rpc{};
};

struct RunShared {
  std::atomic<Phase> phase{Phase::kConnecting};
  Wakeup wakeup;
};

// One client thread: its io_context, its clients' sockets, one tick timer, one RPC channel for shots per
// server (sim_servers(options) order; a client's identity.server picks its channel).
class ClientThread {
 public:
  ClientThread(const SimOptions& options, const SimLevel& level, RunShared& run, Clock::time_point epoch,
               double unix_time_offset);

  void add(std::size_t global_index, ConnectToken token, const boost::asio::ip::udp::endpoint& server,
           const SimClientIdentity& identity);

  // Connects the shots' RPC channels before the thread runs (on the calling thread: the context is idle),
  // one endpoint per server in sim_servers(options) order.
  std::string connect_rpc(std::span<const boost::asio::ip::tcp::endpoint> servers);
  void start(Clock::time_point first_tick);
  void join();
  const PublishedTotals& published() const { return published_; }
  std::vector<std::pair<std::size_t, std::unique_ptr<SimClient>>>& clients() { return clients_; }

  // ---- Churn (client-sim/churn_runner): clients come and go while the thread runs. -------------------
  // How a client left the thread: by itself (a failure, or its match ended), or told to.
  enum class Left : std::uint8_t { kByItself, kSilentDrop, kGoodbye };
  struct LeftClient {
    std::size_t index = 0;
    Left how = Left::kByItself;
    ClientState state = ClientState::kSendingRequest;
    wire::ErrorCode code = wire::ErrorCode::Ok;
    SimClientStats stats;
  };
  // Before start: clients that finish by themselves leave clients() and are reported by take_left().
  void reap_finished_clients() { reap_ = true; }
  // From any thread: a new client, started on this thread's next turn; a client told to leave.
  void post_add(std::size_t index, ConnectToken token, const boost::asio::ip::udp::endpoint& server,
                const SimClientIdentity& identity);
  void post_leave(std::size_t index, bool goodbye);
  // From any thread: the clients that left since the last call.
  std::vector<LeftClient> take_left();

 private:
  double now() const;
  void run();
  void schedule();
  void on_tick();
  void tick_slice(std::size_t first);
  void publish();

  RunShared& run_;
  boost::asio::io_context context_;
  boost::asio::steady_timer timer_;
  std::vector<std::unique_ptr<RpcChannel>> rpcs_;  // one per server
  NavQuery nav_;
  LevelMotorWorld world_;
  flatbuffers::FlatBufferBuilder fbb_{512};
  SimThreadTotals totals_;
  SimThreadContext shared_;
  // Declared before the clients: a client's destructor forgets its registrations in it.
  std::optional<DeliveryTimer> delivery_;  // only with network conditions: wakes held datagrams on time
  std::vector<std::pair<std::size_t, std::unique_ptr<SimClient>>> clients_;  // global index, client
  std::thread thread_;
  Clock::duration period_{};
  Clock::time_point next_tick_;
  std::uint64_t late_ticks_ = 0;
  bool stopping_ = false;
  double event_drain_seconds_ = 0;
  double drain_deadline_ = 0;  // clients with events held behind a hole play on until then
  double stop_deadline_ = 0;   // then unanswered RPC calls are given up
  int last_settled_ = -1;
  PublishedTotals published_;

  // Churn.
  void leave(std::size_t position, Left how);
  void reap();
  bool reap_ = false;
  std::mutex left_mutex_;
  std::vector<LeftClient> left_;
};

// The cumulative latency histograms at the previous progress call.
struct ProgressHistograms {
  AckHistogram acks{};
  AckHistogram rpc{};
};

// The progress line's numbers (run_simulation's and the churn run's), summed over the threads; the
// latency percentiles are over what was acknowledged or answered since the previous call (`before`, the
// cumulative histograms then, is updated), each the upper edge of the bucket that holds it.
SimProgress gather_progress(const std::vector<std::unique_ptr<ClientThread>>& threads, int clients,
                            double elapsed, ProgressHistograms& before);

}  // namespace shiftcast::client_thread
