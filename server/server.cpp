#include "server/server.hpp"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "protocol/byte_order_internal.hpp"
#include "protocol/crypto.hpp"
#include "server/agones/agones_address.hpp"
#include "server/agones/agones_sdk.hpp"
#include "server/http_server.hpp"
#include "server/match_registry.hpp"
#include "server/rpc_server.hpp"
#include "server/spectator/spectator_feed.hpp"
#include "server/spectator/spectator_pages.hpp"
#include "server/udp_endpoint.hpp"

namespace shiftcast {

namespace asio = boost::asio;

namespace {

std::uint64_t unix_now() {
  return std::uint64_t(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

// User plus system CPU time of every thread of the process (load tests divide it by players).
double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A random, nonzero id for this process: every token it issues names it, and it accepts no other, so a
// restart invalidates every token of the previous process (spent ones included) without a disk.
std::uint64_t random_server_instance() {
  for (;;) {
    const Key bytes = random_key();
    const auto id = detail::load_le<std::uint64_t>(bytes.data());
    if (id != 0) return id;
  }
}

int thread_count(int configured) {
  return configured > 0 ? configured : std::max(1, int(std::thread::hardware_concurrency()));
}

}  // namespace

void Server::Pool::create(int count) {
  for (int i = 0; i < count; ++i) {
    contexts.push_back(std::make_unique<asio::io_context>(1));
    guards.push_back(asio::make_work_guard(*contexts.back()));
  }
}

void Server::Pool::run() {
  for (auto& c : contexts)
    threads.emplace_back([context = c.get()] { context->run(); });
}

void Server::Pool::stop() {
  for (auto& g : guards)
    g.reset();
  for (auto& c : contexts)
    asio::post(*c, [context = c.get()] { context->stop(); });
}

void Server::Pool::join() {
  for (auto& t : threads)
    if (t.joinable()) t.join();
  threads.clear();
}

Server::Server(ServerConfig config)
    : config_(std::move(config)), udp_rejections_(metrics_, "udp"), rpc_rejections_(metrics_, "rpc") {}

Server::~Server() {
  shutdown();
  wait();
}

std::string Server::load_keys() {
  if (!crypto_init()) return "libsodium failed to initialise";
  const std::optional<Key> token_key = key_from_hex(read_key_file_line(config_, config_.token_key_file));
  if (!token_key) return "token key file " + config_.token_key_file + ": not 64 hex digits";
  keys_.token_key = *token_key;
  if (!config_.previous_token_key_file.empty()) {
    keys_.previous_token_key = key_from_hex(read_key_file_line(config_, config_.previous_token_key_file));
    if (!keys_.previous_token_key)
      return "previous token key file " + config_.previous_token_key_file + ": not 64 hex digits";
    spdlog::info("token key rotation: tokens sealed under the previous key ({}) are accepted too",
                 config_.previous_token_key_file);
  }
  keys_.challenge_key = random_key();
  keys_.server_instance = random_server_instance();
  admin_key_ = read_key_file_line(config_, config_.admin_key_file);
  if (admin_key_.empty()) return "admin key file " + config_.admin_key_file + " is empty";
  if (!config_.service_key_file.empty()) service_key_ = read_key_file_line(config_, config_.service_key_file);
  if (!config_.spectator_key_file.empty())
    spectator_key_ = read_key_file_line(config_, config_.spectator_key_file);
  return {};
}

std::string Server::load_levels() {
  for (const LevelConfig& lc : config_.levels) {
    const auto started = std::chrono::steady_clock::now();
    HostedLevelResult r = load_hosted_level(lc, config_);
    if (!r.ok()) return "level " + lc.name + ": " + r.error;
    spdlog::info(
        "level {} loaded from {}{} in {:.0f} ms ({} brushes)", lc.name, r.level->source,
        r.level->used_fallback ? " (fallback)" : "",
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count(),
        r.level->compiled.level.brushes.size());
    levels_.emplace(lc.name, std::move(r.level));
  }
  return {};
}

std::string Server::start() {
  if (std::string e = load_keys(); !e.empty()) return e;
  if (std::string e = load_levels(); !e.empty()) return e;

  const int workers = thread_count(config_.threads);
  workers_.create(workers);
  rpc_pool_.create(thread_count(config_.rpc_threads));

  // UDP: every worker binds the same port; the first bind picks it when the config says 0.
  Counter& packets_in =
      metrics_.counter("shiftcast_udp_packets_total", "UDP datagrams", {{"direction", "in"}});
  Counter& packets_out =
      metrics_.counter("shiftcast_udp_packets_total", "UDP datagrams", {{"direction", "out"}});
  Counter& bytes_in = metrics_.counter("shiftcast_udp_bytes_total", "UDP bytes", {{"direction", "in"}});
  Counter& bytes_out = metrics_.counter("shiftcast_udp_bytes_total", "UDP bytes", {{"direction", "out"}});
  Counter& send_failures = metrics_.counter("shiftcast_udp_send_failures_total",
                                            "Datagrams the kernel refused to queue (send buffer full)");
  // Both series always, so a dashboard sees the previous key's stay at zero (docs/server.md, "Rotating the
  // token key").
  constexpr char kTokensOpenedHelp[] =
      "Connect tokens that opened (authenticated and well formed), by the token key that opened them";
  Counter& tokens_opened_current =
      metrics_.counter("shiftcast_tokens_opened_total", kTokensOpenedHelp, {{"key", "current"}});
  Counter& tokens_opened_previous =
      metrics_.counter("shiftcast_tokens_opened_total", kTokensOpenedHelp, {{"key", "previous"}});
  const std::string& udp_address = effective_udp_bind_address(config_);
  const asio::ip::address bind_address = asio::ip::make_address(udp_address);
  std::uint16_t udp_port = config_.udp_port;
  public_address_ = config_.public_address;
  if (public_address_ == kPublicAddressFromAgones) {
    const char* port_variable = std::getenv(kAgonesPortVariable);
    const std::optional<std::uint16_t> sdk_port = agones_sdk_port(config_.agones, port_variable);
    if (!agones_enabled(config_.agones, port_variable) || !sdk_port)
      return "public_address = \"agones\" needs [agones] on and the sidecar's port";
    const AgonesAddress from_agones = wait_for_agones_address(*sdk_port, config_.agones, kAgonesAddressWait);
    if (!from_agones.ok()) return from_agones.error;
    public_address_ = from_agones.address;
    spdlog::info("public address from the Agones GameServer: {}", public_address_);
  }
  std::vector<MatchWorker> match_workers;
  for (int i = 0; i < workers; ++i) {
    UdpEndpointServices s;
    s.keys = &keys_;
    s.replay_cache = &replay_cache_;
    s.rejections = &udp_rejections_;
    s.find_match = [this](std::uint32_t id) { return registry_->find_match(id); };
    s.addresses = addresses_;
    s.unix_now = unix_now;
    s.steady_now = steady_seconds;
    s.preauth = {config_.udp_preauth_rate, config_.udp_preauth_burst,
                 std::size_t(config_.udp_preauth_sources), config_.udp_preauth_limit_loopback != 0};
    s.packets_in = &packets_in;
    s.bytes_in = &bytes_in;
    s.packets_out = &packets_out;
    s.bytes_out = &bytes_out;
    s.send_failures = &send_failures;
    s.tokens_opened_current = &tokens_opened_current;
    s.tokens_opened_previous = &tokens_opened_previous;
    auto endpoint = std::make_unique<UdpEndpoint>(*workers_.contexts[i], s);
    if (std::string e = endpoint->open({bind_address, udp_port}); !e.empty()) return e;
    udp_port = endpoint->port();
    endpoints_.push_back(std::move(endpoint));
    pulses_.push_back(std::make_shared<WorkerPulse>());
    match_workers.push_back({workers_.contexts[i].get(), endpoints_.back().get(), pulses_.back()});
  }
  if (public_address_.empty()) public_address_ = udp_address + ":" + std::to_string(udp_port);
  for (auto& e : endpoints_)
    e->set_public_address(public_address_);
  ports_.udp = udp_port;

  MatchDefaults defaults;
  defaults.tick_rate = config_.tick_rate;
  defaults.snapshot_rate = config_.snapshot_rate;
  defaults.max_players = config_.max_players;
  defaults.max_matches = config_.max_matches;
  defaults.connection.timeout = config_.connection_timeout_s;
  defaults.connection.keepalive_interval = config_.keepalive_interval_s;
  defaults.connection.max_pending_events = std::size_t(config_.max_pending_events);
  defaults.connection.event_sends = config_.event_sends;
  defaults.connection.input_ack_delay_ticks = config_.input_ack_delay_ticks;
  defaults.shutdown_flush_s = config_.shutdown_flush_s;
  defaults.max_subscriptions_per_match = std::size_t(config_.rpc_max_subscriptions_per_match);
  defaults.interest = config_.interest;
  if (!config_.recording_directory.empty())
    defaults.recording_directory = resolve_path(config_, config_.recording_directory);
  MatchServices services;
  services.addresses = addresses_;
  // Contact subscriptions are filtered on the RPC threads, never on the match's worker.
  for (auto& c : rpc_pool_.contexts)
    services.fanout.push_back(c.get());
  services.metrics = &metrics_;
  services.rejections = &udp_rejections_;
  services.packets_out = &packets_out;
  services.bytes_out = &bytes_out;
  // Only the Agones SDK listens; agones_ is set (or not) before any worker runs and never changes after.
  services.on_player = [this](std::uint32_t match, std::uint64_t client, bool joined) {
    if (agones_) agones_->player_changed(match, client, joined);
  };
  services.on_match_finished = [this](std::uint32_t match, std::size_t left) {
    if (agones_) agones_->match_finished(match, left);
  };
  registry_ = std::make_unique<MatchRegistry>(std::move(match_workers), levels_, defaults, services);

  for (const InitialMatchConfig& m : config_.matches)
    for (int i = 0; i < m.count; ++i) {
      CreatedMatch created = registry_->create({m.level, m.max_players, m.props, m.seed + std::uint32_t(i)});
      if (created.error != wire::ErrorCode::Ok) return "match on " + m.level + ": " + created.detail;
    }

  // The config holds the listener's settings as they are; what is not config is filled in here.
  RpcSettings rpc = config_.rpc;
  rpc.service_key = service_key_;
  rpc.open_reads = config_.read_access == "open";
  rpc.admin_key = admin_key_;
  rpc.keys = keys_;
  rpc.public_address = public_address_;
  rpc.unix_now = unix_now;
  std::vector<asio::io_context*> rpc_contexts;
  for (auto& c : rpc_pool_.contexts)
    rpc_contexts.push_back(c.get());
  rpc_ = std::make_unique<RpcServer>(rpc_contexts, *registry_, rpc, metrics_, rpc_rejections_);
  if (std::string e = rpc_->start(); !e.empty()) return e;
  ports_.rpc = rpc_->port();

  HttpRoutes routes;
  Gauge& cpu = metrics_.gauge("process_cpu_seconds_total", "CPU time of the whole process, user and system");
  routes.metrics = [this, &cpu] {
    cpu.set(process_cpu_seconds());
    return metrics_.render();
  };
  routes.ready = [this] { return ready_.load() && !shutting_down_.load(); };
  SpectatorSettings spectator;
  spectator.delay = std::chrono::milliseconds(config_.spectator_delay_ms);
  spectator.rate = config_.spectator_rate;
  spectator.byte_budget = std::size_t(config_.spectator_byte_budget);
  spectator.max_viewers = config_.max_viewers;
  spectator_feed_ = std::make_unique<SpectatorFeed>(*rpc_pool_.contexts[0], *registry_, spectator, &metrics_);
  spectator_pages_ =
      std::make_unique<SpectatorPages>(*registry_, &metrics_, spectator_key_, spectator_feed_.get(),
                                       ServerIdentity{public_address_, keys_.server_instance});
  routes.page = [pages = spectator_pages_.get()](const HttpRequestView& r) { return pages->page(r); };
  routes.upgrade = [pages = spectator_pages_.get()](const HttpRequestView& r,
                                                    const std::function<HttpUpgrade()>& take) {
    return pages->upgrade(r, take);
  };
  HttpLimits http_limits;
  http_limits.max_connections = std::size_t(config_.http_max_connections);
  http_limits.max_connections_per_source = std::size_t(config_.http_max_connections_per_source);
  http_limits.read_timeout =
      std::chrono::milliseconds(std::max(1LL, std::llround(config_.http_request_timeout_s * 1000)));
  http_limits.idle_timeout =
      std::chrono::milliseconds(std::max(1LL, std::llround(config_.http_idle_timeout_s * 1000)));
  http_ = std::make_unique<HttpServer>(*rpc_pool_.contexts[0], config_.http_bind_address, config_.http_port,
                                       routes, http_limits, &metrics_);
  if (std::string e = http_->start(); !e.empty()) return e;
  ports_.http = http_->port();
  spectator_feed_->start();

  if (std::string e = start_agones(); !e.empty()) return e;

  for (auto& e : endpoints_)
    e->start();
  workers_.run();
  rpc_pool_.run();
  ready_.store(true);
  spdlog::info("shiftcast-server ready: {} workers, {} rpc threads, udp {} rpc {} http {}, {} matches",
               workers, rpc_pool_.contexts.size(), ports_.udp, ports_.rpc, ports_.http, registry_->size());
  // Levels are loaded and every socket is bound: now the sidecar may hear Ready.
  if (agones_) agones_->start();
  return {};
}

std::string Server::start_agones() {
  const char* port_variable = std::getenv(kAgonesPortVariable);
  if (!agones_enabled(config_.agones, port_variable)) return {};
  const std::optional<std::uint16_t> port = agones_sdk_port(config_.agones, port_variable);
  if (!port) {
    return std::string("[agones] is enabled, but neither sdk_port nor ") + kAgonesPortVariable +
           " names the sidecar's port";
  }
  AgonesServices services;
  services.directory = registry_.get();
  services.match_id = registry_->reserve_id();
  services.server_instance = keys_.server_instance;
  services.default_max_players = config_.max_players;
  services.metrics = &metrics_;
  for (auto& c : workers_.contexts)
    services.workers.push_back(c.get());
  services.pulses = pulses_;
  // The SDK's strand shares the first RPC thread (with the HTTP listener): never a match worker.
  agones_ = AgonesSdk::create(*rpc_pool_.contexts[0], {asio::ip::make_address("127.0.0.1"), *port},
                              config_.agones, std::move(services));
  return {};
}

void Server::shutdown() {
  if (shutting_down_.exchange(true)) return;
  ready_.store(false);
  spdlog::info("shutting down: no new connections, flushing matches");
  if (agones_) agones_->stop();  // first: the matches' ends below are the shutdown's, not allocations'
  if (rpc_) rpc_->stop();
  auto matches_ended = [this] {
    std::lock_guard lock(done_mutex_);
    matches_ended_ = true;
    done_cv_.notify_all();
  };
  if (registry_ == nullptr || workers_.threads.empty()) return matches_ended();
  registry_->end_all(matches_ended);
}

void Server::wait() {
  {
    std::unique_lock lock(done_mutex_);
    done_cv_.wait(lock, [this] { return matches_ended_; });
    if (stopped_) return;
    stopped_ = true;
  }
  // Each worker closes its socket, then stops: posted in that order, run in that order.
  for (std::size_t i = 0; i < endpoints_.size(); ++i) {
    asio::post(*workers_.contexts[i], [e = endpoints_[i].get()] { e->close(); });
  }
  if (http_) asio::post(*rpc_pool_.contexts[0], [h = http_.get()] { h->stop(); });
  if (spectator_feed_) spectator_feed_->stop();
  workers_.stop();
  rpc_pool_.stop();
  workers_.join();
  rpc_pool_.join();
  spdlog::info("shiftcast-server stopped");
}

}  // namespace shiftcast
