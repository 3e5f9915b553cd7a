// HttpServer: the operator's window into a running server: GET /metrics (Prometheus text format),
// GET /healthz (the process is up) and GET /readyz (levels loaded and matches running: 503 until then,
// and again while shutting down), plus whatever pages and WebSocket upgrades the routes add (the
// dashboard and the spectator view, server/spectator). It runs on the io_context it is given (the RPC
// threads in shiftcast-server), all on one strand: scrapes are rare and cheap.
//
//   HttpServer http(io, "127.0.0.1", 40002, {[&] { return registry.render(); }, [&] { return ready; }},
//                   limits, &metrics);
//   if (std::string error = http.start(); !error.empty()) { spdlog::error("{}", error); return 2; }
//   ...
//   http.stop();   // closes the listener and every connection; the io_context then runs out of work
//
// Under abuse the probes stay reachable: a new request must arrive whole within request_timeout, a
// kept-alive connection may wait idle_timeout for its next one, one source address holds at most
// max_connections_per_source connections, and a new connection is never turned away for lack of room:
// when the table (or its source's share) is full, the connection that has waited longest for a request
// is closed to make room (an idle keep-alive or a slow-header client; a response being written only when
// nobody waits). The accept loop backs off on errors (EMFILE) instead of spinning. Every close the
// server decides is counted by reason in shiftcast_http_closed_total{reason} (refusals also in
// shiftcast_rejected_total{channel="http"}).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace shiftcast {

class MetricsRegistry;
class Counter;
enum class HttpClose : std::uint8_t;

struct HttpRequestView {
  std::string_view path;   // the target up to '?'
  std::string_view query;  // after '?' (empty without one)
  std::string_view peer;   // the source address, for logs
};

struct HttpPage {
  unsigned status = 200;
  std::string body;
  std::string content_type;
  std::optional<HttpClose> refused;  // a refusal to count (403, 404, 400), by reason
};

// A WebSocket upgrade request and the connection it came on, handed over whole.
struct HttpUpgrade {
  boost::asio::ip::tcp::socket socket;
  boost::beast::http::request<boost::beast::http::string_body> request;
};

struct HttpRoutes {
  std::function<std::string()> metrics;  // empty: /metrics answers 404
  std::function<bool()> ready;           // empty: always ready
  // GET of any other path: the page, or nothing (404). Runs on the server's strand: must not block.
  std::function<std::optional<HttpPage>(const HttpRequestView&)> page;
  // A WebSocket upgrade (Upgrade: websocket): the handler either refuses with a page, or calls `take`
  // once and returns nothing; the connection is then the handler's (no longer in the server's table).
  std::function<std::optional<HttpPage>(const HttpRequestView&, const std::function<HttpUpgrade()>& take)>
      upgrade;
  // Told of every close, refusal and error response the server counts, after counting it (on the
  // server's strand: must not block). Lets an embedder log or a test wait for an event instead of a time.
  std::function<void(HttpClose)> on_close;
};

// Bodies of requests are never used; headers plus body beyond this is a bad request (413).
inline constexpr std::size_t kHttpRequestLimit = 8 * 1024;
// Time a client has to send a whole request: from the accept, or from the first byte of a kept-alive
// connection's next request. A probe sends its request at once; a slow-header client is closed.
inline constexpr std::chrono::milliseconds kHttpReadTimeout{5'000};
// Time a kept-alive connection may wait for the first byte of its next request.
inline constexpr std::chrono::milliseconds kHttpIdleTimeout{5'000};
// Time a client has to take a whole response.
inline constexpr std::chrono::milliseconds kHttpWriteTimeout{5'000};
inline constexpr std::size_t kHttpMaxConnections = 64;
inline constexpr std::size_t kHttpMaxConnectionsPerSource = 8;
// The accept loop's pause after an error (EMFILE, ENFILE, ENOBUFS): doubled per error in a row up to the
// maximum, reset by the next accepted connection.
inline constexpr std::chrono::milliseconds kHttpAcceptBackoffMin{10};
inline constexpr std::chrono::milliseconds kHttpAcceptBackoffMax{1'000};

struct HttpLimits {
  std::chrono::milliseconds read_timeout = kHttpReadTimeout;  // the whole request
  std::chrono::milliseconds idle_timeout = kHttpIdleTimeout;  // keep-alive wait for the next request
  std::chrono::milliseconds write_timeout = kHttpWriteTimeout;
  std::size_t max_connections = kHttpMaxConnections;
  std::size_t max_connections_per_source = kHttpMaxConnectionsPerSource;
  std::chrono::milliseconds accept_backoff_min = kHttpAcceptBackoffMin;
  std::chrono::milliseconds accept_backoff_max = kHttpAcceptBackoffMax;
};

// Why the server closed a connection, refused one or answered with an error: the reason label of
// shiftcast_http_closed_total.
enum class HttpClose : std::uint8_t {
  kRequestTimeout,    // a request did not arrive whole within read_timeout (slow headers)
  kIdleTimeout,       // a kept-alive connection sent nothing for idle_timeout
  kWriteTimeout,      // the client did not take its response within write_timeout
  kEvictedIdle,       // closed to make room while waiting for a request (oldest first)
  kEvictedWriting,    // closed to make room while its response was being written (nobody was waiting)
  kBadRequest,        // 400: not HTTP/1.x
  kTooLarge,          // 413: over kHttpRequestLimit
  kNotFound,          // 404
  kMethodNotAllowed,  // 405
  kAcceptError,       // accept() failed (EMFILE, ...): the loop backed off
  kSpectatorRefused,  // 403: a spectator page or socket without the spectator key
  kTooManyViewers,    // 503: a spectator socket beyond max_viewers
  kBadParameter,      // 400: a page's query parameter out of range
  kCount,
};
inline constexpr std::size_t kHttpCloseReasons = static_cast<std::size_t>(HttpClose::kCount);
const char* to_string(HttpClose reason);

inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4";

class HttpServer {
 public:
  // `metrics` (may be null: nothing counted) must outlive the server.
  HttpServer(boost::asio::io_context& io, std::string address, std::uint16_t port, HttpRoutes routes,
             HttpLimits limits = {}, MetricsRegistry* metrics = nullptr);
  ~HttpServer();  // stop(); destroy the server before its io_context
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens now (so the port is known on return), then accepts on the io_context. Empty on
  // success, else what went wrong (an invalid address, a port in use); start() may be called once.
  std::string start();
  // The bound port, once started (useful with port 0: any free port).
  std::uint16_t port() const;
  // Any thread: closes the listener and every connection (posted to the server's strand).
  void stop();
  // Any thread: how often the server closed, refused or answered an error for this reason.
  std::uint64_t closed(HttpClose reason) const;

 private:
  struct State;
  class Session;
  static void accept(const std::shared_ptr<State>& state);
  static void admit(const std::shared_ptr<State>& state, boost::asio::ip::tcp::socket socket);
  std::shared_ptr<State> state_;
};

}  // namespace shiftcast
