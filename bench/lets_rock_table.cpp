// Running the Let's Rock scene through the grid and the filter cascade (run_lets_rock and its median over
// repetitions), and Blow's table for a run beside his 1997 figures (format_blow_table). The scene itself
// is built in lets_rock_scene.cpp; both are declared in bench/lets_rock_scene.hpp.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/lets_rock_scene.hpp"
#include "world/match/grid.hpp"

namespace shiftcast::bench {

LetsRockRun run_lets_rock(const LetsRockScene& scene, const FilterOptions& options, PairsByTick* tested) {
  std::vector<Entity> entities(scene.entities().begin(), scene.entities().end());
  const std::size_t n = entities.size();
  float largest = 0;
  for (const Entity& e : entities)
    largest = std::max(largest, e.bound_radius);
  Grid grid(Grid::derive_cell_size(largest));
  FilterCascade cascade(options);
  std::vector<std::pair<EntityId, EntityId>> pairs;
  pairs.reserve(4 * n);
  std::vector<std::uint8_t> was_present(n, 0);
  std::vector<Pose> previous(n);
  const EntityId tank = scene.tank();
  const EntityId pad = scene.pad();
  if (tested != nullptr) tested->assign(std::size_t(scene.tick_count()), {});

  LetsRockRun run;
  if (options.measure_time) {
    // The stage timers read steady_clock once per stage; what one read costs here, for the table.
    constexpr int kReads = 10000;
    const auto first = std::chrono::steady_clock::now();
    volatile std::int64_t sink = 0;  // now() is an opaque call anyway; this keeps its result used
    for (int i = 0; i < kReads - 1; ++i)
      sink = std::chrono::steady_clock::now().time_since_epoch().count();
    static_cast<void>(sink);
    run.clock_read_ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - first).count() / kReads;
  }
  run.touchdown_min_separation = std::numeric_limits<float>::infinity();
  run.touchdown_max_separation = -std::numeric_limits<float>::infinity();
  const auto start = std::chrono::steady_clock::now();
  for (int tick = 0; tick < scene.tick_count(); ++tick) {
    const std::span<const Pose> poses = scene.poses(tick);
    for (std::size_t i = 0; i < n; ++i) {
      Entity& e = entities[i];
      if (!scene.present(tick, e.id)) {
        if (was_present[i] != 0) grid.remove(e.id);
        was_present[i] = 0;
        continue;
      }
      e.pose = poses[i];
      Aabb box = world_box(e, e.pose);
      // Rockets are fast movers: the grid gets their speedbox, start ∪ end of the tick.
      if (e.kind == EntityKind::kProjectile && was_present[i] != 0) box.grow(world_box(e, previous[i]));
      grid.update(e.id, box);
      previous[i] = e.pose;
      was_present[i] = 1;
    }
    grid.pairs(pairs);
    run.grid_pairs += pairs.size();
    bool tank_pad_touching = false;
    for (const auto& [ia, ib] : pairs) {
      const Entity& a = entities[ia - 1];
      const Entity& b = entities[ib - 1];
      if (!should_collide(a, b)) {
        ++run.masked_pairs;
        continue;
      }
      ++run.tested_pairs;
      if (tested != nullptr) (*tested)[std::size_t(tick)].push_back({ia, ib});
      const bool tank_pad = (ia == tank && ib == pad) || (ia == pad && ib == tank);
      PairContact contact;
      const bool touching = cascade.test(a, b, contact, tank_pad ? run.tank_pad_stats : run.stats);
      if (!touching) continue;
      ++run.touching;
      if (contact.overlapping) ++run.overlapping;
      if (tank_pad) {
        tank_pad_touching = true;
        if (scene.touchdown(tick)) {
          run.touchdown_min_separation = std::min(run.touchdown_min_separation, contact.separation);
          run.touchdown_max_separation = std::max(run.touchdown_max_separation, contact.separation);
        }
      }
    }
    if (scene.touchdown(tick)) {
      ++run.touchdown_ticks;
      if (tank_pad_touching) ++run.touchdown_touching;
    } else if (tank_pad_touching) {
      ++run.tank_pad_touching_elsewhere;
    }
    ++run.ticks;
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.stats.add(run.tank_pad_stats);
  return run;
}

LetsRockRun run_lets_rock_median(const LetsRockScene& scene, const FilterOptions& options, int repetitions) {
  std::vector<LetsRockRun> runs;
  for (int i = 0; i < std::max(repetitions, 1); ++i)
    runs.push_back(run_lets_rock(scene, options));
  // Counts are the same every time (the scene and the cascade are deterministic); times are not.
  const auto median = [&](auto field) {
    std::vector<double> v;
    for (LetsRockRun& r : runs)
      v.push_back(double(field(r)));
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  LetsRockRun out = runs.front();
  for (std::size_t i = 0; i < std::size_t(kFilterStageCount); ++i) {
    out.stats.stages[i].nanoseconds =
        std::uint64_t(median([i](LetsRockRun& r) { return r.stats.stages[i].nanoseconds; }));
    out.tank_pad_stats.stages[i].nanoseconds =
        std::uint64_t(median([i](LetsRockRun& r) { return r.tank_pad_stats.stages[i].nanoseconds; }));
  }
  out.seconds = median([](LetsRockRun& r) { return r.seconds; });
  out.clock_read_ns = median([](LetsRockRun& r) { return r.clock_read_ns; });
  out.repetitions = int(runs.size());
  return out;
}

namespace {

// Blow's "Let's Rock" table (Pentium 166, Linux, gcc -O3): definitive answers and mean running time
// per test in µs (the sphere test's time was printed as "tiny").
struct BlowRow {
  std::uint64_t definitive;
  double microseconds;  // < 0: "tiny"
};
constexpr std::array<BlowRow, kFilterStageCount> kBlow1997 = {
    {{3800, -1}, {1911, 26.13}, {93, 231.94}, {842, 450.98}}};

const char* blow_name(FilterStage stage) {
  switch (stage) {
    case FilterStage::kSpheres:
      return "bounding spheres";
    case FilterStage::kBoxes:
      return "bounding box safety";
    case FilterStage::kPlane:
      return "plane divides entities";
    case FilterStage::kHard:
      return "hard case";
  }
  return "?";
}

std::string mean_microseconds(const FilterStageStats& s, bool timed) {
  if (!timed || s.tests == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", double(s.nanoseconds) / double(s.tests) / 1000.0);
  return buf;
}

}  // namespace

std::string format_blow_table(const LetsRockRun& run, const LetsRockScene& scene, std::string_view title) {
  std::string out;
  char line[256];
  const auto emit = [&](const char* fmt, auto... args) {
    std::snprintf(line, sizeof line, fmt, args...);
    out += line;
  };
  const FilterStats& stats = run.stats;
  bool timed = false;
  std::uint64_t definitive = 0;
  std::uint64_t blow_definitive = 0;
  for (int i = 0; i < kFilterStageCount; ++i) {
    timed = timed || stats.stages[std::size_t(i)].nanoseconds > 0;
    definitive += stats.stages[std::size_t(i)].definitive;
    blow_definitive += kBlow1997[std::size_t(i)].definitive;
  }
  emit(
      "Let's Rock, %.*s: %d ticks at %d Hz, %zu entities (%d players); tank %d faces, cargo box %d faces "
      "(12 triangles), repair pad %d faces in %zu brushes\n",
      int(title.size()), title.data(), scene.tick_count(), scene.tick_rate(), scene.entities().size(),
      scene.options().players, scene.tank_model().face_count, scene.box_model().face_count,
      scene.pad_model().face_count, scene.pad_model().brushes.size());
  emit(
      "grid pairs %llu, masked %llu, tested %llu (%.1f per tick), within reach %llu, overlapping %llu; "
      "run %.2f ms (%.1f us per tick)\n",
      (unsigned long long)run.grid_pairs, (unsigned long long)run.masked_pairs,
      (unsigned long long)run.tested_pairs,
      run.ticks > 0 ? double(run.tested_pairs) / double(run.ticks) : 0.0, (unsigned long long)run.touching,
      (unsigned long long)run.overlapping, run.seconds * 1e3,
      run.ticks > 0 ? run.seconds * 1e6 / double(run.ticks) : 0.0);
  emit("%-24s %10s %11s %7s %10s | %-11s %7s %10s\n", "", "", "", "", "", "Blow 1997", "", "P166");
  emit("%-24s %10s %11s %7s %10s | %11s %7s %10s\n", "stage", "tests", "definitive", "share", "us/test",
       "definitive", "share", "us/test");
  for (int i = 0; i < kFilterStageCount; ++i) {
    const auto stage = static_cast<FilterStage>(i);
    const FilterStageStats& s = stats[stage];
    const BlowRow& blow = kBlow1997[std::size_t(i)];
    char blow_time[32] = "tiny";
    if (blow.microseconds >= 0) std::snprintf(blow_time, sizeof blow_time, "%.2f", blow.microseconds);
    emit("%-24s %10llu %11llu %6.1f%% %10s | %11llu %6.1f%% %10s\n", blow_name(stage),
         (unsigned long long)s.tests, (unsigned long long)s.definitive,
         definitive > 0 ? 100.0 * double(s.definitive) / double(definitive) : 0.0,
         mean_microseconds(s, timed).c_str(), (unsigned long long)blow.definitive,
         100.0 * double(blow.definitive) / double(blow_definitive), blow_time);
  }
  if (timed) {
    emit("(us/test includes one steady_clock read per stage, %.0f ns here; median of %d runs)\n",
         run.clock_read_ns, run.repetitions);
  }
  out += "tank-pad pair alone (included above), definitive/tests and mean per test:";
  for (int i = 0; i < kFilterStageCount; ++i) {
    const FilterStageStats& s = run.tank_pad_stats.stages[std::size_t(i)];
    emit(" %s %llu/%llu %s us%s", blow_name(static_cast<FilterStage>(i)), (unsigned long long)s.definitive,
         (unsigned long long)s.tests, mean_microseconds(s, timed).c_str(),
         i + 1 < kFilterStageCount ? ";" : "");
  }
  out += "\n";
  emit(
      "touchdown: %d ticks meant to touch, %d found within reach (separation %.4f..%.4f); "
      "tank-pad within reach at other ticks: %d\n",
      run.touchdown_ticks, run.touchdown_touching,
      run.touchdown_touching > 0 ? double(run.touchdown_min_separation) : 0.0,
      run.touchdown_touching > 0 ? double(run.touchdown_max_separation) : 0.0,
      run.tank_pad_touching_elsewhere);
  return out;
}

}  // namespace shiftcast::bench
