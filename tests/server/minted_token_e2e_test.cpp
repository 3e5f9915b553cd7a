// Tokens without a round trip, end to end: a matchmaker reads the server's address and instance from
// GET /api/matches (no key), mints tokens from the shared token key with shiftcast-token and with the
// Python reference (tests/contract/mint_token.py, which reads /api/matches itself), hands the JSON to
// game clients, and the clients connect to the real server on loopback and receive snapshots. A token
// minted for another instance (the process before a restart) is refused as WrongServer.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "server/config/json_value.hpp"
#include "tests/support/server_fixture.hpp"
#include "tools/token/token_json.hpp"
#include "tools/token/token_mint.hpp"

namespace shiftcast {
namespace {

constexpr char kPython[] = "/usr/bin/python3";  // Debian's, where python3-nacl and -flatbuffers live

struct CommandRun {
  int status = -1;
  std::string out;
};

// Runs a shell command and takes its stdout (stderr goes to the test's log).
CommandRun run_command(const std::string& command) {
  CommandRun r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
    r.out.append(buffer, n);
  const int raw = ::pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

class MintedTokens : public ServerTest {
 protected:
  std::string dev_token_key_file() const {
    return std::string(SHIFTCAST_SOURCE_DIR) + "/configs/keys/dev-token.key";
  }

  std::optional<ConnectToken> mint_with_cli(const std::string& address, const std::string& instance,
                                            std::uint64_t client) {
    const CommandRun r = run_command(std::string("'") + SHIFTCAST_TOKEN_TOOL + "' --key-file '" +
                                     dev_token_key_file() + "' --server " + address + " --server-instance " +
                                     instance + " --match 1 --client " + std::to_string(client));
    EXPECT_EQ(r.status, 0) << r.out;
    return connect_token_from_json(r.out);
  }
};

TEST_F(MintedTokens, TokensMintedFromTheMatchListingConnectRealClients) {
  start();
  int status = 0;
  const std::string listing = http_get(server_.ports().http, "/api/matches", &status);
  ASSERT_EQ(status, 200) << listing;
  // What a matchmaker reads: the address tokens must name and this process's instance, as 16 hex digits.
  const JsonParse matches = parse_json(listing);
  ASSERT_TRUE(matches.ok()) << matches.error << "\n" << listing;
  ASSERT_TRUE(matches.value["server_address"].is_string()) << listing;
  ASSERT_TRUE(matches.value["server_instance"].is_string()) << listing;
  const std::string address = matches.value["server_address"].text;
  const std::string instance = matches.value["server_instance"].text;
  EXPECT_EQ(address, server_.address());
  ASSERT_EQ(instance.size(), 16u) << listing;
  EXPECT_EQ(parse_server_instance(instance), server_.instance());
  EXPECT_EQ(instance, server_instance_hex(server_.instance()));  // lowercase

  // Both mint before anyone connects (a player left unpolled meanwhile could time out). shiftcast-token,
  // from the listing:
  const std::optional<ConnectToken> from_cli = mint_with_cli(address, instance, 7001);
  ASSERT_TRUE(from_cli.has_value());
  // The Python reference, reading the listing itself:
  const CommandRun py =
      run_command(std::string(kPython) + " '" + SHIFTCAST_SOURCE_DIR +
                  "/tests/contract/mint_token.py' --generated '" + SHIFTCAST_PYTHON_PROTOCOL_DIR +
                  "' --matches-url http://127.0.0.1:" + std::to_string(server_.ports().http) +
                  "/api/matches --key-file '" + dev_token_key_file() + "' --match 1 --client 7002");
  ASSERT_EQ(py.status, 0) << py.out;
  const std::optional<ConnectToken> from_python = connect_token_from_json(py.out);
  ASSERT_TRUE(from_python.has_value()) << py.out;

  UdpTestClient cli_player(server_.ports().udp, *from_cli);
  ASSERT_TRUE(cli_player.connect());
  UdpTestClient python_player(server_.ports().udp, *from_python);
  ASSERT_TRUE(python_player.connect());

  // Both are players of match 1: each receives snapshots.
  EXPECT_TRUE(cli_player.pump_until([&] { return cli_player.session().latest_snapshot_tick() > 0; }));
  EXPECT_TRUE(python_player.pump_until([&] { return python_player.session().latest_snapshot_tick() > 0; }));
  EXPECT_EQ(cli_player.session().state(), ClientState::kConnected);
  EXPECT_EQ(python_player.session().state(), ClientState::kConnected);
  EXPECT_GE(metric(R"(shiftcast_tokens_opened_total{key="current"})"), 2);
  EXPECT_EQ(metric(R"(shiftcast_tokens_opened_total{key="previous"})"), 0);

  // A token for another instance of this address: the process before a restart, say.
  const std::optional<ConnectToken> stale =
      mint_with_cli(address, server_instance_hex(server_.instance() ^ 1), 7003);
  ASSERT_TRUE(stale.has_value());
  UdpTestClient refused(server_.ports().udp, *stale);
  EXPECT_FALSE(refused.connect(std::chrono::seconds(5)));
  EXPECT_EQ(refused.session().code(), wire::ErrorCode::WrongServer);
  EXPECT_GE(metric(rejected("udp", "wrong_server")), 1);
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
