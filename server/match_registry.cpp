#include "server/match_registry.hpp"

#include <spdlog/spdlog.h>

#include "server/config/tick_rates.hpp"

namespace shiftcast {

MatchRegistry::MatchRegistry(std::vector<MatchWorker> workers,
                             std::map<std::string, std::shared_ptr<const HostedLevel>> levels,
                             const MatchDefaults& defaults, const MatchServices& services)
    : workers_(std::move(workers)), levels_(std::move(levels)), defaults_(defaults), services_(services) {}

std::shared_ptr<MatchHandle> MatchRegistry::find(std::uint32_t match_id) const {
  // For the RPC a match is gone once EndMatch was answered; UDP still routes to it while it flushes.
  std::shared_ptr<Match> match = find_match(match_id);
  if (match == nullptr || match->ending()) return nullptr;
  return match;
}

std::shared_ptr<Match> MatchRegistry::find_match(std::uint32_t match_id) const {
  std::shared_lock lock(mutex_);
  auto it = matches_.find(match_id);
  if (it == matches_.end() || it->second->ended()) return nullptr;
  return it->second;
}

std::vector<std::shared_ptr<MatchHandle>> MatchRegistry::list() const {
  std::shared_lock lock(mutex_);
  std::vector<std::shared_ptr<MatchHandle>> out;
  for (const auto& [id, m] : matches_)
    if (!m->ending()) out.push_back(m);
  return out;
}

std::size_t MatchRegistry::size() const {
  std::shared_lock lock(mutex_);
  return matches_.size();
}

CreatedMatch MatchRegistry::create(const CreateMatchSpec& spec) {
  CreatedMatch result;
  auto level = levels_.find(spec.level);
  if (level == levels_.end()) {
    result.error = wire::ErrorCode::UnknownLevel;
    result.detail = "no level named '" + spec.level + "' in the server's config";
    return result;
  }
  const int tick_rate = spec.tick_rate != 0 ? spec.tick_rate : defaults_.tick_rate;
  const int snapshot_rate =
      std::min(tick_rate, spec.snapshot_rate != 0 ? spec.snapshot_rate : defaults_.snapshot_rate);
  if (spec.max_players < 1 || spec.max_players > defaults_.max_players || spec.props < 0 ||
      spec.props > kMaxPropsPerMatch || tick_rate < kMinTickRate || tick_rate > kMaxTickRate ||
      snapshot_rate < 1) {
    result.error = wire::ErrorCode::BadArgument;
    result.detail = "max_players must be 1.." + std::to_string(defaults_.max_players) + ", props 0.." +
                    std::to_string(kMaxPropsPerMatch) + ", tick_rate " + std::to_string(kMinTickRate) + ".." +
                    std::to_string(kMaxTickRate) + " and snapshot_rate 1..tick_rate";
    return result;
  }
  MatchSettings settings;
  settings.level = level->second;
  settings.tick_rate = tick_rate;
  settings.snapshot_rate = snapshot_rate;
  settings.max_players = spec.max_players;
  settings.props = spec.props;
  settings.seed = spec.seed;
  settings.connection = defaults_.connection;
  settings.shutdown_flush_s = defaults_.shutdown_flush_s;
  settings.max_subscriptions = defaults_.max_subscriptions_per_match;
  settings.recording_directory = defaults_.recording_directory;
  settings.interest = defaults_.interest;
  MatchWorker worker;
  {
    std::unique_lock lock(mutex_);
    if (int(matches_.size()) >= defaults_.max_matches) {
      result.error = wire::ErrorCode::TooManyConnections;
      result.detail = "the server hosts its maximum of " + std::to_string(defaults_.max_matches) + " matches";
      return result;
    }
    if (spec.id != 0) {
      if (reserved_.count(spec.id) == 0) {
        result.error = wire::ErrorCode::BadArgument;
        result.detail = "match id " + std::to_string(spec.id) + " was not reserved (or is taken)";
        return result;
      }
      reserved_.erase(spec.id);  // taken now: a second create with it is refused
      settings.id = spec.id;
    } else {
      settings.id = next_id_++;
    }
    worker = workers_[next_worker_++ % workers_.size()];
  }
  // Building the world (props settling) runs on the caller's thread, outside the lock.
  std::string error;
  MatchServices services = services_;
  services.pulse = worker.pulse;
  std::shared_ptr<Match> match = Match::create(settings, *worker.context, *worker.endpoint, services, &error);
  if (match == nullptr) {
    if (spec.id != 0) {
      std::unique_lock lock(mutex_);
      reserved_.insert(spec.id);  // still the allocation's to use
    }
    result.error = wire::ErrorCode::UnknownLevel;
    result.detail = "level '" + spec.level + "' cannot host a match: " + error;
    return result;
  }
  {
    std::unique_lock lock(mutex_);
    matches_.emplace(settings.id, match);
  }
  match->start();
  spdlog::info("match {} created on level {} ({} Hz, up to {} players, {} props)", settings.id, spec.level,
               settings.tick_rate, settings.max_players, settings.props);
  result.match_id = settings.id;
  return result;
}

wire::ErrorCode MatchRegistry::end(std::uint32_t match_id) {
  std::shared_ptr<Match> match;
  {
    std::shared_lock lock(mutex_);
    auto it = matches_.find(match_id);
    if (it == matches_.end() || it->second->ending()) return wire::ErrorCode::UnknownMatch;
    match = it->second;
  }
  // The match stays findable while it flushes (its clients' acknowledgements must still reach it); it
  // leaves the registry, and its metric series go, once it stopped for good.
  match->end(wire::ErrorCode::MatchEnded, [this, match_id] { forget(match_id); });
  return wire::ErrorCode::Ok;
}

std::uint32_t MatchRegistry::reserve_id() {
  std::unique_lock lock(mutex_);
  const std::uint32_t id = next_id_++;
  reserved_.insert(id);
  return id;
}

void MatchRegistry::forget(std::uint32_t match_id) {
  std::size_t left = 0;
  {
    std::unique_lock lock(mutex_);
    matches_.erase(match_id);
    left = matches_.size();
  }
  services_.metrics->remove_labelled("match", std::to_string(match_id));
  if (services_.on_match_finished) services_.on_match_finished(match_id, left);
}

void MatchRegistry::end_all(std::function<void()> on_done) {
  // Every match still registered, including those an EndMatch is already flushing: `on_done` must wait
  // for them too (Match::end gives each caller its completion, so racing an EndMatch cannot lose one).
  std::vector<std::shared_ptr<Match>> ending;
  {
    std::shared_lock lock(mutex_);
    for (const auto& [id, match] : matches_)
      ending.push_back(match);
  }
  if (ending.empty()) {
    if (on_done) on_done();
    return;
  }
  auto remaining = std::make_shared<std::atomic<std::size_t>>(ending.size());
  auto done = std::make_shared<std::function<void()>>(std::move(on_done));
  for (const auto& match : ending)
    match->end(wire::ErrorCode::ShuttingDown, [this, remaining, done, id = match->id()] {
      forget(id);
      if (remaining->fetch_sub(1) == 1 && *done) (*done)();
    });
}

}  // namespace shiftcast
