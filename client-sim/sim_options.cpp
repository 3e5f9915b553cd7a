#include "client-sim/sim_options.hpp"

#include <spdlog/fmt/fmt.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "client-sim/sim_config_files.hpp"
#include "server/config/tick_rates.hpp"

namespace shiftcast {
namespace {

using sim_config_files::is_file;
using sim_config_files::kMaxPort;
using sim_config_files::level_file_from;
using sim_config_files::load_profile;
using sim_config_files::read_admin_key;
using sim_config_files::read_server_config;
using sim_config_files::server_host;

constexpr int kMaxClientsPerMatch = 1024;
constexpr int kMaxThreads = 1024;

// ---- Values of flags -------------------------------------------------------------------------------

std::int64_t parse_integer(std::string_view flag, std::string_view text, std::int64_t min, std::int64_t max) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw SimUsageError(fmt::format("--{} '{}': not an integer", flag, text));
  }
  if (value < min || value > max) {
    throw SimUsageError(fmt::format("--{} {}: must be {}..{}", flag, value, min, max));
  }
  return value;
}

double parse_real(std::string_view flag, std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    throw SimUsageError(fmt::format("--{} '{}': not a number", flag, text));
  }
  return value;
}

std::string non_empty(std::string_view flag, std::string_view text) {
  if (text.empty()) throw SimUsageError(fmt::format("--{}: needs a non-empty value", flag));
  return std::string(text);
}

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr std::int64_t kIntMin = std::numeric_limits<int>::min();

struct Flag {
  std::string_view name;   // without the dashes
  std::string_view value;  // placeholder in the usage; empty: a switch without a value
  std::string_view help;
  void (*apply)(SimOptions&, std::string_view flag, std::string_view value);
};

// Ranges are checked here only as far as the type needs; validate() judges the values, wherever they
// came from (flag or profile), so both get the same message.
const Flag kFlags[] = {
    {"config", "FILE", "the server's own config (configs/server.toml): host, ports, admin key, level files",
     [](SimOptions& o, std::string_view f, std::string_view v) { o.server_config = non_empty(f, v); }},
    {"host", "ADDR", "the server's address (default 127.0.0.1; 0.0.0.0 in the config means loopback)",
     [](SimOptions& o, std::string_view f, std::string_view v) { o.host = non_empty(f, v); }},
    {"rpc-port", "PORT", "the server's RPC port (default 40001)",
     [](SimOptions& o, std::string_view f, std::string_view v) {
       o.rpc_port = static_cast<std::uint16_t>(parse_integer(f, v, 1, kMaxPort));
     }},
    {"http-port", "PORT", "the server's metrics port (default 40002)",
     [](SimOptions& o, std::string_view f, std::string_view v) {
       o.http_port = static_cast<std::uint16_t>(parse_integer(f, v, 1, kMaxPort));
     }},
    {"servers", "LIST",
     "several servers, HOST:RPC_PORT:HTTP_PORT[,...] (repeatable; instead of --host and the ports)",
     [](SimOptions& o, std::string_view f, std::string_view v) {
       std::vector<std::string> errors;
       std::vector<SimServer> list = parse_sim_server_list(v, fmt::format("--{}", f), errors);
       if (!errors.empty()) throw SimUsageError(errors.front());
       o.servers.insert(o.servers.end(), list.begin(), list.end());
     }},
    {"servers-file", "FILE", "servers one a line, HOST:RPC_PORT:HTTP_PORT ('#' starts a comment)",
     [](SimOptions& o, std::string_view f, std::string_view v) { o.servers_file = non_empty(f, v); }},
    {"placement", "HOW",
     "round-robin (default): match i on server i mod N; least-loaded: each match on the server\n"
     "                        hosting the fewest (its /metrics before the run, plus this run's)",
     [](SimOptions& o, std::string_view f, std::string_view v) {
       const std::optional<SimPlacement> placement = placement_from_string(v);
       if (!placement) throw SimUsageError(fmt::format("--{} '{}': round-robin or least-loaded", f, v));
       o.placement = *placement;
     }},
    {"admin-key", "KEY", "the admin API key (default: the config's [security] admin_key_file)",
     [](SimOptions& o, std::string_view f, std::string_view v) { o.admin_key = non_empty(f, v); }},
    {"matches", "N", "matches to create (default 1)",
     [](SimOptions& o, std::string_view f, std::string_view v) {
       o.matches = static_cast<int>(parse_integer(f, v, kIntMin, kIntMax));
     }},
    {"clients", "N", "clients per match, 1..1024 (default 32)",
     [](SimOptions& o, std::string_view f, std::string_view v) {
       o.clients = static_cast<int>(parse_integer(f, v, kIntMin, kIntMax));
     }},
    {"duration", "S", "seconds of load after the clients connected (default 30)",
     [](SimOptions& o, std::string_view f, std::string_view v) { o.duration = parse_real(f, v); }},
    {"connect-timeout", "S", "seconds the clients get to connect (default 20)",
     [](SimOptions& o, std::string_view f, std::string_view v) { o.connect_timeout = parse_real(f, v); }},
    {"json", "FILE", "also write the report as JSON to FILE",
     [](SimOptions& o, std::string_view f, std::string_view v) { o.json_path = non_empty(f, v); }},
    {"html", "FILE", "also write the report as one self-contained page with plots to FILE",
     [](SimOptions& o, std::string_view f, std::string_view v) { o.html_path = non_empty(f, v); }},
    {"tick-rate", "HZ", "tick rate of the matches created, 20..128 (default 64)",
     [](SimOptions& o, std::string_view f, std::string_view v) {
       o.tick_rate = static_cast<int>(parse_integer(f, v, kIntMin, kIntMax));
     }},
    {"snapshot-rate", "HZ", "snapshot rate of the matches created, 1..tick rate (default 32)",
     [](SimOptions& o, std::string_view f, std::string_view v) {
       o.snapshot_rate = static_cast<int>(parse_integer(f, v, kIntMin, kIntMax));
     }},
    {"level", "NAME", "a level the server hosts (default oa_dm1)",
     [](SimOptions& o, std::string_view f, std::string_view v) { o.level = non_empty(f, v); }},
    {"level-file", "FILE", "that level's file for the bots (default: the config's [[level]] of that name)",
     [](SimOptions& o, std::string_view f, std::string_view v) { o.level_file = non_empty(f, v); }},
    {"profile", "FILE", "load profile: [run], [budgets], [behaviour] (configs/load/*.toml)",
     [](SimOptions& o, std::string_view f, std::string_view v) { o.profile_path = non_empty(f, v); }},
    {"seed", "N", "seed of the bots' choices (default 1)",
     [](SimOptions& o, std::string_view f, std::string_view v) {
       o.seed = static_cast<std::uint32_t>(parse_integer(f, v, 0, std::numeric_limits<std::uint32_t>::max()));
     }},
    {"threads", "N", "client threads, 0 = one per core (default 0)",
     [](SimOptions& o, std::string_view f, std::string_view v) {
       o.threads = static_cast<int>(parse_integer(f, v, kIntMin, kIntMax));
     }},
    {"predict-fraction", "F", "share of the clients that predict their own player, 0..1 (default 1)",
     [](SimOptions& o, std::string_view f, std::string_view v) { o.predict_fraction = parse_real(f, v); }},
    {"net", "ITEMS",
     "network conditions, e.g. loss=5%,latency=50ms,jitter=10ms,dup=1%,reorder=2%,rate=512kbit\n"
     "                        (both ways; up.KEY / down.KEY: one; replaces the profile's [network])",
     [](SimOptions& o, std::string_view, std::string_view v) {
       NetParseResult parsed = parse_network_conditions(v);
       if (!parsed.ok()) throw SimUsageError("--net " + parsed.error->message);  // "--net item '...': ..."
       o.network = parsed.conditions;
     }},
    {"churn", "", "churn mode: clients, matches, RPC clients and subscribers come and go ([churn] table)",
     [](SimOptions& o, std::string_view, std::string_view) { o.churn.enabled = true; }},
    {"no-progress", "", "no live progress line on stderr",
     [](SimOptions& o, std::string_view, std::string_view) { o.progress = false; }},
    {"help", "", "this text", [](SimOptions& o, std::string_view, std::string_view) { o.help = true; }},
};

const Flag* find_flag(std::string_view name) {
  for (const Flag& flag : kFlags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

// ---- Validation -----------------------------------------------------------------------------------

void validate(const SimOptions& o, std::vector<std::string>& errors) {
  auto check = [&](bool ok, std::string message) {
    if (!ok) errors.push_back(std::move(message));
  };
  check(!o.host.empty(), "host: empty");
  check(o.rpc_port >= 1, "rpc port 0: must be 1..65535 (a server on any free port needs --rpc-port)");
  check(o.http_port >= 1, "http port 0: must be 1..65535 (a server on any free port needs --http-port)");
  check(!o.admin_key.empty(), "no admin key: give --admin-key, or --config with [security] admin_key_file");
  check(o.matches >= 1, fmt::format("matches = {}: must be at least 1", o.matches));
  check(o.clients >= 1 && o.clients <= kMaxClientsPerMatch,
        fmt::format("clients = {}: must be 1..{} per match", o.clients, kMaxClientsPerMatch));
  check(std::isfinite(o.duration) && o.duration > 0,
        fmt::format("duration = {}: must be above 0 s", o.duration));
  check(std::isfinite(o.connect_timeout) && o.connect_timeout > 0,
        fmt::format("connect timeout = {}: must be above 0 s", o.connect_timeout));
  check(o.tick_rate >= kMinTickRate && o.tick_rate <= kMaxTickRate,
        fmt::format("tick rate = {}: must be {}..{}", o.tick_rate, kMinTickRate, kMaxTickRate));
  check(o.snapshot_rate >= 1 && o.snapshot_rate <= o.tick_rate,
        fmt::format("snapshot rate = {}: must be 1..tick rate ({})", o.snapshot_rate, o.tick_rate));
  check(o.predict_fraction >= 0 && o.predict_fraction <= 1,
        fmt::format("predict fraction = {}: must be 0..1", o.predict_fraction));
  check(o.threads >= 0 && o.threads <= kMaxThreads,
        fmt::format("threads = {}: must be 0 (one per core)..{}", o.threads, kMaxThreads));
  check(!o.level.empty(), "level: empty");
  check(o.level_file.empty() || is_file(o.level_file),
        fmt::format("level file {}: no such file", o.level_file));

  if (o.churn.enabled) {
    check(o.servers.size() <= 1, fmt::format("--churn drives one server; {} were given", o.servers.size()));
    const std::string churn = validate_churn_settings(o.churn);
    check(churn.empty(), churn);
  }
  const SimBudgets& b = o.budgets;
  auto non_negative = [&](double v, std::string_view name) {
    check(v >= 0, fmt::format("[budgets] {} = {}: must be 0 or more", name, v));
  };
  non_negative(b.input_ack_p99_ticks, "input_ack_p99_ticks");
  non_negative(b.rpc_p99_ms, "rpc_p99_ms");
  non_negative(b.movement_error_p99, "movement_error_p99");
  non_negative(b.server_tick_p99_ms, "server_tick_p99_ms");
  check(b.snapshot_rate_min_fraction >= 0 && b.snapshot_rate_min_fraction <= 1,
        fmt::format("[budgets] snapshot_rate_min_fraction = {}: must be 0..1", b.snapshot_rate_min_fraction));
  const SimBehaviour& h = o.behaviour;
  auto rate = [&](float v, std::string_view name) {
    check(v >= 0, fmt::format("[behaviour] {} = {}: must be 0 or more", name, v));
  };
  rate(h.jump_per_second, "jump_per_second");
  rate(h.strafe_per_second, "strafe_per_second");
  rate(h.fire_per_second, "fire_per_second");
  check(h.rewound_fraction >= 0 && h.rewound_fraction <= 1,
        fmt::format("[behaviour] rewound_fraction = {}: must be 0..1", h.rewound_fraction));
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines)
    out += (out.empty() ? "" : "\n") + line;
  return out;
}

}  // namespace

std::vector<SimServer> sim_servers(const SimOptions& options) {
  if (!options.servers.empty()) return options.servers;
  return {SimServer{options.host, options.rpc_port, options.http_port}};
}

double effective_snapshot_rate(int tick_rate, int snapshot_rate) {
  if (tick_rate <= 0 || snapshot_rate <= 0) return 0;
  long every = std::max(1L, std::lround(static_cast<double>(tick_rate) / snapshot_rate));
  return static_cast<double>(tick_rate) / static_cast<double>(every);
}

SimOptions parse_sim_options(int argc, char** argv) {
  // Read every flag first: the config and the profile are applied before the flags, so a flag wins
  // wherever it stands on the command line.
  std::vector<std::pair<const Flag*, std::string>> flags;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (!arg.starts_with("--")) throw SimUsageError(fmt::format("unexpected argument '{}'", arg));
    std::string_view name = arg.substr(2);
    std::optional<std::string_view> value;
    if (std::size_t eq = name.find('='); eq != std::string_view::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const Flag* flag = find_flag(name);
    if (!flag) throw SimUsageError(fmt::format("unknown option --{}", name));
    if (flag->value.empty()) {
      if (value) throw SimUsageError(fmt::format("--{} takes no value", name));
    } else if (!value) {
      if (i + 1 >= argc) throw SimUsageError(fmt::format("--{} needs a value ({})", name, flag->value));
      value = argv[++i];
    }
    flags.emplace_back(flag, std::string(value.value_or("")));
  }

  SimOptions o;
  for (const auto& [flag, value] : flags)
    flag->apply(o, flag->name, value);
  if (o.help) return o;

  std::vector<std::string> errors;
  SimOptions merged;
  if (!o.profile_path.empty()) load_profile(o.profile_path, merged, errors);
  std::optional<ServerConfig> server;
  if (!o.server_config.empty()) {
    server = read_server_config(o.server_config, errors);
    if (server) {
      merged.host = server_host(*server);
      merged.rpc_port = server->rpc.port;
      merged.http_port = server->http_port;
    }
  }
  bool admin_key_flag = false;
  bool level_file_flag = false;
  std::string single_server_flag;  // --host, --rpc-port or --http-port, if given
  for (const auto& [flag, value] : flags) {
    flag->apply(merged, flag->name, value);
    admin_key_flag = admin_key_flag || flag->name == "admin-key";
    level_file_flag = level_file_flag || flag->name == "level-file";
    if (flag->name == "host" || flag->name == "rpc-port" || flag->name == "http-port") {
      single_server_flag = flag->name;
    }
  }
  if (!merged.servers_file.empty()) {
    std::vector<SimServer> listed = read_sim_servers_file(merged.servers_file, errors);
    merged.servers.insert(merged.servers.end(), listed.begin(), listed.end());
  }
  if (!merged.servers.empty() || !merged.servers_file.empty()) {
    if (!single_server_flag.empty()) {
      errors.push_back(fmt::format(
          "--{} with --servers or --servers-file: name every server in the list (HOST:RPC_PORT:HTTP_PORT)",
          single_server_flag));
    }
    check_distinct_servers(merged.servers, errors);
    if (!merged.servers.empty()) {
      merged.host = merged.servers.front().host;
      merged.rpc_port = merged.servers.front().rpc_port;
      merged.http_port = merged.servers.front().http_port;
    }
  }
  if (server && !admin_key_flag && !server->admin_key_file.empty()) {
    merged.admin_key = read_admin_key(*server, errors);
  }
  if (!level_file_flag && !merged.level.empty()) {
    if (server) {
      merged.level_file = level_file_from(*server, merged.level, errors);
    } else if (o.server_config.empty()) {  // (a refused config's reasons are in errors already)
      errors.push_back(
          fmt::format("no file for level '{}': give --level-file, or --config with a [[level]] of "
                      "that name",
                      merged.level));
    }
  }
  validate(merged, errors);
  if (!errors.empty()) throw SimUsageError(join_lines(errors));
  return merged;
}

std::string sim_usage() {
  std::string out =
      "usage: shiftcast-sim [--config SERVER_TOML] [--profile LOAD_TOML] [options]\n"
      "       shiftcast-sim --servers HOST:RPC_PORT:HTTP_PORT,... --admin-key KEY [options]\n"
      "\n"
      "Load-tests a running shiftcast-server: creates matches over the admin RPC, connects real UDP clients\n"
      "driven by navmesh bots, fires hitscan raycasts over the RPC, and judges the run against the\n"
      "profile's budgets. Flags override the server config and the profile, wherever they stand.\n"
      "With several servers the matches are spread over them and every budget is judged per server\n"
      "and in total; they share the admin key and the level.\n"
      "\n"
      "options:\n";
  constexpr std::size_t kHelpColumn = 24;
  for (const Flag& flag : kFlags) {
    std::string left = fmt::format("  --{}{}{}", flag.name, flag.value.empty() ? "" : " ", flag.value);
    left.resize(std::max(left.size() + 1, kHelpColumn), ' ');
    out += left + std::string(flag.help) + "\n";
  }
  out += fmt::format(
      "\nexit status: {} every budget met, {} a budget missed, {} bad usage,\n"
      "             {} cannot run (server unreachable, level not loaded, ...)\n",
      kSimExitOk, kSimExitBudgetMissed, kSimExitUsage, kSimExitCannotRun);
  return out;
}

}  // namespace shiftcast
