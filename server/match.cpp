#include "server/match.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <cmath>

#include "protocol/envelope.hpp"
#include "protocol/snapshot_delta.hpp"
#include "server/own_state_wire.hpp"
#include "server/snapshot_world.hpp"
#include "server/udp_endpoint.hpp"
#include "world/level/level.hpp"

namespace shiftcast {

namespace asio = boost::asio;
using asio::ip::udp;

namespace {

// Quake's spawn origin is the centre of the player's box, this far above the feet.
constexpr float kSpawnOriginAboveFeet = 24;

std::uint8_t wire_kind(const Entity* e, EntityId id) {
  if (id == kNoEntity) return kKindLevel;
  // A projectile removed by its hit is gone by the end of the tick; players and props never vanish
  // within a tick, so an unknown id is that projectile.
  return e == nullptr ? static_cast<std::uint8_t>(EntityKind::kProjectile)
                      : static_cast<std::uint8_t>(e->kind);
}

}  // namespace

std::shared_ptr<Match> Match::create(const MatchSettings& settings, asio::io_context& worker,
                                     UdpEndpoint& endpoint, const MatchServices& services,
                                     std::string* error) {
  std::shared_ptr<Match> match(new Match(settings, worker, endpoint, services));
  MatchSetupResult made = make_hosted_match_setup(
      settings.level->compiled.tree, settings.level->compiled.level, settings.level->navmesh.get(),
      {settings.tick_rate, settings.props, settings.seed});
  if (!made.ok()) {
    if (error != nullptr) *error = made.error;
    return nullptr;
  }
  match->scene_ = std::move(made.scene);
  if (settings.level->navmesh != nullptr) match->nav_ = std::make_unique<NavQuery>(*settings.level->navmesh);
  match->spawn_rng_ = settings.seed;
  if (!settings.recording_directory.empty()) match->open_recording();
  return match;
}

Match::Match(const MatchSettings& settings, asio::io_context& worker, UdpEndpoint& endpoint,
             const MatchServices& services)
    : settings_(settings),
      worker_(worker),
      endpoint_(endpoint),
      services_(services),
      timer_(worker),
      addresses_(services.addresses ? services.addresses : std::make_shared<ClientAddressBook>()),
      interest_(settings.interest, settings.level->compiled.visibility, &settings.level->compiled.tree) {
  period_ =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / settings.tick_rate));
  snapshot_every_ = std::max(1, int(std::lround(double(settings.tick_rate) / settings.snapshot_rate)));
  feed_ = services.fanout.empty() ? std::make_unique<ContactFeed>()
                                  : std::make_unique<ContactFeed>(
                                        services.fanout[settings.id % services.fanout.size()]->get_executor(),
                                        settings.max_subscriptions);
  const Labels labels{{"match", std::to_string(settings.id)}};
  MetricsRegistry& m = *services.metrics;
  tick_seconds_ = m.histogram_series("shiftcast_tick_seconds", "Duration of one match tick", labels);
  late_counter_ =
      m.counter_series("shiftcast_late_ticks_total", "Ticks started more than one period late", labels);
  skipped_counter_ =
      m.counter_series("shiftcast_skipped_ticks_total",
                       "Ticks skipped because the worker fell more than kMaxCatchUpTicks behind", labels);
  contacts_counter_ = m.counter_series("shiftcast_contacts_total", "Contact records produced", labels);
  violations_counter_ = m.counter_series("shiftcast_invariant_violations_total",
                                         "Overlaps found after a tick and re-placed", labels);
  players_gauge_ = m.gauge_series("shiftcast_players", "Connected players", labels);
  // Exactly-once commands (ClientConnection::take_commands): run or dropped, waits for credit, starved ticks.
  const auto outcome = [&](const char* o) {
    Labels l = labels;
    l.emplace_back("outcome", o);
    return m.counter_series("shiftcast_commands_total", "Player commands run or dropped (queue bound)", l);
  };
  commands_run_counter_ = outcome("run");
  commands_dropped_counter_ = outcome("dropped");
  command_waits_counter_ = m.counter_series(
      "shiftcast_command_waits_total", "Commands left waiting for command credit, summed over ticks", labels);
  command_starved_counter_ =
      m.counter_series("shiftcast_command_starved_ticks_total",
                       "Ticks in which a connected player had no command to run", labels);
  // Interest management: what the clients were not sent.
  culled_counter_ =
      m.counter_series("shiftcast_interest_culled_total",
                       "Entities left out of a client's snapshot, summed over snapshots", labels);
  sight_culled_counter_ = m.counter_series(
      "shiftcast_interest_sight_culled_total",
      "Players the visible set admitted but no line of sight reached (nor the hold), summed over snapshots",
      labels);
  sight_segments_counter_ = m.counter_series("shiftcast_interest_sight_segments_total",
                                             "Line-of-sight segments traced through the level", labels);
  const auto events = [&](const char* o) {
    Labels l = labels;
    l.emplace_back("outcome", o);
    return m.counter_series("shiftcast_interest_events_total",
                            "Contact events queued for a client (routed), or held back from one that could "
                            "not see them (suppressed)",
                            l);
  };
  events_routed_counter_ = events("routed");
  events_suppressed_counter_ = events("suppressed");
  for (int i = 0; i < kFilterStageCount; ++i) {
    Labels l = labels;
    l.emplace_back("stage", to_string(FilterStage(i)));
    filter_tests_[i] =
        m.counter_series("shiftcast_filter_tests_total", "Entity pairs tested by each filter stage", l);
  }
}

Match::~Match() = default;

const TickHistory& Match::history() const {
  return scene_->simulation().history();
}

double Match::now() const {
  return std::chrono::duration<double>(Clock::now() - start_time_).count();
}

void Match::start() {
  asio::post(worker_, [self = shared_from_this()] {
    self->start_time_ = Clock::now();
    self->deadline_ = self->start_time_;
    self->schedule_next();
  });
}

void Match::schedule_next() {
  deadline_ += period_;
  timer_.expires_at(deadline_);
  timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->on_timer();
  });
}

void Match::on_timer() {
  if (ending_) return;
  run_tick();
  // Catch up by whole ticks when late; far behind, skip to now rather than run a burst.
  int behind = 0;
  while (Clock::now() >= deadline_ + period_) {
    if (++behind > kMaxCatchUpTicks) {
      const auto lag = Clock::now() - deadline_;
      const auto skipped = lag / period_;
      skipped_counter_->add(std::uint64_t(skipped));
      deadline_ += skipped * period_;
      break;
    }
    late_counter_->add();
    late_ticks_.fetch_add(1, std::memory_order_relaxed);
    deadline_ += period_;
    run_tick();
  }
  schedule_next();
}

void Match::run_tick() {
  const auto started = Clock::now();
  if (services_.pulse) services_.pulse->stamp(started);
  drop_closed_connections();
  apply_inputs();
  Simulation& sim = scene_->simulation();
  sim.step();
  if (recorder_) recorder_->end_tick(sim);
  dispatch_contacts();
  if (sim.tick() % std::uint64_t(snapshot_every_) == 0) {
    send_frames();
  } else {
    send_keepalives();
  }
  endpoint_.send_all(outbox_);
  tick_seconds_->observe(std::chrono::duration<double>(Clock::now() - started).count());

  const SimulationCounters& c = sim.counters();
  contacts_counter_->add(c.contacts - last_counters_.contacts);
  violations_counter_->add(c.invariant_violations - last_counters_.invariant_violations);
  for (int i = 0; i < kFilterStageCount; ++i)
    filter_tests_[i]->add(c.filters.stages[i].tests - last_counters_.filters.stages[i].tests);
  last_counters_ = c;
  tick_.store(sim.tick(), std::memory_order_relaxed);
  contacts_.store(c.contacts, std::memory_order_relaxed);
  violations_.store(c.invariant_violations, std::memory_order_relaxed);
  replacements_.store(c.replacements, std::memory_order_relaxed);
  entities_.store(std::uint32_t(sim.entities().size()), std::memory_order_relaxed);
}

void Match::apply_inputs() {
  Simulation& sim = scene_->simulation();
  std::lock_guard lock(view_ticks_mutex_);
  for (auto& [client_id, client] : clients_) {
    // Every command the client sent, exactly once, as its credit allows; none: the player waits.
    tick_commands_.clear();
    const ClientConnection::CommandTake take = client.connection->take_commands(tick_commands_);
    sim.set_inputs(client.entity, tick_commands_);
    if (recorder_) recorder_->commands(client.entity, tick_commands_);
    commands_run_counter_->add(take.run);
    command_waits_counter_->add(take.waiting);
    if (take.run == 0) command_starved_counter_->add();
    if (take.dropped > 0) {
      commands_dropped_counter_->add(take.dropped);
      spdlog::debug("match {}: client {} dropped {} commands (more than {} waiting)", settings_.id, client_id,
                    take.dropped, kMaxQueuedCommands);
    }
    view_ticks_[client_id] = client.connection->view_tick();
  }
}

void Match::find_viewers() {
  const Simulation& sim = scene_->simulation();
  viewers_.clear();
  viewer_clients_.clear();
  for (auto& [id, client] : clients_) {
    viewers_.push_back(interest_.viewer(client.entity, sim.find(client.entity)));
    viewer_clients_.push_back(&client);
  }
}

void Match::dispatch_contacts() {
  const Simulation& sim = scene_->simulation();
  const std::span<const Contact> contacts = sim.contacts();
  if (contacts.empty()) return;
  const bool feed = !feed_->empty();
  std::shared_ptr<ContactBatch> batch;
  if (feed) {
    batch = std::make_shared<ContactBatch>();
    batch->match_id = settings_.id;
    batch->tick = sim.tick();
    batch->records.reserve(contacts.size());
  }
  bool viewers_found = false;
  ContactRoute total;
  for (const Contact& c : contacts) {
    ContactRecord r{c, wire_kind(sim.find(c.a), c.a),
                    wire_kind(c.b == kNoEntity ? nullptr : sim.find(c.b), c.b)};
    if (r.a_kind == static_cast<std::uint8_t>(EntityKind::kPlayer) ||
        r.b_kind == static_cast<std::uint8_t>(EntityKind::kPlayer)) {
      // Each client's eye and cluster once per tick, and only in a tick that has a player's contact.
      if (!viewers_found) find_viewers();
      viewers_found = true;
      contact_routes_.clear();
      const ContactRoute route = interest_.route_contact(r, viewers_, contact_routes_);
      total.routed += route.routed;
      total.suppressed += route.suppressed;
      for (std::uint32_t i : contact_routes_)
        viewer_clients_[i]->connection->queue_contact(r);
    }
    if (feed) batch->records.push_back(r);
  }
  if (total.routed > 0) events_routed_counter_->add(total.routed);
  if (total.suppressed > 0) events_suppressed_counter_->add(total.suppressed);
  if (feed) feed_->publish(batch);
}

void Match::send_frames() {
  if (clients_.empty()) return;
  const Simulation& sim = scene_->simulation();
  auto world = std::make_shared<SnapshotState>();
  quantize_world(sim.entities(), *world);
  world_ = std::move(world);
  const bool filter = interest_.enabled();
  if (filter) interest_.begin_snapshot(sim.entities(), float(snapshot_every_) / float(settings_.tick_rate));
  std::uint64_t culled = 0, sight_culled = 0, sight_segments = 0;
  const double t = now();
  for (auto& [id, client] : clients_) {
    const Entity* me = sim.find(client.entity);
    const Vec3 focus = me != nullptr ? me->pose.position : Vec3{};
    if (filter) {
      interest_.select(interest_.viewer(client.entity, me), kept_, &client.sight);
      culled += world_->size() - kept_.size();
      sight_culled += client.sight.take_culled();
      sight_segments += client.sight.take_segments();
      client.world = client.worlds.filtered(*world_, kept_);
    } else {
      client.world = world_;
    }
    const std::optional<wire::OwnState> own = own_state(sim, client.entity);
    outbox_.add(
        client.connection->build_frame_shared(sim.tick(), client.world, focus, t, own ? &*own : nullptr),
        client.endpoint);
  }
  if (culled > 0) culled_counter_->add(culled);
  if (sight_culled > 0) sight_culled_counter_->add(sight_culled);
  if (sight_segments > 0) sight_segments_counter_->add(sight_segments);
}

void Match::say_goodbye(ClientConnection& connection, const udp::endpoint& to, wire::ErrorCode reason,
                        double t) {
  // Said a few times, as netcode does: a lost goodbye would leave the client waiting for its timeout.
  const std::vector<std::uint8_t> bye = connection.build_disconnect(reason, t);
  for (int i = 0; i < kGoodbyeCopies; ++i)
    endpoint_.send(bye, to);
}

void Match::send_keepalives() {
  const double t = now();
  const std::uint64_t tick = scene_->simulation().tick();
  // A command ran since the last frame: acknowledge it now unless a snapshot frame goes soon enough.
  const int ticks_to_snapshot = snapshot_every_ - int(tick % std::uint64_t(snapshot_every_));
  const bool ack_now = ticks_to_snapshot > settings_.connection.input_ack_delay_ticks;
  for (auto& [id, client] : clients_) {
    if ((ack_now || client.connection->recent_loss(t)) && client.connection->input_ack_due()) {
      const std::optional<wire::OwnState> own = own_state(scene_->simulation(), client.entity);
      outbox_.add(client.connection->build_input_ack(tick, t, own ? &*own : nullptr), client.endpoint);
    } else if (client.connection->keepalive_due(t)) {
      outbox_.add(client.connection->build_keepalive(tick, t), client.endpoint);
    }
  }
}

void Match::drop_closed_connections() {
  const double t = now();
  Simulation& sim = scene_->simulation();
  for (auto it = clients_.begin(); it != clients_.end();) {
    ClientConnection& c = *it->second.connection;
    if (c.timed_out(t) || c.closed()) {
      const wire::ErrorCode reason = c.closed() ? c.close_reason() : wire::ErrorCode::Timeout;
      if (reason != wire::ErrorCode::ClientDisconnected) {
        services_.rejections->reject(reason, to_address(it->second.endpoint), "connection closed");
        say_goodbye(c, it->second.endpoint, reason, t);
      }
      spdlog::info("match {}: client {} left ({})", settings_.id, it->first, to_string(reason));
      if (services_.on_player) services_.on_player(settings_.id, it->first, false);
      sim.remove(it->second.entity);
      if (recorder_) recorder_->leave(it->second.entity);
      {
        std::lock_guard lock(view_ticks_mutex_);
        view_ticks_.erase(it->first);
      }
      // A goodbye's later copies are DuplicatePacket for a grace period (docs/protocol.md, Disconnect).
      addresses_->depart(it->second.endpoint, {settings_.id, it->first}, c.goodbye_sequence(),
                         std::chrono::duration<double>(Clock::now().time_since_epoch()).count());
      it = clients_.erase(it);
    } else {
      ++it;
    }
  }
  players_.store(int(clients_.size()), std::memory_order_relaxed);
  players_gauge_->set(double(clients_.size()));
}

bool Match::spot_is_free(Vec3 feet) const {
  // Touching the floor or a neighbour is fine; overlapping anything solid is not (it would be an
  // invariant violation on the next tick, and the re-placement would count it).
  const Simulation& sim = scene_->simulation();
  const WorldOverlap o = world_overlap(level_tree(), sim.entities(), player_shape(sim.config().motor),
                                       Pose{feet, 0}, QueryFilter{});
  return o.status == QueryStatus::kOk && o.brush == kNoBrush && o.entities.empty();
}

EntityId Match::spawn_player() {
  // Quake's rule, without the telefrag: the level's spawn points in turn, the first one free; then
  // random walkable points; if the level is that crowded, the next spawn point anyway (the tick's
  // invariant check then moves whoever overlaps).
  Simulation& sim = scene_->simulation();
  const Level& level = settings_.level->compiled.level;
  const std::size_t spawns = level.spawns.size();
  for (std::size_t i = 0; i < spawns; ++i) {
    const SpawnPoint& s = level.spawns[(spawns_used_ + i) % spawns];
    const Vec3 feet = s.origin - Vec3{0, 0, kSpawnOriginAboveFeet};
    if (!spot_is_free(feet)) continue;
    spawns_used_ += int(i) + 1;
    return sim.add_player(feet, s.yaw_degrees * (kPi / 180));
  }
  if (nav_ != nullptr && spawns > 0) {
    // Only points a player could walk to from a spawn point: the navmesh also covers the tops of outer
    // walls and other islands, from which a player would walk off into the void.
    const Vec3 anchor = level.spawns[0].origin - Vec3{0, 0, kSpawnOriginAboveFeet};
    for (int attempt = 0; attempt < kRandomSpawnAttempts; ++attempt) {
      const std::optional<Vec3> p = nav_->random_point(spawn_rng_);
      if (p && nav_->find_path(anchor, *p, spawn_path_) && spot_is_free(*p)) return sim.add_player(*p, 0);
    }
  }
  const SpawnPoint fallback = spawns == 0 ? SpawnPoint{} : level.spawns[std::size_t(spawns_used_++) % spawns];
  return sim.add_player(fallback.origin - Vec3{0, 0, spawns == 0 ? 0 : kSpawnOriginAboveFeet},
                        fallback.yaw_degrees * (kPi / 180));
}

wire::ErrorCode Match::on_connect(const AcceptedChallenge& accepted, const udp::endpoint& from,
                                  bool fresh_token) {
  if (ending_) {
    const std::vector<std::uint8_t> denied = build_denied(wire::ErrorCode::ShuttingDown);
    endpoint_.send(denied, from);
    return wire::ErrorCode::ShuttingDown;
  }
  const double t = now();
  Simulation& sim = scene_->simulation();
  // What the client cannot learn otherwise, in the keep-alive that accepts it (docs/protocol.md).
  const SessionTiming session{settings_.tick_rate, settings_.snapshot_rate,
                              settings_.connection.keepalive_interval, settings_.connection.timeout};
  auto existing = clients_.find(accepted.client_id);
  if (!fresh_token) {
    if (existing != clients_.end() && existing->second.endpoint == from) {
      endpoint_.send(existing->second.connection->build_keepalive(sim.tick(), t, &session), from);
      return wire::ErrorCode::Ok;
    }
    services_.rejections->reject(wire::ErrorCode::TokenReplayed, to_address(from), "token already used");
    const std::vector<std::uint8_t> denied = build_denied(wire::ErrorCode::TokenReplayed);
    endpoint_.send(denied, from);
    return wire::ErrorCode::TokenReplayed;
  }
  EntityId entity = kNoEntity;
  const bool fresh_player = existing == clients_.end();  // a reconnect takes over its player
  if (existing != clients_.end()) {
    // A reconnect with a fresh token takes over the player it had; the old address routes nowhere now.
    entity = existing->second.entity;
    addresses_->depart(existing->second.endpoint, {settings_.id, accepted.client_id}, 0,
                       std::chrono::duration<double>(Clock::now().time_since_epoch()).count());
    clients_.erase(existing);
  } else {
    if (int(clients_.size()) >= settings_.max_players) {
      services_.rejections->reject(wire::ErrorCode::MatchFull, to_address(from),
                                   "match " + std::to_string(id()));
      const std::vector<std::uint8_t> denied = build_denied(wire::ErrorCode::MatchFull);
      endpoint_.send(denied, from);
      return wire::ErrorCode::MatchFull;
    }
    entity = spawn_player();
    if (const Entity* e = sim.find(entity); recorder_ && e != nullptr)
      recorder_->join(entity, e->pose.position, e->pose.yaw);
  }
  ConnectionParams params{settings_.id,
                          accepted.client_id,
                          accepted.client_to_server,
                          accepted.server_to_client,
                          to_address(from),
                          entity};
  Client client{
      std::make_unique<ClientConnection>(params, settings_.connection, t), from, entity, {}, nullptr};
  // Admitted before the first keep-alive leaves: the client's first packet may answer it at once, on
  // another worker's thread, which asks the address book.
  addresses_->set(from, {settings_.id, accepted.client_id});
  // The first keep-alive tells the client it is connected (and which tick the world is at).
  endpoint_.send(client.connection->build_keepalive(sim.tick(), t, &session), from);
  clients_.emplace(accepted.client_id, std::move(client));
  players_.store(int(clients_.size()), std::memory_order_relaxed);
  spdlog::info("match {}: client {} connected from {} as entity {}", settings_.id, accepted.client_id,
               to_address(from), entity);
  if (fresh_player && services_.on_player) services_.on_player(settings_.id, accepted.client_id, true);
  return wire::ErrorCode::Ok;
}

void Match::on_packet(std::uint64_t client_id, std::vector<std::uint8_t> datagram,
                      const udp::endpoint& from) {
  auto it = clients_.find(client_id);
  if (it == clients_.end()) {
    services_.rejections->reject(wire::ErrorCode::UnknownConnection, to_address(from),
                                 "client " + std::to_string(client_id));
    return;
  }
  // The connection's own address when it is that one (always, for an admitted packet): no string built.
  ClientConnection& connection = *it->second.connection;
  const std::string address = from == it->second.endpoint ? std::string() : to_address(from);
  const std::string_view from_address =
      address.empty() ? std::string_view(connection.peer_address()) : address;
  const wire::ErrorCode result = connection.on_packet(datagram, from_address, now());
  if (result != wire::ErrorCode::Ok) services_.rejections->reject(result, from_address, "packet");
}

std::optional<double> Match::client_view_tick(std::uint64_t client_id) const {
  std::lock_guard lock(view_ticks_mutex_);
  auto it = view_ticks_.find(client_id);
  if (it == view_ticks_.end()) return std::nullopt;
  return it->second;
}

MatchHealth Match::health() const {
  MatchHealth h;
  h.summary.match_id = settings_.id;
  h.summary.level = settings_.level->name;
  h.summary.tick_rate = settings_.tick_rate;
  h.summary.tick = tick_.load(std::memory_order_relaxed);
  h.summary.players = players_.load(std::memory_order_relaxed);
  h.summary.max_players = settings_.max_players;
  h.summary.entities = entities_.load(std::memory_order_relaxed);
  h.tick_p50_ms = tick_seconds_->quantile(0.5) * 1000;
  h.tick_p99_ms = tick_seconds_->quantile(0.99) * 1000;
  h.late_ticks = late_ticks_.load(std::memory_order_relaxed);
  h.contacts = contacts_.load(std::memory_order_relaxed);
  h.invariant_violations = violations_.load(std::memory_order_relaxed);
  h.replacements = replacements_.load(std::memory_order_relaxed);
  h.tick_ms_bounds = tick_seconds_->bounds();
  for (double& b : h.tick_ms_bounds)
    b *= 1000;
  h.tick_counts = tick_seconds_->bucket_counts();
  return h;
}

void Match::end(wire::ErrorCode reason, std::function<void()> on_done) {
  end_requested_.store(true);
  asio::post(worker_, [self = shared_from_this(), reason, on_done = std::move(on_done)]() mutable {
    // Every caller gets its completion: EndMatch and a shutdown may race here (both passed the
    // registry's checks), and a lost completion would leave Server::wait() waiting for ever.
    if (self->ended_.load()) {
      if (on_done) on_done();
      return;
    }
    if (on_done) self->completions_.push_back(std::move(on_done));
    if (self->ending_) return;  // the end in flight runs every completion when it finishes
    // The tick in progress has finished (this runs between ticks on the worker); stop ticking.
    self->ending_ = true;
    self->timer_.cancel();
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(self->settings_.shutdown_flush_s));
    self->flush_and_close(reason, deadline);
  });
}

void Match::flush_and_close(wire::ErrorCode reason, Clock::time_point deadline) {
  // Resend the reliable events each period until every client acknowledged them or the deadline passed.
  bool pending = false;
  const double t = now();
  const Simulation& sim = scene_->simulation();
  for (auto& [id, client] : clients_) {
    if (client.connection->closed() || client.connection->events_pending() == 0) continue;
    pending = true;
    const Entity* me = sim.find(client.entity);
    endpoint_.send(client.connection->build_frame_shared(
                       sim.tick(), client.world ? client.world : std::make_shared<const SnapshotState>(),
                       me ? me->pose.position : Vec3{}, t),
                   client.endpoint);
  }
  if (!pending || Clock::now() >= deadline) return finish(reason);
  timer_.expires_after(period_);
  timer_.async_wait([self = shared_from_this(), reason, deadline](boost::system::error_code) {
    self->flush_and_close(reason, deadline);
  });
}

void Match::finish(wire::ErrorCode reason) {
  const double t = now();
  for (auto& [id, client] : clients_) {
    say_goodbye(*client.connection, client.endpoint, reason, t);
    if (services_.on_player) services_.on_player(settings_.id, id, false);
  }
  clients_.clear();
  addresses_->erase_match(settings_.id);
  players_.store(0);
  players_gauge_->set(0);
  ended_.store(true);
  feed_->end(settings_.id);
  spdlog::info("match {}: ended ({})", settings_.id, to_string(reason));
  if (recorder_) recorder_->close();
  // Taken out first: a completion may end the registry's last reference to this match.
  std::vector<std::function<void()>> completions = std::move(completions_);
  completions_.clear();
  for (auto& done : completions)
    done();
}

// ------------------------------------------------------------------------------------------ recording

void Match::open_recording() {
  const Simulation& sim = scene_->simulation();
  RecordingHeader h;
  h.level_name = settings_.level->name;
  h.level_hash = level_fingerprint(settings_.level->compiled);
  h.match_id = settings_.id;
  h.tick_rate = settings_.tick_rate;
  h.snapshot_rate = settings_.snapshot_rate;
  h.max_players = settings_.max_players;
  h.props = settings_.props;
  h.seed = settings_.seed;
  h.level_check_period = sim.config().level_check_period;
  h.start_tick = sim.tick();
  h.start_hash = sim.state_hash();
  std::string error;
  recorder_ = MatchRecorder::open(settings_.recording_directory, h, &error);
  if (recorder_ == nullptr) {
    spdlog::warn("match {}: not recorded: {}", settings_.id, error);
  } else {
    spdlog::info("match {}: recording to {}", settings_.id, recorder_->path());
  }
}

void Match::record_query(const RecordedQuery& query) const {
  if (recorder_) recorder_->post_query(query);
  if (shots_.watched()) shots_.push(query);
}

}  // namespace shiftcast
