#include "client-sim/churn_runner.hpp"

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "client-sim/churn_plan.hpp"
#include "client-sim/churn_visitors.hpp"
#include "client-sim/client_thread.hpp"
#include "client-sim/http_get.hpp"
#include "client-sim/process_cpu.hpp"
#include "client-sim/prometheus_text.hpp"
#include "client-sim/server_metrics.hpp"
#include "client-sim/token_reply.hpp"

namespace shiftcast {

namespace asio = boost::asio;
using asio::ip::tcp;
using asio::ip::udp;
using Clock = std::chrono::steady_clock;

using client_thread::ClientThread;
using client_thread::kAdminTimeoutSeconds;
using client_thread::Phase;
using client_thread::RunShared;
using client_thread::seconds_between;
using client_thread::to_duration;

namespace {

// Admin calls in flight at once (as run_simulation's setup).
constexpr std::size_t kAdminWindow = 32;
// A join's token must outlive its handshake on a loaded machine, nothing more: it is used at once.
constexpr std::uint32_t kTokenValidSeconds = 60;
// How often the plan and the client threads are looked at: a join or leave is late by at most this.
constexpr auto kLoopStep = std::chrono::milliseconds(20);
constexpr auto kProgressInterval = std::chrono::seconds(1);
// The per-match invariant series are read this often (and before each EndMatch).
constexpr auto kInvariantScrapeInterval = std::chrono::seconds(2);
// A slot whose session failed (or whose token was refused) joins again after this, not in a tight loop.
constexpr double kRejoinAfterFailureSeconds = 1;
constexpr int kMaxPlayersCap = 65535;

// A session that ended because the plan ended its match: MatchEnded while connected, or, for a handshake
// that raced the EndMatch, UnknownMatch or ShuttingDown (a match being ended refuses newcomers so).
// Only for a match the plan did end: from a live match any of these is a failure.
bool ended_with_its_match(wire::ErrorCode code) {
  return code == wire::ErrorCode::MatchEnded || code == wire::ErrorCode::UnknownMatch ||
         code == wire::ErrorCode::ShuttingDown;
}

std::string describe_refusal(const char* call, const RpcReply& reply) {
  std::string s = std::string(call) + " refused: " + std::string(reply.error_name());
  if (!reply.detail.empty()) s += " (" + std::string(reply.detail) + ")";
  return s;
}

class ChurnRun {
 public:
  ChurnRun(const SimOptions& options, const SimLevel& level,
           const std::function<void(const SimProgress&)>& progress)
      : options_(options), level_(level), progress_(progress), admin_(kAdminTimeoutSeconds, kAdminWindow) {}

  SimRunResult run(const std::function<void()>& before_end_matches);

 private:
  struct Slot {
    std::optional<std::size_t> session;  // the session playing now
    int sessions = 0;
  };
  struct Session {
    int slot = 0;
    std::size_t thread = 0;
    std::uint32_t match_id = 0;
    double joined_at = 0;  // seconds into the run
  };

  std::string setup();
  double elapsed() const { return seconds_between(start_, Clock::now()); }
  std::string admin_call(std::size_t count, const auto& make, const auto& done);
  void create_match(int slot, int generation);
  void end_match(std::uint32_t match_id);
  void join_now(std::vector<int>& slots);
  void collect_left();
  void scrape_invariants();
  void report_progress();
  void finish_sessions();
  void end_remaining_matches();

  const SimOptions& options_;
  const SimLevel& level_;
  const std::function<void(const SimProgress&)>& progress_;
  SimRunResult result_;
  ChurnCounters& c_ = result_.churn;
  RpcBatch admin_;
  tcp::endpoint rpc_endpoint_;
  asio::ip::address host_;
  Clock::time_point epoch_ = Clock::now();
  Clock::time_point start_;
  double cpu_start_ = 0;  // process_cpu_seconds() at start_
  double unix_now_ = 0;
  int matches_ = 0;
  int per_match_ = 0;

  RunShared run_;
  std::vector<std::unique_ptr<ClientThread>> threads_;
  std::unique_ptr<ChurnVisitors> visitors_;

  std::vector<std::uint32_t> current_match_;            // by match slot
  std::map<std::pair<int, int>, std::uint32_t> match_;  // (slot, generation) -> match id
  std::set<std::uint32_t> alive_;
  std::vector<std::uint32_t> created_;
  std::map<std::uint32_t, std::uint64_t> invariants_;  // highest seen per match id
  std::uint64_t next_client_id_ = 1;

  std::vector<Slot> slots_;
  std::vector<Session> sessions_;
  std::map<std::size_t, SimClientStats> stats_;          // by session index
  std::multimap<double, int> rejoin_;                    // time -> slot
  bool running_ = false;                                 // the client threads take new sessions
  client_thread::ProgressHistograms progress_before_{};  // the progress line's previous histograms
};

std::string ChurnRun::admin_call(std::size_t count, const auto& make, const auto& done) {
  // The connection idles out between calls when the plan is quiet: a failed batch gets one retry on a
  // fresh one (the calls here are all safe to repeat: a lost CreateMatch leaves at most an idle match).
  std::string e = admin_.is_open() ? admin_.run(count, make, done) : "closed";
  if (e.empty()) return e;
  if (std::string r = admin_.reconnect(rpc_endpoint_); !r.empty()) return r;
  return admin_.run(count, make, done);
}

std::string ChurnRun::setup() {
  boost::system::error_code ec;
  host_ = asio::ip::make_address(options_.host, ec);
  if (ec) {
    asio::io_context resolve_context;
    tcp::resolver resolver(resolve_context);
    const auto found = resolver.resolve(tcp::v4(), options_.host, "", ec);
    if (ec || found.empty()) return "cannot resolve " + options_.host + ": " + ec.message();
    host_ = found.begin()->endpoint().address();
  }
  rpc_endpoint_ = tcp::endpoint(host_, options_.rpc_port);
  if (std::string e = admin_.connect(rpc_endpoint_); !e.empty()) return e;
  unix_now_ = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  matches_ = std::max(1, options_.matches);
  per_match_ = std::max(1, options_.clients);
  current_match_.assign(std::size_t(matches_), 0);
  slots_.resize(std::size_t(matches_) * std::size_t(per_match_));

  int thread_count = options_.threads > 0 ? options_.threads : int(std::thread::hardware_concurrency());
  thread_count = std::clamp(thread_count, 1, std::max(1, int(slots_.size())));
  for (int t = 0; t < thread_count; ++t) {
    threads_.push_back(std::make_unique<ClientThread>(options_, level_, run_, epoch_, unix_now_));
    threads_.back()->reap_finished_clients();
    if (std::string e = threads_.back()->connect_rpc({&rpc_endpoint_, 1}); !e.empty()) return e;
  }
  run_.phase.store(Phase::kLoad, std::memory_order_release);  // every session is measured
  const double period = 1.0 / std::max(1, options_.tick_rate);
  const Clock::time_point first_tick = Clock::now();
  for (std::size_t t = 0; t < threads_.size(); ++t)
    threads_[t]->start(first_tick + to_duration(period * double(t) / double(threads_.size())));
  visitors_ = std::make_unique<ChurnVisitors>(rpc_endpoint_, options_.admin_key,
                                              options_.churn.subscriber_never_read_subscriptions);
  return "";
}

void ChurnRun::create_match(int slot, int generation) {
  const int max_players = options_.churn.match_max_players > 0 ? options_.churn.match_max_players
                                                               : std::min(kMaxPlayersCap, 2 * per_match_);
  std::optional<std::uint32_t> id;
  const std::string e = admin_call(
      1,
      [&](flatbuffers::FlatBufferBuilder& fbb, std::size_t) {
        // Each generation its own seed: a replacement match is a new game, not a copy of the old one.
        const auto body = wire::CreateCreateMatchDirect(
            fbb, options_.admin_key.c_str(), options_.level.c_str(), std::uint16_t(max_players), 0,
            options_.seed + std::uint32_t(slot) + std::uint32_t(generation) * std::uint32_t(matches_),
            std::uint16_t(options_.tick_rate), std::uint16_t(options_.snapshot_rate));
        return std::pair{wire::Message::CreateMatch, body.Union()};
      },
      [&](std::size_t, const RpcReply& reply) {
        const wire::CreateMatchReply* r =
            reply.ok() ? reply.envelope->message_as_CreateMatchReply() : nullptr;
        if (r == nullptr) {
          spdlog::warn("{}", describe_refusal("CreateMatch", reply));
          return;
        }
        id = r->match_id();
      });
  if (!e.empty() || !id) {
    if (!e.empty()) spdlog::warn("CreateMatch: {}", e);
    ++c_.admin_errors;
    return;
  }
  ++c_.matches_created;
  current_match_[std::size_t(slot)] = *id;
  match_[{slot, generation}] = *id;
  alive_.insert(*id);
  created_.push_back(*id);
  c_.matches_alive_max = std::max(c_.matches_alive_max, int(alive_.size()));
}

void ChurnRun::end_match(std::uint32_t match_id) {
  scrape_invariants();  // its series leave /metrics with it
  bool ok = false;
  const std::string e = admin_call(
      1,
      [&](flatbuffers::FlatBufferBuilder& fbb, std::size_t) {
        const auto body = wire::CreateEndMatchDirect(fbb, options_.admin_key.c_str(), match_id);
        return std::pair{wire::Message::EndMatch, body.Union()};
      },
      [&](std::size_t, const RpcReply& reply) {
        ok = reply.ok();
        if (!ok) spdlog::warn("{}", describe_refusal("EndMatch", reply));
      });
  alive_.erase(match_id);
  if (!e.empty() || !ok) {
    ++c_.admin_errors;
    return;
  }
  ++c_.matches_ended;
}

void ChurnRun::join_now(std::vector<int>& slots) {
  if (slots.empty()) return;
  struct Ask {
    int slot;
    std::uint32_t match_id;
    std::uint64_t client_id;
    std::optional<ConnectToken> token;
  };
  std::vector<Ask> asks;
  for (const int slot : slots) {
    if (slots_[std::size_t(slot)].session) continue;  // already playing (a match end and a plan join met)
    asks.push_back({slot, current_match_[std::size_t(slot % matches_)], next_client_id_++, std::nullopt});
  }
  slots.clear();
  const std::string e = admin_call(
      asks.size(),
      [&](flatbuffers::FlatBufferBuilder& fbb, std::size_t i) {
        const auto body = wire::CreateIssueConnectTokenDirect(
            fbb, options_.admin_key.c_str(), asks[i].match_id, asks[i].client_id, kTokenValidSeconds);
        return std::pair{wire::Message::IssueConnectToken, body.Union()};
      },
      [&](std::size_t i, const RpcReply& reply) {
        const wire::IssueConnectTokenReply* r =
            reply.ok() ? reply.envelope->message_as_IssueConnectTokenReply() : nullptr;
        if (r == nullptr) {
          spdlog::debug("{}", describe_refusal("IssueConnectToken", reply));
          return;
        }
        asks[i].token = token_from_reply(*r);
        // A fresh token names the id we asked for, one no earlier session used.
        if (asks[i].token && asks[i].token->client_id != asks[i].client_id) ++c_.token_reuses;
      });
  if (!e.empty()) spdlog::warn("IssueConnectToken: {}", e);
  const double now = elapsed();
  for (Ask& a : asks) {
    const std::optional<udp::endpoint> server =
        a.token ? token_endpoint(a.token->server_address, host_) : std::nullopt;
    if (!server) {
      ++c_.admin_errors;
      rejoin_.emplace(now + kRejoinAfterFailureSeconds, a.slot);
      continue;
    }
    Slot& slot = slots_[std::size_t(a.slot)];
    const std::size_t index = sessions_.size();
    const std::size_t thread = std::size_t(a.slot) % threads_.size();
    sessions_.push_back({a.slot, thread, a.match_id, now});
    slot.session = index;
    if (slot.sessions++ > 0) ++c_.reconnects;
    ++c_.sessions;
    // The bot of a session: its match slot's seed, its slot's index there, and the session number so
    // that a slot's next life does not replay its last.
    const SimClientIdentity identity{options_.seed + std::uint32_t(a.slot % matches_),
                                     std::uint32_t(a.slot / matches_) + std::uint32_t(slot.sessions) * 4096u};
    threads_[thread]->post_add(index, std::move(*a.token), *server, identity);
  }
}

void ChurnRun::collect_left() {
  const double now = elapsed();
  std::vector<int> rejoin_now;
  for (auto& t : threads_) {
    for (ClientThread::LeftClient& left : t->take_left()) {
      const Session& session = sessions_[left.index];
      Slot& slot = slots_[std::size_t(session.slot)];
      const bool current = slot.session == left.index;
      if (current) slot.session.reset();
      SimClientStats& stats = stats_[left.index] = std::move(left.stats);
      if (stats.connected) ++c_.sessions_connected;
      switch (left.how) {
        case ClientThread::Left::kSilentDrop:
          // Dropped before the handshake was done: the session never got to play, a failure.
          if (!stats.connected && !stats.failed) {
            stats.failed = true;
            stats.failure = "not connected within its lifetime";
          }
          ++(stats.failed ? c_.sessions_failed : c_.silent_drops);
          break;
        case ClientThread::Left::kGoodbye:
          ++(stats.failed ? c_.sessions_failed : c_.goodbyes);
          break;
        case ClientThread::Left::kByItself:
          if (ended_with_its_match(left.code) && !alive_.contains(session.match_id)) {
            // Expected: the plan ended its match. Not a failure; it joins the replacement now.
            stats.failed = false;
            stats.failure.clear();
            ++c_.match_ended;
            if (current) rejoin_now.push_back(session.slot);
          } else {
            ++c_.sessions_failed;
            if (current) rejoin_.emplace(now + kRejoinAfterFailureSeconds, session.slot);
          }
          break;
      }
    }
  }
  if (running_) join_now(rejoin_now);
}

void ChurnRun::scrape_invariants() {
  const HttpResponse response =
      http_get(options_.host, options_.http_port, "/metrics", kMetricsScrapeTimeout);
  if (!response.error.empty() || response.status != 200) return;
  const PrometheusText text = parse_prometheus_text(response.body);
  if (!text.error.empty()) return;
  for (const PrometheusSample& s : text.samples) {
    if (s.name != "shiftcast_invariant_violations_total") continue;
    const std::string* match = s.label("match");
    if (match == nullptr) continue;
    std::uint32_t id = 0;
    try {
      id = std::uint32_t(std::stoul(*match));
    } catch (const std::exception&) {
      continue;
    }
    std::uint64_t& seen = invariants_[id];
    seen = std::max(seen, std::uint64_t(std::max(0.0, s.value)));
  }
}

void ChurnRun::report_progress() {
  if (!progress_) return;
  int clients = 0;
  for (const Slot& s : slots_)
    clients += s.session ? 1 : 0;
  SimProgress p =
      client_thread::gather_progress(threads_, clients, std::max(elapsed(), 1e-3), progress_before_);
  p.failed = int(c_.sessions_failed);
  progress_(p);
}

void ChurnRun::finish_sessions() {
  running_ = false;
  run_.phase.store(Phase::kStop, std::memory_order_release);
  for (auto& t : threads_)
    t->join();
  collect_left();  // what left in the last turns (no rejoin: the threads are gone)
  for (auto& t : threads_) {
    result_.late_client_ticks += t->published().late_ticks.load(std::memory_order_relaxed);
    for (auto& [index, client] : t->clients()) {
      SimClientStats& stats = stats_[index] = client->take_stats();
      ++c_.at_run_end;
      if (stats.connected) ++c_.sessions_connected;
      // A session that joined within the connect timeout of the end was still allowed to be connecting.
      if (stats.failed && !stats.connected &&
          sessions_[index].joined_at > result_.load_seconds - options_.connect_timeout) {
        stats.failed = false;
        stats.failure.clear();
        ++c_.at_run_end_connecting;
      }
      if (stats.failed) ++c_.sessions_failed;
    }
  }
  threads_.clear();
  visitors_->stop();
  const ChurnCounters v = visitors_->counters();
  c_.rpc_visits = v.rpc_visits;
  c_.rpc_visit_queries = v.rpc_visit_queries;
  c_.rpc_visit_failures = v.rpc_visit_failures;
  c_.rpc_abandoned = v.rpc_abandoned;
  c_.subscribers = v.subscribers;
  c_.subscribers_reading = v.subscribers_reading;
  c_.subscribers_never_reading = v.subscribers_never_reading;
  c_.subscriber_pushes = v.subscriber_pushes;
  c_.subscriber_event_gaps = v.subscriber_event_gaps;
  c_.subscribers_left = v.subscribers_left;
  c_.subscribers_cut_slow = v.subscribers_cut_slow;
  c_.subscribers_cut_timeout = v.subscribers_cut_timeout;
  c_.subscribers_cut_other = v.subscribers_cut_other;
  c_.subscribers_never_cut = v.subscribers_never_cut;
  c_.subscribers_refused = v.subscribers_refused;
  c_.subscribers_match_ended = v.subscribers_match_ended;
  c_.subscribers_at_run_end = v.subscribers_at_run_end;
  result_.clients.reserve(stats_.size());
  for (auto& [index, stats] : stats_)
    result_.clients.push_back(std::move(stats));
}

void ChurnRun::end_remaining_matches() {
  scrape_invariants();
  const std::vector<std::uint32_t> ids(alive_.begin(), alive_.end());
  for (const std::uint32_t id : ids)
    end_match(id);
  for (const std::uint32_t id : created_)
    c_.invariant_violations += invariants_[id];
}

SimRunResult ChurnRun::run(const std::function<void()>& before_end_matches) {
  c_.enabled = true;
  if (level_.navmesh == nullptr) {
    result_.error = "the level has no navmesh";
    return result_;
  }
  if (std::string e = setup(); !e.empty()) {
    result_.error = e;
    run_.phase.store(Phase::kStop, std::memory_order_release);
    for (auto& t : threads_)
      t->join();
    return result_;
  }
  const ChurnPlan plan = make_churn_plan(options_.churn, {.clients = int(slots_.size()),
                                                          .matches = matches_,
                                                          .duration = options_.duration,
                                                          .seed = options_.seed});
  start_ = Clock::now();
  cpu_start_ = process_cpu_seconds();
  running_ = true;
  auto next_progress = start_ + kProgressInterval;
  auto next_scrape = start_ + kInvariantScrapeInterval;
  std::size_t next = 0;
  std::vector<int> joins;
  for (;;) {
    const double now = elapsed();
    if (now >= options_.duration) break;
    for (; next < plan.events.size() && plan.events[next].at <= now; ++next) {
      const ChurnEvent& e = plan.events[next];
      switch (e.kind) {
        case ChurnEventKind::kMatchCreate:
          create_match(e.slot, e.generation);
          break;
        case ChurnEventKind::kMatchEnd:
          if (auto it = match_.find({e.slot, e.generation}); it != match_.end()) end_match(it->second);
          break;
        case ChurnEventKind::kClientJoin:
          joins.push_back(e.slot);
          break;
        case ChurnEventKind::kClientLeave:
          if (const auto& s = slots_[std::size_t(e.slot)].session)
            threads_[sessions_[*s].thread]->post_leave(*s, !e.quiet);
          break;
        case ChurnEventKind::kRpcVisit:
          visitors_->visit(current_match_[0], e.quiet);
          break;
        case ChurnEventKind::kSubscriber:
          visitors_->subscribe(current_match_[std::size_t(e.slot)], e.lifetime, e.quiet);
          break;
      }
    }
    while (!rejoin_.empty() && rejoin_.begin()->first <= now) {
      joins.push_back(rejoin_.begin()->second);
      rejoin_.erase(rejoin_.begin());
    }
    join_now(joins);
    collect_left();
    const Clock::time_point t = Clock::now();
    if (t >= next_progress) {
      report_progress();
      next_progress += kProgressInterval;
    }
    if (t >= next_scrape) {
      scrape_invariants();
      next_scrape += kInvariantScrapeInterval;
    }
    std::this_thread::sleep_for(kLoopStep);
  }
  result_.load_seconds = elapsed();
  result_.load_cpu_seconds = process_cpu_seconds() - cpu_start_;
  finish_sessions();
  if (before_end_matches) before_end_matches();
  end_remaining_matches();
  result_.match_ids = created_;
  return result_;
}

}  // namespace

SimRunResult run_churn(const SimOptions& options, const SimLevel& level,
                       const std::function<void(const SimProgress&)>& progress,
                       const std::function<void()>& before_end_matches) {
  ChurnRun run(options, level, progress);
  return run.run(before_end_matches);
}

}  // namespace shiftcast
