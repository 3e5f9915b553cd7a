// SimOptions: what one shiftcast-sim run does, from the command line, the server's own config file
// (addresses and the admin key, so a load test needs no second copy of them) and a load profile
// (configs/load/*.toml: how bots behave and the budgets the run is judged against).
//
//   SimOptions o = parse_sim_options(argc, argv);   // throws SimUsageError with the reason (exit 2)
//   if (o.help) { std::fputs(sim_usage().c_str(), stdout); return kSimExitOk; }
//
// Precedence, lowest first: the defaults below, the profile's [run] table, the server config (--config:
// [network] rpc_bind_address, rpc_port, http_port; [security] admin_key_file; [[level]] for level_file),
// then the flags, whatever their order on the command line. A profile has [run], [budgets] and
// [behaviour] tables whose keys are the fields' names, and a [network] table whose keys are --net's
// (string values; [network.up] / [network.down] for one direction; --net replaces it); anything else in
// it is an error. Of the server's
// own file only those keys are read, and nothing else in it is checked (the server checks its file).
//
// Several servers: --servers HOST:RPC_PORT:HTTP_PORT[,...] (repeatable) and --servers-file FILE
// (client-sim/sim_servers.hpp) name them instead of --host/--rpc-port/--http-port (giving both is an
// error); --config then supplies only the admin key and the level file, which every server shares.
// The matches are spread by --placement, every budget is judged per server and in total (sim_report.hpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "client-sim/churn_plan.hpp"
#include "client-sim/network_conditions.hpp"
#include "client-sim/sim_servers.hpp"
#include "server/config/server_config.hpp"
#include "world/match/match_defaults.hpp"

namespace shiftcast {

struct SimUsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The budgets a run must hold; any missed makes the exit status kSimExitBudgetMissed.
struct SimBudgets {
  double input_ack_p99_ticks = 3;  // input to acknowledgement, p99, in server ticks
  std::uint64_t events_lost = 0;   // reliable contact events never delivered
  std::uint64_t clients_failed = 0;
  std::uint64_t invariant_violations = 0;    // the server's, read from /metrics
  double rpc_p99_ms = 50;                    // every RPC kind
  double movement_error_p99 = 4;             // units between predicted and authoritative own position
  double snapshot_rate_min_fraction = 0.9;   // achieved snapshots per second / configured, per client mean
  double server_tick_p99_ms = 0;             // 0: the tick period
  std::uint64_t event_order_violations = 0;  // reliable events delivered out of order or twice
  // Bandwidth per client, mean over the connected clients, IP/UDP headers included (issue 15); 0: none.
  double down_kbit_per_client = 0;
  double up_kbit_per_client = 0;
};

// How bots play (world/match/bot_driver.hpp BotConfig gets the rates) and how often they shoot over the RPC.
struct SimBehaviour {
  float jump_per_second = 0.2f;
  float strafe_per_second = 0.5f;
  float fire_per_second = 2;      // hitscan shots, each a raycast RPC
  float rewound_fraction = 0.5f;  // of the shots: asked as of the client's view tick
};

struct SimOptions {
  // The server: from --config (its [network] and [security] sections), flags override.
  std::string server_config;  // path of the server's TOML, or empty
  std::string host = "127.0.0.1";
  std::uint16_t rpc_port = kDefaultRpcPort;  // the server's defaults (server/config/server_config.hpp)
  std::uint16_t http_port = kDefaultHttpPort;
  std::string admin_key;
  // Several servers (--servers, --servers-file): the matches are spread over them by `placement`. Empty:
  // the one server above; when set, parse_sim_options makes host and the ports the first of them.
  std::vector<SimServer> servers;
  std::string servers_file;  // --servers-file, read into `servers` by parse_sim_options
  SimPlacement placement = SimPlacement::kRoundRobin;

  int matches = 1;
  int clients = 32;      // per match
  double duration = 30;  // seconds of load after every client connected (or the connect timeout)
  double connect_timeout = 20;
  std::string json_path;             // empty: no JSON file
  std::string html_path;             // empty: no HTML page (client-sim/report_html.hpp)
  int tick_rate = kDefaultTickRate;  // asked of the server for the matches this run creates
  int snapshot_rate = kDefaultSnapshotRate;
  std::string level = "oa_dm1";  // a level name the server hosts
  std::string level_file;        // the same level's file, for the bots' navmesh and prediction;
                                 // empty: taken from the server config's [[level]] of that name
  std::string profile_path;      // configs/load/*.toml; empty: defaults
  std::uint32_t seed = 1;
  int threads = 0;  // client threads, 0: one per core
  // Of the clients, the share that predicts its own player (the prediction error is sampled on them);
  // the others steer by the server's newest state and cost the load tester no motor runs. Spread evenly
  // over the run's clients (client k predicts when floor((k + 1) f) > floor(k f)), so every match holds
  // its share. The server sees no difference: every client sends the same commands either way.
  double predict_fraction = 1;
  bool progress = true;  // the live progress line on stderr
  bool help = false;     // --help: print sim_usage() and exit; nothing else is checked

  SimBudgets budgets;
  SimBehaviour behaviour;
  // --net or the profile's [network] table: applied to every datagram between each client and the server.
  NetworkConditions network;
  // Churn (client-sim/churn_runner.hpp): the profile's [churn] table, or --churn. `clients` per match are
  // then the slots in play at once: players come and go, matches are replaced, RPC clients pass.
  ChurnSettings churn;
};

inline constexpr int kSimExitOk = 0;
inline constexpr int kSimExitBudgetMissed = 1;
inline constexpr int kSimExitUsage = 2;
inline constexpr int kSimExitCannotRun = 3;  // the server unreachable, a level that does not load, ...

// argv[0] is the program name. Every problem found after the flags are read (ranges, a missing admin key,
// a level file that does not exist) is reported at once, one per line.
SimOptions parse_sim_options(int argc, char** argv);
std::string sim_usage();
// The servers a run uses: options.servers, or the one at host:rpc_port:http_port when that is empty (so a
// SimOptions filled in by hand for one server needs no list).
std::vector<SimServer> sim_servers(const SimOptions& options);
// The rate the server really sends snapshots at: it snapshots every round(tick / snapshot) ticks
// (server/match.cpp), so 40 Hz asked at 64 Hz ticks is 32 Hz. The snapshot-rate budget is a fraction of it.
double effective_snapshot_rate(int tick_rate, int snapshot_rate);

}  // namespace shiftcast
