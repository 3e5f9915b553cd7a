#include "client-sim/sim_runner.hpp"

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include <spdlog/spdlog.h>

#include "client-sim/churn_runner.hpp"
#include "client-sim/client_thread.hpp"
#include "client-sim/process_cpu.hpp"
#include "client-sim/server_metrics.hpp"
#include "client-sim/sim_client.hpp"
#include "client-sim/token_reply.hpp"

namespace shiftcast {

namespace asio = boost::asio;
using asio::ip::tcp;
using asio::ip::udp;
using Clock = std::chrono::steady_clock;

using client_thread::ClientThread;
using client_thread::kAdminTimeoutSeconds;
using client_thread::Phase;
using client_thread::PublishedTotals;
using client_thread::RunShared;
using client_thread::seconds_between;
using client_thread::to_duration;

namespace {

// Admin calls in flight at once: pipelined enough to issue hundreds of tokens quickly, few enough that
// each call's latency is the server's and not the length of a queue we built.
constexpr std::size_t kAdminWindow = 32;
// Connect tokens outlive the connect phase by this much (and are never shorter than kMinTokenSeconds).
constexpr double kTokenMarginSeconds = 30;
constexpr double kMinTokenSeconds = 60;
constexpr auto kProgressInterval = std::chrono::seconds(1);

std::string describe_refusal(const char* call, const RpcReply& reply) {
  std::string s = std::string(call) + " refused: " + std::string(reply.error_name());
  if (!reply.detail.empty()) s += " (" + std::string(reply.detail) + ")";
  return s;
}

// One server of the run: its address resolved and an admin connection for the setup and teardown.
struct ServerLink {
  SimServer server;
  asio::ip::address host;
  tcp::endpoint rpc;
  std::unique_ptr<RpcBatch> admin;
};

// Every server of sim_servers(options), in order; an error naming the first that cannot be reached.
std::string open_server_links(const SimOptions& options, std::vector<ServerLink>& links) {
  const std::vector<SimServer> servers = sim_servers(options);
  for (const SimServer& server : servers) {
    const std::string prefix = servers.size() > 1 ? "server " + server.label() + ": " : "";
    ServerLink link{server, {}, {}, std::make_unique<RpcBatch>(kAdminTimeoutSeconds, kAdminWindow)};
    boost::system::error_code ec;
    link.host = asio::ip::make_address(server.host, ec);
    if (ec) {
      asio::io_context resolve_context;
      tcp::resolver resolver(resolve_context);
      const auto found = resolver.resolve(tcp::v4(), server.host, "", ec);
      if (ec || found.empty()) return prefix + "cannot resolve " + server.host + ": " + ec.message();
      link.host = found.begin()->endpoint().address();
    }
    link.rpc = tcp::endpoint(link.host, server.rpc_port);
    if (std::string e = link.admin->connect(link.rpc); !e.empty()) return prefix + e;
    links.push_back(std::move(link));
  }
  return "";
}

// The server of each match (sim_servers.hpp place_matches); least-loaded reads every server's /metrics.
std::string place_run_matches(const SimOptions& options, std::size_t servers,
                              std::vector<std::uint32_t>& out) {
  std::vector<int> hosted(servers, 0);
  if (options.placement == SimPlacement::kLeastLoaded) {
    const std::vector<SimServer> list = sim_servers(options);
    for (std::size_t s = 0; s < list.size(); ++s) {
      const ServerMetrics m = scrape_server_metrics(list[s]);
      if (!m.ok)
        return "server " + list[s].label() + ": least-loaded placement cannot read /metrics: " + m.error;
      hosted[s] = m.matches;
    }
  }
  out = place_matches(options.matches, hosted, options.placement);
  return "";
}

}  // namespace

std::string load_sim_level(const SimOptions& options, SimLevel& out) {
  if (options.level_file.empty())
    return "no level file for level '" + options.level + "': give --level-file or the server's config";
  out.source = options.level_file;
  // Loaded as the server loads it (server/hosted_level.cpp), so the BSP is the server's.
  LevelFileResult loaded = load_level_file(out.source);
  if (!loaded.ok()) return loaded.error;
  out.compiled = std::move(loaded.level);
  if (out.compiled.navmesh.empty()) return out.source + ": no navmesh (the bots need one)";
  std::string error;
  out.navmesh = NavMesh::from_data(out.compiled.navmesh, &error);
  if (out.navmesh == nullptr) return out.source + ": bad navmesh: " + error;
  return "";
}

SimRunResult run_simulation(const SimOptions& options, const SimLevel& level,
                            const std::function<void(const SimProgress&)>& progress,
                            const std::function<void()>& before_end_matches) {
  if (options.churn.enabled) return run_churn(options, level, progress, before_end_matches);
  SimRunResult result;
  if (level.navmesh == nullptr) {
    result.error = "the level has no navmesh";
    return result;
  }
  const Clock::time_point epoch = Clock::now();
  const double unix_now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();

  // The servers: addresses resolved, an admin connection each, the matches placed.
  std::vector<ServerLink> links;
  if (std::string e = open_server_links(options, links); !e.empty()) {
    result.error = e;
    return result;
  }
  const int matches = std::max(0, options.matches);
  const int per_match = std::max(0, options.clients);
  const std::size_t total = std::size_t(matches) * std::size_t(per_match);
  std::vector<std::uint32_t> placed;
  if (std::string e = place_run_matches(options, links.size(), placed); !e.empty()) {
    result.error = e;
    return result;
  }
  // Admin latencies, kept with the first client of each match (create, end) or each client (token).
  std::vector<double> create_ms(std::size_t(matches), 0);
  std::vector<double> end_ms(std::size_t(matches), 0);
  std::vector<double> token_ms(total, 0);
  std::vector<std::optional<std::uint32_t>> ids(static_cast<std::size_t>(matches));
  const auto server_of_client = [&](std::size_t i) { return placed[i / std::size_t(per_match)]; };
  // The global indices of what server s holds: its matches, or its clients.
  const auto on_server = [&](std::uint32_t s, std::size_t count, auto server_of) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < count; ++i)
      if (server_of(i) == s) out.push_back(i);
    return out;
  };
  const auto server_of_match = [&](std::size_t m) { return placed[m]; };
  const auto named = [&](std::uint32_t s, const std::string& e) {
    return links.size() > 1 ? "server " + links[s].server.label() + ": " + e : e;
  };

  // The matches this run created end with it. A failure here is only logged: the setup error (if any)
  // or the clients' own failures (the server went away) already say what happened.
  const auto end_matches = [&] {
    for (std::uint32_t s = 0; s < links.size(); ++s) {
      std::vector<std::size_t> created;
      for (std::size_t m : on_server(s, ids.size(), server_of_match))
        if (ids[m]) created.push_back(m);
      if (created.empty()) continue;
      RpcBatch& admin = *links[s].admin;
      std::string e = admin.reconnect(links[s].rpc);  // the setup's connection may have idled out
      if (e.empty()) {
        e = admin.run(
            created.size(),
            [&](flatbuffers::FlatBufferBuilder& fbb, std::size_t i) {
              const auto body = wire::CreateEndMatchDirect(fbb, options.admin_key.c_str(), *ids[created[i]]);
              return std::pair{wire::Message::EndMatch, body.Union()};
            },
            [&](std::size_t i, const RpcReply& reply) {
              if (!reply.ok()) spdlog::warn("{}", named(s, describe_refusal("EndMatch", reply)));
              end_ms[created[i]] = reply.latency_ms;
            });
      }
      if (!e.empty()) spdlog::warn("{}", named(s, "EndMatch: " + e));
    }
  };
  const auto fail = [&](std::string error) {
    result.error = std::move(error);
    end_matches();
    return result;
  };

  // 1. The matches, each on the server placement chose.
  for (std::uint32_t s = 0; s < links.size(); ++s) {
    const std::vector<std::size_t> mine = on_server(s, ids.size(), server_of_match);
    std::string refused;
    std::string e = links[s].admin->run(
        mine.size(),
        [&](flatbuffers::FlatBufferBuilder& fbb, std::size_t i) {
          const auto body = wire::CreateCreateMatchDirect(
              fbb, options.admin_key.c_str(), options.level.c_str(), std::uint16_t(per_match), 0,
              options.seed + std::uint32_t(mine[i]), std::uint16_t(options.tick_rate),
              std::uint16_t(options.snapshot_rate));
          return std::pair{wire::Message::CreateMatch, body.Union()};
        },
        [&](std::size_t i, const RpcReply& reply) {
          create_ms[mine[i]] = reply.latency_ms;
          const wire::CreateMatchReply* r =
              reply.ok() ? reply.envelope->message_as_CreateMatchReply() : nullptr;
          if (r == nullptr) {
            refused = describe_refusal("CreateMatch", reply);
            return;
          }
          ids[mine[i]] = r->match_id();
        });
    if (!e.empty() || !refused.empty()) return fail(named(s, !e.empty() ? e : refused));
  }
  for (std::size_t m = 0; m < ids.size(); ++m) {
    if (!ids[m]) return fail(named(placed[m], "CreateMatch: no reply"));
    result.match_ids.push_back(*ids[m]);
  }
  result.match_servers = placed;
  result.client_servers.resize(total);
  for (std::size_t i = 0; i < total; ++i)
    result.client_servers[i] = server_of_client(i);

  // 2. A connect token for every client, from its match's server: ids 1.. in each match.
  std::vector<std::optional<ConnectToken>> tokens(total);
  const double valid = std::max(kMinTokenSeconds, options.connect_timeout + kTokenMarginSeconds);
  for (std::uint32_t s = 0; s < links.size(); ++s) {
    const std::vector<std::size_t> mine = on_server(s, total, server_of_client);
    std::string refused;
    std::string e = links[s].admin->run(
        mine.size(),
        [&](flatbuffers::FlatBufferBuilder& fbb, std::size_t k) {
          const std::size_t i = mine[k];
          const auto body = wire::CreateIssueConnectTokenDirect(
              fbb, options.admin_key.c_str(), result.match_ids[i / std::size_t(per_match)],
              std::uint64_t(i % std::size_t(per_match)) + 1, std::uint32_t(valid));
          return std::pair{wire::Message::IssueConnectToken, body.Union()};
        },
        [&](std::size_t k, const RpcReply& reply) {
          const std::size_t i = mine[k];
          token_ms[i] = reply.latency_ms;
          const wire::IssueConnectTokenReply* r =
              reply.ok() ? reply.envelope->message_as_IssueConnectTokenReply() : nullptr;
          if (r == nullptr) {
            refused = describe_refusal("IssueConnectToken", reply);
            return;
          }
          tokens[i] = token_from_reply(*r);
          if (!tokens[i]) refused = "IssueConnectToken: a malformed reply";
        });
    if (!e.empty() || !refused.empty()) return fail(named(s, !e.empty() ? e : refused));
  }
  for (std::size_t i = 0; i < total; ++i) {
    if (!tokens[i]) return fail(named(server_of_client(i), "IssueConnectToken: no reply"));
  }

  // 3. The client threads, clients spread round robin.
  RunShared run;
  int thread_count = options.threads > 0 ? options.threads : int(std::thread::hardware_concurrency());
  thread_count = std::clamp(thread_count, 1, std::max(1, int(total)));
  std::vector<std::unique_ptr<ClientThread>> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.push_back(std::make_unique<ClientThread>(options, level, run, epoch, unix_now));
  for (std::size_t i = 0; i < total; ++i) {
    const std::uint32_t s = server_of_client(i);
    const std::optional<udp::endpoint> server = token_endpoint(tokens[i]->server_address, links[s].host);
    if (!server) {
      return fail(
          named(s, "a connect token names an address that is not ip:port: " + tokens[i]->server_address));
    }
    SimClientIdentity identity{options.seed + std::uint32_t(i / std::size_t(per_match)),
                               std::uint32_t(i % std::size_t(per_match))};
    identity.server = s;
    threads[i % threads.size()]->add(i, std::move(*tokens[i]), *server, identity);
  }
  std::vector<tcp::endpoint> rpc_endpoints;
  for (const ServerLink& link : links)
    rpc_endpoints.push_back(link.rpc);
  for (auto& t : threads) {
    if (std::string error = t->connect_rpc(rpc_endpoints); !error.empty()) return fail(error);
  }
  // Threads tick out of phase with each other, so their bursts of commands do not coincide.
  const double period = 1.0 / std::max(1, options.tick_rate);
  const Clock::time_point first_tick = Clock::now();
  for (std::size_t t = 0; t < threads.size(); ++t)
    threads[t]->start(first_tick + to_duration(period * double(t) / double(threads.size())));

  // 4. Connecting: until every client connected or failed, or the connect timeout.
  client_thread::ProgressHistograms progress_before{};
  std::uint64_t seen = 0;
  auto next_progress = Clock::now() + kProgressInterval;
  const auto report = [&](double elapsed) {
    const SimProgress p = client_thread::gather_progress(threads, int(total), elapsed, progress_before);
    if (progress) progress(p);
    return p;
  };
  const Clock::time_point connect_deadline = first_tick + to_duration(options.connect_timeout);
  Clock::time_point last_connected = Clock::now();
  for (;;) {
    int connected = 0;
    int failed = 0;
    for (const auto& t : threads) {
      connected += t->published().connected.load(std::memory_order_relaxed);
      failed += t->published().failed.load(std::memory_order_relaxed);
    }
    last_connected = Clock::now();
    if (std::size_t(connected + failed) >= total || Clock::now() >= connect_deadline) break;
    run.wakeup.wait_until(std::min(next_progress, connect_deadline), seen);
    if (Clock::now() >= next_progress) {
      report(0);
      next_progress += kProgressInterval;
    }
  }
  result.connect_seconds = seconds_between(epoch, last_connected);

  // 5. The load.
  run.phase.store(Phase::kLoad, std::memory_order_release);
  const Clock::time_point load_start = Clock::now();
  const double load_cpu_start = process_cpu_seconds();
  const Clock::time_point load_end = load_start + to_duration(options.duration);
  next_progress = load_start + kProgressInterval;
  while (Clock::now() < load_end) {
    run.wakeup.wait_until(std::min(next_progress, load_end), seen);
    if (Clock::now() >= next_progress) {
      const SimProgress p = report(seconds_between(load_start, Clock::now()));
      next_progress += kProgressInterval;
      if (p.failed == p.clients) break;  // nobody left to measure
    }
  }
  result.load_seconds = seconds_between(load_start, Clock::now());
  result.load_cpu_seconds = process_cpu_seconds() - load_cpu_start;

  // 6. Goodbyes, then the threads end.
  run.phase.store(Phase::kStop, std::memory_order_release);
  for (auto& t : threads)
    t->join();
  result.clients.resize(total);
  for (auto& t : threads) {
    result.late_client_ticks += t->published().late_ticks.load(std::memory_order_relaxed);
    for (auto& [index, client] : t->clients())
      result.clients[index] = client->take_stats();
  }
  threads.clear();

  // 7. The caller's look at the server while the matches exist, then the matches end.
  if (before_end_matches) before_end_matches();
  end_matches();
  for (std::size_t i = 0; i < total; ++i) {
    SimClientStats& c = result.clients[i];
    c.rpc_ms["issue_connect_token"].push_back(token_ms[i]);
    if (i % std::size_t(per_match) == 0) {
      c.rpc_ms["create_match"].push_back(create_ms[i / std::size_t(per_match)]);
      c.rpc_ms["end_match"].push_back(end_ms[i / std::size_t(per_match)]);
    }
  }
  return result;
}

}  // namespace shiftcast
