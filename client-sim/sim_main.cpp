// shiftcast-sim: load-tests a running shiftcast-server with simulated players and judges the run against
// a load profile's budgets. `shiftcast-sim --help` lists the options; the exit status says whether the
// budgets held (sim_options.hpp: kSimExit*).
//
//   build/client-sim/shiftcast-sim --config configs/server.toml --profile configs/load/smoke.toml
//                                  --json sim-report.json --html sim-report.html
//   build/client-sim/shiftcast-sim --config configs/server.toml --servers-file servers.txt --matches 6
//                                  (several servers: every budget judged per server and in total)
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "client-sim/report_html.hpp"
#include "client-sim/report_timeline.hpp"
#include "client-sim/sim_options.hpp"
#include "client-sim/sim_report.hpp"
#include "client-sim/sim_runner.hpp"

namespace shiftcast {
namespace {

// The live line on stderr, rewritten in place; rates are over the wall time since the line before.
class ProgressPrinter {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ProgressPrinter(bool enabled) : enabled_(enabled), previous_time_(Clock::now()) {}

  void print(const SimProgress& progress) {
    if (!enabled_) return;
    std::lock_guard lock(mutex_);
    const Clock::time_point now = Clock::now();
    std::string line = format_progress_line(progress, previous_,
                                            std::chrono::duration<double>(now - previous_time_).count());
    previous_ = progress;
    previous_time_ = now;
    // Spaces over the tail of a longer previous line.
    std::string padded = line;
    if (padded.size() < width_) padded.append(width_ - padded.size(), ' ');
    width_ = line.size();
    std::fprintf(stderr, "\r%s", padded.c_str());
    std::fflush(stderr);
    printed_ = true;
  }

  void finish() {
    std::lock_guard lock(mutex_);
    if (printed_) std::fputc('\n', stderr);
    printed_ = false;
  }

 private:
  bool enabled_;
  std::mutex mutex_;  // the runner may report from any of its threads
  SimProgress previous_;
  Clock::time_point previous_time_;
  std::size_t width_ = 0;
  bool printed_ = false;
};

int cannot_run(const std::string& why) {
  std::fprintf(stderr, "shiftcast-sim: %s\n", why.c_str());
  return kSimExitCannotRun;
}

int run(const SimOptions& options) {
  SimLevel level;
  if (std::string error = load_sim_level(options, level); !error.empty()) {
    return cannot_run("level " + options.level + " (" + options.level_file + "): " + error);
  }
  // Every server's metrics, in sim_servers order: a server that cannot be read fails the run here.
  const std::vector<SimServer> servers = sim_servers(options);
  const auto scrape_all = [&] {
    std::vector<ServerMetrics> all;
    for (const SimServer& server : servers)
      all.push_back(scrape_server_metrics(server));
    return all;
  };
  const std::vector<ServerMetrics> before = scrape_all();
  for (std::size_t s = 0; s < servers.size(); ++s) {
    if (before[s].ok) continue;
    if (servers.size() == 1) return cannot_run("cannot read the server's metrics: " + before[s].error);
    return cannot_run(fmt::format("server {} ({} of {}): cannot read its metrics: {}", servers[s].label(),
                                  s + 1, servers.size(), before[s].error));
  }

  ProgressPrinter printer(options.progress);
  // The page's timeline: a scrape of the servers' metrics with every progress report, for their tick time.
  ReportTimeline timeline;
  std::mutex timeline_mutex;
  const bool page = !options.html_path.empty();
  // The second scrapes while the run's matches still exist: their series leave /metrics when they end.
  std::vector<ServerMetrics> after(servers.size());
  for (ServerMetrics& m : after)
    m.error = "the run ended before the load";
  SimRunResult result = run_simulation(
      options, level,
      [&](const SimProgress& p) {
        printer.print(p);
        if (!page) return;
        const ServerMetrics now = merge_server_metrics(scrape_all());
        std::lock_guard lock(timeline_mutex);
        timeline.add(p, now);
      },
      [&] { after = scrape_all(); });
  printer.finish();
  if (!result.error.empty()) return cannot_run(result.error);

  SimReport report = make_report(options, result, before, after);
  std::fputs(format_report_table(report).c_str(), stdout);
  std::fflush(stdout);
  if (!options.json_path.empty()) {
    std::ofstream out(options.json_path, std::ios::binary | std::ios::trunc);
    out << report_json(report);
    out.close();
    if (!out) return cannot_run("cannot write " + options.json_path);
  }
  if (page) {
    std::ofstream out(options.html_path, std::ios::binary | std::ios::trunc);
    out << report_html(report, timeline.points(), result);
    out.close();
    if (!out) return cannot_run("cannot write " + options.html_path);
  }
  return report.budgets_met ? kSimExitOk : kSimExitBudgetMissed;
}

}  // namespace
}  // namespace shiftcast

int main(int argc, char** argv) {
  using namespace shiftcast;
  SimOptions options;
  try {
    options = parse_sim_options(argc, argv);
  } catch (const SimUsageError& e) {
    std::fprintf(stderr, "shiftcast-sim: %s\n\n%s", e.what(), sim_usage().c_str());
    return kSimExitUsage;
  }
  if (options.help) {
    std::fputs(sim_usage().c_str(), stdout);
    return kSimExitOk;
  }
  spdlog::set_level(spdlog::level::warn);
  try {
    return run(options);
  } catch (const std::exception& e) {
    return cannot_run(e.what());
  }
}
