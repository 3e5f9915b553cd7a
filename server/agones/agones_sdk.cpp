#include "server/agones/agones_sdk.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cstdlib>

#include "server/agones/allocation_settings.hpp"
#include "server/agones/game_server.hpp"
#include "server/config/json_text.hpp"
#include "server/config/json_value.hpp"

namespace shiftcast {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace std::chrono_literals;

namespace {

// Calls waiting for the sidecar beyond this are dropped (counted): a sidecar that never answers must not
// grow the server's memory with player calls.
constexpr std::size_t kMaxQueuedCalls = 1024;
constexpr std::chrono::milliseconds kMaxBackoff = 5000ms;

std::string key_value(std::string_view key, std::string_view value) {
  return fmt::format(R"({{"key":"{}","value":"{}"}})", json_escaped(key), json_escaped(value));
}

std::string player_id(std::uint64_t client_id) {
  return fmt::format(R"({{"playerID":"{}"}})", client_id);
}

// alphaBool: {"bool": true}; anything else is a refusal.
bool answered_true(const SdkReply& r) {
  const JsonParse p = parse_json(r.body);
  const JsonValue* b = p.ok() ? p.value.member("bool") : nullptr;
  return b != nullptr && b->kind == JsonValue::Kind::kBool && b->boolean;
}

}  // namespace

std::shared_ptr<AgonesSdk> AgonesSdk::create(asio::io_context& context,
                                             const asio::ip::tcp::endpoint& sidecar,
                                             const AgonesSettings& settings, AgonesServices services) {
  return std::make_shared<AgonesSdk>(context, sidecar, settings, std::move(services));
}

AgonesSdk::AgonesSdk(asio::io_context& context, const asio::ip::tcp::endpoint& sidecar,
                     const AgonesSettings& settings, AgonesServices services)
    : strand_(asio::make_strand(context)),
      sidecar_(sidecar),
      settings_(settings),
      services_(std::move(services)),
      judge_(std::chrono::milliseconds(settings.stall_ms)),
      health_timer_(strand_),
      retry_timer_(strand_),
      watch_timer_(strand_),
      backoff_(settings.retry_ms),
      watch_backoff_(settings.retry_ms) {
  for (std::size_t i = 0; i < services_.workers.size(); ++i)
    probing_.push_back(std::make_shared<std::atomic<bool>>(false));
  MetricsRegistry& m = *services_.metrics;
  allocations_created_ = &m.counter("shiftcast_agones_allocations_total",
                                    "Allocations seen, by outcome: the match created, or refused (bad "
                                    "settings; no match)",
                                    {{"result", "created"}});
  allocations_refused_ = &m.counter("shiftcast_agones_allocations_total", "", {{"result", "refused"}});
  health_withheld_ = &m.counter("shiftcast_agones_health_withheld_total",
                                "Health pings not sent because a match worker was stalled");
  // The series exist from the start, so a dashboard sees zeros rather than nothing.
  for (const char* call : {"set_annotation", "ready", "health", "watch", "set_player_capacity",
                           "player_connect", "player_disconnect", "shutdown"})
    for (const char* result : {"ok", "refused", "unreachable"})
      count(call, result);
}

void AgonesSdk::count(const std::string& call, const char* result) {
  services_.metrics
      ->counter("shiftcast_agones_calls_total", "Agones SDK calls, by call and result",
                {{"call", call}, {"result", result}})
      .add(0);
}

AgonesSdk::Outcome AgonesSdk::record(const std::string& call, const SdkReply& reply, bool answer_false) {
  const Outcome o = !reply.reached                  ? Outcome::kUnreachable
                    : (!reply.ok() || answer_false) ? Outcome::kRefused
                                                    : Outcome::kOk;
  const char* result = o == Outcome::kOk ? "ok" : o == Outcome::kRefused ? "refused" : "unreachable";
  services_.metrics
      ->counter("shiftcast_agones_calls_total", "Agones SDK calls, by call and result",
                {{"call", call}, {"result", result}})
      .add();
  std::string& last = last_results_[call];
  if (o != Outcome::kOk && last != result) {
    spdlog::warn(
        "agones: {} {}: {}", call, result,
        reply.reached ? fmt::format("HTTP {} {}", reply.status, reply.body.substr(0, 200)) : reply.error);
  } else if (o == Outcome::kOk && !last.empty() && last != "ok") {
    spdlog::info("agones: {} succeeds again", call);
  }
  last = result;
  return o;
}

void AgonesSdk::start() {
  asio::post(strand_, [self = shared_from_this()] {
    if (self->started_ || self->stopping_.load()) return;
    self->started_ = true;
    spdlog::info("agones: SDK sidecar at {}:{}, match id {} reserved for the allocation, instance {:016x}",
                 self->sidecar_.address().to_string(), self->sidecar_.port(), self->services_.match_id,
                 self->services_.server_instance);
    self->announce();
    self->next_beat_ = std::chrono::steady_clock::now();
    self->beat();
  });
}

void AgonesSdk::stop() {
  stopping_.store(true);
  asio::post(strand_, [self = shared_from_this()] {
    self->halt();
    self->queue_.clear();
    self->retry_timer_.cancel();
  });
}

void AgonesSdk::halt() {
  halted_ = true;
  health_timer_.cancel();
  watch_timer_.cancel();
  if (watch_) watch_->close();
  watch_.reset();
}

// ------------------------------------------------------------------------------------------- the queue

void AgonesSdk::enqueue(std::string call, SdkRequest request, Then then) {
  if (stopping_.load()) return;
  if (queue_.size() >= kMaxQueuedCalls) {
    services_.metrics
        ->counter("shiftcast_agones_calls_total", "Agones SDK calls, by call and result",
                  {{"call", call}, {"result", "dropped"}})
        .add();
    spdlog::warn("agones: {} dropped: {} calls already wait for the sidecar", call, queue_.size());
    return;
  }
  queue_.push_back({std::move(call), std::move(request), std::move(then)});
  pump();
}

void AgonesSdk::pump() {
  if (in_flight_ || queue_.empty() || stopping_.load()) return;
  in_flight_ = true;
  auto pending = std::make_shared<Pending>(std::move(queue_.front()));
  queue_.pop_front();
  sdk_call(strand_, sidecar_, pending->request, std::chrono::milliseconds(settings_.call_timeout_ms),
           [self = shared_from_this(), pending](SdkReply reply) {
             self->in_flight_ = false;
             if (pending->then) {
               pending->then(reply);
             } else {
               self->record(pending->call, reply);
             }
             self->pump();
           });
}

void AgonesSdk::retry_later(std::function<void()> again) {
  retry_timer_.expires_after(backoff_);
  backoff_ = std::min(kMaxBackoff, backoff_ * 2);
  retry_timer_.async_wait(
      [self = shared_from_this(), again = std::move(again)](boost::system::error_code ec) {
        if (!ec && !self->stopping_.load()) again();
      });
}

// ----------------------------------------------------------------------------------- annotate and Ready

void AgonesSdk::announce() {
  // The two annotations first, so that an allocation (possible only after Ready) always carries them.
  const std::string instance = fmt::format("{:016x}", services_.server_instance);
  const std::string match = std::to_string(services_.match_id);
  auto self = shared_from_this();
  auto ready = [self](const SdkReply& r) {
    if (self->record("ready", r) != Outcome::kOk) return self->retry_later([self] { self->announce(); });
    self->ready_ = true;
    self->backoff_ = std::chrono::milliseconds(self->settings_.retry_ms);
    spdlog::info("agones: Ready; waiting for an allocation");
    self->open_watch();
  };
  auto second = [self, ready](const SdkReply& r) {
    if (self->record("set_annotation", r) != Outcome::kOk)
      return self->retry_later([self] { self->announce(); });
    self->enqueue("ready", {http::verb::post, "/ready", "{}"}, ready);
  };
  auto first = [self, match, second](const SdkReply& r) {
    if (self->record("set_annotation", r) != Outcome::kOk)
      return self->retry_later([self] { self->announce(); });
    self->enqueue("set_annotation",
                  {http::verb::put, "/metadata/annotation", key_value(kMatchIdAnnotation, match)}, second);
  };
  enqueue("set_annotation",
          {http::verb::put, "/metadata/annotation", key_value(kInstanceAnnotation, instance)}, first);
}

// ---------------------------------------------------------------------------------------- the heartbeat

void AgonesSdk::beat() {
  if (halted_ || stopping_.load()) return;
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::chrono::steady_clock::time_point> signs;
  signs.reserve(services_.pulses.size());
  for (const auto& p : services_.pulses)
    signs.push_back(p->last());
  const Heartbeat h = judge_.judge(now, signs);
  if (!h.beat) {
    health_withheld_->add();
    if (!withholding_) {
      spdlog::warn("agones: health withheld: match worker {} silent for {} ms (logged once until it ticks)",
                   h.stalled_worker,
                   std::chrono::duration_cast<std::chrono::milliseconds>(h.silence).count());
    }
    withholding_ = true;
    return schedule_beat(now);
  }
  if (withholding_) spdlog::info("agones: every match worker answers again; health pings resume");
  withholding_ = false;
  if (!health_pending_) {
    health_pending_ = true;
    enqueue("health", {http::verb::post, "/health", "{}"}, [self = shared_from_this()](const SdkReply& r) {
      self->health_pending_ = false;
      self->record("health", r);
    });
  }
  schedule_beat(now);
}

void AgonesSdk::schedule_beat(std::chrono::steady_clock::time_point now) {
  // Probe every worker: an idle one ticks nothing, but a running event loop stamps its pulse at once.
  // One probe outstanding per worker: a stalled worker's queue does not grow a probe per period.
  for (std::size_t i = 0; i < services_.workers.size() && i < services_.pulses.size(); ++i) {
    if (probing_[i]->exchange(true)) continue;
    asio::post(*services_.workers[i], [pulse = services_.pulses[i], probing = probing_[i]] {
      pulse->stamp(std::chrono::steady_clock::now());
      probing->store(false);
    });
  }
  next_beat_ += std::chrono::milliseconds(settings_.health_period_ms);
  if (next_beat_ < now) next_beat_ = now + std::chrono::milliseconds(settings_.health_period_ms);
  health_timer_.expires_at(next_beat_);
  health_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->beat();
  });
}

// ------------------------------------------------------------------------------------------ the watch

void AgonesSdk::open_watch() {
  if (halted_ || stopping_.load()) return;
  // The watch is owned by this object (watch_), so its callbacks hold it weakly: a strong reference both
  // ways would keep both alive for ever if the RPC threads stop before stop() has run on the strand.
  std::weak_ptr<AgonesSdk> weak = weak_from_this();
  auto lines = std::make_shared<std::uint64_t>(0);
  watch_ = SdkWatch::open(
      strand_, sidecar_, "/watch/gameserver", std::chrono::milliseconds(settings_.call_timeout_ms),
      [weak, lines](std::string_view line) {
        const std::shared_ptr<AgonesSdk> self = weak.lock();
        if (!self) return;
        if ((*lines)++ == 0) {
          self->record("watch", SdkReply{true, 200, {}, {}});
          self->watch_backoff_ = std::chrono::milliseconds(self->settings_.retry_ms);
        }
        const GameServerRead r = read_watch_line(line);
        if (!r.ok()) {
          spdlog::warn("agones: watch: {}", r.error);
          return;
        }
        self->on_game_server(r.server);
      },
      [weak, lines](const std::string& reason) {
        const std::shared_ptr<AgonesSdk> self = weak.lock();
        if (!self) return;
        self->watch_.reset();
        if (self->halted_ || self->stopping_.load()) return;
        if (*lines == 0) {
          SdkReply failed;
          const bool http_error = reason.rfind("HTTP ", 0) == 0;
          failed.reached = http_error;
          failed.status = http_error ? std::atoi(reason.c_str() + 5) : 0;
          failed.error = reason;
          self->record("watch", failed);
        } else {
          spdlog::info("agones: watch ended ({}); watching again", reason);
        }
        self->watch_timer_.expires_after(self->watch_backoff_);
        self->watch_backoff_ = std::min(kMaxBackoff, self->watch_backoff_ * 2);
        self->watch_timer_.async_wait([self](boost::system::error_code ec) {
          if (!ec) self->open_watch();
        });
      });
}

void AgonesSdk::on_game_server(const GameServerView& gs) {
  if (gs.state != state_) spdlog::info("agones: GameServer {} is {}", gs.name, gs.state);
  state_ = gs.state;
  if (gs.state != "Allocated" || match_created_) return;
  const AllocationSpec a = allocation_spec(gs.labels, gs.annotations, services_.default_max_players);
  std::string refusal = a.error;
  CreatedMatch created;
  if (a.ok()) {
    CreateMatchSpec spec = a.spec;
    spec.id = services_.match_id;
    created = services_.directory->create(spec);
    if (created.error != wire::ErrorCode::Ok) refusal = created.detail;
  }
  if (!refusal.empty()) {
    // Every change of the GameServer streams it again: count and log each distinct refusal once.
    if (refusal != last_refusal_) {
      allocations_refused_->add();
      spdlog::error("agones: allocated, but no match: {} (the server stays up, without a match)", refusal);
    }
    last_refusal_ = refusal;
    return;
  }
  match_created_ = true;
  allocations_created_->add();
  spdlog::info("agones: allocated: match {} on level {} for up to {} players", created.match_id, a.spec.level,
               a.spec.max_players);
  if (settings_.player_tracking != 0) {
    enqueue("set_player_capacity", {http::verb::put, "/alpha/player/capacity",
                                    fmt::format(R"({{"count":"{}"}})", a.spec.max_players)});
  }
}

// ------------------------------------------------------------------------------ players and the end

void AgonesSdk::player_changed(std::uint32_t match_id, std::uint64_t client_id, bool joined) {
  if (stopping_.load() || settings_.player_tracking == 0) return;
  asio::post(strand_, [self = shared_from_this(), match_id, client_id, joined] {
    if (!self->match_created_ || match_id != self->services_.match_id) return;
    const std::string call = joined ? "player_connect" : "player_disconnect";
    self->enqueue(call,
                  {http::verb::post, joined ? "/alpha/player/connect" : "/alpha/player/disconnect",
                   player_id(client_id)},
                  [self, call](const SdkReply& r) { self->record(call, r, r.ok() && !answered_true(r)); });
  });
}

void AgonesSdk::match_finished(std::uint32_t match_id, std::size_t matches_left) {
  if (stopping_.load()) return;
  asio::post(strand_, [self = shared_from_this(), match_id, matches_left] {
    if (match_id == self->services_.match_id)
      spdlog::info("agones: the allocated match {} ended; {} matches left", match_id, matches_left);
    if (!self->match_created_ || matches_left > 0 || self->shutdown_sent_) return;
    self->shutdown_sent_ = true;
    self->send_shutdown();
  });
}

void AgonesSdk::send_shutdown() {
  enqueue("shutdown", {http::verb::post, "/shutdown", "{}"}, [self = shared_from_this()](const SdkReply& r) {
    if (self->record("shutdown", r) != Outcome::kOk)
      return self->retry_later([self] { self->send_shutdown(); });
    spdlog::info("agones: Shutdown: the GameServer goes away; SIGTERM follows");
    self->halt();
  });
}

}  // namespace shiftcast
