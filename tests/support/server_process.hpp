// ServerProcess: the real shiftcast-server, started as a child process on free loopback ports for an
// end-to-end test and stopped with SIGTERM (a graceful shutdown whose exit status the test can assert).
//
//   ServerProcess server;
//   ASSERT_EQ(server.start(config_toml, dir), "");   // waits for the "listening" line (bounded)
//   server.ports().rpc ...
//   EXPECT_EQ(server.stop(), 0);                      // SIGTERM, then the exit status
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

namespace shiftcast {

struct TestPorts {
  std::uint16_t udp = 0;
  std::uint16_t rpc = 0;
  std::uint16_t http = 0;
};

// A server config for tests: loopback, free ports, the development keys, the shipped arena level, one
// match on it (id 1), debug logging. `extra` is appended (more TOML keys or sections).
std::string test_server_config(const std::string& extra_match_keys = "", const std::string& extra = "");

class ServerProcess {
 public:
  ~ServerProcess();
  // Writes `config_toml` to dir/server.toml, starts the server with it and `arguments`, and waits up to
  // `timeout` for its listening line. An error string (with the server's stderr) on failure.
  std::string start(const std::string& config_toml, const std::filesystem::path& dir,
                    const std::string& arguments = "",
                    std::chrono::seconds timeout = std::chrono::seconds(120));
  const TestPorts& ports() const { return ports_; }
  const std::string& address() const { return address_; }  // the public address tokens are bound to
  std::uint64_t instance() const { return instance_; }     // the server instance tokens are bound to
  // SIGTERM and wait (bounded); the exit status, or -1 when it had to be killed or did not exit normally.
  int stop(std::chrono::seconds timeout = std::chrono::seconds(60));
  std::string stdout_text();
  std::string stderr_text() const;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string out_;
  TestPorts ports_;
  std::string address_;
  std::uint64_t instance_ = 0;
  std::filesystem::path dir_;
};

// One HTTP/1.1 exchange on loopback (Connection: close): the body, empty on failure; `status` (when given)
// receives the status code, 0 without an answer. A body is sent as JSON with its length.
std::string http_exchange(std::uint16_t port, const std::string& method, const std::string& path,
                          const std::string& body, int* status = nullptr);
// GET a path from the server's HTTP port: the body, empty on failure. `status` receives the status code.
inline std::string http_get(std::uint16_t port, const std::string& path, int* status = nullptr) {
  return http_exchange(port, "GET", path, "", status);
}
// The value of one Prometheus series in a /metrics text (e.g. `shiftcast_rejected_total{channel="udp",
// reason="token_expired"}`), 0 when absent.
double metric_value(const std::string& metrics_text, const std::string& series);

}  // namespace shiftcast
