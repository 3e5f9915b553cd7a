#include "server/rpc_server.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <utility>

#include "protocol/envelope.hpp"
#include "protocol/rpc_frame.hpp"
#include "server/rpc_connection.hpp"

namespace shiftcast {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// The accept loop, shared with its pending handlers so that they never outlive what they use.
struct RpcServer::Listener : std::enable_shared_from_this<RpcServer::Listener> {
  Listener(std::vector<asio::io_context*> contexts_in, std::shared_ptr<RpcShared> shared_in)
      : contexts(std::move(contexts_in)),
        shared(std::move(shared_in)),
        acceptor(asio::make_strand(*contexts[0])),
        retry_timer(acceptor.get_executor()),
        timeout_timer(acceptor.get_executor()) {}

  static std::chrono::steady_clock::duration seconds(double s) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
  }

  void accept() {
    asio::io_context& next = *contexts[next_context];
    next_context = (next_context + 1) % contexts.size();
    acceptor.async_accept(
        asio::make_strand(next),
        [self = shared_from_this()](const boost::system::error_code& error, RpcConnection::Socket socket) {
          self->on_accept(error, std::move(socket));
        });
  }

  void on_accept(const boost::system::error_code& error, RpcConnection::Socket socket) {
    if (error == asio::error::operation_aborted || !acceptor.is_open()) return;
    if (error) {
      // Out of descriptors (EMFILE, ENFILE) or memory lasts until something closes; accepting again at
      // once would fail again at once, for ever, on a whole thread. Try again after a pause instead.
      shared->metrics.accept_failures->add();
      spdlog::warn("rpc: accept failed: {}; retrying in {} s", error.message(),
                   shared->settings.accept_retry_s);
      retry_timer.expires_after(seconds(shared->settings.accept_retry_s));
      retry_timer.async_wait([self = shared_from_this()](const boost::system::error_code& e) {
        if (!e && self->acceptor.is_open()) self->accept();
      });
      return;
    }
    if (shared->stopping.load()) {
      boost::system::error_code ignored;
      socket.close(ignored);
    } else if (shared->open.load() >= shared->settings.max_connections) {
      shared->metrics.refused_connections->add();
      turn_away(std::move(socket),
                fmt::format("{} connections open, the limit", shared->settings.max_connections));
    } else {
      boost::system::error_code ec;
      const auto remote = socket.remote_endpoint(ec);
      const std::string address = ec ? "unknown" : remote.address().to_string();
      std::uint64_t id = 0;
      bool admitted = false;
      {
        std::lock_guard lock(shared->mutex);
        int& from_address = shared->per_address[address];
        if (from_address < shared->settings.max_connections_per_address) {
          ++from_address;
          admitted = true;
          id = shared->next_connection++;
        } else if (from_address == 0) {
          shared->per_address.erase(address);
        }
      }
      if (!admitted) {
        shared->metrics.refused_per_address->add();
        turn_away(std::move(socket), fmt::format("{} connections open from {}, the limit per address",
                                                 shared->settings.max_connections_per_address, address));
      } else {
        shared->open.fetch_add(1);
        auto connection = std::make_shared<RpcConnection>(std::move(socket), shared, id, address);
        {
          std::lock_guard lock(shared->mutex);
          shared->connections[id] = connection;
        }
        connection->start();
      }
    }
    accept();
  }

  // Every timeout_check_s: each connection looks at its own deadlines on its own strand.
  void watch_timeouts() {
    timeout_timer.expires_after(seconds(shared->settings.timeout_check_s));
    timeout_timer.async_wait([self = shared_from_this()](const boost::system::error_code& e) {
      if (e || !self->acceptor.is_open()) return;
      check_timeouts(*self->shared);
      self->watch_timeouts();
    });
  }

  static void check_timeouts(RpcShared& shared) {
    std::vector<std::shared_ptr<RpcConnection>> open;
    {
      std::lock_guard lock(shared.mutex);
      for (const auto& [id, weak] : shared.connections) {
        if (auto c = weak.lock()) open.push_back(std::move(c));
      }
    }
    for (const auto& c : open)
      c->check_timeouts();
  }

  // One RpcError TooManyConnections, then the socket closes.
  void turn_away(RpcConnection::Socket socket, const std::string& detail) {
    boost::system::error_code ec;
    const auto remote = socket.remote_endpoint(ec);
    const std::string peer =
        ec ? "unknown" : fmt::format("{}:{}", remote.address().to_string(), remote.port());
    shared->rejections.reject(wire::ErrorCode::TooManyConnections, peer, detail);
    flatbuffers::FlatBufferBuilder fbb;
    const auto text = fbb.CreateString(detail);
    finish_envelope(fbb, wire::Message::RpcError,
                    wire::CreateRpcError(fbb, wire::ErrorCode::TooManyConnections, text).Union());
    auto frame = std::make_shared<std::vector<std::uint8_t>>();
    append_frame(*frame, {fbb.GetBufferPointer(), fbb.GetSize()});
    auto s = std::make_shared<RpcConnection::Socket>(std::move(socket));
    asio::async_write(*s, asio::buffer(*frame), [s, frame](const boost::system::error_code&, std::size_t) {
      boost::system::error_code ignored;
      s->shutdown(tcp::socket::shutdown_both, ignored);
      s->close(ignored);
    });
  }

  std::vector<asio::io_context*> contexts;
  std::shared_ptr<RpcShared> shared;
  asio::basic_socket_acceptor<tcp, asio::strand<asio::io_context::executor_type>> acceptor;
  asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>,
                             asio::strand<asio::io_context::executor_type>>
      retry_timer;
  asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>,
                             asio::strand<asio::io_context::executor_type>>
      timeout_timer;
  std::size_t next_context = 0;
};

RpcServer::RpcServer(std::vector<asio::io_context*> rpc_contexts, MatchDirectory& directory,
                     RpcSettings settings, MetricsRegistry& registry, Rejections& rejections)
    : contexts_(std::move(rpc_contexts)),
      shared_(std::make_shared<RpcShared>(directory, std::move(settings), registry, rejections)) {}

RpcServer::~RpcServer() {
  stop();
}

std::string RpcServer::start() {
  if (contexts_.empty()) return "rpc: no io_context to run on";
  if (listener_ != nullptr) return "rpc: already started";
  const RpcSettings& s = shared_->settings;
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(s.bind_address, ec);
  if (ec) return fmt::format("rpc: bind address '{}': {}", s.bind_address, ec.message());
  auto listener = std::make_shared<Listener>(contexts_, shared_);
  const tcp::endpoint endpoint(address, s.port);
  auto& acceptor = listener->acceptor;
  if (acceptor.open(endpoint.protocol(), ec); ec) return fmt::format("rpc: open: {}", ec.message());
  if (acceptor.set_option(tcp::acceptor::reuse_address(true), ec); ec) {
    return fmt::format("rpc: SO_REUSEADDR: {}", ec.message());
  }
  if (acceptor.bind(endpoint, ec); ec) {
    return fmt::format("rpc: bind {}:{}: {}", s.bind_address, s.port, ec.message());
  }
  if (acceptor.listen(asio::socket_base::max_listen_connections, ec); ec) {
    return fmt::format("rpc: listen on {}:{}: {}", s.bind_address, s.port, ec.message());
  }
  port_ = acceptor.local_endpoint(ec).port();
  if (ec) return fmt::format("rpc: local endpoint: {}", ec.message());
  listener_ = std::move(listener);
  // The first accept starts on the acceptor's strand like every later one.
  asio::post(listener_->acceptor.get_executor(), [l = listener_] {
    l->accept();
    l->watch_timeouts();
  });
  spdlog::info("rpc: listening on {}:{}", s.bind_address, port_);
  return {};
}

void RpcServer::stop() {
  if (shared_->stopping.exchange(true)) return;
  if (listener_ != nullptr) {
    asio::post(listener_->acceptor.get_executor(), [l = listener_] {
      boost::system::error_code ignored;
      l->acceptor.close(ignored);
      l->retry_timer.cancel();
      l->timeout_timer.cancel();
    });
  }
  std::vector<std::shared_ptr<RpcConnection>> open;
  {
    std::lock_guard lock(shared_->mutex);
    for (const auto& [id, weak] : shared_->connections) {
      if (auto c = weak.lock()) open.push_back(std::move(c));
    }
  }
  for (const auto& c : open)
    c->shutdown();
}

int RpcServer::connections() const {
  return shared_->open.load();
}

void RpcServer::check_timeouts() {
  Listener::check_timeouts(*shared_);
}

}  // namespace shiftcast
