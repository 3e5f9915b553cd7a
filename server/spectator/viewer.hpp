// Viewer: one browser watching one match over a WebSocket (docs/server.md, "Pictures"). It only ever
// sends: the feed hands it shared messages; it queues them and writes one at a time. A viewer whose queue
// would pass its byte budget is cut off at once (a slow browser never holds memory or a tick), and the
// socket's own send buffer is kept small so the budget is what bounds it.
//
//   auto v = std::make_shared<Viewer>(std::move(socket), budget, on_closed);   // on the feed's strand
//   v->start(std::move(upgrade_request), hello);
//   v->send(frame);   // the feed's strand; false when it was cut off or closed
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

namespace shiftcast {

struct ViewerMessage {
  std::string bytes;
  bool text = false;  // a JSON text message, else a binary frame
};

enum class ViewerEnd : std::uint8_t {
  kPeerClosed,  // the browser closed or the connection failed
  kSlow,        // over its byte budget: cut off
  kEnded,       // the match ended or the server stops
};
const char* to_string(ViewerEnd end);

// The socket's send buffer: small, so a peer that stops reading fills the viewer's own queue (and meets
// the budget) within a few frames instead of hiding megabytes in the kernel.
inline constexpr int kViewerSocketBuffer = 64 * 1024;

class Viewer : public std::enable_shared_from_this<Viewer> {
 public:
  // `socket` must be bound to the feed's strand; `on_end` runs once on it when the viewer is gone.
  Viewer(boost::asio::ip::tcp::socket socket, std::size_t byte_budget, std::function<void(ViewerEnd)> on_end);
  void start(boost::beast::http::request<boost::beast::http::string_body> upgrade,
             std::shared_ptr<const ViewerMessage> hello);
  // Queues a message (dropped once closed). Cuts the viewer off when the queue would pass the budget.
  void send(std::shared_ptr<const ViewerMessage> message);
  // Closes with a WebSocket close frame after what is queued (the match ended, the server stops).
  void finish();
  bool open() const { return !ended_; }
  std::size_t queued_bytes() const { return queued_bytes_; }

 private:
  void write_next();
  void read_loop();
  void end(ViewerEnd why);

  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  std::size_t byte_budget_;
  std::function<void(ViewerEnd)> on_end_;
  std::deque<std::shared_ptr<const ViewerMessage>> queue_;
  std::size_t queued_bytes_ = 0;
  bool accepted_ = false;
  bool writing_ = false;
  bool finishing_ = false;
  bool ended_ = false;
  boost::beast::flat_buffer read_buffer_;
};

}  // namespace shiftcast
