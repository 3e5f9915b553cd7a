#include "world/tools/replay_command.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>

#include "collision/turned_shape.hpp"
#include "world/level/compiled_level.hpp"
#include "world/match/match_setup.hpp"
#include "world/tools/entity_printout.hpp"
#include "world/tools/simulate_command.hpp"

namespace shiftcast {

namespace {

constexpr const char* kReplayUsage =
    "usage: shiftcast-level replay FILE [--level PATH] [--until TICK] [--entity ID] [--queries] "
    "[--any-level]\n"
    "                                   [--continue]\n"
    "  FILE       a match recording (.scrp, docs/replay.md)\n"
    "  --level    the level it ran on (default: NAME.level, data/openarena/maps/NAME.bsp,\n"
    "             configs/levels/NAME.map for the recorded NAME)\n"
    "  --until    stop after TICK: print the entities and the shot audit up to it\n"
    "  --entity   print only this entity and the queries that hit it\n"
    "  --queries  audit every recorded query (re-answered on the replayed history)\n"
    "  --any-level  replay even when the level's fingerprint differs (the hashes still judge)\n"
    "  --continue   after a hash mismatch, go on applying the recorded commands\n";

int usage_error(const std::string& what) {
  std::fprintf(stderr, "shiftcast-level replay: %s\n%s", what.c_str(), kReplayUsage);
  return kExitUsage;
}

// The question of `q` asked again on `entities` (the replayed history at q.tick_used).
RecordedQuery answer_again(const RecordedQuery& q, const BspTree& tree, std::span<const Entity> entities) {
  RecordedQuery a = q;
  a.hit = false;
  a.entity = kNoEntity;
  a.brush = kNoBrush;
  a.fraction = 0;
  a.point = {};
  a.normal = {};
  a.overlapped.clear();
  const QueryFilter filter{.mask = q.layers, .ignore = q.ignore, .level = q.include_level};
  Shape shape;
  shape.kind = ShapeKind(q.shape_kind);
  shape.offset = q.shape_offset;
  shape.radius = q.shape_radius;
  shape.height = q.shape_height;
  shape.half_extents = q.shape_half_extents;
  const auto set_hit = [&](const WorldHit& h) {
    a.hit = h.trace.hit;
    a.entity = h.entity;
    a.brush = h.trace.brush;
    a.fraction = h.trace.fraction;
    a.point = h.trace.end_position;
    a.normal = h.trace.normal;
  };
  switch (q.kind) {
    case RecordedQueryKind::kRaycast:
      set_hit(world_raycast(tree, entities, q.origin, q.target, q.max_distance, filter));
      break;
    case RecordedQueryKind::kSweep: {
      const TurnedShape turned(shape, q.yaw);
      set_hit(world_sweep(tree, entities, turned.shape(), q.origin, q.target, filter));
      break;
    }
    case RecordedQueryKind::kOverlap: {
      const WorldOverlap o = world_overlap(tree, entities, shape, Pose{q.origin, q.yaw}, filter);
      a.hit = o.brush != kNoBrush || !o.entities.empty();
      a.brush = o.brush;
      a.overlapped = o.entities;
      break;
    }
  }
  return a;
}

bool same_answer(const RecordedQuery& a, const RecordedQuery& b) {
  return a.hit == b.hit && a.entity == b.entity && a.brush == b.brush && a.fraction == b.fraction &&
         a.point == b.point && a.normal == b.normal && a.overlapped == b.overlapped;
}

}  // namespace

void apply_recorded_commands(Simulation& sim, EntityId entity, std::span<const PlayerInput> commands) {
  sim.set_inputs(entity, commands);
}

const char* to_string(ReplayError error) {
  switch (error) {
    case ReplayError::kNone:
      return "none";
    case ReplayError::kWrongLevel:
      return "wrong_level";
    case ReplayError::kSceneFailed:
      return "scene_failed";
    case ReplayError::kStartMismatch:
      return "start_mismatch";
    case ReplayError::kJoinMismatch:
      return "join_mismatch";
    case ReplayError::kHashMismatch:
      return "hash_mismatch";
  }
  return "unknown";
}

ReplayResult replay_recording(const Recording& recording, const CompiledLevel& level, const NavMesh* navmesh,
                              const ReplayOptions& options,
                              const std::function<void(const Simulation&)>& at_end) {
  ReplayResult r;
  const RecordingHeader& h = recording.header;
  const std::uint64_t fingerprint = level_fingerprint(level);
  if (options.check_level && fingerprint != h.level_hash) {
    r.error = ReplayError::kWrongLevel;
    char text[160];
    std::snprintf(text, sizeof text,
                  "the level's fingerprint is 0x%016" PRIx64 ", the recording's 0x%016" PRIx64, fingerprint,
                  h.level_hash);
    r.message = text;
    return r;
  }
  MatchSetupResult made = make_hosted_match_setup(level.tree, level.level, navmesh,
                                                  {h.tick_rate, h.props, h.seed, h.level_check_period});
  if (!made.ok()) {
    r.error = ReplayError::kSceneFailed;
    r.message = made.error;
    return r;
  }
  Simulation& sim = made.scene->simulation();
  r.tick = sim.tick();
  if (sim.tick() != h.start_tick || sim.state_hash() != h.start_hash) {
    r.error = ReplayError::kStartMismatch;
    r.expected_hash = h.start_hash;
    r.got_hash = sim.state_hash();
    r.message = "the rebuilt scene is at tick " + std::to_string(sim.tick()) + ", the recording starts at " +
                std::to_string(h.start_tick);
    return r;
  }
  // Queries are re-answered as soon as the replay has published the tick they were judged at, while the
  // history still holds it (it keeps one second), in the order they were recorded.
  std::size_t next_query = 0;
  std::vector<Entity> posed;
  const auto audit_ready = [&](bool all) {
    while (next_query < recording.queries.size()) {
      const RecordedQuery& q = recording.queries[next_query];
      if (!all && q.tick_used > double(sim.tick())) break;
      ++next_query;
      if (options.until && q.tick_used > double(*options.until)) continue;
      const RewindView view = sim.history().at(q.tick_used);
      std::span<const Entity> entities;
      if (view.before != nullptr) {
        if (view.after == nullptr || view.after == view.before || view.alpha == 0.0) {
          entities = view.before->entities;
        } else {
          view.entities(posed);
          entities = posed;
        }
      }
      AuditedQuery a{q, answer_again(q, sim.level(), entities), false};
      a.agrees = same_answer(a.recorded, a.replayed);
      r.queries.push_back(std::move(a));
    }
  };
  for (const RecordedTick& t : recording.ticks) {
    if (options.until && t.tick > *options.until) break;
    for (const RecordedJoin& j : t.joins) {
      const EntityId id = sim.add_player(j.feet, j.yaw);
      if (id != j.entity) {
        r.error = ReplayError::kJoinMismatch;
        r.tick = t.tick;
        r.message =
            "a join became entity " + std::to_string(id) + ", the server's was " + std::to_string(j.entity);
        return r;
      }
    }
    for (EntityId id : t.leaves)
      sim.remove(id);
    for (const RecordedCommands& c : t.commands)
      apply_recorded_commands(sim, c.entity, c.commands);
    sim.step();
    ++r.ticks_replayed;
    r.tick = sim.tick();
    r.invariant_violations += std::uint64_t(sim.last_tick().invariant_violations);
    if (options.on_tick) options.on_tick(sim, t);
    if (sim.state_hash() != t.state_hash && !options.stop_at_mismatch) {
      if (!r.first_mismatch) {
        r.first_mismatch = t.tick;
        r.expected_hash = t.state_hash;
        r.got_hash = sim.state_hash();
      }
    } else if (sim.state_hash() != t.state_hash) {
      r.error = ReplayError::kHashMismatch;
      r.expected_hash = t.state_hash;
      r.got_hash = sim.state_hash();
      r.message = "state hash mismatch";
      if (at_end) at_end(sim);
      return r;
    }
    if (options.audit_queries) audit_ready(false);
  }
  if (options.audit_queries) audit_ready(true);
  if (at_end) at_end(sim);
  return r;
}

namespace {

// The level, compiled if it was a source, as the server loads it (server/hosted_level.cpp).
bool load_level(const std::string& path, CompiledLevel& out) {
  LevelFileResult loaded = load_level_file(path);
  if (!loaded.ok()) {
    std::fprintf(stderr, "shiftcast-level: %s\n", loaded.error.c_str());
    return false;
  }
  out = std::move(loaded.level);
  return true;
}

void print_query(const char* who, const RecordedQuery& q) {
  if (q.kind == RecordedQueryKind::kOverlap) {
    std::printf("    %-8s overlap brush %d, entities", who, q.brush);
    for (EntityId id : q.overlapped)
      std::printf(" %u", id);
    std::printf("\n");
    return;
  }
  std::printf(
      "    %-8s hit %d entity %u brush %d fraction %.9g point (%.4f %.4f %.4f) normal (%.4f %.4f %.4f)\n",
      who, q.hit ? 1 : 0, q.entity, q.brush, double(q.fraction), double(q.point.x), double(q.point.y),
      double(q.point.z), double(q.normal.x), double(q.normal.y), double(q.normal.z));
}

}  // namespace

int run_replay_command(int argc, char** argv) {
  std::string file;
  std::string level_path;
  std::optional<std::uint64_t> until;
  std::optional<EntityId> entity;
  bool queries = false;
  bool any_level = false;
  bool keep_going = false;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    const auto number = [&](std::uint64_t& out) {
      if (value == nullptr) return false;
      char* end = nullptr;
      errno = 0;
      const unsigned long long v = std::strtoull(value, &end, 10);
      if (end == value || *end != '\0' || errno != 0 || value[0] == '-') return false;
      out = v;
      ++i;
      return true;
    };
    if (arg == "--level") {
      if (value == nullptr) return usage_error("--level needs a PATH");
      level_path = value;
      ++i;
    } else if (arg == "--until") {
      std::uint64_t t = 0;
      if (!number(t)) return usage_error("--until needs a tick number");
      until = t;
    } else if (arg == "--entity") {
      std::uint64_t id = 0;
      if (!number(id) || id > UINT32_MAX) return usage_error("--entity needs an entity id");
      entity = EntityId(id);
    } else if (arg == "--queries") {
      queries = true;
    } else if (arg == "--any-level") {
      any_level = true;
    } else if (arg == "--continue") {
      keep_going = true;
    } else if (!arg.starts_with("-") && file.empty()) {
      file = arg;
    } else {
      return usage_error("unexpected argument \"" + std::string(arg) + "\"");
    }
  }
  if (file.empty()) return usage_error("no FILE given");

  const RecordingReadResult read = read_recording_file(file);
  if (!read.ok()) {
    std::fprintf(stderr, "shiftcast-level replay: %s: %s at byte %zu: %s\n", file.c_str(),
                 to_string(read.error), read.offset, read.message.c_str());
    return kExitBadInput;
  }
  const Recording& rec = read.recording;
  const RecordingHeader& h = rec.header;
  if (level_path.empty()) {
    for (const std::string& candidate :
         {h.level_name + ".level", "data/openarena/maps/" + h.level_name + ".bsp",
          "configs/levels/" + h.level_name + ".map"}) {
      if (std::filesystem::exists(candidate)) {
        level_path = candidate;
        break;
      }
    }
    if (level_path.empty()) {
      std::fprintf(stderr, "shiftcast-level replay: no file found for level \"%s\": pass --level PATH\n",
                   h.level_name.c_str());
      return kExitBadInput;
    }
  }
  std::printf("recording %s: match %u on %s, %d Hz, %d props, seed %u, ticks %" PRIu64 "..%" PRIu64
              ", %zu queries%s\n",
              file.c_str(), h.match_id, h.level_name.c_str(), h.tick_rate, h.props, h.seed, h.start_tick + 1,
              rec.ticks.empty() ? h.start_tick : rec.ticks.back().tick, rec.queries.size(),
              rec.truncated ? " (the file ends inside a record: replaying what came before it)" : "");
  CompiledLevel level;
  if (!load_level(level_path, level)) return kExitBadInput;
  std::unique_ptr<NavMesh> navmesh;
  if (!level.navmesh.empty()) {
    std::string error;
    navmesh = NavMesh::from_data(level.navmesh, &error);
    if (navmesh == nullptr) {
      std::fprintf(stderr, "shiftcast-level replay: %s: bad navmesh: %s\n", level_path.c_str(),
                   error.c_str());
      return kExitBadInput;
    }
  }

  ReplayOptions options;
  options.until = until;
  options.audit_queries = queries || until.has_value();
  options.check_level = !any_level;
  options.stop_at_mismatch = !keep_going;
  options.on_tick = [](const Simulation& sim, const RecordedTick& t) {
    const TickStats& s = sim.last_tick();
    if (s.invariant_violations > 0 || s.replacements > 0 || t.invariant_violations > 0 || s.skin_guards > 0) {
      std::printf("tick %" PRIu64
                  ": %d invariant violations, %d re-placements (the server counted %d, %d)"
                  ", %d skin guards\n",
                  sim.tick(), s.invariant_violations, s.replacements, t.invariant_violations, t.replacements,
                  s.skin_guards);
    }
  };
  const ReplayResult r = replay_recording(rec, level, navmesh.get(), options, [&](const Simulation& sim) {
    if (until) print_entities(sim, entity);
  });
  if (!r.ok() && r.error != ReplayError::kHashMismatch) {
    std::fprintf(stderr, "shiftcast-level replay: %s: %s\n", to_string(r.error), r.message.c_str());
    return kExitBadInput;
  }
  int disagreements = 0;
  if (options.audit_queries) {
    std::printf("shot audit: %zu queries\n", r.queries.size());
    for (const AuditedQuery& a : r.queries) {
      const RecordedQuery& q = a.recorded;
      if (entity && q.entity != *entity && q.ignore != *entity &&
          std::find(q.overlapped.begin(), q.overlapped.end(), *entity) == q.overlapped.end())
        continue;
      disagreements += a.agrees ? 0 : 1;
      std::printf("  %s at tick %.4f from (%.3f %.3f %.3f)%s\n", to_string(q.kind), q.tick_used,
                  double(q.origin.x), double(q.origin.y), double(q.origin.z), a.agrees ? "" : "  DIFFERS");
      print_query("server", a.recorded);
      print_query("replay", a.replayed);
    }
  }
  if (r.error == ReplayError::kHashMismatch) {
    std::printf("MISMATCH at tick %" PRIu64 ": expected 0x%016" PRIx64 ", got 0x%016" PRIx64 "\n", r.tick,
                r.expected_hash, r.got_hash);
    return kExitBadInput;
  }
  if (r.first_mismatch) {
    std::printf("replayed %" PRIu64 " ticks to tick %" PRIu64 "; the first mismatch was at tick %" PRIu64
                " (expected 0x%016" PRIx64 ", got 0x%016" PRIx64 "); %" PRIu64 " invariant violations\n",
                r.ticks_replayed, r.tick, *r.first_mismatch, r.expected_hash, r.got_hash,
                r.invariant_violations);
    return kExitBadInput;
  }
  std::printf("replayed %" PRIu64 " ticks to tick %" PRIu64 ": every state hash matched; %" PRIu64
              " invariant violations\n",
              r.ticks_replayed, r.tick, r.invariant_violations);
  return disagreements == 0 ? kExitOk : kExitBadInput;
}

}  // namespace shiftcast
