// shiftcast-server: hosts matches over UDP, answers queries over TCP RPC, serves /metrics over HTTP.
//
//   shiftcast-server --config configs/server.toml [--udp-port 0 --log-level debug ...]
//
// Every config key can be overridden as --key value (dashes or underscores). Exit status: 0 after a
// graceful shutdown (SIGINT, SIGTERM), 2 for a bad config or command line, 1 when it cannot start
// (a port in use, a level that does not load).
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "server/logging.hpp"
#include "server/server.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitCannotStart = 1;
constexpr int kExitBadConfig = 2;

void print_usage() {
  std::fprintf(stderr,
               "usage: shiftcast-server --config FILE [--KEY VALUE ...]\n"
               "  every key of the config file may be overridden, e.g. --udp-port 0 --rpc-port 0\n"
               "  --http-port 0 --threads 2 --tick-rate 64 --log-level debug\n");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace shiftcast;
  ServerConfig config;
  try {
    std::string config_path;
    std::vector<std::pair<std::string, std::string>> overrides;
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        print_usage();
        return kExitOk;
      }
      if (arg.rfind("--", 0) != 0 || i + 1 >= argc) throw ConfigError("unexpected argument '" + arg + "'");
      std::string value = argv[++i];
      if (arg == "--config") {
        config_path = value;
      } else {
        overrides.emplace_back(arg.substr(2), value);
      }
    }
    if (config_path.empty()) throw ConfigError("--config FILE is required");
    config = load_server_config(config_path);
    for (const auto& [key, value] : overrides)
      apply_override(config, key, value);
    validate(config);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "shiftcast-server: %s\n", e.what());
    print_usage();
    return kExitBadConfig;
  }
  configure_logging(*parse_log_level(config.log_level));

  Server server(config);
  if (const std::string error = server.start(); !error.empty()) {
    std::fprintf(stderr, "shiftcast-server: cannot start: %s\n", error.c_str());
    server.shutdown();
    server.wait();
    return kExitCannotStart;
  }
  boost::asio::io_context signals_context;
  boost::asio::signal_set signals(signals_context, SIGINT, SIGTERM);
  // Stays armed until the end: a second SIGTERM while the matches flush must not kill the process.
  std::function<void(const boost::system::error_code&, int)> on_signal =
      [&](const boost::system::error_code& ec, int signal) {
        if (ec) return;
        std::fprintf(stderr, "shiftcast-server: signal %d: shutting down\n", signal);
        server.shutdown();
        signals.async_wait(on_signal);
      };
  signals.async_wait(on_signal);
  std::thread signal_thread([&] { signals_context.run(); });
  // Only now, with the handler armed: a SIGTERM sent as soon as the line is read must shut down
  // gracefully, not kill the process by the signal's default action.
  const ServerPorts ports = server.ports();
  // One line on stdout, parsed by tests and scripts that start the server on free ports.
  std::printf("shiftcast-server listening udp=%u rpc=%u http=%u address=%s instance=%016llx\n",
              unsigned(ports.udp), unsigned(ports.rpc), unsigned(ports.http), server.public_address().c_str(),
              static_cast<unsigned long long>(server.instance()));
  std::fflush(stdout);
  server.wait();
  // From here on a late signal stays pending and dies with the process instead of killing it mid-exit.
  sigset_t late;
  sigemptyset(&late);
  sigaddset(&late, SIGINT);
  sigaddset(&late, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &late, nullptr);
  signals_context.stop();
  signal_thread.join();
  std::printf("shiftcast-server stopped\n");
  return kExitOk;
}
