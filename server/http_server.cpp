#include "server/http_server.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "server/metrics.hpp"
#include "server/rejections.hpp"

namespace shiftcast {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr unsigned kHttp11 = 11;
constexpr char kPlainText[] = "text/plain; charset=utf-8";

bool is_parse_error(const beast::error_code& ec) {
  return &ec.category() == &http::make_error_code(http::error::bad_method).category();
}

// The cross-channel view of the same refusals (shiftcast_rejected_total{channel="http"}); an accept
// error is the server's own trouble, not a peer's refusal, and a kept-alive connection that sends nothing
// more is how every browser and scraper leaves (counted in shiftcast_http_closed_total alone).
std::optional<wire::ErrorCode> rejection_code(HttpClose reason) {
  switch (reason) {
    case HttpClose::kRequestTimeout:
    case HttpClose::kWriteTimeout:
      return wire::ErrorCode::Timeout;
    case HttpClose::kEvictedIdle:
    case HttpClose::kEvictedWriting:
      return wire::ErrorCode::TooManyConnections;
    case HttpClose::kBadRequest:
      return wire::ErrorCode::Malformed;
    case HttpClose::kTooLarge:
      return wire::ErrorCode::TooLarge;
    case HttpClose::kNotFound:
    case HttpClose::kMethodNotAllowed:
      return wire::ErrorCode::UnexpectedMessage;
    case HttpClose::kSpectatorRefused:
      return wire::ErrorCode::Unauthorized;
    case HttpClose::kTooManyViewers:
      return wire::ErrorCode::TooManyConnections;
    case HttpClose::kBadParameter:
      return wire::ErrorCode::BadArgument;
    case HttpClose::kIdleTimeout:
    case HttpClose::kAcceptError:
    case HttpClose::kCount:
      break;
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(HttpClose reason) {
  switch (reason) {
    case HttpClose::kRequestTimeout:
      return "request_timeout";
    case HttpClose::kIdleTimeout:
      return "idle_timeout";
    case HttpClose::kWriteTimeout:
      return "write_timeout";
    case HttpClose::kEvictedIdle:
      return "evicted_idle";
    case HttpClose::kEvictedWriting:
      return "evicted_writing";
    case HttpClose::kBadRequest:
      return "bad_request";
    case HttpClose::kTooLarge:
      return "too_large";
    case HttpClose::kNotFound:
      return "not_found";
    case HttpClose::kMethodNotAllowed:
      return "method_not_allowed";
    case HttpClose::kAcceptError:
      return "accept_error";
    case HttpClose::kSpectatorRefused:
      return "spectator_refused";
    case HttpClose::kTooManyViewers:
      return "too_many_viewers";
    case HttpClose::kBadParameter:
      return "bad_parameter";
    case HttpClose::kCount:
      break;
  }
  return "unknown";
}

struct HttpServer::State {
  State(net::io_context& io, std::string address_in, std::uint16_t port_in, HttpRoutes routes_in,
        HttpLimits limits_in, MetricsRegistry* metrics)
      : strand(net::make_strand(io)),
        acceptor(strand),
        accept_timer(strand),
        address(std::move(address_in)),
        requested_port(port_in),
        routes(std::move(routes_in)),
        limits(limits_in),
        accept_backoff(limits_in.accept_backoff_min) {
    for (std::size_t i = 0; i < kHttpCloseReasons; ++i) {
      const char* reason = to_string(HttpClose(i));
      closes[i] = metrics != nullptr
                      ? metrics->counter_series("shiftcast_http_closed_total",
                                                "HTTP connections closed or refused, and error responses, by "
                                                "the server's reason",
                                                {{"reason", reason}})
                      : std::make_shared<Counter>();
    }
    if (metrics != nullptr) rejections = std::make_unique<Rejections>(*metrics, "http");
  }

  void count(HttpClose reason, std::string_view peer) {
    closes[std::size_t(reason)]->add();
    if (const auto code = rejection_code(reason); code && rejections) {
      rejections->reject(*code, peer, to_string(reason));
    } else {
      spdlog::debug("http: {} from {}", to_string(reason), peer);
    }
    if (routes.on_close) routes.on_close(reason);
  }

  net::strand<net::io_context::executor_type> strand;
  tcp::acceptor acceptor;
  net::steady_timer accept_timer;  // the pause after an accept error
  const std::string address;
  const std::uint16_t requested_port;
  const HttpRoutes routes;
  const HttpLimits limits;
  std::array<std::shared_ptr<Counter>, kHttpCloseReasons> closes;
  std::unique_ptr<Rejections> rejections;  // null without a registry
  std::atomic<std::uint16_t> port{0};
  bool started = false;                      // start()'s caller only
  bool stopped = false;                      // strand only
  std::chrono::milliseconds accept_backoff;  // strand only
  std::unordered_set<Session*> sessions;     // strand only: open connections, so stop() can close them
};

// One connection: read a request, answer it, wait for the next while the client keeps it alive. Runs on
// the server's strand (the accepted socket inherits the acceptor's executor).
class HttpServer::Session : public std::enable_shared_from_this<Session> {
 public:
  enum class Phase { kRequest, kIdle, kWriting };

  Session(std::shared_ptr<State> state, tcp::socket socket, net::ip::address source)
      : state_(std::move(state)), stream_(std::move(socket)), source_(source) {
    peer_ = source_.to_string();
  }
  ~Session() { state_->sessions.erase(this); }

  void start() {
    state_->sessions.insert(this);
    read_request();
  }

  const net::ip::address& source() const { return source_; }
  Phase phase() const { return phase_; }
  Clock::time_point since() const { return since_; }

  // `reason`: counted; none when the peer closed, the server stops or a response ended the connection.
  void close(std::optional<HttpClose> reason = std::nullopt) {
    if (closed_) return;
    closed_ = true;
    if (reason) state_->count(*reason, peer_);
    // Out of the table at once, so the slot is free for the connection that evicted this one.
    state_->sessions.erase(this);
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

 private:
  void enter(Phase phase, std::chrono::milliseconds timeout) {
    phase_ = phase;
    since_ = Clock::now();
    stream_.expires_after(timeout);
  }

  void read_request() {
    parser_.emplace();
    parser_->header_limit(kHttpRequestLimit);
    parser_->body_limit(kHttpRequestLimit);
    enter(Phase::kRequest, state_->limits.read_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  // A kept-alive connection: wait for the next request's first byte (idle_timeout), then read it whole
  // (read_timeout), so an idle client and a slow-header client are told apart and each bounded.
  void wait_idle() {
    if (buffer_.size() > 0) return read_request();  // pipelined: the next request is already here
    enter(Phase::kIdle, state_->limits.idle_timeout);
    stream_.async_read_some(buffer_.prepare(kHttpRequestLimit),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->buffer_.commit(n);
                              if (self->closed_) return;
                              if (self->state_->stopped) return self->close();
                              if (ec == beast::error::timeout) return self->close(HttpClose::kIdleTimeout);
                              if (ec) return self->close();
                              self->read_request();
                            });
  }

  void on_read(beast::error_code ec) {
    if (closed_) return;  // evicted or stopped meanwhile
    if (state_->stopped) return close();
    if (ec == http::error::body_limit || ec == http::error::header_limit ||
        ec == http::error::buffer_overflow) {
      state_->count(HttpClose::kTooLarge, peer_);
      return respond(http::status::payload_too_large, "request too large\n", kPlainText, false, kHttp11);
    }
    if (ec == beast::error::timeout) return close(HttpClose::kRequestTimeout);
    // A client that closed (end of stream, partial message, reset) gets nothing.
    if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
        (ec && !is_parse_error(ec))) {
      return close();
    }
    if (ec) {
      state_->count(HttpClose::kBadRequest, peer_);
      return respond(http::status::bad_request, "bad request\n", kPlainText, false, kHttp11);
    }
    route();
  }

  void route() {
    const http::request<http::string_body>& request = parser_->get();
    const http::verb method = request.method();
    const bool keep_alive = request.keep_alive();
    const unsigned version = request.version();
    const std::string_view full(request.target().data(), request.target().size());
    const std::size_t question = full.find('?');
    const std::string_view target = full.substr(0, question);
    const HttpRequestView view{
        target, question == std::string_view::npos ? std::string_view{} : full.substr(question + 1), peer_};
    const HttpRoutes& routes = state_->routes;
    if (method != http::verb::get) {
      state_->count(HttpClose::kMethodNotAllowed, peer_);
      return respond(http::status::method_not_allowed, "method not allowed\n", kPlainText, keep_alive,
                     version);
    }
    if (target == "/metrics" && routes.metrics) {
      std::string body;
      try {
        body = routes.metrics();
      } catch (const std::exception&) {
        return respond(http::status::internal_server_error, "internal error\n", kPlainText, false, version);
      }
      return respond(http::status::ok, std::move(body), kPrometheusContentType, keep_alive, version);
    }
    if (target == "/healthz") return respond(http::status::ok, "ok\n", kPlainText, keep_alive, version);
    if (target == "/readyz") {
      bool ready = !routes.ready || routes.ready();
      return respond(ready ? http::status::ok : http::status::service_unavailable,
                     ready ? "ready\n" : "not ready\n", kPlainText, keep_alive, version);
    }
    if (websocket::is_upgrade(request) && routes.upgrade) {
      std::optional<HttpPage> refusal = routes.upgrade(view, [this] { return hand_over(); });
      if (!refusal) return;  // the connection is the handler's now
      return respond_page(std::move(*refusal), false, version);
    }
    if (routes.page) {
      if (std::optional<HttpPage> page = routes.page(view))
        return respond_page(std::move(*page), keep_alive, version);
    }
    state_->count(HttpClose::kNotFound, peer_);
    respond(http::status::not_found, "not found\n", kPlainText, keep_alive, version);
  }

  void respond_page(HttpPage page, bool keep_alive, unsigned version) {
    if (page.refused) state_->count(*page.refused, peer_);
    respond(static_cast<http::status>(page.status), std::move(page.body), page.content_type, keep_alive,
            version);
  }

  // The upgrade request and the socket, out of this session for good: it leaves the table and never
  // touches them again.
  HttpUpgrade hand_over() {
    closed_ = true;
    state_->sessions.erase(this);
    HttpUpgrade upgrade{stream_.release_socket(), parser_->release()};
    return upgrade;
  }

  void respond(http::status status, std::string body, std::string_view content_type, bool keep_alive,
               unsigned version) {
    auto response = std::make_shared<http::response<http::string_body>>(status, version);
    response->set(http::field::server, "shiftcast");
    response->set(http::field::content_type, beast::string_view(content_type.data(), content_type.size()));
    if (status == http::status::method_not_allowed) response->set(http::field::allow, "GET");
    response->keep_alive(keep_alive);
    response->body() = std::move(body);
    response->prepare_payload();
    enter(Phase::kWriting, state_->limits.write_timeout);
    http::async_write(stream_, *response,
                      [self = shared_from_this(), response](beast::error_code ec, std::size_t) {
                        if (self->closed_) return;
                        if (ec == beast::error::timeout) return self->close(HttpClose::kWriteTimeout);
                        if (ec || self->state_->stopped) return self->close();
                        if (!response->keep_alive()) return self->close();
                        self->wait_idle();
                      });
  }

  std::shared_ptr<State> state_;
  beast::tcp_stream stream_;
  const net::ip::address source_;
  std::string peer_;
  Phase phase_ = Phase::kRequest;
  Clock::time_point since_ = Clock::now();
  bool closed_ = false;
  beast::flat_buffer buffer_{kHttpRequestLimit};                   // bounds header bytes buffered ahead, too
  std::optional<http::request_parser<http::string_body>> parser_;  // one per request, as Beast requires
};

HttpServer::HttpServer(net::io_context& io, std::string address, std::uint16_t port, HttpRoutes routes,
                       HttpLimits limits, MetricsRegistry* metrics)
    : state_(std::make_shared<State>(io, std::move(address), port, std::move(routes), limits, metrics)) {}

HttpServer::~HttpServer() {
  stop();
}

std::string HttpServer::start() {
  State& s = *state_;
  if (s.started) return std::string("http: already started");
  std::string where = "http: cannot listen on " + s.address + ":" + std::to_string(s.requested_port) + ": ";
  boost::system::error_code ec;
  net::ip::address address = net::ip::make_address(s.address, ec);
  if (ec) return where + "not an IP address";
  tcp::endpoint endpoint(address, s.requested_port);
  if (s.acceptor.open(endpoint.protocol(), ec); ec) return where + ec.message();
  // Lets a restarted server bind while old connections linger in TIME_WAIT; a live listener on the
  // port still makes bind fail.
  s.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  auto fail = [&](const boost::system::error_code& error) {
    boost::system::error_code ignored;
    s.acceptor.close(ignored);
    return where + (error == net::error::address_in_use ? "the port is in use" : error.message());
  };
  if (s.acceptor.bind(endpoint, ec); ec) return fail(ec);
  if (s.acceptor.listen(net::socket_base::max_listen_connections, ec); ec) return fail(ec);
  s.port = s.acceptor.local_endpoint(ec).port();
  s.started = true;
  net::post(s.strand, [state = state_] { accept(state); });
  return {};
}

std::uint16_t HttpServer::port() const {
  return state_->port.load();
}

std::uint64_t HttpServer::closed(HttpClose reason) const {
  return reason == HttpClose::kCount ? 0 : state_->closes[std::size_t(reason)]->value();
}

void HttpServer::stop() {
  net::post(state_->strand, [state = state_] {
    state->stopped = true;
    beast::error_code ec;
    state->acceptor.close(ec);
    state->accept_timer.cancel();
    // close() leaves the table: walk a copy.
    const std::vector<Session*> open(state->sessions.begin(), state->sessions.end());
    for (Session* session : open)
      session->close();
  });
}

void HttpServer::accept(const std::shared_ptr<State>& state) {
  if (state->stopped || !state->acceptor.is_open()) return;
  state->acceptor.async_accept([state](beast::error_code ec, tcp::socket socket) {
    if (state->stopped || ec == net::error::operation_aborted) return;
    if (ec) {
      // EMFILE and its kind persist: retrying at once would spin a thread. Pause, doubling each time;
      // the connection waits in the kernel's backlog meanwhile.
      state->count(HttpClose::kAcceptError, ec.message());
      spdlog::warn("http: accept failed ({}); retrying in {} ms", ec.message(),
                   state->accept_backoff.count());
      state->accept_timer.expires_after(state->accept_backoff);
      state->accept_backoff = std::min(state->accept_backoff * 2, state->limits.accept_backoff_max);
      state->accept_timer.async_wait([state](beast::error_code timer_error) {
        if (!timer_error) accept(state);
      });
      return;
    }
    state->accept_backoff = state->limits.accept_backoff_min;
    admit(state, std::move(socket));
    accept(state);
  });
}

void HttpServer::admit(const std::shared_ptr<State>& state, tcp::socket socket) {
  beast::error_code ec;
  const tcp::endpoint remote = socket.remote_endpoint(ec);
  if (ec) return;  // reset before we looked: nothing to serve
  const net::ip::address source = remote.address();
  // The connection that has waited longest for a request goes first (an idle keep-alive, a slow-header
  // client); one writing a response only when nobody waits. A probe, which sends its request at once,
  // is never the one that waited longest.
  auto evict_oldest = [&](bool same_source) {
    Session* oldest = nullptr;
    for (Session* s : state->sessions) {
      if (same_source && s->source() != source) continue;
      const bool waiting = s->phase() != Session::Phase::kWriting;
      if (oldest == nullptr) {
        oldest = s;
        continue;
      }
      const bool oldest_waiting = oldest->phase() != Session::Phase::kWriting;
      if (waiting != oldest_waiting ? waiting : s->since() < oldest->since()) oldest = s;
    }
    if (oldest == nullptr) return false;
    oldest->close(oldest->phase() == Session::Phase::kWriting ? HttpClose::kEvictedWriting
                                                              : HttpClose::kEvictedIdle);
    return true;
  };
  const std::size_t from_source = std::size_t(std::count_if(
      state->sessions.begin(), state->sessions.end(), [&](Session* s) { return s->source() == source; }));
  if (from_source >= state->limits.max_connections_per_source) evict_oldest(true);
  while (state->sessions.size() >= state->limits.max_connections && evict_oldest(false)) {
  }
  std::make_shared<Session>(state, std::move(socket), source)->start();
}

}  // namespace shiftcast
