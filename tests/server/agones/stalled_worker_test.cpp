// A stalled match worker makes the pod Unhealthy: AgonesSdk in this process, on an io_context thread of
// the test's, against the sidecar stand-in (tests/server/agones/sidecar_standin.py: the real sidecar
// cannot be installed here), with one "match worker" io_context that nobody runs, as a worker stuck in a
// tick would be. Its pulse ages, the heartbeat withholds the pings, and the stand-in, counting a failure
// per health period without a ping, turns the GameServer Unhealthy, for good. Oracles: the stand-in's
// own state and ping count, and the server's withheld counter. No sleeps: the stand-in is long-polled.
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <sstream>
#include <thread>

#include "server/agones/agones_sdk.hpp"
#include "tests/server/agones/standin_process.hpp"

namespace shiftcast {
namespace {

namespace asio = boost::asio;

std::string field(const std::string& state, const std::string& key) {
  const std::string prefix = key + "=";
  std::istringstream lines(state);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  return {};
}

TEST(AgonesHeartbeat, AStalledWorkerStopsThePingsAndTheGameServerTurnsUnhealthy) {
  StandinProcess standin;
  ASSERT_EQ(standin.start("--health-period-s 0.5 --failure-threshold 2"), "");

  asio::io_context rpc;
  auto guard = asio::make_work_guard(rpc);
  asio::io_context stalled_worker;  // never run: every probe posted to it waits for ever
  MetricsRegistry metrics;
  AgonesSettings settings;
  settings.enabled = "true";
  settings.health_period_ms = 100;
  settings.stall_ms = 600;
  settings.retry_ms = 50;
  AgonesServices services;
  services.match_id = 1;
  services.server_instance = 0x0123456789abcdef;
  services.default_max_players = 4;
  services.metrics = &metrics;
  services.workers = {&stalled_worker};
  services.pulses = {std::make_shared<WorkerPulse>()};  // last seen: now
  auto sdk =
      AgonesSdk::create(rpc, {asio::ip::make_address("127.0.0.1"), standin.sdk_port()}, settings, services);
  std::thread thread([&] { rpc.run(); });
  sdk->start();

  // Ready and pinged while the worker's last sign of life is fresh...
  std::string state = standin.get("/control/state");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!(field(state, "state") == "Ready" && std::stoi("0" + field(state, "health")) >= 1) &&
         std::chrono::steady_clock::now() < deadline)
    state = standin.get("/control/state?after=" + field(state, "events"));
  EXPECT_EQ(field(state, "state"), "Ready");
  EXPECT_GE(std::stoi("0" + field(state, "health")), 1);
  EXPECT_EQ(field(state, "annotation agones.dev/sdk-shiftcast-server-instance"), "0123456789abcdef");
  // ...then silent: Unhealthy after the stand-in's threshold, the pings withheld meanwhile.
  while (field(state, "state") != "Unhealthy" && std::chrono::steady_clock::now() < deadline)
    state = standin.get("/control/state?after=" + field(state, "events"));
  EXPECT_EQ(field(state, "state"), "Unhealthy");
  const int pings = std::stoi("0" + field(state, "health"));
  EXPECT_GT(metrics.counter("shiftcast_agones_health_withheld_total", "").value(), 0u);
  // At most the pings that were in flight when the silence began: none since it was judged stalled.
  EXPECT_LE(pings, 1 + 600 / 100 + 1);

  // The worker resumes: its probes stamp the pulse, the pings come back, but Unhealthy is final.
  std::thread worker([&] { stalled_worker.run(); });
  while (std::stoi("0" + field(state, "health")) < pings + 3 && std::chrono::steady_clock::now() < deadline)
    state = standin.get("/control/state?after=" + field(state, "events"));
  EXPECT_GE(std::stoi("0" + field(state, "health")), pings + 3);
  EXPECT_EQ(field(state, "state"), "Unhealthy");

  sdk->stop();
  guard.reset();
  rpc.stop();
  thread.join();
  stalled_worker.stop();
  worker.join();
}

}  // namespace
}  // namespace shiftcast
