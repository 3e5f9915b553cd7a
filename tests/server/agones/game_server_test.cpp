// Reading the sidecar's JSON: the watch stream's lines and GET /gameserver's body, as Agones documents
// them (site/content/en/docs/Guides/Client SDKs/rest.md: the example responses are copied verbatim below
// and are the oracle). The JSON reader itself is tested in tests/server/config/json_value_test.cpp.
#include <gtest/gtest.h>

#include "server/agones/agones_address.hpp"
#include "server/agones/game_server.hpp"

namespace shiftcast {
namespace {

// The watch example of Agones' REST guide, one line of it.
constexpr char kWatchLine[] =
    R"({"result":{"object_meta":{"name":"local","namespace":"default","uid":"1234","resource_version":"v1",)"
    R"("generation":"1","creation_timestamp":"1533766607","annotations":{"annotation":"true"},"labels":)"
    R"({"islocal":"true"}},"status":{"state":"Ready","address":"127.0.0.1","ports":[{"name":"default",)"
    R"("port":7777}]}}})";

// The GET /gameserver example of the same guide, as printed there (indented).
constexpr char kGameServer[] = R"({
    "object_meta": {
        "name": "local",
        "namespace": "default",
        "uid": "1234",
        "resource_version": "v1",
        "generation": "1",
        "creation_timestamp": "1531795395",
        "annotations": {
            "annotation": "true"
        },
        "labels": {
            "islocal": "true"
        }
    },
    "status": {
        "state": "Ready",
        "address": "127.0.0.1",
        "ports": [
            {
                "name": "default",
                "port": 7777
            }
        ]
    }
})";

TEST(GameServerRead, TheDocumentedWatchLine) {
  const GameServerRead r = read_watch_line(kWatchLine);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.server.name, "local");
  EXPECT_EQ(r.server.state, "Ready");
  EXPECT_EQ(r.server.labels, (std::map<std::string, std::string>{{"islocal", "true"}}));
  EXPECT_EQ(r.server.annotations, (std::map<std::string, std::string>{{"annotation", "true"}}));
}

TEST(GameServerRead, TheDocumentedGameServer) {
  const GameServerRead r = read_game_server(kGameServer);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.server.state, "Ready");
  EXPECT_EQ(r.server.labels.at("islocal"), "true");
}

TEST(GameServerRead, TheAddressAndThePortsPlayersReachItAt) {
  const GameServerRead r = read_game_server(kGameServer);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.server.address, "127.0.0.1");
  EXPECT_EQ(r.server.ports, (std::map<std::string, int>{{"default", 7777}}));
  // The documented example names its port "default": public_address = "agones" wants the one named "game".
  EXPECT_FALSE(agones_address_of(r.server).ok());
  GameServerView named = r.server;
  named.ports["game"] = 7154;
  EXPECT_EQ(agones_address_of(named).address, "127.0.0.1:7154");
  named.address = "fd00::7";
  EXPECT_EQ(agones_address_of(named).address, "[fd00::7]:7154");
  named.address.clear();  // not scheduled yet
  EXPECT_FALSE(agones_address_of(named).ok());
  // Ports that are not a name and a port in 1..65535 are skipped, not taken.
  const GameServerRead odd = read_game_server(
      R"({"status":{"state":"Scheduled","address":"10.0.0.7","ports":[{"name":"game","port":0},)"
      R"({"name":"game2","port":"7000"},{"port":7001},{"name":"rpc","port":70000},{"name":"ok","port":7002}]}})");
  ASSERT_TRUE(odd.ok()) << odd.error;
  EXPECT_EQ(odd.server.ports, (std::map<std::string, int>{{"ok", 7002}}));
}

TEST(GameServerRead, AStreamErrorAndMalformedLinesAreErrors) {
  EXPECT_NE(read_watch_line(R"({"error":{"code":14,"message":"unavailable"}})").error.find("unavailable"),
            std::string::npos);
  EXPECT_FALSE(read_watch_line(R"({"result":{"object_meta":{}}})").ok());  // no status.state
  EXPECT_FALSE(read_watch_line(R"({"other":1})").ok());
  EXPECT_FALSE(read_watch_line(R"({"result":{"status":{"state":"Ready"}})").ok());  // truncated
  EXPECT_FALSE(read_watch_line("").ok());
}

}  // namespace
}  // namespace shiftcast
