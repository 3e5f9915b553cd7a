// worker_scaling_bench: issue 17's "scaling with workers", the world half. The server's match workers each
// tick their own matches on a shared, read-only level (server/match_worker); this program does the same with
// 1 and then 2 threads and the same matches, so what it measures is what a second worker costs the first:
// the shared cache and memory bandwidth, not the network (the load ladder measures the whole server).
//
//   build/bench/shiftcast_worker_scaling_bench                       8 matches of 32 bots at 128 Hz
//   build/bench/shiftcast_worker_scaling_bench --matches=8 --ticks=500 --rounds=3 --tick-rate=128
//
// Each match is match_bench's scene (32 bots on oa_dm1, about 256 projectiles, 200 props); worker w ticks the
// matches i with i % workers == w, round robin, --ticks ticks each. Only Simulation::step() is timed (bots'
// inputs are the clients' work), per tick, on the thread that ran it. Printed per worker count: the mean step
// time, the matches one core holds in real time (tick period / mean step), the matches the run held (times
// the workers) and the second worker's efficiency: mean step with one worker / mean step with two (1.0: the
// second worker costs the first nothing; the goal is at least 0.85). Rounds alternate 1 and 2 workers and the
// medians are reported, so a noisy moment does not land on one side only.
//
// The map comes from scripts/fetch-openarena-maps.sh; without it the program says so and exits 0.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/openarena_level.hpp"

namespace {

using namespace shiftcast;
using Clock = std::chrono::steady_clock;

constexpr int kPlayers = 32;
constexpr int kProjectiles = 256;
constexpr int kProps = 200;
constexpr double kEfficiencyGoal = 0.85;

int int_flag(int argc, char** argv, std::string_view name, int fallback) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.size() > name.size() + 3 && arg.starts_with("--") && arg.substr(2, name.size()) == name &&
        arg[2 + name.size()] == '=')
      return std::max(1, std::atoi(argv[i] + 3 + name.size()));
  }
  return fallback;
}

// Seconds of step() summed over every tick a worker ran, and the number of ticks.
struct WorkerTotals {
  double step_seconds = 0;
  long ticks = 0;
};

WorkerTotals run_worker(std::vector<MatchSetup*> matches, int ticks) {
  WorkerTotals totals;
  for (int t = 0; t < ticks; ++t) {
    for (MatchSetup* m : matches) {
      m->before_step();
      const Clock::time_point start = Clock::now();
      m->simulation().step();
      totals.step_seconds += std::chrono::duration<double>(Clock::now() - start).count();
      m->after_step();
      ++totals.ticks;
    }
  }
  return totals;
}

// Mean step time in seconds with `workers` threads sharing out `matches`.
double run_round(const std::vector<std::unique_ptr<MatchSetup>>& matches, int workers, int ticks) {
  std::vector<std::vector<MatchSetup*>> share(static_cast<std::size_t>(workers));
  for (std::size_t i = 0; i < matches.size(); ++i)
    share[i % std::size_t(workers)].push_back(matches[i].get());
  std::vector<WorkerTotals> totals(static_cast<std::size_t>(workers));
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] { totals[std::size_t(w)] = run_worker(share[std::size_t(w)], ticks); });
  for (std::thread& t : threads)
    t.join();
  WorkerTotals sum;
  for (const WorkerTotals& t : totals) {
    sum.step_seconds += t.step_seconds;
    sum.ticks += t.ticks;
  }
  return sum.step_seconds / double(sum.ticks);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int match_count = int_flag(argc, argv, "matches", 8);
  const int ticks = int_flag(argc, argv, "ticks", 500);
  const int rounds = int_flag(argc, argv, "rounds", 3);
  const int tick_rate = int_flag(argc, argv, "tick-rate", 128);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());

  OpenArenaLevel level;
  if (const int status = load_openarena_level("worker_scaling_bench", "oa_dm1", level);
      status != kLevelLoaded)
    return status == kLevelMissing ? 0 : 1;
  std::vector<std::unique_ptr<MatchSetup>> matches;
  for (int i = 0; i < match_count; ++i) {
    matches.push_back(make_openarena_match("worker_scaling_bench", level, tick_rate, kPlayers, kProjectiles,
                                           kProps, std::uint32_t(i + 1)));
    if (!matches.back()) return 1;
  }
  run_round(matches, 1, ticks / 4 + 1);  // warm up: projectiles in flight, caches and allocator filled

  std::vector<double> one, two;
  for (int r = 0; r < rounds; ++r) {
    one.push_back(run_round(matches, 1, ticks));
    two.push_back(run_round(matches, 2, ticks));
  }
  const double period = 1.0 / tick_rate;
  const double mean_one = median(one), mean_two = median(two);
  std::printf(
      "%d matches of %d bots, %d projectiles, %d props on oa_dm1 at %d Hz; %d ticks a match a round, "
      "%d rounds (medians); %u cores\n",
      match_count, kPlayers, kProjectiles, kProps, tick_rate, ticks, rounds, cores);
  std::printf("%-8s %14s %22s %20s\n", "workers", "mean step ms", "matches a core holds", "matches it holds");
  std::printf("%-8d %14.4f %22.2f %20.2f\n", 1, mean_one * 1e3, period / mean_one, period / mean_one);
  std::printf("%-8d %14.4f %22.2f %20.2f\n", 2, mean_two * 1e3, period / mean_two, 2 * period / mean_two);
  const double efficiency = mean_one / mean_two;
  std::printf("second worker's efficiency %.3f (goal >= %.2f) %s%s\n", efficiency, kEfficiencyGoal,
              efficiency >= kEfficiencyGoal ? "MET" : "NOT MET",
              cores < 2 ? " (one core: the two workers took turns, not a measure of scaling)" : "");
  return 0;
}
