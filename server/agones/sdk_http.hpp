// The Agones SDK sidecar's REST API as HTTP/1.1 exchanges (Boost.Beast), one connection per exchange
// to localhost:$AGONES_SDK_HTTP_PORT, the way grpc-gateway serves it (sdks/swagger/sdk.swagger.json).
// Two shapes: a unary call (request, response, done) and the watch stream (GET /watch/gameserver: a
// response whose body never ends, one JSON object per line). Everything runs on the executor given
// (a strand of the RPC threads): no call ever blocks a thread, let alone a match worker. Outcomes are
// values (SdkReply, a closing reason), never exceptions.
//
//   sdk_call(strand, endpoint, {http::verb::post, "/ready", "{}"}, 2s, [](SdkReply r) { ... });
//   auto watch = SdkWatch::open(strand, endpoint, "/watch/gameserver", 2s, on_line, on_closed);
//   watch->close();   // on the executor: no callback runs afterwards
#pragma once

#include <array>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/verb.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace shiftcast {

// A response larger than this (a unary call's, or one line of the watch) is an error: the sidecar's
// largest answer is a GameServer, a few kilobytes.
inline constexpr std::size_t kMaxSdkResponseBytes = 1 << 20;

struct SdkRequest {
  boost::beast::http::verb method = boost::beast::http::verb::post;
  std::string target;  // "/ready"
  std::string body;    // JSON; empty for a GET
};

struct SdkReply {
  bool reached = false;  // a whole response arrived
  int status = 0;        // its HTTP status
  std::string body;
  std::string error;  // !reached: what went wrong (connection refused, timeout, ...)
  bool ok() const { return reached && status >= 200 && status < 300; }
};

// Connects, sends, reads the whole response, closes; `done` runs once on `executor`, within `timeout`.
void sdk_call(boost::asio::any_io_executor executor, const boost::asio::ip::tcp::endpoint& sidecar,
              SdkRequest request, std::chrono::milliseconds timeout, std::function<void(SdkReply)> done);

class SdkWatch : public std::enable_shared_from_this<SdkWatch> {
 public:
  using OnLine = std::function<void(std::string_view line)>;
  using OnClosed = std::function<void(const std::string& reason)>;

  // Connects and sends the GET; `on_line` runs for every non-empty line of the body, `on_closed` once
  // when the stream ends or fails (connect and header within `timeout`; the body may be quiet for ever).
  static std::shared_ptr<SdkWatch> open(boost::asio::any_io_executor executor,
                                        const boost::asio::ip::tcp::endpoint& sidecar, std::string target,
                                        std::chrono::milliseconds timeout, OnLine on_line,
                                        OnClosed on_closed);
  // On the executor: closes the connection; neither callback runs afterwards.
  void close();

  SdkWatch(boost::asio::any_io_executor executor, OnLine on_line, OnClosed on_closed);

 private:
  void start(const boost::asio::ip::tcp::endpoint& sidecar, std::string target,
             std::chrono::milliseconds timeout);
  void read_body();
  void finish(const std::string& reason);

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  boost::beast::http::response_parser<boost::beast::http::buffer_body> parser_;
  std::array<char, 4096> chunk_{};
  std::string pending_;  // body bytes after the last newline
  OnLine on_line_;
  OnClosed on_closed_;
  bool closed_ = false;
};

}  // namespace shiftcast
