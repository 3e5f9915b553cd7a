#include "client-sim/sim_config_files.hpp"

#include <spdlog/fmt/fmt.h>

#include <toml++/toml.h>
#include <cmath>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

namespace shiftcast::sim_config_files {
namespace {

namespace fs = std::filesystem;

// ---- TOML values ----------------------------------------------------------------------------------

// An error message for a wrong type or range, empty when `out` was set.
std::string assign(const toml::node& node, double& out) {
  if (auto i = node.value_exact<std::int64_t>()) {
    out = static_cast<double>(*i);
  } else if (auto d = node.value_exact<double>(); d && std::isfinite(*d)) {
    out = *d;
  } else {
    return "must be a finite number";
  }
  return {};
}

std::string assign(const toml::node& node, bool& out) {
  auto b = node.value_exact<bool>();
  if (!b) return "must be true or false";
  out = *b;
  return {};
}

std::string assign(const toml::node& node, float& out) {
  double value = 0;
  std::string error = assign(node, value);
  if (error.empty()) out = static_cast<float>(value);
  return error;
}

template <class Int>
std::string assign_integer(const toml::node& node, Int& out) {
  auto i = node.value_exact<std::int64_t>();
  if (!i) return "must be an integer";
  if (!std::in_range<Int>(*i)) return fmt::format("{} is out of range", *i);
  out = static_cast<Int>(*i);
  return {};
}

std::string assign(const toml::node& node, int& out) {
  return assign_integer(node, out);
}
std::string assign(const toml::node& node, std::uint32_t& out) {
  return assign_integer(node, out);
}
std::string assign(const toml::node& node, std::uint64_t& out) {
  return assign_integer(node, out);
}

std::string assign(const toml::node& node, std::string& out) {
  auto s = node.value_exact<std::string>();
  if (!s) return "must be a string";
  out = *s;
  return {};
}

std::string where(const std::string& file, const toml::node& node) {
  const toml::source_position& at = node.source().begin;
  return at ? fmt::format("{}:{}:{}", file, at.line, at.column) : file;
}

toml::table parse_toml_file(const std::string& path, const char* what) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw SimUsageError(fmt::format("{} {}: no such file", what, path));
  try {
    return toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const toml::source_position& at = e.source().begin;
    throw SimUsageError(fmt::format("{}:{}:{}: {}", path, at.line, at.column, e.description()));
  }
}

// ---- The profile ----------------------------------------------------------------------------------

struct ProfileKey {
  std::string_view table;
  std::string_view key;
  std::string (*assign)(const toml::node&, SimOptions&);
};

template <auto Field>
std::string assign_run(const toml::node& node, SimOptions& o) {
  return assign(node, o.*Field);
}

template <auto Group, auto Field>
std::string assign_in(const toml::node& node, SimOptions& o) {
  return assign(node, (o.*Group).*Field);
}

using O = SimOptions;
using B = SimBudgets;
using H = SimBehaviour;
using C = ChurnSettings;
const ProfileKey kProfileKeys[] = {
    {"run", "matches", &assign_run<&O::matches>},
    {"run", "clients", &assign_run<&O::clients>},
    {"run", "duration", &assign_run<&O::duration>},
    {"run", "connect_timeout", &assign_run<&O::connect_timeout>},
    {"run", "tick_rate", &assign_run<&O::tick_rate>},
    {"run", "snapshot_rate", &assign_run<&O::snapshot_rate>},
    {"run", "level", &assign_run<&O::level>},
    {"run", "seed", &assign_run<&O::seed>},
    {"run", "threads", &assign_run<&O::threads>},
    {"run", "predict_fraction", &assign_run<&O::predict_fraction>},
    {"budgets", "input_ack_p99_ticks", &assign_in<&O::budgets, &B::input_ack_p99_ticks>},
    {"budgets", "events_lost", &assign_in<&O::budgets, &B::events_lost>},
    {"budgets", "clients_failed", &assign_in<&O::budgets, &B::clients_failed>},
    {"budgets", "invariant_violations", &assign_in<&O::budgets, &B::invariant_violations>},
    {"budgets", "rpc_p99_ms", &assign_in<&O::budgets, &B::rpc_p99_ms>},
    {"budgets", "movement_error_p99", &assign_in<&O::budgets, &B::movement_error_p99>},
    {"budgets", "snapshot_rate_min_fraction", &assign_in<&O::budgets, &B::snapshot_rate_min_fraction>},
    {"budgets", "server_tick_p99_ms", &assign_in<&O::budgets, &B::server_tick_p99_ms>},
    {"budgets", "event_order_violations", &assign_in<&O::budgets, &B::event_order_violations>},
    {"budgets", "down_kbit_per_client", &assign_in<&O::budgets, &B::down_kbit_per_client>},
    {"budgets", "up_kbit_per_client", &assign_in<&O::budgets, &B::up_kbit_per_client>},
    {"behaviour", "jump_per_second", &assign_in<&O::behaviour, &H::jump_per_second>},
    {"behaviour", "strafe_per_second", &assign_in<&O::behaviour, &H::strafe_per_second>},
    {"behaviour", "fire_per_second", &assign_in<&O::behaviour, &H::fire_per_second>},
    {"behaviour", "rewound_fraction", &assign_in<&O::behaviour, &H::rewound_fraction>},
    {"churn", "enabled", &assign_in<&O::churn, &C::enabled>},
    {"churn", "ramp_s", &assign_in<&O::churn, &C::ramp_s>},
    {"churn", "lifetime_min_s", &assign_in<&O::churn, &C::lifetime_min_s>},
    {"churn", "lifetime_max_s", &assign_in<&O::churn, &C::lifetime_max_s>},
    {"churn", "goodbye_fraction", &assign_in<&O::churn, &C::goodbye_fraction>},
    {"churn", "reconnect_delay_min_s", &assign_in<&O::churn, &C::reconnect_delay_min_s>},
    {"churn", "reconnect_delay_max_s", &assign_in<&O::churn, &C::reconnect_delay_max_s>},
    {"churn", "match_lifetime_min_s", &assign_in<&O::churn, &C::match_lifetime_min_s>},
    {"churn", "match_lifetime_max_s", &assign_in<&O::churn, &C::match_lifetime_max_s>},
    {"churn", "match_max_players", &assign_in<&O::churn, &C::match_max_players>},
    {"churn", "rpc_visits_per_second", &assign_in<&O::churn, &C::rpc_visits_per_second>},
    {"churn", "rpc_abandon_fraction", &assign_in<&O::churn, &C::rpc_abandon_fraction>},
    {"churn", "subscribers_per_second", &assign_in<&O::churn, &C::subscribers_per_second>},
    {"churn", "subscriber_lifetime_min_s", &assign_in<&O::churn, &C::subscriber_lifetime_min_s>},
    {"churn", "subscriber_lifetime_max_s", &assign_in<&O::churn, &C::subscriber_lifetime_max_s>},
    {"churn", "subscriber_never_read_fraction", &assign_in<&O::churn, &C::subscriber_never_read_fraction>},
    {"churn", "subscriber_never_read_subscriptions",
     &assign_in<&O::churn, &C::subscriber_never_read_subscriptions>},
};

// [network]: the --net items as keys with string values ("5%", "50ms"), and [network.up] /
// [network.down] for one direction; read through parse_network_conditions so both spell alike.
void load_network(const std::string& path, const toml::table& table, SimOptions& o,
                  std::vector<std::string>& errors) {
  std::string text;
  bool ok = true;
  auto add = [&](std::string_view prefix, std::string_view key, const toml::node& node) {
    const auto value = node.value_exact<std::string>();
    if (!value) {
      errors.push_back(fmt::format("{}: [network] {}{}: must be a string (\"5%\", \"50ms\", \"512kbit\")",
                                   where(path, node), prefix, key));
      ok = false;
      return;
    }
    text += fmt::format("{}{}{}={}", text.empty() ? "" : ",", prefix, key, *value);
  };
  for (auto&& [key, node] : table) {
    const toml::table* direction = node.as_table();
    if (direction && (key.str() == "up" || key.str() == "down")) {
      for (auto&& [inner, value] : *direction)
        add(fmt::format("{}.", key.str()), inner.str(), value);
    } else {
      add("", key.str(), node);
    }
  }
  if (!ok) return;
  const NetParseResult parsed = parse_network_conditions(text);
  if (!parsed.ok()) {
    errors.push_back(fmt::format("{}: [network] {}", where(path, table), parsed.error->message));
    return;
  }
  o.network = parsed.conditions;
}

}  // namespace

void load_profile(const std::string& path, SimOptions& o, std::vector<std::string>& errors) {
  toml::table root = parse_toml_file(path, "profile");
  for (auto&& [table_name, table_node] : root) {
    const toml::table* table = table_node.as_table();
    if (table && table_name.str() == "network") {
      load_network(path, *table, o, errors);
      continue;
    }
    bool known = false;
    for (const ProfileKey& k : kProfileKeys)
      known = known || k.table == table_name.str();
    if (!known || !table) {
      errors.push_back(fmt::format(
          "{}: {} {}: a profile has the tables [run], [budgets], [behaviour], [network] and [churn]",
          where(path, table_node), table ? "unknown table" : "unknown key", table_name.str()));
      continue;
    }
    for (auto&& [key, node] : *table) {
      const ProfileKey* found = nullptr;
      for (const ProfileKey& k : kProfileKeys) {
        if (k.table == table_name.str() && k.key == key.str()) found = &k;
      }
      if (!found) {
        errors.push_back(
            fmt::format("{}: unknown key [{}] {}", where(path, node), table_name.str(), key.str()));
      } else if (std::string error = found->assign(node, o); !error.empty()) {
        errors.push_back(
            fmt::format("{}: [{}] {}: {}", where(path, node), table_name.str(), key.str(), error));
      }
    }
  }
}

// ---- The server's config --------------------------------------------------------------------------

std::optional<ServerConfig> read_server_config(const std::string& path, std::vector<std::string>& errors) {
  if (!is_file(path)) throw SimUsageError(fmt::format("server config {}: no such file", path));
  try {
    return load_server_config(path);
  } catch (const ConfigError& e) {
    errors.push_back(e.what());
    return std::nullopt;
  }
}

std::string server_host(const ServerConfig& server) {
  // A server listening on every interface is reached on loopback from here.
  const std::string& address = server.rpc.bind_address;
  if (address == "0.0.0.0") return "127.0.0.1";
  if (address == "::") return "::1";
  return address;
}

std::string read_admin_key(const ServerConfig& server, std::vector<std::string>& errors) {
  try {
    return read_key_file_line(server, server.admin_key_file);
  } catch (const ConfigError& e) {
    errors.push_back(fmt::format("admin key file: {}", e.what()));
    return {};
  }
}

bool is_file(const std::string& path) {
  std::error_code ec;
  return !path.empty() && fs::is_regular_file(path, ec);
}

std::string level_file_from(const ServerConfig& server, const std::string& level,
                            std::vector<std::string>& errors) {
  std::string names;
  for (const LevelConfig& entry : server.levels) {
    if (entry.name == level) {
      if (std::string source = level_source(server, entry); is_file(source)) return source;
      errors.push_back(fmt::format("{}: [[level]] {}: neither path '{}' nor fallback '{}' is a file",
                                   server.config_file, level, resolve_path(server, entry.path),
                                   resolve_path(server, entry.fallback)));
      return {};
    }
    names += (names.empty() ? "" : ", ") + entry.name;
  }
  errors.push_back(fmt::format("level '{}' is not among the [[level]] entries of {} ({})", level,
                               server.config_file, names.empty() ? "none" : names));
  return {};
}

}  // namespace shiftcast::sim_config_files
