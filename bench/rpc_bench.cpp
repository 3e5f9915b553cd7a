// shiftcast-rpc-bench: the RPC's raycast throughput and latency over loopback. Starts the real server
// in-process (real sockets, free ports) hosting one level with one match, connects client threads over
// TCP and runs six phases, one table row each:
//   1 single raycasts, one in flight (the pure round trip)    4 batches of 64, 4 in flight
//   2 single raycasts, 32 in flight (pipelined)               5 batches of 256, 4 in flight
//   3 batches of 16, 4 in flight                              6 open loop: single raycasts at a fixed rate
// Every reply of every phase is compared bit for bit with world_raycast's answer in-process for the same
// ray on the server's level; any difference, refusal or missing reply fails the run (exit status 1).
// Under each phase it reports how many of the match's ticks started more than a period late while the
// RPC threads were loaded (the claim that queries never delay a tick, measured rather than asserted).
//
//   shiftcast-rpc-bench                                        arena.map, 1 worker, 1 rpc thread, 2 conns
//   shiftcast-rpc-bench --connections 4 --rpc-threads 2
//   shiftcast-rpc-bench --level data/openarena/maps/oa_dm1.bsp --seconds 5
//
// Rays: per connection kRaysPerConnection of them, origins uniform in the level's bounds (outside solid:
// a ray starting in solid stops at once and would measure nothing), directions uniform on the sphere,
// max distance 4096; fixed seed. The server's rate limit is raised far beyond what the machine can send,
// so the figures are the server's, not the limiter's. Client and server share the machine's cores.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/rpc_bench_client.hpp"
#include "server/logging.hpp"
#include "server/match_registry.hpp"
#include "server/server.hpp"
#include "tests/support/seeded_random.hpp"

namespace {

using namespace shiftcast;
using namespace shiftcast::bench;

// Distinct rays per connection: a multiple of every batch size, enough that the level's tree is not
// answering one cached ray, few enough that phase 1 answers each at least once (its checksum).
constexpr std::size_t kRaysPerConnection = 4096;
constexpr int kBatchDepth = 4;          // batches in flight per connection: the server never waits for one
constexpr int kPipelineDepth = 32;      // single raycasts in flight in phase 2
constexpr double kOpenLoopRate = 2000;  // phase 6: single raycasts per second per connection
// The rate limit during the bench: cost units (raycasts) per second per connection, and the bucket.
constexpr double kUnlimitedRate = 1e9;
constexpr double kUnlimitedBurst = 1e9;
// Origins drawn in solid are drawn again, at most this many times (a level that is nearly all solid
// keeps the last draw rather than never finishing).
constexpr int kMaxOriginDraws = 1000;
// The client threads start a phase together this long after it is set up.
// Each phase runs this long before its measured window: connections and caches settle.
constexpr double kWarmupSeconds = 0.25;
constexpr auto kPhaseStartDelay = std::chrono::milliseconds(20);

struct Options {
  std::string level = std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map";
  int threads = 1;
  int rpc_threads = 1;
  int connections = 2;
  double seconds = 3;
  std::uint32_t seed = 1;
};

void usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--level PATH] [--threads N] [--rpc-threads N] [--connections N] [--seconds S] "
               "[--seed N]\n",
               program);
}

// Exits with status 2 on a bad command line.
Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      usage(argv[0]);
      std::exit(0);
    }
    if (i + 1 >= argc) {
      usage(argv[0]);
      std::exit(2);
    }
    const char* value = argv[++i];
    if (arg == "--level") {
      o.level = std::filesystem::absolute(value).string();
    } else if (arg == "--threads") {
      o.threads = std::atoi(value);
    } else if (arg == "--rpc-threads") {
      o.rpc_threads = std::atoi(value);
    } else if (arg == "--connections") {
      o.connections = std::atoi(value);
    } else if (arg == "--seconds") {
      o.seconds = std::atof(value);
    } else if (arg == "--seed") {
      o.seed = std::uint32_t(std::strtoul(value, nullptr, 10));
    } else {
      usage(argv[0]);
      std::exit(2);
    }
  }
  if (o.threads < 1 || o.rpc_threads < 1 || o.connections < 1 || !(o.seconds > 0)) {
    std::fprintf(stderr, "--threads, --rpc-threads, --connections and --seconds must be positive\n");
    std::exit(2);
  }
  if (!std::filesystem::exists(o.level)) {
    std::fprintf(stderr, "no level at %s\n", o.level.c_str());
    std::exit(2);
  }
  return o;
}

ServerConfig bench_config(const Options& o) {
  ServerConfig c;
  c.udp_port = 0;
  c.rpc.port = 0;
  c.http_port = 0;
  c.threads = o.threads;
  c.rpc_threads = o.rpc_threads;
  c.rpc.rate = kUnlimitedRate;
  c.rpc.burst = kUnlimitedBurst;
  c.config_dir = SHIFTCAST_SOURCE_DIR;
  c.config_file = "shiftcast-rpc-bench";
  c.token_key_file = "configs/keys/dev-token.key";
  c.admin_key_file = "configs/keys/dev-admin.key";
  c.read_access = "open";  // loopback only: the bench measures queries, not key checks
  c.log_level = "warn";
  c.levels.push_back({"bench", o.level, ""});
  InitialMatchConfig match;
  match.level = "bench";
  match.props = 0;  // the level alone: world_raycast against it is the oracle
  match.seed = o.seed;
  c.matches.push_back(match);
  return c;
}

std::vector<BenchRay> make_rays(const BspTree& tree, std::uint32_t seed, int connection) {
  std::mt19937 rng(seed * 7919u + std::uint32_t(connection));
  const Aabb& b = tree.bounds();
  std::vector<BenchRay> rays;
  rays.reserve(kRaysPerConnection);
  while (rays.size() < kRaysPerConnection) {
    BenchRay ray;
    for (int draw = 0; draw < kMaxOriginDraws; ++draw) {
      ray.origin = {b.min.x + unit_float(rng) * (b.max.x - b.min.x),
                    b.min.y + unit_float(rng) * (b.max.y - b.min.y),
                    b.min.z + unit_float(rng) * (b.max.z - b.min.z)};
      if (tree.point_brush(ray.origin) == kNoBrush) break;
    }
    // Uniform on the sphere by rejection from the cube (no libm trigonometry).
    while (true) {
      const Vec3 d{2 * unit_float(rng) - 1, 2 * unit_float(rng) - 1, 2 * unit_float(rng) - 1};
      const float l2 = dot(d, d);
      if (l2 > 1e-4f && l2 <= 1) {
        ray.direction = d * (1.0f / std::sqrt(l2));
        break;
      }
    }
    rays.push_back(ray);
  }
  return rays;
}

// The 1-minute load average: other processes on the machine take cores from the server and the clients.
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one_minute;
  if (!(in >> one_minute)) return "unknown";
  return one_minute;
}

struct Row {
  PhaseSpec phase;
  double requests_per_s = 0;
  double raycasts_per_s = 0;
  float p50 = 0, p99 = 0, max = 0;
  std::uint64_t skipped = 0;
};

float percentile(std::vector<float>& v, double q) {
  if (v.empty()) return 0;
  const auto k = std::size_t(q * double(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end());
  return v[k];
}

void print_header() {
  std::printf("%-28s %6s %6s %12s %12s %9s %9s %9s\n", "phase", "depth", "rays", "requests/s", "raycasts/s",
              "p50 us", "p99 us", "max us");
}

void print_row(const Row& r) {
  char depth[16];
  if (r.phase.rate > 0) {
    std::snprintf(depth, sizeof depth, "open");
  } else {
    std::snprintf(depth, sizeof depth, "%d", r.phase.depth);
  }
  std::printf("%-28s %6s %6d %12.0f %12.0f %9.1f %9.1f %9.1f\n", r.phase.name, depth, r.phase.batch,
              r.requests_per_s, r.raycasts_per_s, r.p50, r.p99, r.max);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) try {
  const Options options = parse_options(argc, argv);
  configure_logging(spdlog::level::warn);
  ServerConfig config = bench_config(options);
  validate(config);
  Server server(config);
  if (std::string e = server.start(); !e.empty()) {
    std::fprintf(stderr, "server failed to start: %s\n", e.c_str());
    return 1;
  }
  const std::vector<std::shared_ptr<MatchHandle>> matches = server.matches().list();
  if (matches.size() != 1) {
    std::fprintf(stderr, "expected one match, the server hosts %zu\n", matches.size());
    return 1;
  }
  const MatchHandle& match = *matches.front();
  const BspTree& tree = match.level_tree();
  const std::uint32_t entities = match.health().summary.entities;

  std::printf("shiftcast-rpc-bench: level %s (%d brushes), match %u with %u entities\n",
              options.level.c_str(), tree.brush_count(), match.id(), entities);
  std::printf("machine: %u cores, shared by the server and the clients; load average %s at start\n",
              std::thread::hardware_concurrency(), load_average().c_str());
  std::printf(
      "server: %d worker thread(s), %d rpc thread(s), tick %d Hz; rate limit raised to %.0e raycasts/s "
      "per connection (burst %.0e) so the limiter never refuses\n",
      options.threads, options.rpc_threads, config.tick_rate, kUnlimitedRate, kUnlimitedBurst);
  std::printf(
      "client: %d connection(s), one thread each, blocking TCP over loopback with TCP_NODELAY, requests "
      "pre-built\n",
      options.connections);
  std::printf(
      "rays: %zu per connection, seed %u, origins uniform in the level bounds outside solid, directions "
      "uniform, max distance %.0f\n",
      kRaysPerConnection, options.seed, kRayMaxDistance);
  std::printf("each phase: %.2f s warm-up, then %.1f s measured; latency per request, send to reply\n\n",
              kWarmupSeconds, options.seconds);
  if (entities != 0) {
    std::fprintf(stderr, "the match has entities; the level-only oracle would not apply\n");
    return 1;
  }

  std::vector<std::vector<BenchRay>> rays;
  std::vector<std::vector<RayAnswer>> expected;
  for (int c = 0; c < options.connections; ++c) {
    rays.push_back(make_rays(tree, options.seed, c));
    std::vector<RayAnswer> answers;
    for (const BenchRay& r : rays.back()) {
      answers.push_back(answer_of(world_raycast(tree, {}, r.origin, r.direction, kRayMaxDistance, {})));
    }
    expected.push_back(std::move(answers));
  }

  std::vector<std::unique_ptr<RpcBenchConnection>> connections;
  for (int c = 0; c < options.connections; ++c) {
    std::string error;
    connections.push_back(RpcBenchConnection::connect(server.ports().rpc, error));
    if (connections.back() == nullptr) {
      std::fprintf(stderr, "connection %d: %s\n", c, error.c_str());
      return 1;
    }
  }

  const double s = options.seconds;
  const std::vector<PhaseSpec> phases = {
      {"1 single, round trip", 1, 1, 0, kWarmupSeconds, s},
      {"2 single, pipelined", 1, kPipelineDepth, 0, kWarmupSeconds, s},
      {"3 batch 16", 16, kBatchDepth, 0, kWarmupSeconds, s},
      {"4 batch 64", 64, kBatchDepth, 0, kWarmupSeconds, s},
      {"5 batch 256", 256, kBatchDepth, 0, kWarmupSeconds, s},
      {"6 open loop 2000/s/conn", 1, 0, kOpenLoopRate, kWarmupSeconds, s},
  };
  print_header();
  std::uint64_t compared = 0;
  std::uint64_t mismatched = 0;
  std::uint64_t late_ticks = 0;
  std::uint64_t phase_ticks = 0;
  std::vector<std::vector<RayAnswer>> first_answers(std::size_t(options.connections));
  for (std::size_t p = 0; p < phases.size(); ++p) {
    std::vector<PhaseStats> stats(std::size_t(options.connections));
    std::vector<std::thread> threads;
    const BenchClock::time_point start = BenchClock::now() + kPhaseStartDelay;
    const MatchHealth health_before = match.health();
    for (int c = 0; c < options.connections; ++c) {
      threads.emplace_back([&, c] {
        stats[c] = connections[c]->run(phases[p], match.id(), rays[c], expected[c], start,
                                       p == 0 ? &first_answers[c] : nullptr);
      });
    }
    for (std::thread& t : threads)
      t.join();
    const MatchHealth health_after = match.health();
    Row row{phases[p]};
    std::vector<float> latencies;
    std::vector<float> lateness;
    for (int c = 0; c < options.connections; ++c) {
      const PhaseStats& st = stats[c];
      if (!st.failure.empty()) {
        std::fprintf(stderr, "phase %s, connection %d: %s\n", phases[p].name, c, st.failure.c_str());
        return 1;
      }
      if (p == 0 && st.distinct_rays != kRaysPerConnection) {
        std::fprintf(stderr, "phase 1 answered only %llu of connection %d's %zu rays: raise --seconds\n",
                     static_cast<unsigned long long>(st.distinct_rays), c, kRaysPerConnection);
        return 1;
      }
      row.requests_per_s += double(st.replies) / s;
      row.raycasts_per_s += double(st.raycasts) / s;
      row.skipped += st.skipped_sends;
      compared += st.compared;
      mismatched += st.mismatched;
      latencies.insert(latencies.end(), st.latencies_us.begin(), st.latencies_us.end());
      lateness.insert(lateness.end(), st.send_lateness_us.begin(), st.send_lateness_us.end());
    }
    row.p50 = percentile(latencies, 0.5);
    row.p99 = percentile(latencies, 0.99);
    row.max = latencies.empty() ? 0 : *std::max_element(latencies.begin(), latencies.end());
    print_row(row);
    if (!lateness.empty()) {
      std::printf(
          "  client send lateness after the deadline: p50 %.1f us, p99 %.1f us (part of the latency)\n",
          percentile(lateness, 0.5), percentile(lateness, 0.99));
    }
    if (row.skipped > 0) {
      std::printf("  (%llu sends skipped: the server fell too far behind)\n",
                  static_cast<unsigned long long>(row.skipped));
    }
    // The match ticks on its worker while the RPC threads answer: how many of its ticks this phase's load
    // made start more than one period late (a timing figure of this machine, so a bench's, not a test's).
    const std::uint64_t ticks = health_after.summary.tick - health_before.summary.tick;
    const std::uint64_t late = health_after.late_ticks - health_before.late_ticks;
    late_ticks += late;
    phase_ticks += ticks;
    std::printf("  match ticks during the phase: %llu, of which %llu started more than a period late\n",
                static_cast<unsigned long long>(ticks), static_cast<unsigned long long>(late));
  }
  std::printf("\nmatch ticks started late under the RPC load: %llu of %llu (%.3f%%)\n",
              static_cast<unsigned long long>(late_ticks), static_cast<unsigned long long>(phase_ticks),
              phase_ticks == 0 ? 0.0 : 100.0 * double(late_ticks) / double(phase_ticks));
  std::printf(
      "\nopen loop offered %.0f raycasts/s in total (%d connections x %.0f/s); its latency runs from "
      "each request's scheduled send time\n",
      kOpenLoopRate * options.connections, options.connections, kOpenLoopRate);

  std::vector<RayAnswer> rpc_answers;
  std::vector<RayAnswer> oracle_answers;
  for (int c = 0; c < options.connections; ++c) {
    rpc_answers.insert(rpc_answers.end(), first_answers[c].begin(), first_answers[c].end());
    oracle_answers.insert(oracle_answers.end(), expected[c].begin(), expected[c].end());
  }
  const std::uint64_t rpc_sum = checksum(rpc_answers);
  const std::uint64_t oracle_sum = checksum(oracle_answers);
  std::printf("checksum of phase 1's answers %016llx, world_raycast's on the same rays %016llx\n",
              static_cast<unsigned long long>(rpc_sum), static_cast<unsigned long long>(oracle_sum));
  const bool match_ok = mismatched == 0 && rpc_sum == oracle_sum;
  std::printf("answers match world_raycast: %s (%llu answers compared over all phases, %llu differ)\n",
              match_ok ? "yes" : "NO", static_cast<unsigned long long>(compared),
              static_cast<unsigned long long>(mismatched));
  connections.clear();
  server.shutdown();
  server.wait();
  return match_ok ? 0 : 1;
} catch (const ConfigError& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
