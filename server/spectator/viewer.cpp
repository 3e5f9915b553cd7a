#include "server/spectator/viewer.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/socket_base.hpp>
#include <boost/beast/websocket.hpp>

namespace shiftcast {

namespace beast = boost::beast;
namespace websocket = beast::websocket;

const char* to_string(ViewerEnd end) {
  switch (end) {
    case ViewerEnd::kPeerClosed:
      return "peer_closed";
    case ViewerEnd::kSlow:
      return "slow";
    case ViewerEnd::kEnded:
      return "ended";
  }
  return "unknown";
}

Viewer::Viewer(boost::asio::ip::tcp::socket socket, std::size_t byte_budget,
               std::function<void(ViewerEnd)> on_end)
    : ws_(std::move(socket)), byte_budget_(byte_budget), on_end_(std::move(on_end)) {
  beast::error_code ec;
  beast::get_lowest_layer(ws_).socket().set_option(
      boost::asio::socket_base::send_buffer_size(kViewerSocketBuffer), ec);
  // Viewers send nothing worth reading; a big message from one is a misbehaving peer.
  ws_.read_message_max(4096);
  // A frame is one WebSocket message in one WebSocket frame: no fragment headers to parse.
  ws_.auto_fragment(false);
}

void Viewer::start(beast::http::request<beast::http::string_body> upgrade,
                   std::shared_ptr<const ViewerMessage> hello) {
  ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  ws_.set_option(websocket::stream_base::decorator(
      [](websocket::response_type& response) { response.set(beast::http::field::server, "shiftcast"); }));
  queue_.push_back(hello);
  queued_bytes_ += hello->bytes.size();
  ws_.async_accept(upgrade, [self = shared_from_this()](beast::error_code ec) {
    if (self->ended_) return;
    if (ec) return self->end(ViewerEnd::kPeerClosed);
    self->accepted_ = true;
    self->read_loop();
    self->write_next();
  });
}

void Viewer::send(std::shared_ptr<const ViewerMessage> message) {
  if (ended_ || finishing_) return;
  if (queued_bytes_ + message->bytes.size() > byte_budget_) return end(ViewerEnd::kSlow);
  queued_bytes_ += message->bytes.size();
  queue_.push_back(std::move(message));
  write_next();
}

void Viewer::finish() {
  if (ended_ || finishing_) return;
  finishing_ = true;
  write_next();
}

void Viewer::write_next() {
  if (!accepted_ || writing_ || ended_) return;
  if (queue_.empty()) {
    if (!finishing_) return;
    writing_ = true;
    ws_.async_close(websocket::close_code::going_away, [self = shared_from_this()](beast::error_code) {
      self->writing_ = false;
      self->end(ViewerEnd::kEnded);
    });
    return;
  }
  writing_ = true;
  const ViewerMessage& m = *queue_.front();
  ws_.text(m.text);
  ws_.async_write(boost::asio::buffer(m.bytes),
                  [self = shared_from_this()](beast::error_code ec, std::size_t) {
                    self->writing_ = false;
                    if (self->ended_) return;
                    if (ec) return self->end(ViewerEnd::kPeerClosed);
                    self->queued_bytes_ -= self->queue_.front()->bytes.size();
                    self->queue_.pop_front();
                    self->write_next();
                  });
}

// Reading keeps the WebSocket's control frames (ping, close) answered; whatever data a viewer sends is
// dropped unread.
void Viewer::read_loop() {
  ws_.async_read(read_buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (self->ended_) return;
    if (ec) return self->end(self->finishing_ ? ViewerEnd::kEnded : ViewerEnd::kPeerClosed);
    self->read_buffer_.clear();
    self->read_loop();
  });
}

void Viewer::end(ViewerEnd why) {
  if (ended_) return;
  ended_ = true;
  queue_.clear();
  queued_bytes_ = 0;
  beast::error_code ec;
  // A viewer cut off for being slow has a full send buffer its peer will not take: reset the connection
  // (linger 0) so the kernel drops it now instead of retrying into a closed window.
  if (why == ViewerEnd::kSlow)
    beast::get_lowest_layer(ws_).socket().set_option(boost::asio::socket_base::linger(true, 0), ec);
  beast::get_lowest_layer(ws_).socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
  beast::get_lowest_layer(ws_).socket().close(ec);
  if (on_end_) on_end_(why);
}

}  // namespace shiftcast
