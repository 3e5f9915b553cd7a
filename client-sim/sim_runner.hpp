// run_simulation: the load itself. Creates the matches over the admin RPC, gets every client a connect
// token, connects them all over UDP, then for options.duration seconds each client's bot (a
// world/bot_driver BotDriver fed by the client's own predicted motor state) plays at the client tick
// rate: one command per tick, hitscan shots as raycast RPCs (some rewound to the client's view tick),
// every snapshot checked. Then every client says goodbye and the matches are ended.
//
//   SimLevel level = load_sim_level(options);                 // navmesh and BSP of the server's level
//   SimRunResult r = run_simulation(options, level, [](const SimProgress& p) { print(p); },
//                                   [&] { after = scrape_server_metrics(options); });  // matches still up
//
// Several servers (sim_servers(options)): each match is created on the server options.placement gives
// it, its clients' tokens come from that server and their shots go to it; a server that cannot be
// reached fails the run with its address in the error.
//
// Threads: options.threads client threads (one io_context each, its clients' sockets, a drift-free
// client tick timer, one pipelined RPC connection per server for its clients' shots). Time is the
// steady clock.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client-sim/churn_counters.hpp"
#include "client-sim/sim_options.hpp"
#include "client-sim/sim_stats.hpp"
#include "world/level/compiled_level.hpp"
#include "world/level/navmesh.hpp"

namespace shiftcast {

struct SimLevel {
  std::string source;
  CompiledLevel compiled;
  std::unique_ptr<NavMesh> navmesh;
};

// Loads options.level_file (a .level, or a source compiled here); an error string on failure.
std::string load_sim_level(const SimOptions& options, SimLevel& out);

// Once per second from the calling thread, while the clients connect (elapsed 0) and while the load runs.
struct SimProgress {
  double elapsed = 0;  // seconds since the load started; 0 while connecting
  int clients = 0;
  int connected = 0;
  int failed = 0;
  std::uint64_t snapshots = 0;
  std::uint64_t commands = 0;
  std::uint64_t events = 0;
  std::uint64_t rpc_calls = 0;
  std::uint64_t bytes_up = 0;  // all clients' datagrams, IP/UDP headers included
  std::uint64_t bytes_down = 0;
  double input_ack_p50_ms = 0;  // over the last second (bucketed: kAckBucketMs)
  double input_ack_p99_ms = 0;
  double rpc_p99_ms = 0;  // the shots answered in the last second
};

struct SimRunResult {
  std::string error;  // non-empty: the run could not happen (server unreachable, admin refused, ...)
  std::vector<std::uint32_t> match_ids;
  // Which server (an index into sim_servers(options)) hosts each match and each client; empty for a
  // churn run (one server).
  std::vector<std::uint32_t> match_servers;
  std::vector<std::uint32_t> client_servers;
  std::vector<SimClientStats> clients;
  double load_seconds = 0;      // how long the measured load ran
  double load_cpu_seconds = 0;  // the simulator's own CPU (all its threads) over those seconds
  double connect_seconds = 0;   // from the first request to the last client connected
  // Client ticks a client thread skipped because it fell more than a period behind: the simulator itself
  // was overloaded, and its latencies say as much about this machine as about the server.
  std::uint64_t late_client_ticks = 0;
  // Churn runs (options.churn.enabled): `clients` holds one entry per session; what came and went.
  ChurnCounters churn;
};

// With options.churn.enabled, the run is run_churn's (client-sim/churn_runner.hpp).
// `before_end_matches` runs on the calling thread after every client said goodbye and before the matches
// are ended (the server's per-match metrics still exist then).
SimRunResult run_simulation(const SimOptions& options, const SimLevel& level,
                            const std::function<void(const SimProgress&)>& progress,
                            const std::function<void()>& before_end_matches = {});

}  // namespace shiftcast
