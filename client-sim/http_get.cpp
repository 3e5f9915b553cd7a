#include "client-sim/http_get.hpp"

#include "client-sim/text_trim.hpp"

#include <netdb.h>
#include <poll.h>
#include <spdlog/fmt/fmt.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

namespace shiftcast {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxHeadBytes = 64 * 1024;
constexpr std::size_t kReadChunk = 64 * 1024;

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  int fd() const { return fd_; }

 private:
  int fd_;
};

std::string errno_text(int error) {
  return std::strerror(error);
}

// Waits until `fd` is ready for `events` or the deadline passes; empty when ready.
std::string wait_for(int fd, short events, Clock::time_point deadline) {
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return "timed out";
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, INT_MAX)));
    if (n < 0 && errno != EINTR) return errno_text(errno);
    if (n > 0) return {};
  }
}

std::optional<Socket> connect_to(const std::string& host, std::uint16_t port, Clock::time_point deadline,
                                 std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    error = fmt::format("cannot resolve {}: {}", host, ::gai_strerror(rc));
    return std::nullopt;
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, &::freeaddrinfo);
  error = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (s.fd() < 0) {
      error = errno_text(errno);
      continue;
    }
    if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        error = errno_text(errno);
        continue;
      }
      if (error = wait_for(s.fd(), POLLOUT, deadline); !error.empty()) continue;
      int so_error = 0;
      socklen_t length = sizeof(so_error);
      ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &so_error, &length);
      if (so_error != 0) {
        error = errno_text(so_error);
        continue;
      }
    }
    error.clear();
    return s;
  }
  return std::nullopt;
}

std::string send_all(int fd, std::string_view data, Clock::time_point deadline) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (std::string e = wait_for(fd, POLLOUT, deadline); !e.empty()) return e;
    } else if (n < 0 && errno != EINTR) {
      return errno_text(errno);
    }
  }
  return {};
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    return lower(x) == lower(y);
  });
}

struct Head {
  int status = 0;
  std::optional<std::size_t> content_length;
};

// The status line and headers, without the blank line that ends them; empty on success.
std::string parse_head(std::string_view head, Head& out) {
  std::size_t eol = head.find("\r\n");
  std::string_view status_line = head.substr(0, eol);
  // "HTTP/1.x NNN reason"
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12 || status_line[8] != ' ' ||
      (status_line.size() > 12 && status_line[12] != ' ')) {
    return fmt::format("malformed status line '{}'", status_line.substr(0, 80));
  }
  auto [end, ec] = std::from_chars(status_line.data() + 9, status_line.data() + 12, out.status);
  if (ec != std::errc() || end != status_line.data() + 12 || out.status < 100) {
    return fmt::format("malformed status line '{}'", status_line.substr(0, 80));
  }
  head.remove_prefix(eol == std::string_view::npos ? head.size() : eol + 2);
  while (!head.empty()) {
    eol = head.find("\r\n");
    std::string_view line = head.substr(0, eol);
    head.remove_prefix(eol == std::string_view::npos ? head.size() : eol + 2);
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return fmt::format("malformed header '{}'", line.substr(0, 80));
    std::string_view name = line.substr(0, colon);
    std::string_view value = trim_blanks(line.substr(colon + 1));
    if (equals_ignoring_case(name, "transfer-encoding") && !equals_ignoring_case(value, "identity")) {
      return fmt::format("unsupported transfer encoding '{}'", value);
    }
    if (equals_ignoring_case(name, "content-length")) {
      std::size_t length = 0;
      auto [length_end, length_ec] = std::from_chars(value.data(), value.data() + value.size(), length);
      if (value.empty() || length_ec != std::errc() || length_end != value.data() + value.size() ||
          (out.content_length && *out.content_length != length)) {
        return fmt::format("malformed Content-Length '{}'", value);
      }
      out.content_length = length;
    }
  }
  return {};
}

}  // namespace

HttpResponse http_get(const std::string& host, std::uint16_t port, const std::string& target,
                      std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  const std::string where = fmt::format("http://{}:{}{}", host, port, target);
  HttpResponse response;
  auto fail = [&](std::string_view what) {
    response.error = fmt::format("GET {}: {}", where, what);
    return response;
  };
  std::string error;
  std::optional<Socket> socket = connect_to(host, port, deadline, error);
  if (!socket) return fail(error);

  const bool ipv6_literal = host.find(':') != std::string::npos;
  const std::string request =
      fmt::format("GET {} HTTP/1.1\r\nHost: {}{}{}:{}\r\nConnection: close\r\nAccept: text/plain\r\n\r\n",
                  target, ipv6_literal ? "[" : "", host, ipv6_literal ? "]" : "", port);
  if (error = send_all(socket->fd(), request, deadline); !error.empty()) return fail(error);

  std::string received;
  std::optional<Head> head;
  std::size_t body_start = 0;
  char chunk[kReadChunk];
  while (true) {
    if (head && head->content_length && received.size() - body_start >= *head->content_length) break;
    ssize_t n = ::recv(socket->fd(), chunk, sizeof(chunk), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return fail(errno_text(errno));
      if (error = wait_for(socket->fd(), POLLIN, deadline); !error.empty()) return fail(error);
      continue;
    }
    if (n == 0) {  // the peer closed: the body ends here, if its length was not given
      if (!head) return fail("connection closed before the end of the response headers");
      if (head->content_length) {
        return fail(fmt::format("connection closed after {} of {} body bytes", received.size() - body_start,
                                *head->content_length));
      }
      break;
    }
    received.append(chunk, static_cast<std::size_t>(n));
    if (received.size() > kHttpGetMaxResponseBytes) return fail("response too large");
    if (!head) {
      std::size_t end = received.find("\r\n\r\n");
      if (end == std::string::npos) {
        if (received.size() > kMaxHeadBytes) return fail("response headers too large");
        continue;
      }
      head.emplace();
      if (error = parse_head(std::string_view(received).substr(0, end), *head); !error.empty()) {
        return fail(error);
      }
      body_start = end + 4;
    }
  }
  response.status = head->status;
  std::size_t length = head->content_length.value_or(received.size() - body_start);
  response.body = received.substr(body_start, length);
  return response;
}

}  // namespace shiftcast
