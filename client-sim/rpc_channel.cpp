#include "client-sim/rpc_channel.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>
#include <memory>
#include <utility>

namespace shiftcast {

namespace asio = boost::asio;
using asio::ip::tcp;

std::string_view RpcReply::error_name() const {
  if (transport_failed) return "connection_lost";
  return to_string(error);
}

RpcChannel::RpcChannel(asio::io_context& context) : socket_(context) {}

void RpcChannel::connect(const tcp::endpoint& server, std::function<void(const std::string&)> done) {
  // A channel may be connected again after it closed: nothing of the old stream carries over.
  reader_ = FrameReader();
  queued_.clear();
  socket_.async_connect(server, [this, server, done = std::move(done)](const boost::system::error_code& ec) {
    if (ec) {
      done("cannot connect to the RPC at " + server.address().to_string() + ":" +
           std::to_string(server.port()) + ": " + ec.message());
      return;
    }
    boost::system::error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);  // shots are small and latency is what we measure
    open_ = true;
    start_read();
    done("");
  });
}

void RpcChannel::call(std::span<const std::uint8_t> envelope, std::uint64_t request_id, Completion done) {
  if (!open_) {
    RpcReply failed;
    failed.transport_failed = true;
    done(failed);
    return;
  }
  ++calls_;
  append_frame(queued_, envelope);
  pending_.push_back({request_id, Clock::now(), std::move(done)});
  if (!writing_) start_write();
}

void RpcChannel::start_write() {
  writing_ = true;
  writing_buffer_.clear();
  writing_buffer_.swap(queued_);
  asio::async_write(socket_, asio::buffer(writing_buffer_),
                    [this](const boost::system::error_code& ec, std::size_t) {
                      writing_ = false;
                      if (ec) {
                        close();
                        return;
                      }
                      if (!queued_.empty() && open_) start_write();
                    });
}

void RpcChannel::start_read() {
  socket_.async_read_some(asio::buffer(read_buffer_),
                          [this](const boost::system::error_code& ec, std::size_t n) {
                            if (ec) {
                              close();
                              return;
                            }
                            reader_.feed({read_buffer_.data(), n});
                            while (open_) {
                              const std::optional<std::span<const std::uint8_t>> frame = reader_.next();
                              if (!frame) break;
                              on_frame(*frame);
                            }
                            // A length prefix over the limit: the stream cannot be resynchronised.
                            if (reader_.error() != wire::ErrorCode::Ok) close();
                            if (open_) start_read();
                          });
}

void RpcChannel::on_frame(std::span<const std::uint8_t> frame) {
  const EnvelopeView view = verify_envelope(frame, kMaxRpcFrameBytes);
  if (view.error != wire::ErrorCode::Ok || pending_.empty()) return;  // nothing we asked for
  const std::uint64_t id = view.envelope->request_id();
  // Replies come in request order, so the answer is almost always the oldest request.
  auto it = pending_.begin();
  while (it != pending_.end() && it->request_id != id)
    ++it;
  if (it == pending_.end()) return;
  Pending p = std::move(*it);
  pending_.erase(it);

  RpcReply reply;
  reply.latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - p.sent).count();
  if (const wire::RpcError* error = view.envelope->message_as_RpcError()) {
    reply.error = error->code() == wire::ErrorCode::Ok ? wire::ErrorCode::Internal : error->code();
    if (error->detail() != nullptr) reply.detail = error->detail()->string_view();
  } else {
    reply.envelope = view.envelope;
  }
  p.done(reply);
}

void RpcChannel::close() {
  if (open_ || socket_.is_open()) {
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }
  open_ = false;
  std::deque<Pending> abandoned;
  abandoned.swap(pending_);
  RpcReply failed;
  failed.transport_failed = true;
  for (Pending& p : abandoned) {
    failed.latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - p.sent).count();
    p.done(failed);
  }
}

std::string connect_blocking(asio::io_context& context, RpcChannel& channel, const tcp::endpoint& server,
                             double timeout_seconds) {
  // Shared with the completion, which outlives this call when the connection times out.
  struct Outcome {
    bool done = false;
    std::string error;
  };
  const auto outcome = std::make_shared<Outcome>();
  channel.connect(server, [outcome](const std::string& e) {
    outcome->error = e;
    outcome->done = true;
  });
  const auto deadline = RpcChannel::Clock::now() + std::chrono::duration_cast<RpcChannel::Clock::duration>(
                                                       std::chrono::duration<double>(timeout_seconds));
  while (!outcome->done && RpcChannel::Clock::now() < deadline) {
    if (context.stopped()) context.restart();
    context.run_one_until(deadline);
  }
  if (!outcome->done) {
    channel.close();
    return "cannot connect to the RPC at " + server.address().to_string() + ":" +
           std::to_string(server.port()) + ": timed out";
  }
  return outcome->error;
}

}  // namespace shiftcast
