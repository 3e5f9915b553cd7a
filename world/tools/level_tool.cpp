// shiftcast-level: turns level sources into compiled levels and asks compiled levels questions.
//
//   shiftcast-level import SRC -o OUT.level [--up y|z] [--scale S] [--thickness T] [--pvs-cell S] [--no-pvs]
//       SRC is .map, .bsp (Quake III) or .obj (--up, --scale and --thickness apply to .obj only). Levels
//       without their own visibility get a computed one (grid cells of S units, default 256) unless --no-pvs.
//       Imports, builds the BSP and the navmesh, writes OUT.level; progress on stderr, statistics on stdout.
//   shiftcast-level info LEVEL
//       Format version, source, counts, bounds, build statistics and navmesh size of a compiled level.
//   shiftcast-level query LEVEL QUERIES.csv -o RESULTS.csv
//       One answer row per query (formats in world/level/query_csv.hpp). Any malformed query line fails the
//       whole run: every bad line is reported on stderr and RESULTS.csv is not written.
//   shiftcast-level bench LEVEL QUERIES.csv [--seconds S]
//       Single thread: one warm-up pass, then timed passes per query kind for S seconds in total
//       (default 1). Prints `KIND QUERIES_PER_SECOND` per kind present, then indented detail lines
//       (ns per query, hit rates) and a checksum of every answer.
//   shiftcast-level simulate LEVEL [--players N] [--projectiles N] [--props N] [--tick-rate HZ]
//                            [--seconds S] [--seed N] [--scene match|landing] [--json FILE] [--filter-timing]
//       A headless match of navmesh bots (world/tools/simulate_command.hpp): tick time percentiles, contacts,
//       Blow's filter table, invariant violations and the final state hash. LEVEL may be a source.
//
// Exit status: 0 on success, 1 when the input is bad (import error, corrupt level, malformed CSV), 2 on
// a usage error. Output files are written to a temporary name and renamed, so a failed run never leaves
// a partial file behind.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "world/level/compiled_level.hpp"
#include "world/level/query_csv.hpp"
#include "world/tools/replay_command.hpp"
#include "world/tools/simulate_command.hpp"

namespace {

using namespace shiftcast;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage =
    "usage:\n"
    "  shiftcast-level import SRC -o OUT.level [--up y|z] [--scale S] [--thickness T] [--pvs-cell S] "
    "[--no-pvs]\n"
    "  shiftcast-level info LEVEL\n"
    "  shiftcast-level query LEVEL QUERIES.csv -o RESULTS.csv\n"
    "  shiftcast-level bench LEVEL QUERIES.csv [--seconds S]\n"
    "  shiftcast-level simulate LEVEL [--players N] [--projectiles N] [--props N] [--tick-rate HZ]\n"
    "                           [--seconds S] [--seed N] [--scene match|landing] [--json FILE]\n"
    "                           [--filter-timing]\n"
    "  shiftcast-level replay FILE [--level PATH] [--until TICK] [--entity ID] [--queries]\n";

constexpr double kDefaultBenchSeconds = 1.0;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

int usage_error(const std::string& what) {
  std::fprintf(stderr, "shiftcast-level: %s\n%s", what.c_str(), kUsage);
  return kExitUsage;
}

void progress(std::string_view step) {
  std::fprintf(stderr, "shiftcast-level: %.*s\n", int(step.size()), step.data());
}

// A positive finite number, the whole argument.
bool parse_positive(const char* text, float& out) {
  char* end = nullptr;
  out = std::strtof(text, &end);
  return end != text && *end == '\0' && std::isfinite(out) && out > 0;
}

bool read_text_file(const std::string& path, std::string& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) {
    error = path + ": read failed";
    return false;
  }
  return true;
}

// Writes next to the target and renames, so readers never see a half-written file.
bool write_file_atomically(const std::string& path, const void* data, std::size_t size, std::string& error) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      error = temporary + ": cannot create: " + std::strerror(errno);
      return false;
    }
    out.write(static_cast<const char*>(data), std::streamsize(size));
    out.flush();
    if (!out) {
      error = temporary + ": write failed";
      std::filesystem::remove(temporary);
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    error = path + ": cannot rename from " + temporary + ": " + ec.message();
    std::filesystem::remove(temporary, ec);
    return false;
  }
  return true;
}

std::string hex64(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// ---------------------------------------------------------------------------------------------- import

int run_import(int argc, char** argv) {
  std::string source;
  std::string output;
  ObjImportOptions obj;
  PvsComputeSettings pvs;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "-o" && has_value) {
      output = argv[++i];
    } else if (arg == "--up" && has_value) {
      const std::string_view up = argv[++i];
      if (up != "y" && up != "z") return usage_error("--up must be y or z, not \"" + std::string(up) + "\"");
      obj.up_axis = up[0];
    } else if (arg == "--scale" && has_value) {
      if (!parse_positive(argv[++i], obj.scale)) return usage_error("--scale must be a positive number");
    } else if (arg == "--thickness" && has_value) {
      if (!parse_positive(argv[++i], obj.thickness))
        return usage_error("--thickness must be a positive number");
    } else if (arg == "--pvs-cell" && has_value) {
      if (!parse_positive(argv[++i], pvs.cell_size))
        return usage_error("--pvs-cell must be a positive number");
    } else if (arg == "--no-pvs") {
      pvs.enabled = false;
    } else if (!arg.starts_with("-") && source.empty()) {
      source = arg;
    } else {
      return usage_error("import: unexpected argument \"" + std::string(arg) + "\"");
    }
  }
  if (source.empty() || output.empty()) return usage_error("import needs SRC and -o OUT.level");

  const Clock::time_point start = Clock::now();
  progress("importing " + source);
  LevelResult imported = import_level_file(source, obj);
  if (!imported.ok()) {
    std::fprintf(stderr, "shiftcast-level: import failed: %s\n", imported.error.describe().c_str());
    return kExitBadInput;
  }
  const double import_ms = ms_since(start);
  CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {}, progress, pvs);
  if (!compiled.ok()) {
    std::fprintf(stderr, "shiftcast-level: %s\n", compiled.message.c_str());
    return kExitBadInput;
  }
  progress("writing " + output);
  const std::vector<std::uint8_t> bytes = serialize_compiled_level(compiled.level);
  std::string error;
  if (!write_file_atomically(output, bytes.data(), bytes.size(), error)) {
    std::fprintf(stderr, "shiftcast-level: %s\n", error.c_str());
    return kExitBadInput;
  }
  const double total_ms = ms_since(start);

  const CompiledLevel& c = compiled.level;
  const Level& level = c.level;
  std::printf("source    %s (fnv1a64 %s)\n", level.name.c_str(), hex64(level.source_hash).c_str());
  std::printf(
      "brushes   %zu kept of %d in the source (skipped non-solid %d; %d patches -> %d patch brushes)\n",
      level.brushes.size(), level.source_brushes, level.skipped_nonsolid, level.patches, level.patch_brushes);
  std::printf("spawns    %zu\n", level.spawns.size());
  std::printf("import    %.1f ms\n", import_ms);
  std::printf("bsp       %s\n", format_stats(c.bsp_stats).c_str());
  std::printf("navmesh   %d polygons, %zu bytes, built in %.1f ms\n", c.navmesh_polygons, c.navmesh.size(),
              c.navmesh_build_ms);
  std::printf("visibility %s\n", describe_visibility(c).c_str());
  std::printf("file      %s, %zu bytes\n", output.c_str(), bytes.size());
  std::printf("total     %.1f ms\n", total_ms);
  return kExitOk;
}

// ------------------------------------------------------------------------------------------------ info

int run_info(int argc, char** argv) {
  if (argc != 3) return usage_error("info needs exactly one LEVEL");
  const std::string path = argv[2];
  const Clock::time_point start = Clock::now();
  const LevelLoadResult loaded = load_compiled_level_file(path);
  const double load_ms = ms_since(start);
  if (!loaded.ok()) {
    std::fprintf(stderr, "shiftcast-level: cannot load (%s): %s\n", to_string(loaded.error),
                 loaded.message.c_str());
    return kExitBadInput;
  }
  const CompiledLevel& c = loaded.level;
  const Level& level = c.level;
  const BspTree& tree = c.tree;
  std::size_t planes = 0;
  for (const Brush& b : level.brushes)
    planes += b.planes.size();
  std::size_t playerclip_only = 0;
  for (std::uint32_t contents : level.brush_contents) {
    if ((contents & kContentsSolid) == 0) ++playerclip_only;
  }
  std::error_code ec;
  const auto file_size = std::filesystem::file_size(path, ec);

  std::printf("format    shiftcast compiled level, version %u\n", kCompiledLevelVersion);
  std::printf("source    %s (fnv1a64 %s)\n", level.name.c_str(), hex64(level.source_hash).c_str());
  std::printf("brushes   %zu (%zu planes; %zu clip only), of %d in the source\n", level.brushes.size(),
              planes, playerclip_only, level.source_brushes);
  std::printf("import    skipped non-solid %d, patches %d -> %d patch brushes\n", level.skipped_nonsolid,
              level.patches, level.patch_brushes);
  std::printf("spawns    %zu\n", level.spawns.size());
  std::printf("bounds    (%g %g %g) .. (%g %g %g)\n", level.bounds.min.x, level.bounds.min.y,
              level.bounds.min.z, level.bounds.max.x, level.bounds.max.y, level.bounds.max.z);
  std::printf("tree      %zu nodes, %zu solid leaves, %zu bevel planes, root %d\n", tree.nodes().size(),
              tree.leaves().size(), tree.bevels().size(), tree.root());
  std::printf("bsp       %s\n", format_stats(c.bsp_stats).c_str());
  std::printf("navmesh   %zu bytes, %d polygons, built in %.1f ms\n", c.navmesh.size(), c.navmesh_polygons,
              c.navmesh_build_ms);
  std::printf("visibility %s\n", describe_visibility(c).c_str());
  std::printf("file      %s, %llu bytes, loaded in %.2f ms\n", path.c_str(),
              ec ? 0ull : static_cast<unsigned long long>(file_size), load_ms);
  return kExitOk;
}

// --------------------------------------------------------------------------------------- query, bench

// Loads the level and the queries, reporting every problem on stderr. False means exit kExitBadInput.
bool load_level_and_queries(const std::string& level_path, const std::string& csv_path, CompiledLevel& level,
                            std::vector<LevelQuery>& queries) {
  LevelLoadResult loaded = load_compiled_level_file(level_path);
  if (!loaded.ok()) {
    std::fprintf(stderr, "shiftcast-level: cannot load (%s): %s\n", to_string(loaded.error),
                 loaded.message.c_str());
    return false;
  }
  std::string text;
  std::string error;
  if (!read_text_file(csv_path, text, error)) {
    std::fprintf(stderr, "shiftcast-level: %s\n", error.c_str());
    return false;
  }
  QueryCsv csv = parse_query_csv(text);
  if (!csv.ok()) {
    for (const QueryCsvError& e : csv.errors) {
      if (e.line > 0) {
        std::fprintf(stderr, "%s:%lld: %s\n", csv_path.c_str(), static_cast<long long>(e.line),
                     e.what.c_str());
      } else {
        std::fprintf(stderr, "%s: %s\n", csv_path.c_str(), e.what.c_str());
      }
    }
    std::fprintf(stderr, "shiftcast-level: %s is malformed; nothing was run\n", csv_path.c_str());
    return false;
  }
  level = std::move(loaded.level);
  queries = std::move(csv.queries);
  return true;
}

int run_query_command(int argc, char** argv) {
  std::vector<std::string> positional;
  std::string output;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-o" && i + 1 < argc) {
      output = argv[++i];
    } else if (!arg.starts_with("-")) {
      positional.emplace_back(arg);
    } else {
      return usage_error("query: unexpected argument \"" + std::string(arg) + "\"");
    }
  }
  if (positional.size() != 2 || output.empty())
    return usage_error("query needs LEVEL QUERIES.csv -o RESULTS.csv");

  CompiledLevel level;
  std::vector<LevelQuery> queries;
  if (!load_level_and_queries(positional[0], positional[1], level, queries)) return kExitBadInput;

  std::string csv(kResultCsvHeader);
  csv += '\n';
  csv.reserve(csv.size() + queries.size() * 96);
  std::int64_t hits = 0;
  for (const LevelQuery& q : queries) {
    const TraceResult r = run_query(level.tree, q);
    hits += r.hit ? 1 : 0;
    csv += format_result_row(r);
    csv += '\n';
  }
  std::string error;
  if (!write_file_atomically(output, csv.data(), csv.size(), error)) {
    std::fprintf(stderr, "shiftcast-level: %s\n", error.c_str());
    return kExitBadInput;
  }
  std::fprintf(stderr, "shiftcast-level: %zu queries, %lld hits, answers in %s\n", queries.size(),
               static_cast<long long>(hits), output.c_str());
  return kExitOk;
}

struct KindTiming {
  std::vector<LevelQuery> queries;
  std::int64_t passes = 0;
  double seconds = 0;
  std::int64_t hits = 0;
  std::int64_t start_solid = 0;
};

int run_bench(int argc, char** argv) {
  std::vector<std::string> positional;
  float seconds = kDefaultBenchSeconds;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      if (!parse_positive(argv[++i], seconds)) return usage_error("--seconds must be a positive number");
    } else if (!arg.starts_with("-")) {
      positional.emplace_back(arg);
    } else {
      return usage_error("bench: unexpected argument \"" + std::string(arg) + "\"");
    }
  }
  if (positional.size() != 2) return usage_error("bench needs LEVEL QUERIES.csv");

  CompiledLevel level;
  std::vector<LevelQuery> queries;
  if (!load_level_and_queries(positional[0], positional[1], level, queries)) return kExitBadInput;
  if (queries.empty()) {
    std::fprintf(stderr, "shiftcast-level: %s has no queries\n", positional[1].c_str());
    return kExitBadInput;
  }
  const BspTree& tree = level.tree;

  // Warm-up over the whole file in its order; the checksum is of these answers, the same ones `query`
  // writes, so it does not depend on how many timed passes ran.
  KindTiming kinds[kQueryKinds];
  std::uint64_t checksum = kResultHashSeed;
  for (const LevelQuery& q : queries) {
    const TraceResult r = run_query(tree, q);
    checksum = mix_result(checksum, r);
    KindTiming& k = kinds[int(q.kind)];
    k.queries.push_back(q);
    k.hits += r.hit ? 1 : 0;
    k.start_solid += r.start_solid ? 1 : 0;
  }
  int present = 0;
  for (const KindTiming& k : kinds)
    present += k.queries.empty() ? 0 : 1;
  const double budget = double(seconds) / present;

  std::int64_t timed_hits = 0;  // consumed below so the timed traces cannot be optimised away
  for (KindTiming& k : kinds) {
    if (k.queries.empty()) continue;
    const Clock::time_point start = Clock::now();
    do {
      for (const LevelQuery& q : k.queries)
        timed_hits += run_query(tree, q).hit ? 1 : 0;
      ++k.passes;
      k.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    } while (k.seconds < budget);
  }

  for (int i = 0; i < kQueryKinds; ++i) {
    const KindTiming& k = kinds[i];
    if (k.queries.empty()) continue;
    const double per_second = double(k.queries.size()) * double(k.passes) / k.seconds;
    std::printf("%s %lld\n", to_string(QueryKind(i)), static_cast<long long>(std::llround(per_second)));
  }
  std::int64_t expected_hits = 0;
  for (int i = 0; i < kQueryKinds; ++i) {
    const KindTiming& k = kinds[i];
    if (k.queries.empty()) continue;
    const double n = double(k.queries.size());
    expected_hits += k.hits * k.passes;
    std::printf(
        "  %s: %.1f ns/query, hits %.1f%%, start in solid %.1f%%, %zu queries x %lld passes in %.2f s\n",
        to_string(QueryKind(i)), k.seconds * 1e9 / (n * double(k.passes)), 100.0 * double(k.hits) / n,
        100.0 * double(k.start_solid) / n, k.queries.size(), static_cast<long long>(k.passes), k.seconds);
  }
  std::printf("  checksum %s over %zu answers (single thread, %s)\n", hex64(checksum).c_str(), queries.size(),
              level.level.name.c_str());
  if (timed_hits != expected_hits) {
    std::fprintf(stderr, "shiftcast-level: timed passes answered differently from the warm-up pass\n");
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) return usage_error("no command");
  const std::string_view command = argv[1];
  if (command == "import") return run_import(argc, argv);
  if (command == "info") return run_info(argc, argv);
  if (command == "query") return run_query_command(argc, argv);
  if (command == "bench") return run_bench(argc, argv);
  if (command == "simulate") return run_simulate_command(argc, argv);
  if (command == "replay") return run_replay_command(argc, argv);
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  return usage_error("unknown command \"" + std::string(command) + "\"");
} catch (const std::exception& e) {
  std::fprintf(stderr, "shiftcast-level: %s\n", e.what());
  return kExitBadInput;
}
