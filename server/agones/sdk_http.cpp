#include "server/agones/sdk_http.hpp"

#include <boost/asio/post.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <utility>

namespace shiftcast {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

http::request<http::string_body> make_request(const SdkRequest& r) {
  http::request<http::string_body> req{r.method, r.target, 11};
  req.set(http::field::host, "localhost");
  req.set(http::field::user_agent, "shiftcast-server");
  req.set(http::field::accept, "application/json");
  if (r.method != http::verb::get) {
    req.set(http::field::content_type, "application/json");
    req.body() = r.body;
  }
  req.keep_alive(false);
  req.prepare_payload();
  return req;
}

// One unary exchange; keeps itself alive through its handlers.
class Call : public std::enable_shared_from_this<Call> {
 public:
  Call(asio::any_io_executor executor, SdkRequest request, std::function<void(SdkReply)> done)
      : stream_(std::move(executor)), request_(make_request(request)), done_(std::move(done)) {
    parser_.body_limit(kMaxSdkResponseBytes);
  }

  void start(const tcp::endpoint& sidecar, std::chrono::milliseconds timeout) {
    stream_.expires_after(timeout);
    stream_.async_connect(sidecar, [self = shared_from_this()](const beast::error_code& ec) {
      if (ec) return self->fail("connect: " + ec.message());
      http::async_write(self->stream_, self->request_, [self](const beast::error_code& ec, std::size_t) {
        if (ec) return self->fail("write: " + ec.message());
        self->read();
      });
    });
  }

 private:
  void read() {
    http::async_read(stream_, buffer_, parser_,
                     [self = shared_from_this()](const beast::error_code& ec, std::size_t) {
                       if (ec) return self->fail("read: " + ec.message());
                       SdkReply r;
                       r.reached = true;
                       r.status = int(self->parser_.get().result_int());
                       r.body = std::move(self->parser_.get().body());
                       beast::error_code ignored;
                       self->stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
                       self->done_(std::move(r));
                     });
  }
  void fail(std::string what) {
    SdkReply r;
    r.error = std::move(what);
    done_(std::move(r));
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response_parser<http::string_body> parser_;
  std::function<void(SdkReply)> done_;
};

}  // namespace

void sdk_call(asio::any_io_executor executor, const tcp::endpoint& sidecar, SdkRequest request,
              std::chrono::milliseconds timeout, std::function<void(SdkReply)> done) {
  std::make_shared<Call>(std::move(executor), std::move(request), std::move(done))->start(sidecar, timeout);
}

SdkWatch::SdkWatch(asio::any_io_executor executor, OnLine on_line, OnClosed on_closed)
    : stream_(std::move(executor)), on_line_(std::move(on_line)), on_closed_(std::move(on_closed)) {
  parser_.body_limit(boost::none);  // the stream has no end; each line is bounded instead
}

std::shared_ptr<SdkWatch> SdkWatch::open(asio::any_io_executor executor, const tcp::endpoint& sidecar,
                                         std::string target, std::chrono::milliseconds timeout,
                                         OnLine on_line, OnClosed on_closed) {
  auto watch = std::make_shared<SdkWatch>(std::move(executor), std::move(on_line), std::move(on_closed));
  watch->start(sidecar, std::move(target), timeout);
  return watch;
}

void SdkWatch::start(const tcp::endpoint& sidecar, std::string target, std::chrono::milliseconds timeout) {
  auto request = std::make_shared<http::request<http::string_body>>(
      make_request({http::verb::get, std::move(target), {}}));
  stream_.expires_after(timeout);
  stream_.async_connect(sidecar, [self = shared_from_this(), request](const beast::error_code& ec) {
    if (ec) return self->finish("connect: " + ec.message());
    http::async_write(self->stream_, *request, [self, request](const beast::error_code& ec, std::size_t) {
      if (ec) return self->finish("write: " + ec.message());
      http::async_read_header(self->stream_, self->buffer_, self->parser_,
                              [self](const beast::error_code& ec, std::size_t) {
                                if (ec) return self->finish("read: " + ec.message());
                                const unsigned status = self->parser_.get().result_int();
                                if (status != 200) return self->finish("HTTP " + std::to_string(status));
                                self->stream_.expires_never();
                                self->read_body();
                              });
    });
  });
}

void SdkWatch::read_body() {
  if (closed_) return;
  if (parser_.is_done()) return finish("the stream ended");
  parser_.get().body().data = chunk_.data();
  parser_.get().body().size = chunk_.size();
  // read_some: whatever arrived (a line may be a few hundred bytes), not a full buffer.
  http::async_read_some(
      stream_, buffer_, parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
        if (ec == http::error::need_buffer) ec = {};
        if (ec) return self->finish("read: " + ec.message());
        if (self->closed_) return;
        const std::size_t got = self->chunk_.size() - self->parser_.get().body().size;
        self->pending_.append(self->chunk_.data(), got);
        std::size_t start = 0;
        for (std::size_t nl; (nl = self->pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
          std::string_view line(self->pending_.data() + start, nl - start);
          if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
          if (!line.empty()) self->on_line_(line);
          if (self->closed_) return;  // the line's handler closed the watch
        }
        self->pending_.erase(0, start);
        if (self->pending_.size() > kMaxSdkResponseBytes) return self->finish("a line longer than the limit");
        self->read_body();
      });
}

void SdkWatch::close() {
  if (closed_) return;
  closed_ = true;
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
}

void SdkWatch::finish(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  beast::error_code ignored;
  stream_.socket().close(ignored);
  on_closed_(reason);
}

}  // namespace shiftcast
