// HttpServer: the operator's window into a running server: GET /metrics (Prometheus text format),
// GET /healthz (the process is up) and GET /readyz (levels loaded and matches running: 503 until then,
// and again while shutting down). Nothing else is served. It runs on the io_context it is given (the
// RPC threads in shiftcast-server), all on one strand: scrapes are rare and cheap.
//
//   HttpServer http(io, "127.0.0.1", 40002, {[&] { return registry.render(); }, [&] { return ready; }});
//   if (std::string error = http.start(); !error.empty()) { spdlog::error("{}", error); return 2; }
//   ...
//   http.stop();   // closes the listener and every connection; the io_context then runs out of work
//
// Limits keep a misbehaving client from holding resources: a small request size, a read timeout per
// request (an idle keep-alive connection is closed after it), and a bound on concurrent connections
// (the excess is closed as soon as it is accepted).
#pragma once

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace shiftcast {

struct HttpRoutes {
  std::function<std::string()> metrics;  // empty: /metrics answers 404
  std::function<bool()> ready;           // empty: always ready
};

// Bodies of requests are never used; headers plus body beyond this is a bad request (413).
inline constexpr std::size_t kHttpRequestLimit = 8 * 1024;
// Time a client has to send a whole request, including the wait before a keep-alive request.
inline constexpr std::chrono::milliseconds kHttpReadTimeout{10'000};
// Time a client has to take a whole response.
inline constexpr std::chrono::milliseconds kHttpWriteTimeout{10'000};
inline constexpr std::size_t kHttpMaxConnections = 64;

struct HttpLimits {
  std::chrono::milliseconds read_timeout = kHttpReadTimeout;
  std::size_t max_connections = kHttpMaxConnections;
};

inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4";

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, std::string address, std::uint16_t port, HttpRoutes routes,
             HttpLimits limits = {});
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

 private:
  struct State;
  class Session;
  static void accept(const std::shared_ptr<State>& state);
  std::shared_ptr<State> state_;
};

}  // namespace shiftcast
