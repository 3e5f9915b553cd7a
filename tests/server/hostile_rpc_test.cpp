// The RPC listener against hostile clients, end to end: the real shiftcast-server on loopback, attacked
// the ways issue 12's hostile-client run did (slow and silent sockets, partial frames, a pipeliner that
// never reads, one address taking every slot, key guessing, reads without a key, batches whose work is
// far beyond their old price, floods of refused frames), each test checking the stated limit
// (docs/server.md, "Under abuse: the RPC listener") and that a legitimate client is still served.
//
// Clients come from several loopback source addresses (127.0.0.x all reach a server bound to
// 127.0.0.1), so per-address limits are exercised for real. Waits are bounded polls on sockets; the only
// real-time waits are the server's own timeouts, configured to a fraction of a second here.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/rpc_frame.hpp"
#include "tests/support/server_fixture.hpp"

namespace shiftcast {
namespace {

using std::chrono::milliseconds;

// A raw TCP client from a chosen loopback source address.
class RawClient {
 public:
  RawClient(std::uint16_t port, const char* source = "127.0.0.1", int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (receive_buffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &local.sin_addr);
    sockaddr_in remote{};
    remote.sin_family = AF_INET;
    remote.sin_port = htons(port);
    remote.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
        ::connect(fd_, reinterpret_cast<sockaddr*>(&remote), sizeof remote) != 0) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  bool send(std::span<const std::uint8_t> bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += std::size_t(n);
    }
    return true;
  }
  bool send(flatbuffers::FlatBufferBuilder& finished) {
    std::vector<std::uint8_t> frame;
    append_frame(frame, {finished.GetBufferPointer(), finished.GetSize()});
    return send(frame);
  }

  // The next frame's payload; nothing after `timeout` or at the end of the stream (eof() says which).
  std::optional<std::vector<std::uint8_t>> receive(milliseconds timeout = milliseconds(10000)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (buffer_.size() >= kRpcPrefixBytes) {
        const std::uint32_t n = std::uint32_t(buffer_[0]) | std::uint32_t(buffer_[1]) << 8 |
                                std::uint32_t(buffer_[2]) << 16 | std::uint32_t(buffer_[3]) << 24;
        if (buffer_.size() >= kRpcPrefixBytes + n) {
          std::vector<std::uint8_t> payload(buffer_.begin() + kRpcPrefixBytes,
                                            buffer_.begin() + kRpcPrefixBytes + n);
          buffer_.erase(buffer_.begin(), buffer_.begin() + kRpcPrefixBytes + n);
          return payload;
        }
      }
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || fd_ < 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, int(left.count())) <= 0) return std::nullopt;
      std::uint8_t chunk[65536];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) {
        eof_ = true;
        return std::nullopt;
      }
      buffer_.insert(buffer_.end(), chunk, chunk + n);
    }
  }
  // The code of the next frame if it is an RpcError, Ok if it is anything else, nothing if none came.
  std::optional<wire::ErrorCode> receive_code(milliseconds timeout = milliseconds(10000)) {
    const auto bytes = receive(timeout);
    if (!bytes) return std::nullopt;
    const EnvelopeView v = verify_envelope(*bytes, kMaxRpcFrameBytes);
    if (v.error != wire::ErrorCode::Ok) return v.error;
    last_ = *bytes;
    const wire::RpcError* e = v.envelope->message_as_RpcError();
    return e == nullptr ? wire::ErrorCode::Ok : e->code();
  }
  const wire::Envelope* last() const { return wire::GetEnvelope(last_.data()); }
  // True when the server closes the stream within `timeout` (anything it sends first is discarded).
  bool closed_by_server(milliseconds timeout = milliseconds(10000)) {
    while (receive(timeout)) {
    }
    return eof_;
  }
  bool eof() const { return eof_; }

 private:
  int fd_ = -1;
  bool eof_ = false;
  std::vector<std::uint8_t> buffer_;
  std::vector<std::uint8_t> last_;
};

std::string rpc_section(const std::string& keys) {
  return "[rpc]\n" + keys + "\n";
}

void list_matches(flatbuffers::FlatBufferBuilder& fbb, const std::string& key, std::uint64_t id) {
  const auto body =
      key.empty() ? wire::CreateListMatches(fbb) : wire::CreateListMatches(fbb, fbb.CreateString(key));
  finish_envelope(fbb, wire::Message::ListMatches, body.Union(), id);
}

// A ListMatches round trip with the service key: the client is served.
bool served(RawClient& c, std::uint64_t id = 1) {
  flatbuffers::FlatBufferBuilder fbb;
  list_matches(fbb, dev_service_key(), id);
  return c.send(fbb) && c.receive_code() == wire::ErrorCode::Ok &&
         c.last()->message_as_ListMatchesReply() != nullptr;
}

// The first 14 bytes of a frame announcing 100: what the issue's slowloris sockets sent.
std::vector<std::uint8_t> partial_frame() {
  std::vector<std::uint8_t> bytes{100, 0, 0, 0};
  bytes.resize(14, 0xab);
  return bytes;
}

class HostileRpcTest : public ServerTest {
 protected:
  double rpc_metric(const std::string& name, const std::string& labels = "") {
    return metric(name + (labels.empty() ? "" : "{" + labels + "}"));
  }
};

// Finding: 256 sockets that sent 14 bytes were held for ever and locked out every legitimate client.
TEST_F(HostileRpcTest, SlowAndSilentSocketsAreTimedOutAndTheirSlotsComeBack) {
  start(test_server_config("", rpc_section("max_connections = 4\nmax_connections_per_address = 3\n"
                                           "idle_timeout_s = 0.3\nread_timeout_s = 0.3\n")));
  const std::uint16_t port = server_.ports().rpc;
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 3; ++i) {
    slow.push_back(std::make_unique<RawClient>(port, "127.0.0.1"));
    ASSERT_TRUE(slow.back()->send(partial_frame()));
  }
  RawClient silent(port, "127.0.0.2");
  ASSERT_TRUE(silent.connected());
  // Every slot is taken: a newcomer is turned away (this is what locked everyone out before).
  RawClient turned_away(port, "127.0.0.3");
  EXPECT_EQ(turned_away.receive_code(), wire::ErrorCode::TooManyConnections);
  // Within the timeouts (0.3 s, checked every 0.25 s) each is told why and closed.
  for (auto& c : slow) {
    EXPECT_EQ(c->receive_code(milliseconds(3000)), wire::ErrorCode::Timeout);
    EXPECT_TRUE(c->closed_by_server(milliseconds(3000)));
  }
  EXPECT_EQ(silent.receive_code(milliseconds(3000)), wire::ErrorCode::Timeout);
  EXPECT_TRUE(silent.closed_by_server(milliseconds(3000)));
  RawClient legitimate(port, "127.0.0.3");
  EXPECT_TRUE(served(legitimate));
  EXPECT_EQ(rpc_metric("shiftcast_rpc_closed_total", "reason=\"read_timeout\""), 3);
  EXPECT_EQ(rpc_metric("shiftcast_rpc_closed_total", "reason=\"idle_timeout\""), 1);
  // The slow ones are refusals; the silent one is an idle client closed, not refused.
  EXPECT_EQ(metric(rejected("rpc", "timeout")), 3);
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(HostileRpcTest, OneAddressCannotTakeEverySlot) {
  start(test_server_config("", rpc_section("max_connections = 6\nmax_connections_per_address = 2\n")));
  const std::uint16_t port = server_.ports().rpc;
  RawClient a(port, "127.0.0.1"), b(port, "127.0.0.1");
  EXPECT_TRUE(served(a));
  EXPECT_TRUE(served(b));
  RawClient third(port, "127.0.0.1");
  EXPECT_EQ(third.receive_code(), wire::ErrorCode::TooManyConnections);
  EXPECT_TRUE(third.closed_by_server());
  RawClient other(port, "127.0.0.2");
  EXPECT_TRUE(served(other));
  EXPECT_EQ(rpc_metric("shiftcast_rpc_refused_connections_total", "limit=\"address\""), 1);
  EXPECT_EQ(server_.stop(), 0);
}

// Finding: partial frames pinned ~3 MiB per connection and a non-reading pipeliner ~9 MiB of backlog,
// with no bound over all connections.
TEST_F(HostileRpcTest, PartialFramesAndANonReaderAreHeldToTheMemoryBudget) {
  constexpr std::size_t kBudget = 262144;
  start(test_server_config(
      "", rpc_section("max_frame_bytes = 65536\nconnection_memory_bytes = 131072\nmemory_budget_bytes = " +
                      std::to_string(kBudget) + "\nwrite_timeout_s = 0.5\nread_timeout_s = 30\n")));
  const std::uint16_t port = server_.ports().rpc;
  // Six connections from six addresses each start a 65000-byte frame and send 60000 bytes of it: 360 KB
  // would be held, the budget is 256 KiB. Those that do not fit are told TooLarge and closed.
  std::vector<std::unique_ptr<RawClient>> partial;
  for (int i = 0; i < 6; ++i) {
    const std::string source = "127.0.0." + std::to_string(10 + i);
    partial.push_back(std::make_unique<RawClient>(port, source.c_str()));
    std::vector<std::uint8_t> bytes{0xe8, 0xfd, 0, 0};  // 65000
    bytes.resize(4 + 60000, 0x5a);
    ASSERT_TRUE(partial.back()->send(bytes));
  }
  int cut = 0;
  for (auto& c : partial) {
    const auto code = c->receive_code(milliseconds(300));
    if (code.has_value()) {
      EXPECT_EQ(code, wire::ErrorCode::TooLarge);
      EXPECT_TRUE(c->closed_by_server());
      ++cut;
    }
  }
  EXPECT_GE(cut, 2);
  RawClient legitimate(port, "127.0.0.30");
  EXPECT_TRUE(served(legitimate));
  partial.clear();

  // A pipeliner that never reads, with a small receive window: the server stops reading it once its
  // replies back up, and cuts it when a write stays untaken for write_timeout_s.
  RawClient pipeliner(port, "127.0.0.31", 4096);
  ::fcntl(pipeliner.fd(), F_SETFL, O_NONBLOCK);
  std::vector<std::uint8_t> requests;
  for (int i = 0; i < 1000; ++i) {
    flatbuffers::FlatBufferBuilder fbb;
    list_matches(fbb, dev_service_key(), std::uint64_t(i + 1));
    append_frame(requests, {fbb.GetBufferPointer(), fbb.GetSize()});
  }
  std::size_t total = 0;
  for (;;) {  // until the server stops taking requests for 300 ms, or 64 MiB went out (bounded either way)
    const ssize_t n = ::send(pipeliner.fd(), requests.data(), requests.size(), MSG_NOSIGNAL);
    if (n > 0) {
      total += std::size_t(n);
      if (total > (64u << 20)) break;
      continue;
    }
    pollfd p{pipeliner.fd(), POLLOUT, 0};
    if (::poll(&p, 1, 300) <= 0 || (p.revents & (POLLERR | POLLHUP)) != 0) break;
  }
  EXPECT_LT(total, 64u << 20) << "the server kept reading a client that never reads";
  RawClient second(port, "127.0.0.32");
  EXPECT_TRUE(served(second));
  // Held bytes never passed the budget by more than a few small error frames.
  EXPECT_LE(rpc_metric("shiftcast_rpc_memory_peak_bytes"), double(kBudget + 4096));
  // The write timeout (0.5 s, checked every 0.25 s) ends it: a bounded wait for the counter.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (rpc_metric("shiftcast_rpc_closed_total", "reason=\"write_timeout\"") < 1 &&
         std::chrono::steady_clock::now() < deadline) {
    pollfd none{-1, 0, 0};
    ::poll(&none, 0, 50);
  }
  EXPECT_EQ(rpc_metric("shiftcast_rpc_closed_total", "reason=\"write_timeout\""), 1);
  EXPECT_GE(rpc_metric("shiftcast_rpc_closed_total", "reason=\"memory\""), 2);
  EXPECT_EQ(server_.stop(), 0);
}

// Finding: 84,000 admin key guesses per second per connection, unthrottled.
TEST_F(HostileRpcTest, KeyGuessingIsThrottledPerAddressAndTellsTheGuesserNothing) {
  start(test_server_config("", rpc_section("auth_failure_burst = 4\nauth_failure_rate = 0.01\n")));
  const std::uint16_t port = server_.ports().rpc;
  const auto token_request = [](flatbuffers::FlatBufferBuilder& fbb, const std::string& key,
                                std::uint64_t id) {
    finish_envelope(fbb, wire::Message::IssueConnectToken,
                    wire::CreateIssueConnectTokenDirect(fbb, key.c_str(), 1, 7, 60).Union(), id);
  };
  RawClient guesser(port, "127.0.0.1");
  for (std::uint64_t i = 1; i <= 10; ++i) {
    flatbuffers::FlatBufferBuilder fbb;
    token_request(fbb, "guess-number-" + std::to_string(i), i);
    ASSERT_TRUE(guesser.send(fbb));
  }
  for (std::uint64_t i = 1; i <= 10; ++i) {
    EXPECT_EQ(guesser.receive_code(), i <= 4 ? wire::ErrorCode::Unauthorized : wire::ErrorCode::RateLimited)
        << "guess " << i;
  }
  // Throttled, even the right key is not looked at, from any connection of that address.
  RawClient same_address(port, "127.0.0.1");
  flatbuffers::FlatBufferBuilder right;
  token_request(right, dev_admin_key(), 11);
  ASSERT_TRUE(same_address.send(right));
  EXPECT_EQ(same_address.receive_code(), wire::ErrorCode::RateLimited);
  // Another address with no failures on record is not locked out.
  RawClient admin(port, "127.0.0.2");
  flatbuffers::FlatBufferBuilder again;
  token_request(again, dev_admin_key(), 12);
  ASSERT_TRUE(admin.send(again));
  EXPECT_EQ(admin.receive_code(), wire::ErrorCode::Ok);
  EXPECT_NE(admin.last()->message_as_IssueConnectTokenReply(), nullptr);
  EXPECT_EQ(rpc_metric("shiftcast_rpc_auth_failures_total"), 4);
  EXPECT_EQ(rpc_metric("shiftcast_rpc_auth_throttled_total"), 7);
  EXPECT_EQ(server_.stop(), 0);
}

// Finding: without any key a client listed matches, subscribed to contacts and raycast the live world.
TEST_F(HostileRpcTest, ReadsNeedTheServiceKeyOrTheAdminKey) {
  start();
  RawClient c(server_.ports().rpc);
  const wire::Vec3f o{0, 0, 100}, d{1, 0, 0};
  const auto raycast = [&](const std::string& key, std::uint64_t id) {
    flatbuffers::FlatBufferBuilder fbb;
    const auto k = key.empty() ? flatbuffers::Offset<flatbuffers::String>() : fbb.CreateString(key);
    finish_envelope(fbb, wire::Message::RaycastRequest,
                    wire::CreateRaycastRequest(fbb, 1, &o, &d, 500, 0, 0, k).Union(), id);
    EXPECT_TRUE(c.send(fbb));
    return c.receive_code();
  };
  EXPECT_EQ(raycast("", 1), wire::ErrorCode::Unauthorized);
  EXPECT_EQ(raycast("not-the-service-key", 2), wire::ErrorCode::Unauthorized);
  EXPECT_EQ(raycast(dev_service_key(), 3), wire::ErrorCode::Ok);
  EXPECT_NE(c.last()->message_as_RaycastReply(), nullptr);
  EXPECT_EQ(raycast(dev_admin_key(), 4), wire::ErrorCode::Ok);
  {
    flatbuffers::FlatBufferBuilder fbb;
    list_matches(fbb, "", 5);
    ASSERT_TRUE(c.send(fbb));
    EXPECT_EQ(c.receive_code(), wire::ErrorCode::Unauthorized);
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    finish_envelope(fbb, wire::Message::MatchStatus, wire::CreateMatchStatus(fbb, 1).Union(), 6);
    ASSERT_TRUE(c.send(fbb));
    EXPECT_EQ(c.receive_code(), wire::ErrorCode::Unauthorized);
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    finish_envelope(fbb, wire::Message::SubscribeContacts, wire::CreateSubscribeContacts(fbb, 1).Union(), 7);
    ASSERT_TRUE(c.send(fbb));
    EXPECT_EQ(c.receive_code(), wire::ErrorCode::Unauthorized);
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<wire::BatchQuery>> q{wire::CreateBatchQuery(
        fbb, wire::CreateRaycastRequest(fbb, 1, &o, &d, 500, 0, 0, fbb.CreateString(dev_service_key())))};
    // A key inside a batched query is not the batch's key.
    finish_envelope(fbb, wire::Message::BatchRequest, wire::CreateBatchRequestDirect(fbb, &q).Union(), 8);
    ASSERT_TRUE(c.send(fbb));
    EXPECT_EQ(c.receive_code(), wire::ErrorCode::Unauthorized);
  }
  EXPECT_EQ(metric(rejected("rpc", "unauthorized")), 6);
  EXPECT_EQ(server_.stop(), 0);
}

flatbuffers::Offset<wire::SweepRequest> large_sweep(flatbuffers::FlatBufferBuilder& fbb,
                                                    const std::string& key, int i) {
  const wire::Vec3f half{4000, 4000, 4000};
  const auto shape = wire::CreateShapeSpec(fbb, wire::ShapeKind::Box, 0, 0, &half, 0.1f * float(i));
  const wire::Vec3f from{-900000, float(i), 0}, to{900000, -float(i), 100};
  return wire::CreateSweepRequest(
      fbb, 1, shape, &from, &to, 0, 0,
      key.empty() ? flatbuffers::Offset<flatbuffers::String>() : fbb.CreateString(key));
}

// Finding: a sweep cost 2 whatever its size and length, so one legal batch of 4,096 large sweeps took
// 32 ms of an RPC thread; a batch over max_batch was refused RateLimited with retry_after_ms 4294967295
// and charged.
TEST_F(HostileRpcTest, WorkBeyondTheBurstIsRefusedAsBadArgumentAndCostsNothing) {
  start();
  RawClient c(server_.ports().rpc);
  const std::string key = dev_service_key();
  {
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<wire::BatchQuery>> q;
    for (int i = 0; i < 4096; ++i)
      q.push_back(wire::CreateBatchQuery(fbb, 0, large_sweep(fbb, "", i)));
    finish_envelope(fbb, wire::Message::BatchRequest,
                    wire::CreateBatchRequestDirect(fbb, &q, key.c_str()).Union(), 1);
    ASSERT_TRUE(c.send(fbb));
    EXPECT_EQ(c.receive_code(), wire::ErrorCode::BadArgument);
  }
  {
    // 20,001 empty queries: over max_batch (4096), and their cost is over the burst (20,000).
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<wire::BatchQuery>> q;
    for (int i = 0; i < 20001; ++i)
      q.push_back(wire::CreateBatchQuery(fbb));
    finish_envelope(fbb, wire::Message::BatchRequest,
                    wire::CreateBatchRequestDirect(fbb, &q, key.c_str()).Union(), 2);
    ASSERT_TRUE(c.send(fbb));
    EXPECT_EQ(c.receive_code(), wire::ErrorCode::BadArgument);
    EXPECT_EQ(c.last()->message_as_RpcError()->retry_after_ms(), 0u);
  }
  // Neither ran, and neither was charged its queries: a single large sweep still passes at once.
  EXPECT_EQ(rpc_metric("shiftcast_rpc_requests_total", "kind=\"batch\""), 0);
  flatbuffers::FlatBufferBuilder fbb;
  finish_envelope(fbb, wire::Message::SweepRequest, large_sweep(fbb, key, 1).Union(), 3);
  ASSERT_TRUE(c.send(fbb));
  EXPECT_EQ(c.receive_code(), wire::ErrorCode::Ok);
  EXPECT_NE(c.last()->message_as_SweepReply(), nullptr);
  EXPECT_EQ(server_.stop(), 0);
}

// Finding: frames refused before the bucket (wrong version, unexpected message) were free: 89,000 per
// second on one connection.
TEST_F(HostileRpcTest, RefusedFramesAreChargedSoAFloodIsRateLimited) {
  // A slow refill, so that the test's own duration adds (almost) nothing back.
  start(test_server_config("", rpc_section("burst = 200\nrate = 1\n")));
  RawClient c(server_.ports().rpc);
  std::vector<std::uint8_t> flood;
  for (int i = 0; i < 1000; ++i) {
    flatbuffers::FlatBufferBuilder fbb;
    const auto body = wire::CreateKeepAlive(fbb).Union();
    if (i % 2 == 0) {
      fbb.Finish(wire::CreateEnvelope(fbb, kProtocolVersion + 1, std::uint64_t(i + 1),
                                      wire::Message::KeepAlive, body),
                 kFileIdentifier);
    } else {
      finish_envelope(fbb, wire::Message::KeepAlive, body, std::uint64_t(i + 1));  // not a request
    }
    append_frame(flood, {fbb.GetBufferPointer(), fbb.GetSize()});
  }
  ASSERT_TRUE(c.send(flood));
  int refused_for_what_they_are = 0, rate_limited = 0;
  for (int i = 0; i < 1000; ++i) {
    const auto code = c.receive_code();
    ASSERT_TRUE(code.has_value()) << "reply " << i;
    if (code == wire::ErrorCode::RateLimited) {
      ++rate_limited;
    } else {
      EXPECT_TRUE(code == wire::ErrorCode::WrongVersion || code == wire::ErrorCode::UnexpectedMessage);
      ++refused_for_what_they_are;
    }
  }
  // Each costs one unit: the burst of 200 (plus at most a few units refilled meanwhile), then debt.
  EXPECT_GE(refused_for_what_they_are, 200);
  EXPECT_LE(refused_for_what_they_are, 210);
  EXPECT_EQ(rate_limited, 1000 - refused_for_what_they_are);
  EXPECT_TRUE(served(*std::make_unique<RawClient>(server_.ports().rpc, "127.0.0.2")));
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
