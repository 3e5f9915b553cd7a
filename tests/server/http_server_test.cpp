// HttpServer over real loopback sockets: the three routes with their status codes, bodies and content
// types; readiness flipping; keep-alive; 404/405; malformed and oversized requests answered 400/413 or
// closed while the server keeps serving; the read timeout closing sockets and the connection bound
// closing the longest-waiting one for a newcomer; a
// port in use; stop() closing everything so the io_context runs out of work. Every wait is a socket
// operation with a bounded timeout.
#include "server/http_server.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <optional>
#include <string>

namespace shiftcast {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr std::chrono::seconds kTestTimeout{10};

// A client on its own io_context: every operation runs with a deadline, so a broken server fails the
// test instead of hanging it.
class Client {
 public:
  explicit Client(std::uint16_t port) {
    stream_.expires_after(kTestTimeout);
    stream_.async_connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port),
                          [this](beast::error_code ec) { connect_error_ = ec; });
    run();
  }
  bool connected() const { return !connect_error_; }

  std::optional<http::response<http::string_body>> request(http::verb method, const std::string& target,
                                                           unsigned version = 11, std::string body = "") {
    http::request<http::string_body> req(method, target, version);
    req.set(http::field::host, "127.0.0.1");
    if (!body.empty()) {
      req.body() = std::move(body);
      req.prepare_payload();
    }
    beast::error_code error;
    stream_.expires_after(kTestTimeout);
    http::async_write(stream_, req, [&](beast::error_code ec, std::size_t) { error = ec; });
    run();
    if (error) return std::nullopt;
    return read_response();
  }

  std::optional<http::response<http::string_body>> read_response() {
    http::response<http::string_body> res;
    beast::error_code error;
    stream_.expires_after(kTestTimeout);
    http::async_read(stream_, buffer_, res, [&](beast::error_code ec, std::size_t) { error = ec; });
    run();
    if (error) return std::nullopt;
    return res;
  }

  bool send_raw(const std::string& bytes) {
    beast::error_code error;
    stream_.expires_after(kTestTimeout);
    net::async_write(stream_, net::buffer(bytes), [&](beast::error_code ec, std::size_t) { error = ec; });
    run();
    return !error;
  }

  // Everything the server sends until it closes the connection; timed_out() if it never does.
  std::string read_until_closed() {
    std::string received;
    std::array<char, 4096> chunk;
    timed_out_ = false;
    stream_.expires_after(kTestTimeout);
    std::function<void(beast::error_code, std::size_t)> on_read = [&](beast::error_code ec, std::size_t n) {
      received.append(chunk.data(), n);
      if (ec) {
        timed_out_ = ec == beast::error::timeout;
        return;
      }
      stream_.async_read_some(net::buffer(chunk), on_read);
    };
    stream_.async_read_some(net::buffer(chunk), on_read);
    run();
    return received;
  }
  bool timed_out() const { return timed_out_; }

 private:
  void run() {
    io_.restart();
    io_.run();
  }

  net::io_context io_;
  beast::tcp_stream stream_{io_};
  beast::flat_buffer buffer_;
  beast::error_code connect_error_;
  bool timed_out_ = false;
};

// The server on its own thread, as shiftcast-server runs it.
class HttpServerTest : public ::testing::Test {
 protected:
  void start(HttpLimits limits = {}) {
    HttpRoutes routes;
    routes.metrics = [this] { return metrics_text_; };
    routes.ready = [this] { return ready_.load(); };
    server_.emplace(io_, "127.0.0.1", 0, routes, limits);
    ASSERT_EQ(server_->start(), "");
    ASSERT_NE(server_->port(), 0);
    runner_ = std::async(std::launch::async, [this] { io_.run(); });
  }

  // stop() must close the listener and every connection: then run() returns by itself.
  void stop_and_expect_idle() {
    server_->stop();
    bool finished = runner_.wait_for(kTestTimeout) == std::future_status::ready;
    EXPECT_TRUE(finished) << "the io_context still had work after stop()";
    if (!finished) io_.stop();
    runner_.get();
  }

  void TearDown() override {
    if (runner_.valid()) stop_and_expect_idle();
  }

  std::uint16_t port() const { return server_->port(); }

  std::string metrics_text_ = "# HELP up Up\n# TYPE up gauge\nup 1\n";
  std::atomic<bool> ready_{false};
  net::io_context io_;
  std::optional<HttpServer> server_;
  std::future<void> runner_;
};

TEST_F(HttpServerTest, ServesMetricsHealthAndReadiness) {
  start();
  Client client(port());
  ASSERT_TRUE(client.connected());

  auto metrics = client.request(http::verb::get, "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->result(), http::status::ok);
  EXPECT_EQ(metrics->body(), metrics_text_);
  EXPECT_EQ(metrics->at(http::field::content_type), "text/plain; version=0.0.4");

  auto health = client.request(http::verb::get, "/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->result(), http::status::ok);
  EXPECT_EQ(health->body(), "ok\n");

  auto not_ready = client.request(http::verb::get, "/readyz");
  ASSERT_TRUE(not_ready);
  EXPECT_EQ(not_ready->result(), http::status::service_unavailable);
  EXPECT_EQ(not_ready->body(), "not ready\n");
  ready_ = true;
  auto ready = client.request(http::verb::get, "/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->result(), http::status::ok);
  EXPECT_EQ(ready->body(), "ready\n");
  ready_ = false;
  auto ready_again = client.request(http::verb::get, "/readyz");
  ASSERT_TRUE(ready_again);
  EXPECT_EQ(ready_again->result(), http::status::service_unavailable);

  auto query = client.request(http::verb::get, "/metrics?name=up");
  ASSERT_TRUE(query);
  EXPECT_EQ(query->result(), http::status::ok);

  auto missing = client.request(http::verb::get, "/metricsx");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->result(), http::status::not_found);

  auto post = client.request(http::verb::post, "/metrics", 11, "x=1");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->result(), http::status::method_not_allowed);
  EXPECT_EQ(post->at(http::field::allow), "GET");

  // All of the above went over one kept-alive connection.
  EXPECT_TRUE(post->keep_alive());
}

TEST_F(HttpServerTest, Http10WithoutKeepAliveIsClosedAfterTheResponse) {
  start();
  Client client(port());
  ASSERT_TRUE(client.connected());
  auto health = client.request(http::verb::get, "/healthz", 10);
  ASSERT_TRUE(health);
  EXPECT_EQ(health->body(), "ok\n");
  EXPECT_EQ(client.read_until_closed(), "");
  EXPECT_FALSE(client.timed_out());
}

TEST_F(HttpServerTest, MalformedRequestsGet400OrAreClosedAndTheServerGoesOn) {
  start();
  for (const std::string bad : {"GARBAGE\r\n\r\n", "GET / HTTP/9.9\r\n\r\n",
                                "GET /healthz HTTP/1.1\r\nbad header\r\n\r\n", "\x01\x02\x03\r\n\r\n"}) {
    Client client(port());
    ASSERT_TRUE(client.connected());
    ASSERT_TRUE(client.send_raw(bad));
    std::string reply = client.read_until_closed();
    EXPECT_FALSE(client.timed_out()) << bad;
    EXPECT_TRUE(reply.empty() || reply.starts_with("HTTP/1.1 400 ")) << reply;
  }
  Client client(port());
  auto health = client.request(http::verb::get, "/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->result(), http::status::ok);
}

TEST_F(HttpServerTest, OversizedRequestsAreRefused) {
  start();
  {
    Client client(port());
    std::string body(2 * kHttpRequestLimit, 'x');
    std::string request =
        "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
        body;
    ASSERT_TRUE(client.send_raw(request));
    std::string reply = client.read_until_closed();
    EXPECT_FALSE(client.timed_out());
    EXPECT_TRUE(reply.empty() || reply.starts_with("HTTP/1.1 413 ")) << reply.substr(0, 40);
  }
  {
    Client client(port());
    std::string request =
        "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: " + std::string(2 * kHttpRequestLimit, 'p') +
        "\r\n\r\n";
    ASSERT_TRUE(client.send_raw(request));
    std::string reply = client.read_until_closed();
    EXPECT_FALSE(client.timed_out());
    EXPECT_TRUE(reply.empty() || reply.starts_with("HTTP/1.1 413 ")) << reply.substr(0, 40);
  }
}

TEST_F(HttpServerTest, IdleConnectionsAreClosedAfterTheReadTimeout) {
  HttpLimits limits;
  limits.read_timeout = std::chrono::milliseconds(200);
  start(limits);
  // Taken before connecting, so the server's timer (started at accept) cannot start before it.
  auto t0 = std::chrono::steady_clock::now();
  Client idle(port());
  ASSERT_TRUE(idle.connected());
  EXPECT_EQ(idle.read_until_closed(), "");
  EXPECT_FALSE(idle.timed_out());  // the server closed it, well before the client's own deadline
  EXPECT_GE(std::chrono::steady_clock::now() - t0, limits.read_timeout);
}

TEST_F(HttpServerTest, AConnectionBeyondTheBoundClosesTheLongestWaitingOne) {
  HttpLimits limits;
  limits.max_connections = 2;
  start(limits);
  Client first(port());
  Client second(port());
  // A request answered on each proves the server has taken both as sessions.
  ASSERT_TRUE(first.request(http::verb::get, "/healthz"));
  ASSERT_TRUE(second.request(http::verb::get, "/healthz"));
  // The newcomer is served (a probe must always get in); the first, idle longest, made room.
  Client third(port());
  ASSERT_TRUE(third.connected());
  auto health = third.request(http::verb::get, "/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->body(), "ok\n");
  EXPECT_EQ(first.read_until_closed(), "");
  EXPECT_FALSE(first.timed_out());
  auto again = second.request(http::verb::get, "/healthz");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body(), "ok\n");
  EXPECT_EQ(server_->closed(HttpClose::kEvictedIdle), 1u);
}

TEST_F(HttpServerTest, APortInUseIsAClearError) {
  start();
  net::io_context other_io;
  HttpServer other(other_io, "127.0.0.1", port(), {});
  std::string error = other.start();
  EXPECT_NE(error.find("in use"), std::string::npos) << error;
  EXPECT_NE(error.find("127.0.0.1:" + std::to_string(port())), std::string::npos) << error;

  HttpServer bad_address(other_io, "not-an-ip", 0, {});
  EXPECT_NE(bad_address.start().find("not an IP address"), std::string::npos);
}

TEST_F(HttpServerTest, StopClosesTheListenerAndOpenConnections) {
  start();
  Client kept_alive(port());
  ASSERT_TRUE(kept_alive.request(http::verb::get, "/healthz"));
  const std::uint16_t bound = port();
  stop_and_expect_idle();
  EXPECT_EQ(kept_alive.read_until_closed(), "");
  EXPECT_FALSE(kept_alive.timed_out());
  Client late(bound);
  EXPECT_FALSE(late.connected());
}

}  // namespace
}  // namespace shiftcast
