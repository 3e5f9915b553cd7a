// snapshot_pipeline_bench: what one 32-player match's clients cost the server per snapshot, without the
// tick and without sockets: the part of the server's CPU per player that grows with its clients
// (docs/server.md, "CPU per player"). A bot match on OpenArena's oa_dm1 at 64 Hz with 8 props, as the
// load ladder's matches (configs/server.toml), 32 real ClientSessions connected to 32 ClientConnections
// through the real handshake in memory; each client sends a command every tick and applies every frame, so
// each delta is against the baseline a live client would have acknowledged. Per snapshot (every other tick),
// timed in this thread's CPU time, as Match does it:
//   packets    ClientConnection::on_packet for the two command datagrams each client sent since the last
//              snapshot (open, decrypt, read the commands and acknowledgements), and take_commands per tick
//   interest   begin_snapshot, then per client select (set, radius, line of sight) and its filtered world
//   frames     the world quantized once, then per client its own state and build_frame_shared (the delta
//              against its baseline, events, the bit-packed message, sealing)
// The simulation's steps and the clients' own work are not timed.
//
//   build/bench/shiftcast_snapshot_pipeline_bench
//   taskset -c 1 build/bench/shiftcast_snapshot_pipeline_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true      (one command line)
//
// Counters per snapshot: microseconds in each part, datagram bytes down per client, and (not in the
// time) what the 32 clients took to open and apply their frames, a load tester's share. The map comes from
// scripts/fetch-openarena-maps.sh; without it the program says so and exits 0.
#include <benchmark/benchmark.h>
#include <time.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/openarena_level.hpp"
#include "protocol/client_session.hpp"
#include "protocol/envelope.hpp"
#include "protocol/handshake.hpp"
#include "protocol/packet.hpp"
#include "server/client_connection.hpp"
#include "server/interest_filter.hpp"
#include "server/own_state_wire.hpp"
#include "server/snapshot_world.hpp"
#include "world/match/match_setup.hpp"

namespace {

using namespace shiftcast;

constexpr int kTickRate = 64;
constexpr int kTicksPerSnapshot = 2;  // 32 Hz snapshots, the shipped configuration
constexpr int kPlayers = 32;
constexpr int kProjectiles = 0;  // the load ladder's matches: bots shoot over the RPC
constexpr int kProps = 8;        // configs/server.toml
constexpr std::uint32_t kSeed = 1;
constexpr std::uint32_t kMatchId = 1;
constexpr double kStart = 1'700'000'000.0;  // both ends on unix seconds
constexpr char kServerAddress[] = "127.0.0.1:40000";

double thread_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

std::string client_address(int i) {
  return "10.0.0." + std::to_string(1 + i) + ":5000";
}

// One player's two ends and its interest state on the server.
struct Pair {
  std::unique_ptr<ClientSession> client;
  std::unique_ptr<ClientConnection> connection;
  std::string address;
  EntityId entity = kNoEntity;
  SightMemory sight;
  FilteredWorlds worlds;
  std::vector<std::vector<std::uint8_t>> inbox;  // command datagrams the server has not read yet
};

// The server's half of the handshake as a match does it (stateless challenge, then the connection).
bool connect(Pair& p, const ServerKeys& keys, double now) {
  const auto now_unix = static_cast<std::uint64_t>(now);
  for (int round = 0; round < 4 && p.client->state() != ClientState::kConnected; ++round) {
    for (const auto& datagram : p.client->poll(now)) {
      const EnvelopeView view = verify_envelope(datagram, kMaxDatagramBytes);
      if (view.error != wire::ErrorCode::Ok) return false;
      if (const auto* request = view.envelope->message_as_ConnectionRequest()) {
        const ServerOpenedToken opened = open_connect_token(keys, *request, kServerAddress, now_unix);
        if (opened.token.error != wire::ErrorCode::Ok) return false;
        p.client->on_datagram(
            make_challenge(keys, opened.token, p.address, random_token_nonce(), random_token_nonce()), now);
      } else if (const auto* response = view.envelope->message_as_ChallengeResponse()) {
        const AcceptedChallenge a = open_challenge_response(keys, *response, p.address, now_unix);
        if (a.error != wire::ErrorCode::Ok) return false;
        p.connection =
            std::make_unique<ClientConnection>(ConnectionParams{a.match_id, a.client_id, a.client_to_server,
                                                                a.server_to_client, p.address, p.entity},
                                               ConnectionSettings{}, now);
        p.client->on_datagram(p.connection->build_keepalive(0, now), now);
      }
    }
  }
  return p.client->state() == ClientState::kConnected && p.connection != nullptr;
}

void BM_SnapshotPipeline(benchmark::State& state, const OpenArenaLevel* level) {
  std::unique_ptr<MatchSetup> match = make_openarena_match("snapshot_pipeline_bench", *level, kTickRate,
                                                           kPlayers, kProjectiles, kProps, kSeed);
  if (!match) {
    state.SkipWithError("no match");
    return;
  }
  for (int i = 0; i < 256; ++i)
    match->step();
  ServerKeys keys{random_key(), random_key()};
  std::vector<Pair> pairs;
  for (const Entity& e : match->simulation().entities()) {
    if (e.kind != EntityKind::kPlayer) continue;
    Pair& p = pairs.emplace_back();
    p.entity = e.id;
    p.address = client_address(int(pairs.size()));
    const ConnectToken token = issue_connect_token(keys.token_key, kServerAddress, kMatchId, pairs.size(),
                                                   static_cast<std::uint64_t>(kStart) + 3600);
    p.client = std::make_unique<ClientSession>(token, ClientSessionSettings{.unix_time_offset = 0});
    if (!connect(p, keys, kStart)) {
      state.SkipWithError("a client did not connect");
      return;
    }
  }
  InterestFilter interest(InterestSettings{}, level->compiled.visibility, &level->compiled.tree);
  std::vector<std::vector<std::uint32_t>> kept(pairs.size());
  std::vector<PlayerInput> commands;
  double packets_s = 0, interest_s = 0, frames_s = 0, client_s = 0, bytes_down = 0;
  std::uint64_t tick = match->simulation().tick();
  for (auto _ : state) {
    // Untimed: the ticks, and every client sending its command for each (64 a second, as shiftcast-sim).
    for (int t = 0; t < kTicksPerSnapshot; ++t) {
      match->step();
      ++tick;
      const double now = kStart + double(tick) / kTickRate;
      for (Pair& p : pairs) {
        const PlayerInput input{1.0f, 0.0f, float(tick % 628) / 100.0f, 0.0f, 0};
        p.inbox.push_back(p.client->send_command(input, double(tick), now));
      }
    }
    const double now = kStart + double(tick) / kTickRate;
    const Simulation& sim = match->simulation();

    const double iteration_begin = thread_cpu_seconds();
    double begin = iteration_begin;
    for (Pair& p : pairs) {
      for (const auto& datagram : p.inbox)
        p.connection->on_packet(datagram, p.address, now);
      p.inbox.clear();
      for (int t = 0; t < kTicksPerSnapshot; ++t) {
        commands.clear();
        p.connection->take_commands(commands);
      }
    }
    double end = thread_cpu_seconds();
    packets_s += end - begin;

    begin = end;
    interest.begin_snapshot(sim.entities(), float(kTicksPerSnapshot) / float(kTickRate));
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      Pair& p = pairs[i];
      interest.select(interest.viewer(p.entity, sim.find(p.entity)), kept[i], &p.sight);
      p.sight.take_culled();
      p.sight.take_segments();
    }
    end = thread_cpu_seconds();
    interest_s += end - begin;

    // Each client's world is cut from the shared one (a copy per client that its delta needs): both
    // count as frames.
    begin = end;
    auto world = std::make_shared<SnapshotState>();
    quantize_world(sim.entities(), *world);
    std::vector<std::vector<std::uint8_t>> frames(pairs.size());
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      Pair& p = pairs[i];
      const Entity* me = sim.find(p.entity);
      const std::optional<wire::OwnState> own = own_state(sim, p.entity);
      frames[i] = p.connection->build_frame_shared(tick, p.worlds.filtered(*world, kept[i]),
                                                   me != nullptr ? me->pose.position : Vec3{}, now,
                                                   own ? &*own : nullptr);
    }
    end = thread_cpu_seconds();
    frames_s += end - begin;
    state.SetIterationTime(end - iteration_begin);

    // Not the server's: the clients apply their frames (so they acknowledge them in their next commands),
    // timed apart as what a load tester pays per client to decode.
    begin = thread_cpu_seconds();
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      bytes_down += double(frames[i].size());
      pairs[i].client->on_datagram(frames[i], now);
    }
    client_s += thread_cpu_seconds() - begin;
  }
  const double snapshots = double(state.iterations());
  state.counters["packets_us"] = 1e6 * packets_s / snapshots;
  state.counters["interest_us"] = 1e6 * interest_s / snapshots;
  state.counters["frames_us"] = 1e6 * frames_s / snapshots;
  state.counters["bytes_per_frame"] = bytes_down / (snapshots * double(pairs.size()));
  state.counters["clients_decode_us"] = 1e6 * client_s / snapshots;  // not in the time: the clients' side
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  OpenArenaLevel level;
  if (const int status = load_openarena_level("snapshot_pipeline_bench", "oa_dm1", level);
      status != kLevelLoaded)
    return status == kLevelMissing ? 0 : 1;
  benchmark::RegisterBenchmark("BM_SnapshotPipeline/oa_dm1/32_clients", BM_SnapshotPipeline, &level)
      ->UseManualTime()
      ->Iterations(2000)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
