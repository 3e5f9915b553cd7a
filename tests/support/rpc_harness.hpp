// The RPC component tests' two ends over real loopback TCP (tests/server/rpc_*_test.cpp): RpcHarness runs
// an RpcServer in-process on its own io_context threads over any MatchDirectory (the tests use
// SteppedMatchDirectory); LoopbackClient is a blocking Asio client whose every wait is bounded (async
// operations run with io_context::run_one_until a deadline), so a server that never answers fails the test
// instead of hanging it. The client frames by hand (4-byte little-endian length, then the Envelope),
// independently of protocol/rpc_frame.
//
//   RpcHarness rpc(directory, settings);
//   LoopbackClient c(rpc.port());
//   c.send(request_frame(fbb, wire::Message::ListMatches, wire::CreateListMatches(fbb), 1));
//   std::optional<Frame> f = c.read_frame();        // nothing on timeout or end of stream (c.eof())
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "protocol/envelope.hpp"
#include "protocol/wire_constants.hpp"
#include "server/metrics.hpp"
#include "server/rejections.hpp"
#include "server/rpc_server.hpp"

namespace shiftcast::rpc_test {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// Every wait on the server: generous, because a loaded test machine is slow; a correct server answers in
// microseconds, so only a broken one ever reaches it.
inline constexpr std::chrono::milliseconds kTimeout{10000};

class RpcHarness {
 public:
  RpcHarness(MatchDirectory& directory, RpcSettings settings, int threads = 2) : rejections(registry, "rpc") {
    std::vector<asio::io_context*> raw;
    for (int i = 0; i < threads; ++i) {
      contexts_.push_back(std::make_unique<asio::io_context>(1));
      guards_.push_back(asio::make_work_guard(*contexts_.back()));
      raw.push_back(contexts_.back().get());
    }
    server = std::make_unique<RpcServer>(raw, directory, std::move(settings), registry, rejections);
    const std::string error = server->start();
    EXPECT_EQ(error, "");
    for (auto& c : contexts_)
      threads_.emplace_back([c = c.get()] { c->run(); });
  }
  ~RpcHarness() {
    server->stop();
    for (auto& g : guards_)
      g.reset();
    for (auto& c : contexts_)
      c->stop();
    for (auto& t : threads_)
      t.join();
    server.reset();
  }
  RpcHarness(const RpcHarness&) = delete;
  RpcHarness& operator=(const RpcHarness&) = delete;

  std::uint16_t port() const { return server->port(); }

  MetricsRegistry registry;
  Rejections rejections;
  std::unique_ptr<RpcServer> server;

 private:
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
  std::vector<std::thread> threads_;
};

// One received frame's payload, verified on demand.
struct Frame {
  std::vector<std::uint8_t> bytes;
  const wire::Envelope* envelope() const {
    const EnvelopeView v = verify_envelope(bytes, kMaxRpcFrameBytes);
    EXPECT_EQ(v.error, wire::ErrorCode::Ok);
    return v.envelope;
  }
};

// A payload with the length prefix in front, written out by hand.
inline std::vector<std::uint8_t> framed(std::span<const std::uint8_t> payload) {
  // Sized up front: gcc 12 at -O3 otherwise sees the insert after the push_backs as an overflow (a
  // false -Wstringop-overflow).
  std::vector<std::uint8_t> out;
  out.reserve(4 + payload.size());
  const auto n = std::uint32_t(payload.size());
  for (int shift = 0; shift < 32; shift += 8)
    out.push_back(std::uint8_t(n >> shift));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

// Finishes `fbb` as an Envelope around `message` and frames it.
template <typename T>
std::vector<std::uint8_t> request_frame(flatbuffers::FlatBufferBuilder& fbb, wire::Message type,
                                        flatbuffers::Offset<T> message, std::uint64_t request_id) {
  finish_envelope(fbb, type, message.Union(), request_id);
  return framed({fbb.GetBufferPointer(), fbb.GetSize()});
}

class LoopbackClient {
 public:
  // `receive_buffer_bytes` > 0 sets SO_RCVBUF before connecting (a small window: a slow reader).
  explicit LoopbackClient(std::uint16_t port, int receive_buffer_bytes = 0) : socket_(io_) {
    socket_.open(tcp::v4());
    if (receive_buffer_bytes > 0)
      socket_.set_option(asio::socket_base::receive_buffer_size(receive_buffer_bytes));
    bool done = false;
    boost::system::error_code result;
    socket_.async_connect({asio::ip::make_address("127.0.0.1"), port},
                          [&](const boost::system::error_code& e) {
                            result = e;
                            done = true;
                          });
    connected_ = run_until([&] { return done; }, kTimeout) && !result;
  }

  bool connected() const { return connected_; }
  bool eof() const { return eof_; }

  bool send(std::span<const std::uint8_t> bytes) {
    bool done = false;
    boost::system::error_code result;
    asio::async_write(socket_, asio::buffer(bytes.data(), bytes.size()),
                      [&](const boost::system::error_code& e, std::size_t) {
                        result = e;
                        done = true;
                      });
    return run_until([&] { return done; }, kTimeout) && !result;
  }

  void shutdown_send() {
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
  }

  // The next frame, or nothing after `timeout` or at the end of the stream (eof() then says so).
  std::optional<Frame> read_frame(std::chrono::milliseconds timeout = kTimeout) {
    std::uint8_t prefix[kRpcPrefixBytes];
    if (!read_exact(prefix, sizeof prefix, timeout)) return std::nullopt;
    std::uint32_t n = 0;
    for (int i = 0; i < 4; ++i)
      n |= std::uint32_t(prefix[i]) << (8 * i);
    EXPECT_LE(n, kMaxRpcFrameBytes);
    if (n > kMaxRpcFrameBytes) return std::nullopt;
    Frame f;
    f.bytes.resize(n);
    if (!read_exact(f.bytes.data(), n, timeout)) return std::nullopt;
    return f;
  }

  // True when the server ends the stream within `timeout` without sending anything more.
  bool closed_by_server(std::chrono::milliseconds timeout = kTimeout) {
    std::uint8_t byte;
    return !read_exact(&byte, 1, timeout) && eof_;
  }

 private:
  template <typename Done>
  bool run_until(Done done, std::chrono::milliseconds timeout) {
    io_.restart();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      io_.run_one_until(deadline);
      if (io_.stopped()) io_.restart();
    }
    if (done()) return true;
    // Timed out: cancel, and let the cancelled operation complete so nothing refers to this frame.
    boost::system::error_code ignored;
    socket_.cancel(ignored);
    io_.restart();
    io_.run();
    return false;
  }

  bool read_exact(std::uint8_t* p, std::size_t n, std::chrono::milliseconds timeout) {
    bool done = false;
    boost::system::error_code result;
    asio::async_read(socket_, asio::buffer(p, n), [&](const boost::system::error_code& e, std::size_t) {
      result = e;
      done = true;
    });
    if (!run_until([&] { return done; }, timeout)) return false;
    if (result == asio::error::eof || result == asio::error::connection_reset) eof_ = true;
    return !result;
  }

  asio::io_context io_;
  tcp::socket socket_;
  bool connected_ = false;
  bool eof_ = false;
};

}  // namespace shiftcast::rpc_test
