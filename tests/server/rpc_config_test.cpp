// The RPC listener's policies in the server config: safe defaults, and unsafe combinations refused at
// startup with a ConfigError naming the key (guessable keys, one key for both roles, reads open beyond
// loopback, limits that do not hang together).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "server/config/server_config.hpp"

namespace shiftcast {
namespace {

class RpcConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("shiftcast_rpc_config_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    write("token.key", std::string(64, 'a'));
    write("admin.key", "an-admin-key-long-enough-0123456789");
    write("service.key", "a-service-key-long-enough-987654321");
    write("short.key", "hunter2");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text << "\n"; }

  // The message validate() throws for this config ("" when it passes).
  std::string refusal(const std::string& network, const std::string& rpc, const std::string& security) {
    const std::string text = "[network]\n" + network + "\n[rpc]\n" + rpc +
                             "\n[security]\ntoken_key_file = \"token.key\"\n" + security +
                             "\n[[level]]\nname = \"arena\"\npath = \"" + std::string(SHIFTCAST_SOURCE_DIR) +
                             "/configs/levels/arena.map\"\n";
    try {
      validate(parse_server_config(text, dir_.string(), "test.toml"));
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }

  std::filesystem::path dir_;
};

TEST_F(RpcConfigTest, TheDefaultsAreSafe) {
  const ServerConfig c;
  EXPECT_EQ(c.read_access, "key");
  EXPECT_LT(c.rpc.max_connections_per_address, c.rpc.max_connections);
  EXPECT_GT(c.rpc.idle_timeout_s, 0);
  EXPECT_GT(c.rpc.read_timeout_s, 0);
  EXPECT_GE(c.rpc.memory_budget_bytes, c.rpc.connection_memory_bytes);
  EXPECT_GE(double(c.rpc.connection_memory_bytes), 2.0 * c.rpc.max_frame_bytes);
  EXPECT_EQ(refusal("", "", "admin_key_file = \"admin.key\"\nservice_key_file = \"service.key\""), "");
}

// Finding: a one-character admin key file was accepted.
TEST_F(RpcConfigTest, GuessableKeysAreRefused) {
  const std::string admin = refusal("", "", "admin_key_file = \"short.key\"");
  EXPECT_NE(admin.find("[security] admin_key_file"), std::string::npos) << admin;
  EXPECT_NE(admin.find("fewer than 16"), std::string::npos) << admin;
  const std::string service =
      refusal("", "", "admin_key_file = \"admin.key\"\nservice_key_file = \"short.key\"");
  EXPECT_NE(service.find("[security] service_key_file"), std::string::npos) << service;
  const std::string same =
      refusal("", "", "admin_key_file = \"admin.key\"\nservice_key_file = \"admin.key\"");
  EXPECT_NE(same.find("the same key as admin_key_file"), std::string::npos) << same;
}

// The spectator key (issue 16) is a key like the others, and never one of them.
TEST_F(RpcConfigTest, TheSpectatorKeyIsNeitherTheAdminNorTheServiceKey) {
  write("spectator.key", "a-spectator-key-long-enough-24680");
  const std::string keys = "admin_key_file = \"admin.key\"\nservice_key_file = \"service.key\"\n";
  EXPECT_EQ(refusal("", "", keys + "spectator_key_file = \"spectator.key\""), "");
  for (const char* file : {"admin.key", "service.key"}) {
    const std::string same = refusal("", "", keys + "spectator_key_file = \"" + file + "\"");
    EXPECT_NE(same.find("[security] spectator_key_file"), std::string::npos) << same;
    EXPECT_NE(same.find("a spectator must not hold either"), std::string::npos) << same;
  }
  const std::string short_key = refusal("", "", keys + "spectator_key_file = \"short.key\"");
  EXPECT_NE(short_key.find("fewer than 16"), std::string::npos) << short_key;
}

TEST_F(RpcConfigTest, OpenReadsAreRefusedBeyondLoopback) {
  const std::string keys = "admin_key_file = \"admin.key\"\nread_access = \"open\"";
  EXPECT_EQ(refusal("rpc_bind_address = \"127.0.0.1\"", "", keys), "");
  const std::string open = refusal("rpc_bind_address = \"0.0.0.0\"", "", keys);
  EXPECT_NE(open.find("[security] read_access = \"open\": refused"), std::string::npos) << open;
  const std::string typo = refusal("", "", "admin_key_file = \"admin.key\"\nread_access = \"none\"");
  EXPECT_NE(typo.find("[security] read_access"), std::string::npos) << typo;
}

TEST_F(RpcConfigTest, LimitsThatDoNotHangTogetherAreRefused) {
  const std::string keys = "admin_key_file = \"admin.key\"";
  const std::string per_address = refusal("", "max_connections = 8\nmax_connections_per_address = 8", keys);
  EXPECT_NE(per_address.find("[rpc] max_connections_per_address = 8"), std::string::npos) << per_address;
  const std::string memory = refusal("", "max_frame_bytes = 65536\nconnection_memory_bytes = 100000", keys);
  EXPECT_NE(memory.find("[rpc] connection_memory_bytes = 100000"), std::string::npos) << memory;
  const std::string budget = refusal("", "memory_budget_bytes = 4096", keys);
  EXPECT_NE(budget.find("[rpc] memory_budget_bytes = 4096"), std::string::npos) << budget;
  const std::string burst = refusal("", "burst = 50000\nglobal_burst = 1000", keys);
  EXPECT_NE(burst.find("[rpc] global_burst = 1000"), std::string::npos) << burst;
  const std::string timeout = refusal("", "idle_timeout_s = 0", keys);
  EXPECT_NE(timeout.find("[rpc] idle_timeout_s"), std::string::npos) << timeout;
}

}  // namespace
}  // namespace shiftcast
