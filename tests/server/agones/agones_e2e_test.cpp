// End to end, over loopback: the real shiftcast-server under "Agones", talking REST to
// sidecar_standin.py, a stand-in for the SDK sidecar (the real one cannot be installed here and needs a
// Kubernetes API server; the stand-in serves Agones' published call table and keeps the GameServer's
// states the way the real sidecar does, refusing what it refuses: see the script's header). The
// stand-in's control port plays the allocator and reads its call log; the oracle is that log and state,
// the connect token the RPC issues for the reserved match id, and a real UDP client playing in the match.
// No sleeps: the stand-in's state is long-polled (answered on its next event), /metrics is polled.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cmath>
#include <functional>
#include <sstream>

#include "protocol/envelope.hpp"
#include "protocol/snapshot_delta.hpp"
#include "protocol/wire_constants.hpp"
#include "server/agones/allocation_settings.hpp"
#include "tests/server/agones/standin_process.hpp"
#include "tests/support/server_fixture.hpp"

namespace shiftcast {
namespace {

constexpr auto kWait = std::chrono::seconds(30);
constexpr std::uint32_t kAllocatedMatch = 1;
// Health checked every 0.5 s, Unhealthy after 20 misses (10 s): the server pings every 0.1 s, so only a
// real stall (or a machine stalled for seconds) turns the GameServer Unhealthy.
constexpr char kStandinArguments[] =
    "--health-period-s 0.5 --failure-threshold 20";  // no [[initial_match]]: the reserved id is the first one

// The test server's config (tests/support's, without its initial match) plus the [agones] section.
std::string agones_config(std::uint16_t sdk_port) {
  const std::string source = SHIFTCAST_SOURCE_DIR;
  std::ostringstream c;
  c << "[network]\nbind_address = \"127.0.0.1\"\nudp_port = 0\nrpc_port = 0\nhttp_port = 0\nthreads = 2\n"
    << "rpc_threads = 1\n\n[match]\ntick_rate = 64\nsnapshot_rate = 32\nconnection_timeout_s = 5\n"
    << "max_players = 8\n\n"
    << "[security]\ntoken_key_file = \"" << source << "/configs/keys/dev-token.key\"\n"
    << "admin_key_file = \"" << source << "/configs/keys/dev-admin.key\"\n"
    << "service_key_file = \"" << source << "/configs/keys/dev-service.key\"\n\n"
    << "[log]\nlevel = \"debug\"\n\n[shutdown]\nflush_s = 1\n\n"
    << "[[level]]\nname = \"arena\"\npath = \"" << source << "/configs/levels/arena.map\"\n\n"
    << "[agones]\nenabled = true\nsdk_port = " << sdk_port
    << "\nhealth_period_ms = 100\nstall_ms = 3000\nretry_ms = 50\ncall_timeout_ms = 2000\n";
  return c.str();
}

// "key=value" lines of the stand-in's /control/state.
std::string field(const std::string& state, const std::string& key) {
  const std::string prefix = key + "=";
  std::istringstream lines(state);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  return {};
}

std::string calls(const std::string& call, const std::string& result) {
  return "shiftcast_agones_calls_total{call=\"" + call + "\",result=\"" + result + "\"}";
}

class AgonesEndToEnd : public ServerTest {
 protected:
  // Long-polls the stand-in until `done(state)` holds; the last state seen, or "" when the wait ran out.
  std::string standin_until(const std::function<bool(const std::string&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    std::string state = standin_.get("/control/state");
    while (!done(state)) {
      if (std::chrono::steady_clock::now() >= deadline) {
        ADD_FAILURE() << "the stand-in never got there; last state:\n"
                      << state << "log:\n"
                      << standin_.get("/control/log");
        return {};
      }
      state = standin_.get("/control/state?after=" + field(state, "events"));
    }
    return state;
  }
  bool metrics_until(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (!done()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
    }
    return true;
  }
  bool end_match(std::uint32_t match_id) {
    RpcTestClient rpc(server_.ports().rpc);
    flatbuffers::FlatBufferBuilder fbb;
    const auto body = wire::CreateEndMatchDirect(fbb, dev_admin_key().c_str(), match_id);
    finish_envelope(fbb, wire::Message::EndMatch, body.Union(), 1);
    if (!rpc.send(fbb)) return false;
    const auto reply = rpc.receive();
    if (!reply) return false;
    const EnvelopeView v = verify_envelope(*reply, kMaxRpcFrameBytes);
    return v.error == wire::ErrorCode::Ok && v.envelope->message_as_EndMatchReply() != nullptr;
  }
  struct HostedMatch {
    std::string level;
    int tick_rate = 0;
    int max_players = 0;
  };
  // MatchStatus over the RPC: what the server hosts under that id, or nothing.
  std::optional<HostedMatch> match_info(std::uint32_t match_id) {
    RpcTestClient rpc(server_.ports().rpc);
    flatbuffers::FlatBufferBuilder fbb;
    const auto body = wire::CreateMatchStatusDirect(fbb, match_id, dev_service_key().c_str());
    finish_envelope(fbb, wire::Message::MatchStatus, body.Union(), 1);
    if (!rpc.send(fbb)) return std::nullopt;
    const auto reply = rpc.receive();
    if (!reply) return std::nullopt;
    const EnvelopeView v = verify_envelope(*reply, kMaxRpcFrameBytes);
    const wire::MatchStatusReply* r = v.envelope ? v.envelope->message_as_MatchStatusReply() : nullptr;
    if (v.error != wire::ErrorCode::Ok || r == nullptr || r->info() == nullptr) return std::nullopt;
    const wire::MatchInfo& i = *r->info();
    return HostedMatch{i.level() ? i.level()->str() : "", i.tick_rate(), i.max_players()};
  }

  StandinProcess standin_;
};

TEST_F(AgonesEndToEnd, ReadyAllocatedPlayedAndShutDown) {
  ASSERT_EQ(standin_.start(kStandinArguments), "");
  start(agones_config(standin_.sdk_port()));

  // Ready, with the two annotations a matchmaker mints tokens from, under the SDK's prefix.
  std::string state = standin_until([](const std::string& s) { return field(s, "state") == "Ready"; });
  char instance[17];
  std::snprintf(instance, sizeof instance, "%016" PRIx64, server_.instance());
  EXPECT_NE(state.find(std::string("annotation agones.dev/sdk-shiftcast-server-instance=") + instance + "\n"),
            std::string::npos)
      << state;
  EXPECT_NE(state.find("annotation agones.dev/sdk-shiftcast-match-id=1\n"), std::string::npos) << state;
  EXPECT_FALSE(match_info(kAllocatedMatch).has_value());  // nothing is hosted before the allocation

  // Health pings arrive while the workers tick (the stand-in counts them).
  state = standin_until([](const std::string& s) { return std::stoi("0" + field(s, "health")) >= 5; });
  EXPECT_EQ(field(state, "state"), "Ready");

  // The allocation: the match the annotations (and a label) ask for is created with the reserved id.
  ASSERT_EQ(standin_.post("/control/allocate",
                          R"({"labels": {"shiftcast.dev/level": "arena"}, "annotations": {)"
                          R"("shiftcast.dev/tick-rate": "32", "shiftcast.dev/snapshot-rate": "16", )"
                          R"("shiftcast.dev/max-players": "3", "shiftcast.dev/props": "2"}})"),
            200);
  state = standin_until([](const std::string& s) { return field(s, "capacity") == "3"; });
  EXPECT_EQ(field(state, "state"), "Allocated");
  const std::optional<HostedMatch> info = match_info(kAllocatedMatch);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->level, "arena");
  EXPECT_EQ(info->tick_rate, 32);
  EXPECT_EQ(info->max_players, 3);

  // A real client joins with a token for that match and plays some ticks (runs forward, each command
  // acknowledged, and its player moves): the sidecar hears of it.
  {
    UdpTestClient player(server_.ports().udp, token(77, kAllocatedMatch));
    ASSERT_TRUE(player.connect());
    const auto own_position = [&]() -> std::optional<wire::Vec3f> {
      for (const wire::EntityState& e : player.session().world_state())
        if (e.id() == player.session().own_entity()) return dequantize_position(e.position());
      return std::nullopt;
    };
    ASSERT_TRUE(player.pump_until([&] { return player.session().own_entity() != 0 && own_position(); }));
    const wire::Vec3f start = *own_position();
    for (int i = 0; i < 32; ++i) {
      PlayerInput input;
      input.forward = 1;
      player.send_command(input, 0);
      const std::uint64_t sent = player.session().last_command_sequence();
      ASSERT_TRUE(player.pump_until([&] { return player.session().input_ack() >= sent; })) << i;
    }
    const std::uint64_t acked = player.session().latest_snapshot_tick();
    ASSERT_TRUE(player.pump_until([&] { return player.session().latest_snapshot_tick() > acked + 2; }));
    const wire::Vec3f end = *own_position();
    EXPECT_GT(std::hypot(end.x() - start.x(), end.y() - start.y()), 50.0f);  // 32 ticks at run speed: 320
    state = standin_until([](const std::string& s) { return field(s, "players") == "77"; });
    player.disconnect();
  }
  state = standin_until([](const std::string& s) { return field(s, "players").empty(); });
  EXPECT_EQ(field(state, "state"), "Allocated");

  // The match ends (the admin RPC's EndMatch): its events flushed, it is the last one: Shutdown.
  ASSERT_TRUE(end_match(kAllocatedMatch));
  state = standin_until([](const std::string& s) { return field(s, "state") == "Shutdown"; });
  EXPECT_EQ(field(state, "ignored"), "0");  // nothing asked of a GameServer that could not do it

  // The call log, in order: annotations before Ready, capacity before the player, Shutdown last of the
  // lifecycle calls, and every call answered 200.
  const std::string log = standin_.get("/control/log");
  const auto at = [&](const std::string& line) { return log.find(line); };
  const auto instance_note =
      at("PUT /metadata/annotation 200 Scheduled {\"key\":\"shiftcast-server-instance\"");
  const auto match_note =
      at("PUT /metadata/annotation 200 Scheduled {\"key\":\"shiftcast-match-id\",\"value\":\"1\"}");
  const auto ready = at("POST /ready 200 Ready {}");
  const auto watch = at("GET /watch/gameserver 200");
  const auto capacity = at("PUT /alpha/player/capacity 200 Allocated {\"count\":\"3\"}");
  const auto connect = at("POST /alpha/player/connect 200 Allocated {\"playerID\":\"77\"}");
  const auto disconnect = at("POST /alpha/player/disconnect 200 Allocated {\"playerID\":\"77\"}");
  const auto shutdown = at("POST /shutdown 200 Shutdown {}");
  for (auto p : {instance_note, match_note, ready, watch, capacity, connect, disconnect, shutdown})
    ASSERT_NE(p, std::string::npos) << log;
  EXPECT_LT(instance_note, match_note);
  EXPECT_LT(match_note, ready);
  EXPECT_LT(ready, watch);
  EXPECT_LT(watch, capacity);
  EXPECT_LT(capacity, connect);
  EXPECT_LT(connect, disconnect);
  EXPECT_LT(disconnect, shutdown);
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    EXPECT_NE(line.find(" 200 "), std::string::npos) << line;
  EXPECT_EQ(log.find("POST /ready", ready + 1), std::string::npos);  // Ready once

  EXPECT_EQ(metric(calls("ready", "ok")), 1);
  EXPECT_EQ(metric(calls("shutdown", "ok")), 1);
  EXPECT_EQ(metric(calls("player_connect", "ok")), 1);
  EXPECT_EQ(metric(calls("player_disconnect", "ok")), 1);
  EXPECT_EQ(metric("shiftcast_agones_allocations_total{result=\"created\"}"), 1);
  EXPECT_EQ(server_.stop(), 0);  // SIGTERM stays graceful
}

TEST_F(AgonesEndToEnd, ReadyIsRetriedUntilTheSidecarListens) {
  ASSERT_EQ(standin_.start(std::string("--closed ") + kStandinArguments),
            "");  // the port is bound, nothing listens: connections refused
  start(agones_config(standin_.sdk_port()));
  ASSERT_TRUE(metrics_until([&] { return metric(calls("set_annotation", "unreachable")) >= 2; }));
  EXPECT_EQ(metric(calls("ready", "ok")), 0);
  ASSERT_EQ(standin_.post("/control/open"), 200);
  const std::string state = standin_until([](const std::string& s) { return field(s, "state") == "Ready"; });
  EXPECT_NE(state.find("annotation agones.dev/sdk-shiftcast-match-id=1\n"), std::string::npos) << state;
  EXPECT_TRUE(metrics_until([&] { return metric(calls("ready", "ok")) == 1; }));
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(AgonesEndToEnd, BadAllocationSettingsCreateNoMatchAndTheServerStaysUp) {
  ASSERT_EQ(standin_.start(kStandinArguments), "");
  start(agones_config(standin_.sdk_port()));
  standin_until([](const std::string& s) { return field(s, "state") == "Ready"; });
  // A level the server does not host: refused by the same checks as CreateMatch (UnknownLevel).
  ASSERT_EQ(standin_.post("/control/allocate", R"({"annotations": {"shiftcast.dev/level": "nowhere"}})"),
            200);
  ASSERT_TRUE(
      metrics_until([&] { return metric("shiftcast_agones_allocations_total{result=\"refused\"}") == 1; }));
  EXPECT_FALSE(match_info(kAllocatedMatch).has_value());
  // Still healthy: pings keep coming after the refusal, and nothing shut the GameServer down.
  const std::string now = standin_.get("/control/state");
  const int pings = std::stoi("0" + field(now, "health"));
  const std::string later =
      standin_until([&](const std::string& s) { return std::stoi("0" + field(s, "health")) >= pings + 3; });
  EXPECT_EQ(field(later, "state"), "Allocated");
  EXPECT_EQ(standin_.get("/control/log").find("/shutdown"), std::string::npos);
  EXPECT_EQ(metric(calls("shutdown", "ok")), 0);
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(AgonesEndToEnd, SigtermDuringAnAllocatedMatchIsGracefulAndAsksNoShutdown) {
  ASSERT_EQ(standin_.start(kStandinArguments), "");
  start(agones_config(standin_.sdk_port()));
  standin_until([](const std::string& s) { return field(s, "state") == "Ready"; });
  ASSERT_EQ(standin_.post("/control/allocate", R"({"annotations": {"shiftcast.dev/level": "arena"}})"), 200);
  standin_until([](const std::string& s) { return field(s, "capacity") == "8"; });  // [match] max_players
  ASSERT_TRUE(match_info(kAllocatedMatch).has_value());
  // Agones deletes the pod (SIGTERM) while the match runs: the match ends as every shutdown ends it, the
  // process exits 0, and the SDK client, stopped first, does not call Shutdown for that end.
  EXPECT_EQ(server_.stop(), 0);
  EXPECT_EQ(standin_.get("/control/log").find("/shutdown"), std::string::npos);
  EXPECT_EQ(field(standin_.get("/control/state"), "state"), "Allocated");
}

// The stand-in itself refuses what the real sidecar (grpc-gateway in front of the SDK server) refuses:
// a test double that accepted anything would let a wrong client pass.
TEST(AgonesStandin, RefusesWhatTheRealSidecarRefuses) {
  StandinProcess standin;
  // Periods long enough that the calls below all come before the GameServer turns Unhealthy.
  ASSERT_EQ(standin.start("--health-period-s 1 --failure-threshold 2"), "");
  int status = 0;
  const std::string not_found = http_exchange(standin.sdk_port(), "POST", "/readyy", "{}", &status);
  EXPECT_EQ(status, 404);
  EXPECT_EQ(not_found, R"({"code":5,"message":"Not Found","details":[]})");
  const std::string wrong_method = http_exchange(standin.sdk_port(), "GET", "/ready", "", &status);
  EXPECT_EQ(status, 501);  // grpc-gateway v2: method not allowed -> codes.Unimplemented -> 501
  EXPECT_EQ(wrong_method, R"({"code":12,"message":"Method Not Allowed","details":[]})");
  http_exchange(standin.sdk_port(), "PUT", "/metadata/annotation", R"({"key":"bad key","value":"x"})",
                &status);
  EXPECT_EQ(status, 400);
  http_exchange(standin.sdk_port(), "POST", "/ready", "not json", &status);
  EXPECT_EQ(status, 400);
  http_exchange(standin.sdk_port(), "POST", "/alpha/player/connect", R"({"playerID":"1"})", &status);
  EXPECT_EQ(status, 500);  // capacity 0: "players are already at capacity"
  // Ready, then no health pings: Unhealthy after the threshold, and Unhealthy is never left.
  http_exchange(standin.sdk_port(), "POST", "/ready", "{}", &status);
  EXPECT_EQ(status, 200);
  std::string state = standin.get("/control/state");
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (field(state, "state") != "Unhealthy" && std::chrono::steady_clock::now() < deadline)
    state = standin.get("/control/state?after=" + field(state, "events"));
  ASSERT_EQ(field(state, "state"), "Unhealthy");
  http_exchange(standin.sdk_port(), "POST", "/ready", "{}", &status);
  EXPECT_EQ(status, 200);  // accepted, as the real one does, and ignored
  state = standin.get("/control/state");
  EXPECT_EQ(field(state, "state"), "Unhealthy");
  EXPECT_EQ(field(state, "ignored"), "1");
  EXPECT_EQ(standin.post("/control/allocate", "{}"), 409);  // only a Ready GameServer is allocated
}

}  // namespace
}  // namespace shiftcast
