// The server and the load tester read one server config with one reader (server/config/): for the
// shipped configs/server.toml and for a file with a non-default value in every key the load tester uses,
// shiftcast-sim's options hold exactly what the server will bind, the key it will check and the level
// file it will load. The oracle is the file's own text (the values written below) as well as the server's
// reading of it, so a reader that ignored the file and fell back to defaults fails too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "client-sim/sim_options.hpp"
#include "server/config/server_config.hpp"
#include "tests/support/sim_args.hpp"

namespace shiftcast {
namespace {

namespace fs = std::filesystem;

SimOptions parse(std::vector<std::string> args) {
  return parse_sim_args(std::move(args));
}

// What the server takes from the config for each value the load tester needs (server/server.cpp and
// server/hosted_level.cpp read these same fields).
struct ServerView {
  std::string rpc_address;
  int rpc_port;
  int http_port;
  std::string admin_key;
  std::string level_file;
};

ServerView server_view(const ServerConfig& c, const std::string& level) {
  for (const LevelConfig& l : c.levels) {
    if (l.name == level) {
      return {c.rpc.bind_address, c.rpc.port, c.http_port, read_key_file_line(c, c.admin_key_file),
              level_source(c, l)};
    }
  }
  ADD_FAILURE() << "no level " << level;
  return {};
}

void expect_same(const SimOptions& sim, const ServerView& server) {
  EXPECT_EQ(sim.host, server.rpc_address);
  EXPECT_EQ(sim.rpc_port, server.rpc_port);
  EXPECT_EQ(sim.http_port, server.http_port);
  EXPECT_EQ(sim.admin_key, server.admin_key);
  EXPECT_EQ(fs::path(sim.level_file), fs::path(server.level_file));
}

TEST(SharedServerConfig, TheShippedConfigReadsAlikeInServerAndLoadTester) {
  const std::string path = std::string(SHIFTCAST_SOURCE_DIR) + "/configs/server.toml";
  const ServerConfig server = load_server_config(path);
  const SimOptions sim = parse({"--config", path, "--level", "arena"});
  expect_same(sim, server_view(server, "arena"));
  // The file states the defaults: the same numbers as the one definition in code.
  EXPECT_EQ(server.rpc.port, kDefaultRpcPort);
  EXPECT_EQ(server.http_port, kDefaultHttpPort);
  EXPECT_EQ(server.tick_rate, kDefaultTickRate);
  EXPECT_EQ(server.snapshot_rate, kDefaultSnapshotRate);
  EXPECT_EQ(server.max_players, kDefaultMaxPlayers);
  EXPECT_EQ(fs::path(sim.level_file),
            fs::path(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map"));
}

TEST(SharedServerConfig, NonDefaultValuesReachBothAlike) {
  const fs::path dir = fs::path(SHIFTCAST_BINARY_DIR) / "test-tmp" / "shared_server_config";
  fs::remove_all(dir);
  fs::create_directories(dir / "keys");
  fs::create_directories(dir / "maps");
  std::ofstream(dir / "keys" / "admin.key") << "  admin-key-of-this-test \n";
  std::ofstream(dir / "maps" / "spare.map") << "// the fallback: path names no file\n";
  const fs::path config = dir / "server.toml";
  std::ofstream(config)
      << "[network]\nrpc_bind_address = \"127.0.0.9\"\nrpc_port = 41234\nhttp_port = 41235\n"
         "[match]\ntick_rate = 100\nsnapshot_rate = 50\nmax_players = 12\n"
         "[rpc]\nrate = 777\n"
         "[security]\nadmin_key_file = \"keys/admin.key\"\n"
         "[[level]]\nname = \"yard\"\npath = \"maps/missing.bsp\"\nfallback = \"maps/spare.map\"\n";

  const ServerConfig server = load_server_config(config.string());
  const SimOptions sim = parse({"--config", config.string(), "--level", "yard"});
  expect_same(sim, server_view(server, "yard"));
  // And both are what the file says, not a default.
  EXPECT_EQ(sim.host, "127.0.0.9");
  EXPECT_EQ(sim.rpc_port, 41234);
  EXPECT_EQ(sim.http_port, 41235);
  EXPECT_EQ(sim.admin_key, "admin-key-of-this-test");
  EXPECT_EQ(fs::path(sim.level_file), (dir / "maps" / "spare.map").lexically_normal());
  EXPECT_EQ(server.tick_rate, 100);
  EXPECT_EQ(server.snapshot_rate, 50);
  EXPECT_EQ(server.max_players, 12);
  EXPECT_EQ(server.rpc.rate, 777);
  fs::remove_all(dir);
}

// A file the server refuses is refused by the load tester too, with the server's reason.
TEST(SharedServerConfig, AFileTheServerRefusesTheLoadTesterRefuses) {
  const fs::path dir = fs::path(SHIFTCAST_BINARY_DIR) / "test-tmp" / "shared_server_config_refused";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path config = dir / "server.toml";
  std::ofstream(config) << "[network]\nrpc_prot = 41234\n";
  std::string server_error;
  try {
    load_server_config(config.string());
  } catch (const ConfigError& e) {
    server_error = e.what();
  }
  ASSERT_NE(server_error.find("unknown key rpc_prot in [network] (did you mean rpc_port?)"),
            std::string::npos)
      << server_error;
  std::string sim_error;
  try {
    parse({"--config", config.string(), "--level-file", config.string(), "--admin-key", "k"});
  } catch (const SimUsageError& e) {
    sim_error = e.what();
  }
  EXPECT_NE(sim_error.find(server_error), std::string::npos) << sim_error;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace shiftcast
