#include "server/http_server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <exception>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace shiftcast {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr unsigned kHttp11 = 11;
constexpr char kPlainText[] = "text/plain; charset=utf-8";

bool is_parse_error(const beast::error_code& ec) {
  return &ec.category() == &http::make_error_code(http::error::bad_method).category();
}

}  // namespace

struct HttpServer::State {
  State(net::io_context& io, std::string address_in, std::uint16_t port_in, HttpRoutes routes_in,
        HttpLimits limits_in)
      : strand(net::make_strand(io)),
        acceptor(strand),
        address(std::move(address_in)),
        requested_port(port_in),
        routes(std::move(routes_in)),
        limits(limits_in) {}

  net::strand<net::io_context::executor_type> strand;
  tcp::acceptor acceptor;
  const std::string address;
  const std::uint16_t requested_port;
  const HttpRoutes routes;
  const HttpLimits limits;
  std::atomic<std::uint16_t> port{0};
  bool started = false;                   // start()'s caller only
  bool stopped = false;                   // strand only
  std::unordered_set<Session*> sessions;  // strand only: live connections, so stop() can close them
};

// One connection: read a request, answer it, repeat while the client keeps it alive. Runs on the
// server's strand (the accepted socket inherits the acceptor's executor).
class HttpServer::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(std::shared_ptr<State> state, tcp::socket socket)
      : state_(std::move(state)), stream_(std::move(socket)) {}
  ~Session() { state_->sessions.erase(this); }

  void start() {
    state_->sessions.insert(this);
    read();
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

 private:
  void read() {
    parser_.emplace();
    parser_->header_limit(kHttpRequestLimit);
    parser_->body_limit(kHttpRequestLimit);
    stream_.expires_after(state_->limits.read_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (state_->stopped) return close();
    if (ec == http::error::body_limit || ec == http::error::header_limit ||
        ec == http::error::buffer_overflow) {
      return respond(http::status::payload_too_large, "request too large\n", kPlainText, false, kHttp11);
    }
    // A client that closed or went quiet (end of stream, partial message, timeout, reset) gets nothing.
    if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
        (ec && !is_parse_error(ec))) {
      return close();
    }
    if (ec) return respond(http::status::bad_request, "bad request\n", kPlainText, false, kHttp11);
    const http::request<http::string_body>& request = parser_->get();
    route(request.method(), std::string_view(request.target().data(), request.target().size()),
          request.keep_alive(), request.version());
  }

  void route(http::verb method, std::string_view target, bool keep_alive, unsigned version) {
    target = target.substr(0, target.find('?'));
    const HttpRoutes& routes = state_->routes;
    if (method != http::verb::get) {
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
    respond(http::status::not_found, "not found\n", kPlainText, keep_alive, version);
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
    stream_.expires_after(kHttpWriteTimeout);
    http::async_write(stream_, *response,
                      [self = shared_from_this(), response](beast::error_code ec, std::size_t) {
                        if (ec || self->state_->stopped) return self->close();
                        if (!response->keep_alive()) return self->close();
                        self->read();
                      });
  }

  std::shared_ptr<State> state_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_{kHttpRequestLimit};                   // bounds header bytes buffered ahead, too
  std::optional<http::request_parser<http::string_body>> parser_;  // one per request, as Beast requires
};

HttpServer::HttpServer(net::io_context& io, std::string address, std::uint16_t port, HttpRoutes routes,
                       HttpLimits limits)
    : state_(std::make_shared<State>(io, std::move(address), port, std::move(routes), limits)) {}

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

void HttpServer::stop() {
  net::post(state_->strand, [state = state_] {
    state->stopped = true;
    beast::error_code ec;
    state->acceptor.close(ec);
    for (Session* session : state->sessions)
      session->close();
  });
}

void HttpServer::accept(const std::shared_ptr<State>& state) {
  if (state->stopped || !state->acceptor.is_open()) return;
  state->acceptor.async_accept([state](beast::error_code ec, tcp::socket socket) {
    if (state->stopped || ec == net::error::operation_aborted) return;
    if (!ec) {
      if (state->sessions.size() >= state->limits.max_connections) {
        socket.close(ec);
      } else {
        std::make_shared<Session>(state, std::move(socket))->start();
      }
    }
    accept(state);
  });
}

}  // namespace shiftcast
