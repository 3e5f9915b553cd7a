#include "world/tools/simulate_command.hpp"

#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "world/level/compiled_level.hpp"
#include "world/match/match_setup.hpp"
#include "world/tools/entity_printout.hpp"

namespace shiftcast {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kSimulateUsage =
    "usage: shiftcast-level simulate LEVEL [--players N] [--projectiles N] [--props N] [--tick-rate HZ]\n"
    "                                [--seconds S] [--seed N] [--scene match|landing] [--json FILE]\n"
    "                                [--filter-timing] [--until TICK] [--entity ID]\n"
    "  LEVEL          a compiled .level, or a .map/.bsp/.obj source (imported and compiled first)\n"
    "  --players      bots (default 32)            --projectiles  kept in flight (default 256)\n"
    "  --props        movers, cradles, crates (200) --tick-rate    20..128 Hz (default 128)\n"
    "  --seconds      simulated seconds (10)        --seed         any 32-bit number (1)\n"
    "  --scene        match (bots) or landing (every player dropped onto props at once)\n"
    "  --json         also write the figures to FILE\n"
    "  --filter-timing  time every filter stage (Blow's table; perturbs tick times)\n"
    "  --until        stop once the simulation reaches TICK and print the entities (the tick a warning "
    "names)\n"
    "  --entity       with --until: print only this entity and the entities near it\n";

// Argument ranges: beyond them a run says nothing about a match (and would only exhaust memory).
constexpr long kMaxPlayers = 1024;
constexpr long kMaxProjectiles = 65536;
constexpr long kMaxProps = 4096;
constexpr long kMinTickRate = 20;
constexpr long kMaxTickRate = 128;
constexpr double kMaxSeconds = 24 * 3600;

struct Options {
  std::string level;
  long players = 32;
  long projectiles = 256;
  long props = 200;
  long tick_rate = 128;
  double seconds = 10;
  std::uint32_t seed = 1;
  SceneKind scene = SceneKind::kMatch;
  std::string json;
  bool filter_timing = false;
  std::optional<std::uint64_t> until;
  std::optional<EntityId> entity;
};

int usage_error(const std::string& what) {
  std::fprintf(stderr, "shiftcast-level simulate: %s\n%s", what.c_str(), kSimulateUsage);
  return kExitUsage;
}

bool parse_long(const char* text, long lo, long hi, long& out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || v < lo || v > hi) return false;
  out = v;
  return true;
}

// Empty when the arguments are good, else what is wrong.
std::string parse_options(int argc, char** argv, Options& o) {
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    const auto number = [&](long lo, long hi, long& out) {
      if (value == nullptr || !parse_long(value, lo, hi, out)) return false;
      ++i;
      return true;
    };
    const std::string range = std::string(arg) + " needs a whole number in range";
    if (arg == "--players") {
      if (!number(0, kMaxPlayers, o.players)) return range + " 0.." + std::to_string(kMaxPlayers);
    } else if (arg == "--projectiles") {
      if (!number(0, kMaxProjectiles, o.projectiles)) return range + " 0.." + std::to_string(kMaxProjectiles);
    } else if (arg == "--props") {
      if (!number(0, kMaxProps, o.props)) return range + " 0.." + std::to_string(kMaxProps);
    } else if (arg == "--tick-rate") {
      if (!number(kMinTickRate, kMaxTickRate, o.tick_rate)) return range + " 20..128";
    } else if (arg == "--seed") {
      long seed = 0;
      if (!number(0, long(UINT32_MAX), seed)) return range + " 0..4294967295";
      o.seed = std::uint32_t(seed);
    } else if (arg == "--seconds") {
      char* end = nullptr;
      const double s = value != nullptr ? std::strtod(value, &end) : 0;
      if (value == nullptr || end == value || *end != '\0' || !(s > 0 && s <= kMaxSeconds))
        return "--seconds needs a positive number of seconds (at most a day)";
      o.seconds = s;
      ++i;
    } else if (arg == "--scene") {
      const std::optional<SceneKind> kind = value != nullptr ? parse_scene_kind(value) : std::nullopt;
      if (!kind) return "--scene must be match or landing";
      o.scene = *kind;
      ++i;
    } else if (arg == "--json") {
      if (value == nullptr) return "--json needs a FILE";
      o.json = value;
      ++i;
    } else if (arg == "--filter-timing") {
      o.filter_timing = true;
    } else if (arg == "--until") {
      long tick = 0;
      if (!number(0, LONG_MAX, tick)) return range + " 0.." + std::to_string(LONG_MAX);
      o.until = std::uint64_t(tick);
    } else if (arg == "--entity") {
      long id = 0;
      if (!number(1, long(UINT32_MAX), id)) return range + " 1..4294967295";
      o.entity = EntityId(id);
    } else if (!arg.starts_with("-") && o.level.empty()) {
      o.level = arg;
    } else {
      return "unexpected argument \"" + std::string(arg) + "\"";
    }
  }
  if (o.level.empty()) return "no LEVEL given";
  if (o.entity && !o.until) return "--entity needs --until";
  if (std::lround(o.seconds * double(o.tick_rate)) < 1) return "--seconds is shorter than one tick";
  return {};
}

// The level, compiled if it was a source. False (with the reason printed) means exit kExitBadInput.
bool load_level(const std::string& path, CompiledLevel& out) {
  LevelFileResult loaded = load_level_file(path, [](std::string_view step) {
    std::fprintf(stderr, "shiftcast-level: %.*s\n", int(step.size()), step.data());
  });
  if (!loaded.ok()) {
    std::fprintf(stderr, "shiftcast-level: %s\n", loaded.error.c_str());
    return false;
  }
  out = std::move(loaded.level);
  return true;
}

FilterStats difference(const FilterStats& after, const FilterStats& before) {
  FilterStats d;
  for (std::size_t i = 0; i < d.stages.size(); ++i) {
    d.stages[i].tests = after.stages[i].tests - before.stages[i].tests;
    d.stages[i].definitive = after.stages[i].definitive - before.stages[i].definitive;
    d.stages[i].nanoseconds = after.stages[i].nanoseconds - before.stages[i].nanoseconds;
  }
  return d;
}

std::string tick_json(const TickTimeSummary& t) {
  char text[160];
  std::snprintf(text, sizeof text, "{\"p50\": %.6f, \"p99\": %.6f, \"max\": %.6f, \"mean\": %.6f}", t.p50,
                t.p99, t.max, t.mean);
  return text;
}

struct Report {
  const Options* options;
  const SceneCounts* counts;
  TickTimeSummary ticks;
  TickTimeSummary landing;
  int drops = 0;
  double simulated_seconds = 0;
  double wall_seconds = 0;
  std::uint64_t contacts = 0;
  FilterStats filters;
  SimulationCounters totals;    // since the scene was built, settling included
  std::uint64_t bot_shots = 0;  // measured ticks only
  std::uint64_t top_ups = 0;    // measured ticks only
  std::uint64_t hits = 0;       // measured ticks only
  std::uint64_t state_hash = 0;
};

std::string report_json(const Report& r) {
  const char* kStageKeys[kFilterStageCount] = {"spheres", "boxes", "plane", "hard"};
  std::string j = "{\n";
  char line[256];
  const auto add = [&](const char* format, auto... values) {
    std::snprintf(line, sizeof line, format, values...);
    j += line;
  };
  j += "  \"tick_ms\": " + tick_json(r.ticks) + ",\n";
  add("  \"ticks\": %zu,\n", r.ticks.count);
  add("  \"tick_rate\": %ld,\n", r.options->tick_rate);
  add("  \"scene\": \"%s\",\n", to_string(r.options->scene));
  add("  \"seed\": %u,\n", r.options->seed);
  add("  \"players\": %d,\n", r.counts->players);
  add("  \"props\": %d,\n",
      r.counts->lifts + r.counts->platforms + r.counts->doors + r.counts->cradles + r.counts->crates);
  add("  \"invariant_violations\": %llu,\n", static_cast<unsigned long long>(r.totals.invariant_violations));
  add("  \"replacements\": %llu,\n", static_cast<unsigned long long>(r.totals.replacements));
  add("  \"replacement_failures\": %llu,\n", static_cast<unsigned long long>(r.totals.replacement_failures));
  add("  \"contacts_per_second\": %.3f,\n", double(r.contacts) / r.simulated_seconds);
  add("  \"projectiles_fired\": %llu,\n", static_cast<unsigned long long>(r.bot_shots + r.top_ups));
  add("  \"projectiles_fired_by_bots\": %llu,\n", static_cast<unsigned long long>(r.bot_shots));
  add("  \"projectile_top_ups\": %llu,\n", static_cast<unsigned long long>(r.top_ups));
  add("  \"projectile_hits\": %llu,\n", static_cast<unsigned long long>(r.hits));
  j += "  \"filters\": {";
  for (int i = 0; i < kFilterStageCount; ++i) {
    const FilterStageStats& s = r.filters.stages[std::size_t(i)];
    std::string mean = "null";  // not measured without --filter-timing
    if (r.options->filter_timing) {
      char m[32];
      std::snprintf(m, sizeof m, "%.4f",
                    s.tests > 0 ? double(s.nanoseconds) / double(s.tests) / 1000.0 : 0.0);
      mean = m;
    }
    add("%s\n    \"%s\": {\"tests\": %llu, \"definitive\": %llu, \"mean_us\": %s}", i == 0 ? "" : ",",
        kStageKeys[i], static_cast<unsigned long long>(s.tests),
        static_cast<unsigned long long>(s.definitive), mean.c_str());
  }
  j += "\n  },\n";
  if (r.options->scene == SceneKind::kLanding) {
    add("  \"landing\": {\"drops\": %d, \"window_ticks\": %zu, ", r.drops, r.landing.count);
    j += "\"tick_ms\": " + tick_json(r.landing) + "},\n";
  }
  add("  \"state_hash\": \"0x%016llx\"\n}\n", static_cast<unsigned long long>(r.state_hash));
  return j;
}

bool write_text_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::fprintf(stderr, "shiftcast-level: %s: cannot write: %s\n", temporary.c_str(),
                   std::strerror(errno));
      std::error_code ec;
      std::filesystem::remove(temporary, ec);
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::fprintf(stderr, "shiftcast-level: %s: %s\n", path.c_str(), ec.message().c_str());
    std::filesystem::remove(temporary, ec);
    return false;
  }
  return true;
}

void print_report(const Report& r) {
  const SceneCounts& c = *r.counts;
  std::printf("scene     %s, seed %u: %d players (%d at spawn points), %d projectiles kept in flight\n",
              to_string(r.options->scene), r.options->seed, c.players, c.players_at_spawns,
              int(r.options->projectiles));
  std::printf("props     %d lifts, %d platforms, %d doors, %d cradles, %d crates (%d could not be placed)\n",
              c.lifts, c.platforms, c.doors, c.cradles, c.crates, c.props_skipped);
  std::printf("run       %zu ticks at %ld Hz (%.2f s simulated) in %.3f s wall\n", r.ticks.count,
              r.options->tick_rate, r.simulated_seconds, r.wall_seconds);
  std::printf("tick ms   p50 %.4f  p99 %.4f  max %.4f  mean %.4f\n", r.ticks.p50, r.ticks.p99, r.ticks.max,
              r.ticks.mean);
  if (r.options->scene == SceneKind::kLanding) {
    std::printf("landing   %d drops, %zu ticks in landing windows: p50 %.4f  p99 %.4f  max %.4f ms\n",
                r.drops, r.landing.count, r.landing.p50, r.landing.p99, r.landing.max);
  }
  std::printf("contacts  %llu (%.1f per simulated second)\n", static_cast<unsigned long long>(r.contacts),
              double(r.contacts) / r.simulated_seconds);
  std::printf("projectiles fired %llu (%llu by bots, %llu top-ups), hits %llu\n",
              static_cast<unsigned long long>(r.bot_shots + r.top_ups),
              static_cast<unsigned long long>(r.bot_shots), static_cast<unsigned long long>(r.top_ups),
              static_cast<unsigned long long>(r.hits));
  std::printf("filters   (Blow's table over the measured ticks%s)\n%s",
              r.options->filter_timing ? "" : "; mean times need --filter-timing",
              r.filters.format().c_str());
  std::printf(
      "invariant violations %llu, re-placements %llu, re-placement failures %llu (since the scene "
      "was built)\n",
      static_cast<unsigned long long>(r.totals.invariant_violations),
      static_cast<unsigned long long>(r.totals.replacements),
      static_cast<unsigned long long>(r.totals.replacement_failures));
  if (r.totals.invariant_violations > 0) {
    std::printf("WARNING: entities overlapped the level or each other; they were re-placed (see the log)\n");
  }
  std::printf("state hash 0x%016llx\n", static_cast<unsigned long long>(r.state_hash));
}

}  // namespace

int run_simulate_command(int argc, char** argv) {
  Options options;
  if (const std::string error = parse_options(argc, argv, options); !error.empty()) return usage_error(error);

  CompiledLevel compiled;
  if (!load_level(options.level, compiled)) return kExitBadInput;
  std::string error;
  std::unique_ptr<NavMesh> navmesh;
  if (!compiled.navmesh.empty()) {
    navmesh = NavMesh::from_data(compiled.navmesh, &error);
    if (navmesh == nullptr) {
      std::fprintf(stderr, "shiftcast-level: %s: bad navmesh: %s\n", options.level.c_str(), error.c_str());
      return kExitBadInput;
    }
  }

  SimulationConfig sim_config;
  sim_config.tick_rate = int(options.tick_rate);
  sim_config.measure_filter_time = options.filter_timing;
  MatchSetupConfig scene_config;
  scene_config.kind = options.scene;
  scene_config.players = int(options.players);
  scene_config.projectiles = int(options.projectiles);
  scene_config.props = int(options.props);
  scene_config.seed = options.seed;
  MatchSetupResult made =
      MatchSetup::create(compiled.tree, compiled.level, navmesh.get(), sim_config, scene_config);
  if (!made.ok()) {
    std::fprintf(stderr, "shiftcast-level: %s: %s\n", options.level.c_str(), made.error.c_str());
    return kExitBadInput;
  }
  MatchSetup& scene = *made.scene;
  Simulation& sim = scene.simulation();

  if (options.until && *options.until <= sim.tick()) {
    std::fprintf(
        stderr, "shiftcast-level simulate: --until %llu is not after the first simulated tick (%llu)\n",
        static_cast<unsigned long long>(*options.until), static_cast<unsigned long long>(sim.tick()));
    return kExitUsage;
  }
  const SimulationCounters before = sim.counters();
  const std::uint64_t top_ups_before = scene.projectiles_topped_up();
  const std::size_t ticks = std::size_t(std::lround(options.seconds * double(options.tick_rate)));
  std::vector<double> tick_ms(ticks);
  std::vector<double> landing_ms;
  landing_ms.reserve(ticks);
  const Clock::time_point wall_start = Clock::now();
  for (std::size_t t = 0; t < ticks; ++t) {
    if (options.until && sim.tick() >= *options.until) {
      tick_ms.resize(t);
      break;
    }
    scene.before_step();
    const Clock::time_point start = Clock::now();
    sim.step();
    tick_ms[t] = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    scene.after_step();
    if (scene.in_landing_window()) landing_ms.push_back(tick_ms[t]);
  }

  if (options.until) print_entities(sim, options.entity);

  Report r{&options, &scene.counts()};
  r.wall_seconds = std::chrono::duration<double>(Clock::now() - wall_start).count();
  r.ticks = summarize_tick_times(std::move(tick_ms));
  r.landing = summarize_tick_times(std::move(landing_ms));
  r.drops = scene.drops();
  r.simulated_seconds = double(r.ticks.count) / double(options.tick_rate);
  r.totals = sim.counters();
  r.contacts = r.totals.contacts - before.contacts;
  r.filters = difference(r.totals.filters, before.filters);
  r.bot_shots = r.totals.projectiles_fired - before.projectiles_fired;
  r.top_ups = scene.projectiles_topped_up() - top_ups_before;
  r.hits = r.totals.projectile_hits - before.projectile_hits;
  r.state_hash = sim.state_hash();
  print_report(r);
  if (!options.json.empty() && !write_text_atomically(options.json, report_json(r))) return kExitBadInput;
  return kExitOk;
}

}  // namespace shiftcast
