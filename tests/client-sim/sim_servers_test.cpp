// Several servers for one load (client-sim/sim_servers.hpp): HOST:RPC_PORT:HTTP_PORT parsed or refused
// with its reason, lists and files (comments, blank lines, line numbers in errors), repeats refused, the
// placement of matches against hand-worked sequences, and --servers / --servers-file / --placement
// through parse_sim_options, including every conflict a command line can hold.
#include "client-sim/sim_servers.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "client-sim/sim_options.hpp"
#include "tests/support/sim_args.hpp"

namespace shiftcast {
namespace {

namespace fs = std::filesystem;

using Lines = std::vector<std::string>;

std::string error_of(std::string_view text) {
  return parse_sim_server(text).error;
}

TEST(ParseSimServer, ReadsHostAndBothPorts) {
  const SimServerParse p = parse_sim_server(" 127.0.0.1:40001:40002 ");
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.server, (SimServer{"127.0.0.1", 40001, 40002}));
  EXPECT_EQ(p.server.label(), "127.0.0.1:40001:40002");
  const SimServerParse named = parse_sim_server("game-3.example:1:65535");
  ASSERT_EQ(named.error, "");
  EXPECT_EQ(named.server, (SimServer{"game-3.example", 1, 65535}));
  const SimServerParse v6 = parse_sim_server("[::1]:7:8");
  ASSERT_EQ(v6.error, "");
  EXPECT_EQ(v6.server, (SimServer{"::1", 7, 8}));
  EXPECT_EQ(v6.server.label(), "[::1]:7:8");  // the label reads back to the same server
  EXPECT_EQ(parse_sim_server(v6.server.label()).server, v6.server);
}

TEST(ParseSimServer, RefusesEveryMalformedAddressWithItsReason) {
  EXPECT_EQ(error_of("127.0.0.1:40001"), "'127.0.0.1:40001': not HOST:RPC_PORT:HTTP_PORT");
  EXPECT_EQ(error_of("localhost"), "'localhost': not HOST:RPC_PORT:HTTP_PORT");
  EXPECT_EQ(error_of("a:1:2:3"), "'a:1:2:3': not HOST:RPC_PORT:HTTP_PORT");
  EXPECT_EQ(error_of(":1:2"), "':1:2': no host");
  EXPECT_EQ(error_of("a:0:2"), "'a:0:2': rpc port 0: must be 1..65535");
  EXPECT_EQ(error_of("a:1:0"), "'a:1:0': http port 0: must be 1..65535");
  EXPECT_EQ(error_of("a:1:65536"), "'a:1:65536': http port 65536: must be 1..65535");
  EXPECT_EQ(error_of("a:x:2"), "'a:x:2': rpc port 'x': not a port number");
  EXPECT_EQ(error_of("a:1:"), "'a:1:': http port '': not a port number");
  EXPECT_EQ(error_of("a:-1:2"), "'a:-1:2': rpc port '-1': not a port number");
  EXPECT_EQ(error_of("[::1:1:2"), "'[::1:1:2': not HOST:RPC_PORT:HTTP_PORT (an IPv6 host is written [ADDR])");
  EXPECT_EQ(error_of("[]:1:2"), "'[]:1:2': no host");
}

TEST(ParseSimServerList, SplitsOnCommasAndNamesItsOrigin) {
  Lines errors;
  const std::vector<SimServer> list = parse_sim_server_list("a:1:2, b:3:4 ,[::1]:5:6", "--servers", errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(list, (std::vector<SimServer>{{"a", 1, 2}, {"b", 3, 4}, {"::1", 5, 6}}));
  parse_sim_server_list("a:1:2,,b:0:4", "--servers", errors);
  EXPECT_EQ(errors, (Lines{"--servers 'a:1:2,,b:0:4': an empty server (write HOST:RPC_PORT:HTTP_PORT[,...])",
                           "--servers 'b:0:4': rpc port 0: must be 1..65535"}));
}

TEST(CheckDistinctServers, RefusesTheSameServerTwice) {
  Lines errors;
  check_distinct_servers({{"a", 1, 2}, {"b", 1, 2}, {"a", 3, 4}}, errors);
  EXPECT_TRUE(errors.empty());  // another host, or other ports: other servers
  check_distinct_servers({{"a", 1, 2}, {"b", 5, 6}, {"a", 1, 9}, {"b", 7, 6}}, errors);
  EXPECT_EQ(errors, (Lines{"server a:1:9 repeats server a:1:2 (the same RPC port): each server once",
                           "server b:7:6 repeats server b:5:6 (the same HTTP port): each server once"}));
}

TEST(PlaceMatches, RoundRobinAndLeastLoadedByHand) {
  using Places = std::vector<std::uint32_t>;
  EXPECT_EQ(place_matches(7, {0, 0, 0}, SimPlacement::kRoundRobin), (Places{0, 1, 2, 0, 1, 2, 0}));
  // Round robin ignores what the servers hosted before.
  EXPECT_EQ(place_matches(4, {5, 0, 0}, SimPlacement::kRoundRobin), (Places{0, 1, 2, 0}));
  // Loads before {2, 0, 1}, the first least on a tie:
  // s1 -> {2,1,1}, s1 -> {2,2,1}, s2 -> {2,2,2}, s0 -> {3,2,2}, s1 -> {3,3,2}.
  EXPECT_EQ(place_matches(5, {2, 0, 1}, SimPlacement::kLeastLoaded), (Places{1, 1, 2, 0, 1}));
  // With nothing hosted before, least-loaded is round robin.
  EXPECT_EQ(place_matches(5, {0, 0}, SimPlacement::kLeastLoaded),
            place_matches(5, {0, 0}, SimPlacement::kRoundRobin));
  EXPECT_EQ(place_matches(3, {}, SimPlacement::kLeastLoaded), (Places{0, 0, 0}));  // one server
  EXPECT_TRUE(place_matches(0, {0, 0}, SimPlacement::kRoundRobin).empty());
  EXPECT_EQ(placement_from_string("least-loaded"), SimPlacement::kLeastLoaded);
  EXPECT_EQ(placement_from_string("round-robin"), SimPlacement::kRoundRobin);
  EXPECT_EQ(placement_from_string("random"), std::nullopt);
  EXPECT_EQ(to_string(SimPlacement::kLeastLoaded), "least-loaded");
}

class SimServersOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(SHIFTCAST_BINARY_DIR) / "test-tmp" /
           (std::string("sim_servers_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  // What every run needs besides its servers.
  static std::vector<std::string> with_basics(std::vector<std::string> args) {
    const std::vector<std::string> basics = {
        "--admin-key",  "k",
        "--level",      "arena",
        "--level-file", std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map"};
    args.insert(args.end(), basics.begin(), basics.end());
    return args;
  }
  static std::string error_of(std::vector<std::string> args) {
    try {
      parse_sim_args(with_basics(std::move(args)));
    } catch (const SimUsageError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(SimServersOptionsTest, FlagsAndFileCollectEveryServerInOrder) {
  const std::string file = write("servers.txt",
                                 "# the lab's servers\n"
                                 "\n"
                                 "10.0.0.3:40001:40002   # rack 2\r\n"
                                 "  10.0.0.4:40001:40002\n");
  const SimOptions o = parse_sim_args(with_basics({"--servers", "10.0.0.1:40001:40002,10.0.0.2:40001:40002",
                                                   "--servers-file", file, "--placement", "least-loaded"}));
  EXPECT_EQ(o.servers, (std::vector<SimServer>{{"10.0.0.1", 40001, 40002},
                                               {"10.0.0.2", 40001, 40002},
                                               {"10.0.0.3", 40001, 40002},
                                               {"10.0.0.4", 40001, 40002}}));
  EXPECT_EQ(o.placement, SimPlacement::kLeastLoaded);
  // The single-server fields are the first server's, so one-server code paths still read a real address.
  EXPECT_EQ(o.host, "10.0.0.1");
  EXPECT_EQ(o.rpc_port, 40001);
  EXPECT_EQ(o.http_port, 40002);
  EXPECT_EQ(sim_servers(o), o.servers);
  // Repeated flags add up.
  const SimOptions twice = parse_sim_args(with_basics({"--servers", "a:1:2", "--servers=b:3:4"}));
  EXPECT_EQ(twice.servers, (std::vector<SimServer>{{"a", 1, 2}, {"b", 3, 4}}));
}

TEST_F(SimServersOptionsTest, WithoutAListTheRunHasItsOneServer) {
  const SimOptions o =
      parse_sim_args(with_basics({"--host", "10.1.1.1", "--rpc-port", "5", "--http-port", "6"}));
  EXPECT_TRUE(o.servers.empty());
  EXPECT_EQ(sim_servers(o), (std::vector<SimServer>{{"10.1.1.1", 5, 6}}));
  EXPECT_EQ(o.placement, SimPlacement::kRoundRobin);
}

TEST_F(SimServersOptionsTest, BadListsAreUsageErrorsWithTheirReason) {
  EXPECT_EQ(error_of({"--servers", "127.0.0.1:40001"}),
            "--servers '127.0.0.1:40001': not HOST:RPC_PORT:HTTP_PORT");
  EXPECT_EQ(error_of({"--servers", "127.0.0.1:0:40002"}),
            "--servers '127.0.0.1:0:40002': rpc port 0: must be 1..65535");
  EXPECT_EQ(error_of({"--servers", "a:1:2,a:1:3"}),
            "server a:1:3 repeats server a:1:2 (the same RPC port): each server once");
  EXPECT_EQ(
      error_of({"--servers", "a:1:2", "--rpc-port", "7"}),
      "--rpc-port with --servers or --servers-file: name every server in the list (HOST:RPC_PORT:HTTP_PORT)");
  EXPECT_EQ(
      error_of({"--host", "b", "--servers-file", write("one.txt", "a:1:2\n")}),
      "--host with --servers or --servers-file: name every server in the list (HOST:RPC_PORT:HTTP_PORT)");
  EXPECT_EQ(error_of({"--placement", "random"}), "--placement 'random': round-robin or least-loaded");
  EXPECT_EQ(error_of({"--servers", "a:1:2,b:1:2", "--churn"}), "--churn drives one server; 2 were given");
  const std::string bad = write("bad.txt", "a:1:2\n# fine\nb:1\n\nc:1:70000\n");
  EXPECT_EQ(error_of({"--servers-file", bad}), bad + ":3: 'b:1': not HOST:RPC_PORT:HTTP_PORT\n" + bad +
                                                   ":5: 'c:1:70000': http port 70000: must be 1..65535");
  const std::string empty = write("empty.txt", "# nobody yet\n\n");
  EXPECT_EQ(error_of({"--servers-file", empty}), "servers file " + empty + ": names no server");
  const std::string missing = (dir_ / "missing.txt").string();
  EXPECT_EQ(error_of({"--servers-file", missing}), "servers file " + missing + ": cannot be read");
  // A file and the flag repeating one server between them.
  EXPECT_EQ(error_of({"--servers", "a:1:2", "--servers-file", write("dup.txt", "a:9:2\n")}),
            "server a:9:2 repeats server a:1:2 (the same HTTP port): each server once");
}

}  // namespace
}  // namespace shiftcast
