#include "client-sim/sim_servers.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <system_error>

#include "client-sim/text_trim.hpp"

namespace shiftcast {
namespace {

constexpr std::string_view kSyntax = "HOST:RPC_PORT:HTTP_PORT";
constexpr std::uint32_t kMaxPort = 65535;

// A port 1..65535, or an error naming which one.
std::optional<std::uint16_t> parse_port(std::string_view text, std::string_view which, std::string& error) {
  std::uint32_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    error = fmt::format("{} '{}': not a port number", which, text);
    return std::nullopt;
  }
  if (value < 1 || value > kMaxPort) {
    error = fmt::format("{} {}: must be 1..{}", which, value, kMaxPort);
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(value);
}

SimServerParse parse_error(std::string_view text, std::string reason) {
  SimServerParse out;
  out.error = fmt::format("'{}': {}", text, reason);
  return out;
}

}  // namespace

std::string SimServer::label() const {
  const bool v6 = host.find(':') != std::string::npos;
  return fmt::format("{}{}{}:{}:{}", v6 ? "[" : "", host, v6 ? "]" : "", rpc_port, http_port);
}

SimServerParse parse_sim_server(std::string_view text) {
  const std::string_view item = trim_blanks(text);
  std::string_view host;
  std::string_view ports;
  if (item.starts_with('[')) {
    const std::size_t close = item.find(']');
    if (close == std::string_view::npos || close + 1 >= item.size() || item[close + 1] != ':') {
      return parse_error(item, fmt::format("not {} (an IPv6 host is written [ADDR])", kSyntax));
    }
    host = item.substr(1, close - 1);
    ports = item.substr(close + 2);
  } else {
    const std::size_t first = item.find(':');
    if (first == std::string_view::npos) return parse_error(item, fmt::format("not {}", kSyntax));
    host = item.substr(0, first);
    ports = item.substr(first + 1);
  }
  const std::size_t colon = ports.find(':');
  if (colon == std::string_view::npos || ports.find(':', colon + 1) != std::string_view::npos) {
    return parse_error(item, fmt::format("not {}", kSyntax));
  }
  if (host.empty()) return parse_error(item, "no host");
  SimServerParse out;
  std::string error;
  const auto rpc = parse_port(ports.substr(0, colon), "rpc port", error);
  const auto http = rpc ? parse_port(ports.substr(colon + 1), "http port", error) : std::nullopt;
  if (!rpc || !http) return parse_error(item, error);
  out.server = SimServer{std::string(host), *rpc, *http};
  return out;
}

std::vector<SimServer> parse_sim_server_list(std::string_view text, std::string_view origin,
                                             std::vector<std::string>& errors) {
  std::vector<SimServer> out;
  const std::string_view whole = text;
  for (;;) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    if (trim_blanks(item).empty()) {
      errors.push_back(fmt::format("{} '{}': an empty server (write {}[,...])", origin, whole, kSyntax));
    } else if (SimServerParse p = parse_sim_server(item); !p.error.empty()) {
      errors.push_back(fmt::format("{} {}", origin, p.error));
    } else {
      out.push_back(std::move(p.server));
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

std::vector<SimServer> read_sim_servers_file(const std::string& path, std::vector<std::string>& errors) {
  std::vector<SimServer> out;
  std::ifstream in(path);
  if (!in) {
    errors.push_back(fmt::format("servers file {}: cannot be read", path));
    return out;
  }
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string_view text = line;
    if (const std::size_t hash = text.find('#'); hash != std::string_view::npos) text = text.substr(0, hash);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (trim_blanks(text).empty()) continue;
    if (SimServerParse p = parse_sim_server(text); !p.error.empty()) {
      errors.push_back(fmt::format("{}:{}: {}", path, number, p.error));
    } else {
      out.push_back(std::move(p.server));
    }
  }
  if (out.empty() && errors.empty()) errors.push_back(fmt::format("servers file {}: names no server", path));
  return out;
}

void check_distinct_servers(const std::vector<SimServer>& servers, std::vector<std::string>& errors) {
  for (std::size_t i = 0; i < servers.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const SimServer& a = servers[j];
      const SimServer& b = servers[i];
      if (a.host != b.host || (a.rpc_port != b.rpc_port && a.http_port != b.http_port)) continue;
      errors.push_back(fmt::format("server {} repeats server {} ({}): each server once", b.label(), a.label(),
                                   a.rpc_port == b.rpc_port ? "the same RPC port" : "the same HTTP port"));
      break;
    }
  }
}

std::string_view to_string(SimPlacement placement) {
  return placement == SimPlacement::kLeastLoaded ? "least-loaded" : "round-robin";
}

std::optional<SimPlacement> placement_from_string(std::string_view text) {
  if (text == "round-robin") return SimPlacement::kRoundRobin;
  if (text == "least-loaded") return SimPlacement::kLeastLoaded;
  return std::nullopt;
}

std::vector<std::uint32_t> place_matches(int matches, const std::vector<int>& hosted_before,
                                         SimPlacement placement) {
  const std::size_t servers = std::max<std::size_t>(1, hosted_before.size());
  std::vector<std::uint32_t> out;
  out.reserve(std::size_t(std::max(0, matches)));
  if (placement == SimPlacement::kRoundRobin) {
    for (int i = 0; i < matches; ++i)
      out.push_back(std::uint32_t(std::size_t(i) % servers));
    return out;
  }
  std::vector<long> load(servers, 0);
  for (std::size_t s = 0; s < hosted_before.size(); ++s)
    load[s] = std::max(0, hosted_before[s]);
  for (int i = 0; i < matches; ++i) {
    const auto least = std::min_element(load.begin(), load.end());  // the first on a tie
    ++*least;
    out.push_back(std::uint32_t(least - load.begin()));
  }
  return out;
}

}  // namespace shiftcast
