// SimServer: one shiftcast-server a load spreads its matches over, and the rules for naming and choosing
// them. A server is written HOST:RPC_PORT:HTTP_PORT (the admin/query RPC port and the /metrics port;
// an IPv6 host in brackets: [::1]:40001:40002). Lists come from --servers (comma-separated, repeatable)
// and --servers-file (one server a line, # starts a comment, blank lines skipped).
//
//   SimServerParse p = parse_sim_server("127.0.0.1:40001:40002");
//   if (!p.error.empty()) fail(p.error);                 // "'x:1': not HOST:RPC_PORT:HTTP_PORT"
//   std::vector<std::string> errors;
//   std::vector<SimServer> list = parse_sim_server_list("a:1:2,b:1:2", "--servers", errors);
//   check_distinct_servers(list, errors);                 // the same server twice is a usage error
//   std::vector<std::uint32_t> where = place_matches(6, {0, 2, 0}, SimPlacement::kLeastLoaded);
//
// Placement: kRoundRobin gives match i to server i mod N; kLeastLoaded gives each match in turn to the
// server with the fewest matches (those it hosted before the run, read from its /metrics, plus those
// this run gave it), the first such server on a tie. Every server shares the run's admin key and level.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shiftcast {

struct SimServer {
  std::string host;
  std::uint16_t rpc_port = 0;
  std::uint16_t http_port = 0;

  // HOST:RPC_PORT:HTTP_PORT, as written on the command line (IPv6 hosts in brackets): the report's name.
  std::string label() const;
  bool operator==(const SimServer&) const = default;
};

struct SimServerParse {
  SimServer server;
  std::string error;  // empty: parsed
};

// One HOST:RPC_PORT:HTTP_PORT (blanks around it ignored); ports 1..65535.
SimServerParse parse_sim_server(std::string_view text);

// A comma-separated list; each bad item appends "ORIGIN: ..." to errors. Empty items are errors.
std::vector<SimServer> parse_sim_server_list(std::string_view text, std::string_view origin,
                                             std::vector<std::string>& errors);

// A file of one server a line; '#' to the end of a line is a comment, blank lines are skipped. Problems
// are appended as "FILE:LINE: ..."; a file that cannot be read is one error.
std::vector<SimServer> read_sim_servers_file(const std::string& path, std::vector<std::string>& errors);

// The same host and RPC port, or the same host and HTTP port, twice: one error per repeat.
void check_distinct_servers(const std::vector<SimServer>& servers, std::vector<std::string>& errors);

enum class SimPlacement : std::uint8_t { kRoundRobin, kLeastLoaded };

std::string_view to_string(SimPlacement placement);
std::optional<SimPlacement> placement_from_string(std::string_view text);

// The server index of each of `matches` matches. `hosted_before[s]`: matches server s already hosts
// (kLeastLoaded only; its size is the number of servers, at least one).
std::vector<std::uint32_t> place_matches(int matches, const std::vector<int>& hosted_before,
                                         SimPlacement placement);

}  // namespace shiftcast
