#include "tests/support/stepped_match_directory.hpp"

#include <algorithm>
#include <utility>

namespace shiftcast {

SteppedMatch::SteppedMatch(std::uint32_t id, std::shared_ptr<const SimLevel> level, int tick_rate)
    : id_(id), level_(std::move(level)), tick_rate_(tick_rate) {}

std::shared_ptr<SteppedMatch> SteppedMatch::create(std::uint32_t id, std::shared_ptr<const SimLevel> level,
                                                   const CreateMatchSpec& spec,
                                                   const SteppedMatchOptions& options, std::string* error) {
  std::shared_ptr<SteppedMatch> m(new SteppedMatch(id, level, options.tick_rate));
  MatchSetupConfig config;
  config.players = spec.max_players;
  config.props = spec.props;
  config.projectiles = options.projectiles;
  config.seed = spec.seed;
  config.settle_seconds = options.settle_seconds;
  SimulationConfig sim_config;
  sim_config.tick_rate = options.tick_rate;
  MatchSetupResult made = MatchSetup::create(level->compiled.tree, level->compiled.level,
                                             level->navmesh.get(), sim_config, config);
  if (!made.ok()) {
    if (error != nullptr) *error = made.error;
    return nullptr;
  }
  m->scene_ = std::move(made.scene);
  m->max_players_ = spec.max_players;
  m->remember_kinds();
  m->update_health();
  return m;
}

void SteppedMatch::remember_kinds() {
  for (const Entity& e : scene_->simulation().entities())
    kinds_.emplace(e.id, e.kind);
}

void SteppedMatch::step() {
  scene_->before_step();
  remember_kinds();  // projectiles spawned before the step may be gone after it
  scene_->simulation().step();
  scene_->after_step();
  remember_kinds();
  publish_contacts();
  update_health();
}

void SteppedMatch::publish_contacts() {
  const Simulation& sim = scene_->simulation();
  auto batch = std::make_shared<ContactBatch>();
  batch->match_id = id_;
  batch->tick = sim.tick();
  const auto kind_of = [&](EntityId id) {
    const auto it = kinds_.find(id);
    return it == kinds_.end() ? std::uint8_t(EntityKind::kProjectile) : std::uint8_t(it->second);
  };
  for (const Contact& c : sim.contacts()) {
    batch->records.push_back({c, kind_of(c.a), c.b == kNoEntity ? kKindLevel : kind_of(c.b)});
  }
  feed_.publish(std::move(batch));
}

void SteppedMatch::update_health() {
  const Simulation& sim = scene_->simulation();
  MatchHealth h;
  h.summary.match_id = id_;
  h.summary.level = level_->name;
  h.summary.tick_rate = tick_rate_;
  h.summary.tick = sim.tick();
  h.summary.players = int(scene_->players().size());
  h.summary.max_players = max_players_;
  h.summary.entities = std::uint32_t(sim.entities().size());
  h.contacts = sim.counters().contacts;
  h.invariant_violations = sim.counters().invariant_violations;
  std::lock_guard lock(mutex_);
  health_ = h;
}

void SteppedMatch::set_client_view_tick(std::uint64_t client_id, double tick) {
  std::lock_guard lock(mutex_);
  view_ticks_[client_id] = tick;
}

std::optional<double> SteppedMatch::client_view_tick(std::uint64_t client_id) const {
  std::lock_guard lock(mutex_);
  const auto it = view_ticks_.find(client_id);
  if (it == view_ticks_.end()) return std::nullopt;
  return it->second;
}

MatchHealth SteppedMatch::health() const {
  std::lock_guard lock(mutex_);
  return health_;
}

void SteppedMatch::end() {
  if (ended_.exchange(true)) return;
  feed_.end(id_);
}

SteppedMatchDirectory::SteppedMatchDirectory(std::vector<SimLevelSource> levels, SteppedMatchOptions options)
    : sources_(std::move(levels)), options_(options) {}

std::shared_ptr<const SimLevel> SteppedMatchDirectory::level(const std::string& name, std::string* error) {
  if (const auto it = levels_.find(name); it != levels_.end()) return it->second;
  const auto source =
      std::find_if(sources_.begin(), sources_.end(), [&](const auto& s) { return s.name == name; });
  if (source == sources_.end()) {
    *error = "no level named '" + name + "'";
    return nullptr;
  }
  LevelResult imported = import_level_file(source->path);
  if (!imported.ok()) {
    *error = imported.error.describe();
    return nullptr;
  }
  CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {});
  if (!compiled.ok()) {
    *error = compiled.message;
    return nullptr;
  }
  auto level = std::make_shared<SimLevel>();
  level->name = name;
  level->compiled = std::move(compiled.level);
  level->navmesh = NavMesh::from_data(level->compiled.navmesh, error);
  if (level->navmesh == nullptr) return nullptr;
  levels_[name] = level;
  return level;
}

std::shared_ptr<MatchHandle> SteppedMatchDirectory::find(std::uint32_t match_id) const {
  return stepped(match_id);
}

std::shared_ptr<SteppedMatch> SteppedMatchDirectory::stepped(std::uint32_t match_id) const {
  std::lock_guard lock(mutex_);
  const auto it = matches_.find(match_id);
  return it == matches_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<MatchHandle>> SteppedMatchDirectory::list() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<MatchHandle>> out;
  for (const auto& [id, m] : matches_)
    out.push_back(m);
  return out;
}

CreatedMatch SteppedMatchDirectory::create(const CreateMatchSpec& spec) {
  std::lock_guard lock(mutex_);
  CreatedMatch created;
  if (spec.max_players < 0 || spec.props < 0) {
    created.error = wire::ErrorCode::BadArgument;
    created.detail = "negative player or prop count";
    return created;
  }
  std::string error;
  std::shared_ptr<const SimLevel> lv = level(spec.level, &error);
  if (lv == nullptr) {
    created.error = wire::ErrorCode::UnknownLevel;
    created.detail = error;
    return created;
  }
  std::shared_ptr<SteppedMatch> m = SteppedMatch::create(next_id_, lv, spec, options_, &error);
  if (m == nullptr) {
    created.error = wire::ErrorCode::BadArgument;
    created.detail = error;
    return created;
  }
  created.match_id = next_id_++;
  matches_[created.match_id] = std::move(m);
  return created;
}

wire::ErrorCode SteppedMatchDirectory::end(std::uint32_t match_id) {
  std::shared_ptr<SteppedMatch> m;
  {
    std::lock_guard lock(mutex_);
    const auto it = matches_.find(match_id);
    if (it == matches_.end()) return wire::ErrorCode::UnknownMatch;
    m = std::move(it->second);
    matches_.erase(it);
  }
  m->end();
  return wire::ErrorCode::Ok;
}

}  // namespace shiftcast
