// RpcChannel: one pipelined TCP connection to the server's RPC port on an Asio io_context, for the client
// simulator: admin calls while setting up, hitscan raycasts while the load runs. Requests are written as
// they are made (coalesced while a write is in flight); replies come in request order and complete their
// request with its latency. Single-threaded: every call and completion happens on the context's thread.
//
//   RpcChannel rpc(io);
//   rpc.connect(endpoint, [](const std::string& error) { ... });
//   const std::uint64_t id = rpc.next_request_id();
//   finish_envelope(fbb, wire::Message::RaycastRequest, body.Union(), id);
//   rpc.call({fbb.GetBufferPointer(), fbb.GetSize()}, id, [](const RpcReply& r) { ... r.latency_ms ... });
//
// A completion is called exactly once: with the reply, with the server's RpcError, or with
// transport_failed when the connection ended first (close() completes everything still pending).
//
// RpcBatch is the same channel for a thread with nothing else to do (the simulator's setup and
// teardown): a context of its own, run until a batch of calls is answered or a timeout passes.
//
//   RpcBatch admin(10, 32);                        // seconds per step, calls in flight
//   admin.connect(endpoint);
//   admin.run(n, [](auto& fbb, std::size_t i) { return std::pair{type, body}; },
//             [](std::size_t i, const RpcReply& r) { ... });
#pragma once

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/envelope.hpp"
#include "protocol/rpc_frame.hpp"

namespace shiftcast {

struct RpcReply {
  bool transport_failed = false;                // no reply: the connection closed or never opened
  wire::ErrorCode error = wire::ErrorCode::Ok;  // the server's RpcError code, when it refused
  std::string_view detail;                      // the RpcError's detail (valid during the completion)
  const wire::Envelope* envelope = nullptr;     // the verified reply (valid during the completion)
  double latency_ms = 0;                        // from call() to the reply's arrival

  bool ok() const { return !transport_failed && error == wire::ErrorCode::Ok; }
  // "connection_lost", or the ErrorCode's metric name ("rate_limited", ...), or "ok".
  std::string_view error_name() const;
};

class RpcChannel {
 public:
  using Completion = std::function<void(const RpcReply&)>;
  using Clock = std::chrono::steady_clock;

  explicit RpcChannel(boost::asio::io_context& context);
  RpcChannel(const RpcChannel&) = delete;
  RpcChannel& operator=(const RpcChannel&) = delete;

  // Connects; `done` gets an empty string once open, or why it could not.
  void connect(const boost::asio::ip::tcp::endpoint& server, std::function<void(const std::string&)> done);
  bool is_open() const { return open_; }
  std::uint64_t next_request_id() { return ++last_request_id_; }
  // Sends one finished Envelope whose request_id is `request_id`. On a closed channel the completion
  // runs at once with transport_failed.
  void call(std::span<const std::uint8_t> envelope, std::uint64_t request_id, Completion done);
  std::size_t pending() const { return pending_.size(); }
  std::uint64_t calls() const { return calls_; }
  // Closes the socket; every pending completion runs with transport_failed.
  void close();

 private:
  struct Pending {
    std::uint64_t request_id;
    Clock::time_point sent;
    Completion done;
  };

  void start_write();
  void start_read();
  void on_frame(std::span<const std::uint8_t> frame);

  boost::asio::ip::tcp::socket socket_;
  bool open_ = false;
  bool writing_ = false;
  std::uint64_t last_request_id_ = 0;
  std::uint64_t calls_ = 0;
  std::vector<std::uint8_t> queued_;  // frames waiting for the write in flight
  std::vector<std::uint8_t> writing_buffer_;
  std::array<std::uint8_t, 64 * 1024> read_buffer_{};
  FrameReader reader_;
  std::deque<Pending> pending_;  // in request order, as the server answers
};

}  // namespace shiftcast

namespace shiftcast {

// Runs `context` (idle otherwise) until `channel` connected or `timeout_seconds` passed; the error.
std::string connect_blocking(boost::asio::io_context& context, RpcChannel& channel,
                             const boost::asio::ip::tcp::endpoint& server, double timeout_seconds);

class RpcBatch {
 public:
  RpcBatch(double timeout_seconds, std::size_t window)
      : timeout_(timeout_seconds), window_(window), channel_(context_) {}

  std::string connect(const boost::asio::ip::tcp::endpoint& server) {
    return connect_blocking(context_, channel_, server, timeout_);
  }
  bool is_open() const { return channel_.is_open(); }
  // A fresh connection: the server closes RPC connections idle for its idle timeout (30 s by default),
  // so a batch after a long pause (the teardown after a load run) must not trust the old one.
  std::string reconnect(const boost::asio::ip::tcp::endpoint& server) {
    channel_.close();
    context_.restart();
    context_.run();  // the old socket's cancelled read completes here, before the new socket exists
    return connect(server);
  }

  // Request i is built by make(fbb, i), which returns {message type, body}; its reply goes to
  // done(i, reply). At most `window` calls in flight. An error string when the batch did not finish.
  template <typename Make, typename Done>
  std::string run(std::size_t count, Make make, Done done) {
    std::size_t sent = 0;
    std::size_t answered = 0;
    const auto send_more = [&] {
      while (sent < count && sent - answered < window_) {
        const std::size_t i = sent++;
        fbb_.Clear();
        const auto [type, body] = make(fbb_, i);
        const std::uint64_t id = channel_.next_request_id();
        finish_envelope(fbb_, type, body, id);
        channel_.call({fbb_.GetBufferPointer(), fbb_.GetSize()}, id, [&, i](const RpcReply& reply) {
          ++answered;
          done(i, reply);
        });
      }
    };
    const auto deadline = RpcChannel::Clock::now() + std::chrono::duration_cast<RpcChannel::Clock::duration>(
                                                         std::chrono::duration<double>(timeout_));
    for (send_more(); answered < count && RpcChannel::Clock::now() < deadline; send_more()) {
      if (context_.stopped()) context_.restart();
      context_.run_one_until(deadline);
    }
    if (answered == count) return "";
    channel_.close();  // completes what is left as connection_lost
    return "the RPC did not answer within " + std::to_string(timeout_) + " s";
  }

 private:
  double timeout_;
  std::size_t window_;
  boost::asio::io_context context_;
  RpcChannel channel_;
  flatbuffers::FlatBufferBuilder fbb_{256};
};

}  // namespace shiftcast
