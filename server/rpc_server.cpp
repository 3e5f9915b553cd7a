#include "server/rpc_server.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
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
        acceptor(asio::make_strand(*contexts[0])) {}

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
      // A transient failure (out of descriptors, a connection reset before it was taken): keep accepting.
      spdlog::debug("rpc: accept failed: {}", error.message());
    } else if (shared->stopping.load()) {
      boost::system::error_code ignored;
      socket.close(ignored);
    } else if (shared->open.load() >= shared->settings.max_connections) {
      turn_away(std::move(socket));
    } else {
      shared->open.fetch_add(1);
      std::uint64_t id = 0;
      {
        std::lock_guard lock(shared->mutex);
        id = shared->next_connection++;
      }
      auto connection = std::make_shared<RpcConnection>(std::move(socket), shared, id);
      {
        std::lock_guard lock(shared->mutex);
        shared->connections[id] = connection;
      }
      connection->start();
    }
    accept();
  }

  // One RpcError TooManyConnections, then the socket closes.
  void turn_away(RpcConnection::Socket socket) {
    boost::system::error_code ec;
    const auto remote = socket.remote_endpoint(ec);
    const std::string peer =
        ec ? "unknown" : fmt::format("{}:{}", remote.address().to_string(), remote.port());
    const std::string detail =
        fmt::format("{} connections open, the limit", shared->settings.max_connections);
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
  asio::post(listener_->acceptor.get_executor(), [l = listener_] { l->accept(); });
  spdlog::info("rpc: listening on {}:{}", s.bind_address, port_);
  return {};
}

void RpcServer::stop() {
  if (shared_->stopping.exchange(true)) return;
  if (listener_ != nullptr) {
    asio::post(listener_->acceptor.get_executor(), [l = listener_] {
      boost::system::error_code ignored;
      l->acceptor.close(ignored);
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

}  // namespace shiftcast
