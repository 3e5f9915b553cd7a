// level_load_bench: what compiled levels buy. For each level, the cost of getting a queryable level from
// its source (import + BSP build + navmesh build, what a server would do without compiled files) against
// loading the compiled file (read + verify + checksum + copy + BspTree::check), and the ratio of the two.
//
// Levels: configs/levels/*.map (authored), the OpenArena maps when scripts/fetch-openarena-maps.sh has
// fetched them into data/openarena/maps, and the 1,200-brush procedural level of the other benchmarks
// (no source file: its "from source" is compile_level alone, which makes its ratio a lower bound).
//
//   build/bench/shiftcast_level_load_bench                          every level, one line of ratios each
//   build/bench/shiftcast_level_load_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   build/bench/shiftcast_level_load_bench --levels=oa_dm4,arena    only these (no import or build of others)
//
// After the usual table it prints `load vs import+build LEVEL: R x (A ms vs B ms)` from the medians when
// repeated, else from the single runs.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "world/level/compiled_level.hpp"
#include "world/level/procedural_level.hpp"

namespace {

using namespace shiftcast;
namespace fs = std::filesystem;

constexpr std::uint32_t kProceduralSeed = 1;
constexpr std::int32_t kProceduralBrushes = 1200;

struct BenchLevel {
  std::string name;
  std::string source;         // empty for the procedural level
  Level procedural;           // used when source is empty
  std::string compiled_path;  // written once before the benchmarks run
};

bool compile_once(BenchLevel& level, const fs::path& out_dir) {
  LevelResult imported;
  if (level.source.empty()) {
    imported.level = level.procedural;
  } else {
    imported = import_level_file(level.source);
    if (!imported.ok()) {
      std::fprintf(stderr, "skipping %s: %s\n", level.name.c_str(), imported.error.describe().c_str());
      return false;
    }
  }
  CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {});
  if (!compiled.ok()) {
    std::fprintf(stderr, "skipping %s: %s\n", level.name.c_str(), compiled.message.c_str());
    return false;
  }
  const std::vector<std::uint8_t> bytes = serialize_compiled_level(compiled.level);
  level.compiled_path = (out_dir / (level.name + ".level")).string();
  std::ofstream(level.compiled_path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return true;
}

void import_and_build(benchmark::State& state, const BenchLevel* level) {
  for (auto _ : state) {
    LevelResult imported;
    if (level->source.empty()) {
      imported.level = level->procedural;
    } else {
      imported = import_level_file(level->source);
    }
    CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {});
    if (!compiled.ok()) state.SkipWithError(compiled.message.c_str());
    benchmark::DoNotOptimize(compiled.level.tree.nodes().data());
  }
}

void load(benchmark::State& state, const BenchLevel* level) {
  std::size_t nodes = 0;
  for (auto _ : state) {
    LevelLoadResult loaded = load_compiled_level_file(level->compiled_path);
    if (!loaded.ok()) state.SkipWithError(loaded.message.c_str());
    nodes = loaded.level.tree.nodes().size();
    benchmark::DoNotOptimize(loaded.level.tree.nodes().data());
  }
  state.counters["nodes"] = double(nodes);
  state.counters["file_bytes"] = double(fs::file_size(level->compiled_path));
}

// Keeps the console table and remembers each benchmark's time, from the median aggregate when there
// are repetitions.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // Colour only on a terminal, as Google Benchmark's own default reporter does.
  RatioReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const std::string name = run.run_name.function_name;
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
      if (run.run_type == Run::RT_Aggregate || !medians_.count(name)) {
        ms_[name] = run.GetAdjustedRealTime();
        if (run.run_type == Run::RT_Aggregate) medians_[name] = true;
      }
    }
  }
  double ms(const std::string& name) const {
    const auto it = ms_.find(name);
    return it == ms_.end() ? 0 : it->second;
  }

 private:
  std::map<std::string, double> ms_;
  std::map<std::string, bool> medians_;
};

// Takes `--levels=a,b,c` out of argv (Google Benchmark rejects flags it does not know); empty means all.
std::vector<std::string> take_levels_flag(int& argc, char** argv) {
  constexpr std::string_view kFlag = "--levels=";
  std::vector<std::string> names;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.starts_with(kFlag)) {
      argv[kept++] = argv[i];
      continue;
    }
    std::string_view list = arg.substr(kFlag.size());
    while (!list.empty()) {
      const std::size_t comma = list.find(',');
      names.emplace_back(list.substr(0, comma));
      list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    }
  }
  argc = kept;
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> only = take_levels_flag(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  std::vector<BenchLevel> levels;
  const fs::path root(SHIFTCAST_SOURCE_DIR);
  for (const fs::path& dir : {root / "configs" / "levels", root / "data" / "openarena" / "maps"}) {
    std::error_code ec;
    std::vector<fs::path> sources;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string ext = entry.path().extension().string();
      if (ext == ".map" || ext == ".bsp") sources.push_back(entry.path());
    }
    std::sort(sources.begin(), sources.end());
    for (const fs::path& p : sources)
      levels.push_back({p.stem().string(), p.string(), {}, {}});
  }
  {
    ProceduralLevel p =
        make_procedural_level({.seed = kProceduralSeed, .target_brushes = kProceduralBrushes});
    BenchLevel b{"procedural" + std::to_string(kProceduralBrushes), "", {}, {}};
    b.procedural.name = b.name;
    b.procedural.brushes = std::move(p.brushes);
    b.procedural.brush_contents.assign(b.procedural.brushes.size(), kContentsSolid);
    b.procedural.brush_surface_flags.assign(b.procedural.brushes.size(), 0);
    compute_level_bounds(b.procedural);
    levels.push_back(std::move(b));
  }

  const fs::path out_dir = fs::temp_directory_path() / "shiftcast_level_load_bench";
  fs::create_directories(out_dir);
  std::vector<const BenchLevel*> ready;
  // Stable addresses for the registered benchmarks: nothing is added to `levels` after this.
  for (BenchLevel& level : levels) {
    if (!only.empty() && std::find(only.begin(), only.end(), level.name) == only.end()) continue;
    if (!compile_once(level, out_dir)) continue;
    ready.push_back(&level);
    benchmark::RegisterBenchmark(("BM_ImportAndBuild/" + level.name).c_str(), import_and_build, &level)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_Load/" + level.name).c_str(), load, &level)
        ->Unit(benchmark::kMillisecond);
  }

  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  for (const BenchLevel* level : ready) {
    const double build = reporter.ms("BM_ImportAndBuild/" + level->name);
    const double loaded = reporter.ms("BM_Load/" + level->name);
    if (build <= 0 || loaded <= 0) continue;  // filtered out
    std::printf("load vs import+build %-16s %7.1f x  (%.3f ms vs %.1f ms)\n", level->name.c_str(),
                build / loaded, loaded, build);
  }
  benchmark::Shutdown();
  return 0;
}
