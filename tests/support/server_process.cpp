#include "tests/support/server_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

namespace shiftcast {
namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Waits for the child's exit as an event (a pidfd becomes readable when the process exits), bounded.
bool wait_for_exit(pid_t pid, std::chrono::milliseconds timeout, int* status) {
  const int pidfd = int(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    ::poll(&p, 1, int(timeout.count()));
    ::close(pidfd);
  }
  return waitpid(pid, status, WNOHANG) == pid;
}

}  // namespace

std::string test_server_config(const std::string& extra_match_keys, const std::string& extra) {
  const std::string source = SHIFTCAST_SOURCE_DIR;
  std::ostringstream c;
  c << "[network]\nbind_address = \"127.0.0.1\"\nudp_port = 0\nrpc_port = 0\nhttp_port = 0\nthreads = 2\n"
    << "rpc_threads = 1\n\n[match]\ntick_rate = 64\nsnapshot_rate = 32\nconnection_timeout_s = 5\n\n"
    << "[security]\ntoken_key_file = \"" << source << "/configs/keys/dev-token.key\"\n"
    << "admin_key_file = \"" << source << "/configs/keys/dev-admin.key\"\n"
    << "service_key_file = \"" << source << "/configs/keys/dev-service.key\"\n\n"
    << "[log]\nlevel = \"debug\"\n\n[shutdown]\nflush_s = 1\n\n"
    << "[[level]]\nname = \"arena\"\npath = \"" << source << "/configs/levels/arena.map\"\n\n"
    << "[[initial_match]]\nlevel = \"arena\"\n"
    << extra_match_keys << "\n"
    << extra;
  return c.str();
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) stop();
  if (out_fd_ >= 0) ::close(out_fd_);
}

std::string ServerProcess::start(const std::string& config_toml, const std::filesystem::path& dir,
                                 const std::string& arguments, std::chrono::seconds timeout) {
  dir_ = dir;
  // A restart reads the new process's listening line, not the previous one's.
  out_.clear();
  if (out_fd_ >= 0) ::close(out_fd_);
  out_fd_ = -1;
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "server.toml") << config_toml; }
  const std::string err = (dir / "server.err").string();
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe failed";
  pid_ = fork();
  if (pid_ < 0) return "fork failed";
  if (pid_ == 0) {
    const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::close(pipe_fds[0]);
    dup2(pipe_fds[1], 1);
    dup2(err_fd, 2);
    const std::string command = std::string("exec '") + SHIFTCAST_SERVER_BIN + "' --config '" +
                                (dir / "server.toml").string() + "' " + arguments;
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(pipe_fds[1]);
  out_fd_ = pipe_fds[0];
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{out_fd_, POLLIN, 0};
    if (::poll(&p, 1, int(std::max<long>(1, left.count()))) > 0) {
      char buffer[4096];
      const ssize_t n = ::read(out_fd_, buffer, sizeof buffer);
      if (n > 0) out_.append(buffer, std::size_t(n));
      if (n == 0) p.revents |= POLLHUP;
    }
    const std::string& text = out_;
    const auto at = text.find("shiftcast-server listening ");
    if (at != std::string::npos && text.find('\n', at) != std::string::npos) {
      unsigned udp = 0, rpc = 0, http = 0;
      char address[128] = {};
      unsigned long long instance = 0;
      if (std::sscanf(text.c_str() + at,
                      "shiftcast-server listening udp=%u rpc=%u http=%u address=%127s instance=%llx", &udp,
                      &rpc, &http, address, &instance) >= 4) {
        ports_ = {std::uint16_t(udp), std::uint16_t(rpc), std::uint16_t(http)};
        address_ = address;
        instance_ = std::uint64_t(instance);
        return {};
      }
    }
    int status = 0;
    if ((p.revents & POLLHUP) != 0 && wait_for_exit(pid_, std::chrono::seconds(10), &status)) {
      pid_ = -1;
      return "shiftcast-server exited (status " + std::to_string(WEXITSTATUS(status)) + "): " + slurp(err);
    }
  }
  return "shiftcast-server did not report its ports in time: " + slurp(err);
}

int ServerProcess::stop(std::chrono::seconds timeout) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  const bool exited = wait_for_exit(pid_, timeout, &status);
  if (!exited) {
    ::kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return -1;
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ServerProcess::stdout_text() {
  if (out_fd_ >= 0) {
    // Whatever the server wrote since (it has exited or keeps the pipe open: read what is there now).
    pollfd p{out_fd_, POLLIN, 0};
    char buffer[4096];
    while (::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0) {
      const ssize_t n = ::read(out_fd_, buffer, sizeof buffer);
      if (n <= 0) break;
      out_.append(buffer, std::size_t(n));
    }
  }
  return out_;
}
std::string ServerProcess::stderr_text() const {
  return slurp(dir_ / "server.err");
}

std::string http_exchange(std::uint16_t port, const std::string& method, const std::string& path,
                          const std::string& body, int* status) {
  if (status != nullptr) *status = 0;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return {};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return {};
  }
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n";
  if (method != "GET" || !body.empty())
    request += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  request += "Connection: close\r\n\r\n" + body;
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    response.append(buffer, std::size_t(n));
  }
  ::close(fd);
  int code = 0;
  std::sscanf(response.c_str(), "HTTP/1.%*d %d", &code);
  if (status != nullptr) *status = code;
  const auto start = response.find("\r\n\r\n");
  return start == std::string::npos ? std::string() : response.substr(start + 4);
}

double metric_value(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ')
      return std::strtod(line.c_str() + series.size() + 1, nullptr);
  }
  return 0;
}

}  // namespace shiftcast
