#include "client-sim/client_thread.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <utility>

namespace shiftcast::client_thread {

namespace asio = boost::asio;
using asio::ip::tcp;
using asio::ip::udp;

namespace {

// After the goodbyes, shots still in flight get this long to be answered before the channel closes.
constexpr double kRpcDrainSeconds = 1;
// At the end a client plays on until no event it has seen is held behind a hole (a lost frame whose
// events the server resends once it learns of the loss: late, not lost), for at most this long plus two
// round trips of the network conditions. What is still held then counts as lost.
constexpr double kEventDrainSeconds = 1;
// A thread ticks its clients in slices this big, and lets the datagrams that arrived in the meantime be
// handled between slices: a snapshot's acknowledgement is stamped when it arrives, not after the whole
// tick loop (hundreds of bot thinks and sealed commands) is done.
constexpr std::size_t kClientsPerSlice = 32;

}  // namespace

Clock::duration to_duration(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

ClientThread::ClientThread(const SimOptions& options, const SimLevel& level, RunShared& run,
                           Clock::time_point epoch, double unix_time_offset)
    : run_(run), timer_(context_), nav_(*level.navmesh), world_(level.compiled.tree, {}) {
  for (std::size_t s = 0; s < sim_servers(options).size(); ++s) {
    rpcs_.push_back(std::make_unique<RpcChannel>(context_));
    shared_.rpcs.push_back(rpcs_.back().get());
  }
  shared_.options = &options;
  shared_.world = &world_;
  shared_.nav = &nav_;
  shared_.fbb = &fbb_;
  shared_.totals = &totals_;
  shared_.bot.tick_rate = options.tick_rate;
  shared_.bot.jump_per_second = options.behaviour.jump_per_second;
  shared_.bot.strafe_per_second = options.behaviour.strafe_per_second;
  shared_.bot.fire_per_second = options.behaviour.fire_per_second;
  shared_.epoch = epoch;
  shared_.unix_time_offset = unix_time_offset;
  period_ = to_duration(1.0 / std::max(1, options.tick_rate));
  event_drain_seconds_ = kEventDrainSeconds + 2 * options.network.round_trip();
  if (options.network.active()) {
    delivery_.emplace(context_, epoch);
    shared_.delivery = &*delivery_;
  }
}

void ClientThread::add(std::size_t global_index, ConnectToken token, const udp::endpoint& server,
                       const SimClientIdentity& identity) {
  SimClientIdentity id = identity;
  id.client = global_index;
  clients_.push_back(
      {global_index, std::make_unique<SimClient>(context_, shared_, std::move(token), server, id)});
}

std::string ClientThread::connect_rpc(std::span<const tcp::endpoint> servers) {
  if (servers.size() != rpcs_.size()) return "client thread: one RPC endpoint per server expected";
  for (std::size_t s = 0; s < servers.size(); ++s) {
    std::string error = connect_blocking(context_, *rpcs_[s], servers[s], kAdminTimeoutSeconds);
    context_.restart();
    if (!error.empty()) return error;
  }
  return "";
}

void ClientThread::start(Clock::time_point first_tick) {
  next_tick_ = first_tick;
  thread_ = std::thread([this] { run(); });
}

void ClientThread::join() {
  if (thread_.joinable()) thread_.join();
}

double ClientThread::now() const {
  return seconds_between(shared_.epoch, Clock::now());
}

void ClientThread::run() {
  const double t = now();
  for (auto& [index, client] : clients_)
    client->start(t);
  publish();
  schedule();
  context_.run();
}

void ClientThread::schedule() {
  timer_.expires_at(next_tick_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) on_tick();
  });
}

void ClientThread::on_tick() {
  const double t = now();
  const Phase phase = run_.phase.load(std::memory_order_acquire);
  if (phase == Phase::kStop) {
    if (!stopping_) {
      stopping_ = true;
      drain_deadline_ = t + event_drain_seconds_;
      stop_deadline_ = drain_deadline_ + kRpcDrainSeconds;
      shared_.measuring = false;
    }
    bool draining = false;
    for (auto& [index, client] : clients_) {
      if (client->finished()) continue;
      if (client->events_held() && t < drain_deadline_) {
        client->tick(t);
        draining = true;
      } else {
        client->stop(t);
      }
    }
    std::size_t pending = 0;
    for (const auto& rpc : rpcs_)
      pending += rpc->pending();
    if (!draining && (pending == 0 || t >= stop_deadline_)) {
      for (const auto& rpc : rpcs_)
        rpc->close();  // what is still unanswered counts as connection_lost
      if (delivery_) delivery_->cancel();
      publish();
      return;  // no timer, no sockets: run() returns
    }
  } else {
    shared_.measuring = phase == Phase::kLoad;
    tick_slice(0);
  }
  // Drift-free: the next deadline is the previous plus the period. A thread more than a period behind
  // skips the ticks it missed (counted) rather than send a burst of commands the server would drop.
  next_tick_ += period_;
  const auto late = Clock::now() - next_tick_;
  if (late > period_) {
    const auto skipped = late / period_;
    next_tick_ += skipped * period_;
    late_ticks_ += std::uint64_t(skipped);
  }
  schedule();
}

void ClientThread::tick_slice(std::size_t first) {
  const double t = now();
  const std::size_t end = std::min(clients_.size(), first + kClientsPerSlice);
  for (std::size_t i = first; i < end; ++i)
    clients_[i].second->tick(t);
  if (end < clients_.size()) {
    asio::post(context_, [this, end] { tick_slice(end); });
  } else {
    if (reap_) reap();
    publish();
  }
}

void ClientThread::publish() {
  const int settled = totals_.connected + totals_.failed;
  published_.connected.store(totals_.connected, std::memory_order_relaxed);
  published_.failed.store(totals_.failed, std::memory_order_relaxed);
  published_.snapshots.store(totals_.snapshots, std::memory_order_relaxed);
  published_.commands.store(totals_.commands, std::memory_order_relaxed);
  published_.events.store(totals_.events, std::memory_order_relaxed);
  published_.rpc_calls.store(totals_.rpc_calls, std::memory_order_relaxed);
  published_.late_ticks.store(late_ticks_, std::memory_order_relaxed);
  published_.bytes_up.store(totals_.bytes_up, std::memory_order_relaxed);
  published_.bytes_down.store(totals_.bytes_down, std::memory_order_relaxed);
  for (std::size_t i = 0; i < kAckBuckets; ++i) {
    published_.acks[i].store(totals_.acks[i], std::memory_order_relaxed);
    published_.rpc[i].store(totals_.rpc[i], std::memory_order_relaxed);
  }
  if (settled != last_settled_) {
    last_settled_ = settled;
    run_.wakeup.notify();
  }
}

// ---- Churn ---------------------------------------------------------------------------------------

void ClientThread::post_add(std::size_t index, ConnectToken token, const udp::endpoint& server,
                            const SimClientIdentity& identity) {
  asio::post(context_, [this, index, token = std::move(token), server, identity]() mutable {
    if (stopping_) return;
    add(index, std::move(token), server, identity);
    clients_.back().second->start(now());
  });
}

void ClientThread::post_leave(std::size_t index, bool goodbye) {
  asio::post(context_, [this, index, goodbye] {
    if (stopping_) return;
    for (std::size_t i = 0; i < clients_.size(); ++i) {
      if (clients_[i].first == index) {
        leave(i, goodbye ? Left::kGoodbye : Left::kSilentDrop);
        return;
      }
    }
  });
}

std::vector<ClientThread::LeftClient> ClientThread::take_left() {
  std::lock_guard lock(left_mutex_);
  return std::exchange(left_, {});
}

void ClientThread::leave(std::size_t position, Left how) {
  SimClient& client = *clients_[position].second;
  const bool was_playing = client.stats().connected && !client.stats().failed;
  if (how == Left::kGoodbye) client.stop(now());
  if (how == Left::kSilentDrop) client.abandon(now());
  // The progress line's `connected` counts clients connected now; a failure already took itself off.
  if (how != Left::kByItself && was_playing && !client.stats().failed) --totals_.connected;
  LeftClient left{clients_[position].first, how, client.state(), client.code(), client.take_stats()};
  // Samples were reserved for a whole session: a finished one keeps only what it holds.
  left.stats.input_ack_ms.shrink_to_fit();
  left.stats.movement_error.shrink_to_fit();
  for (auto& [kind, samples] : left.stats.rpc_ms)
    samples.shrink_to_fit();
  clients_.erase(clients_.begin() + std::ptrdiff_t(position));  // its pending completions see it gone
  std::lock_guard lock(left_mutex_);
  left_.push_back(std::move(left));
}

void ClientThread::reap() {
  for (std::size_t i = clients_.size(); i-- > 0;) {
    if (clients_[i].second->finished()) leave(i, Left::kByItself);
  }
}

namespace {

// The nearest-rank `percent` of what a histogram gained since `before`: the upper edge of the bucket that
// holds it; 0 when it gained nothing.
double bucket_percentile(const AckHistogram& now, const AckHistogram& before, std::uint64_t percent) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < kAckBuckets; ++i)
    total += now[i] - before[i];
  if (total == 0) return 0;
  const std::uint64_t rank = (total * percent + 99) / 100;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kAckBuckets; ++i) {
    seen += now[i] - before[i];
    if (seen >= rank) return double(i + 1) * kAckBucketMs;
  }
  return double(kAckBuckets) * kAckBucketMs;
}

}  // namespace

SimProgress gather_progress(const std::vector<std::unique_ptr<ClientThread>>& threads, int clients,
                            double elapsed, ProgressHistograms& before) {
  SimProgress p;
  p.elapsed = elapsed;
  p.clients = clients;
  ProgressHistograms now{};
  for (const auto& t : threads) {
    const PublishedTotals& s = t->published();
    p.connected += s.connected.load(std::memory_order_relaxed);
    p.failed += s.failed.load(std::memory_order_relaxed);
    p.snapshots += s.snapshots.load(std::memory_order_relaxed);
    p.commands += s.commands.load(std::memory_order_relaxed);
    p.events += s.events.load(std::memory_order_relaxed);
    p.rpc_calls += s.rpc_calls.load(std::memory_order_relaxed);
    p.bytes_up += s.bytes_up.load(std::memory_order_relaxed);
    p.bytes_down += s.bytes_down.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < kAckBuckets; ++i) {
      now.acks[i] += s.acks[i].load(std::memory_order_relaxed);
      now.rpc[i] += s.rpc[i].load(std::memory_order_relaxed);
    }
  }
  p.input_ack_p50_ms = bucket_percentile(now.acks, before.acks, 50);
  p.input_ack_p99_ms = bucket_percentile(now.acks, before.acks, 99);
  p.rpc_p99_ms = bucket_percentile(now.rpc, before.rpc, 99);
  before = now;
  return p;
}

}  // namespace shiftcast::client_thread
