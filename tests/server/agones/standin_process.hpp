// StandinProcess: tests/server/agones/sidecar_standin.py, a stand-in for the Agones SDK sidecar (the
// real one cannot be installed here and needs Kubernetes; the script says what it imitates and how), run
// as a child process on free loopback ports for an end-to-end test and stopped with SIGTERM.
//
//   StandinProcess standin;
//   ASSERT_EQ(standin.start("--closed"), "");            // waits for its ports line (bounded)
//   server config: [agones] sdk_port = standin.sdk_port()
//   standin.post("/control/allocate", R"({"annotations": {...}})");
//   std::string state = standin.get("/control/state");   // "state=Ready\nhealth=12\n..."
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "tests/support/server_process.hpp"

namespace shiftcast {

class StandinProcess {
 public:
  ~StandinProcess() { stop(); }

  // Starts the stand-in with `arguments` and waits up to 30 s for its ports line; an error or "".
  std::string start(const std::string& arguments) {
    int fds[2];
    if (::pipe(fds) != 0) return "pipe failed";
    pid_ = ::fork();
    if (pid_ < 0) return "fork failed";
    if (pid_ == 0) {
      ::close(fds[0]);
      ::dup2(fds[1], 1);
      const std::string command = std::string("exec /usr/bin/python3 '") + SHIFTCAST_SOURCE_DIR +
                                  "/tests/server/agones/sidecar_standin.py' " + arguments;
      ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (out.find('\n') == std::string::npos) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{fds[0], POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, int(left.count())) <= 0) break;
      char buffer[256];
      const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
      if (n <= 0) break;
      out.append(buffer, std::size_t(n));
    }
    ::close(fds[0]);
    unsigned sdk = 0, control = 0;
    if (std::sscanf(out.c_str(), "agones-standin sdk=%u control=%u", &sdk, &control) != 2)
      return "the stand-in printed no ports line: '" + out + "'";
    sdk_port_ = std::uint16_t(sdk);
    control_port_ = std::uint16_t(control);
    return {};
  }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  std::uint16_t sdk_port() const { return sdk_port_; }
  std::string get(const std::string& path) const {
    int status = 0;
    return http_exchange(control_port_, "GET", path, "", &status);
  }
  int post(const std::string& path, const std::string& body = "{}") const {
    int status = 0;
    http_exchange(control_port_, "POST", path, body, &status);
    return status;
  }

 private:
  pid_t pid_ = -1;
  std::uint16_t sdk_port_ = 0;
  std::uint16_t control_port_ = 0;
};

}  // namespace shiftcast
