// RpcConnection: one TCP client of the query RPC. Everything it does runs on its own strand: it reads
// frames (protocol/rpc_frame.hpp), charges each frame for being read (server/query_cost.hpp), verifies
// its Envelope, checks the request's key (reads need the service or admin key, admin calls the admin key;
// failures are throttled per address by server/auth_throttle.hpp), charges the request's cost to its own
// and the listener's token buckets (server/query_budget.hpp), answers it (queries through
// server/query_service.hpp, admin calls through the MatchDirectory) and queues the reply. Replies leave in
// request order through one write queue, one write at a time, so a client may pipeline any number of
// requests. Contact subscriptions push ContactPush frames into the same queue; a subscription that finds
// too many bytes still queued is cut (RpcError SlowConsumer) so a slow reader never makes its match wait.
//
// Bounds (docs/server.md, "Under abuse: the RPC listener"): the bytes a connection holds (its unfinished
// frame and its unwritten replies) count against its own cap and the listener's MemoryBudget; reading
// stops while its replies wait beyond half its cap. RpcServer asks every connection periodically to
// check its timeouts (idle, read, write). Every close is counted by reason.
//
// Every refusal is answered with an RpcError carrying the request's id (0 when the envelope cannot be
// read), counted by reason and logged at debug level (server/rejections.hpp). A frame length over the
// limit cannot be skipped (the stream has no other markers), so the connection closes after saying so.
//
// Created by RpcServer (server/rpc_server.hpp), which shares RpcShared with every connection.
#pragma once

#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/rpc_frame.hpp"
#include "server/auth_throttle.hpp"
#include "server/config/rpc_settings.hpp"
#include "server/contact_subscription.hpp"
#include "server/match_directory.hpp"
#include "server/memory_budget.hpp"
#include "server/metrics.hpp"
#include "server/query_budget.hpp"
#include "server/query_service.hpp"
#include "server/rejections.hpp"
#include "server/token_bucket.hpp"

namespace shiftcast {

// Room a connection needs in the memory budget to go on handling requests (most replies are smaller).
inline constexpr std::size_t kReplyReserveBytes = 4096;
// Bytes read from the socket at once.
inline constexpr std::size_t kRpcReadChunkBytes = 64u << 10;
// Entities one subscription may name.
inline constexpr std::size_t kMaxSubscriptionEntities = 4096;
// A tick's contacts go out in pushes of at most this many events (about 64 KiB).
inline constexpr std::size_t kMaxEventsPerPush = 1024;

// The request kinds, as metric labels.
enum class RpcKind : std::uint8_t {
  kRaycast,
  kSweep,
  kOverlap,
  kBatch,
  kSubscribe,
  kUnsubscribe,
  kListMatches,
  kMatchStatus,
  kCreateMatch,
  kEndMatch,
  kIssueConnectToken,
  kCount,
};
inline constexpr std::size_t kRpcKinds = static_cast<std::size_t>(RpcKind::kCount);
const char* to_string(RpcKind kind);

// Why a connection closed, as metric labels (shiftcast_rpc_closed_total{reason}).
enum class CloseReason : std::uint8_t {
  kPeer,          // the client closed or reset, or a write failed
  kBrokenStream,  // a frame length over the limit or zero: the stream cannot be resynchronised
  kIdleTimeout,   // no complete frame for idle_timeout_s
  kReadTimeout,   // a frame left unfinished for read_timeout_s
  kWriteTimeout,  // a write the client did not take within write_timeout_s
  kMemory,        // a frame or a push that would pass the connection's cap or the listener's budget
  kShutdown,
  kCount,
};
inline constexpr std::size_t kCloseReasons = static_cast<std::size_t>(CloseReason::kCount);
const char* to_string(CloseReason reason);

struct RpcMetrics {
  explicit RpcMetrics(MetricsRegistry& registry);
  std::array<Counter*, kRpcKinds> requests{};    // shiftcast_rpc_requests_total{kind}
  std::array<Histogram*, kRpcKinds> seconds{};   // shiftcast_rpc_seconds{kind}
  Gauge* connections = nullptr;                  // shiftcast_rpc_connections
  Counter* contact_events = nullptr;             // shiftcast_rpc_contact_events_total (pushed)
  std::array<Counter*, kCloseReasons> closed{};  // shiftcast_rpc_closed_total{reason}
  Gauge* memory_bytes = nullptr;                 // shiftcast_rpc_memory_bytes: frames and backlogs held now
  Gauge* memory_peak_bytes = nullptr;            // shiftcast_rpc_memory_peak_bytes: the most ever held
  Counter* auth_failures = nullptr;              // shiftcast_rpc_auth_failures_total: wrong or missing keys
  Counter* auth_throttled = nullptr;             // shiftcast_rpc_auth_throttled_total: refused untried
  Counter* accept_failures = nullptr;            // shiftcast_rpc_accept_failures_total (EMFILE, ...)
  Counter* refused_connections = nullptr;        // shiftcast_rpc_refused_connections_total{limit}: listener
  Counter* refused_per_address = nullptr;        //   cap, and per-address cap
};

class RpcConnection;

// What the server and its connections share. Lives as long as the last of them.
struct RpcShared {
  RpcShared(MatchDirectory& directory, RpcSettings settings, MetricsRegistry& registry,
            Rejections& rejections);
  double now() const;
  std::uint64_t unix_now() const;
  // Constant time in the key's contents (both sides hashed first, so not even the length shows).
  bool admin_key_matches(const flatbuffers::String* given) const;
  // The service key or the admin key.
  bool read_key_matches(const flatbuffers::String* given) const;
  void update_memory_metrics();

  MatchDirectory& directory;
  const RpcSettings settings;
  Rejections& rejections;
  RpcMetrics metrics;
  std::array<std::uint8_t, 32> admin_key_hash{};
  std::array<std::uint8_t, 32> service_key_hash{};
  MemoryBudget memory;
  QueryBudget budget;
  AuthThrottle auth;
  std::atomic<int> open{0};  // connections accepted and not yet closed
  std::atomic<bool> stopping{false};

  std::mutex mutex;  // guards the registry and the per-address counts below (accepts and closes)
  std::map<std::uint64_t, std::weak_ptr<RpcConnection>> connections;
  std::map<std::string, int> per_address;  // open connections by source address
  std::uint64_t next_connection = 1;
};

class RpcConnection final : public ContactSink, public std::enable_shared_from_this<RpcConnection> {
 public:
  using Executor = boost::asio::strand<boost::asio::io_context::executor_type>;
  using Socket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, Executor>;

  // `shared.open` and `shared.per_address[address]` must already count this connection; both are released
  // when the connection closes.
  RpcConnection(Socket socket, std::shared_ptr<RpcShared> shared, std::uint64_t id, std::string address);
  ~RpcConnection() override;

  void start();     // any thread: registers and starts reading
  void shutdown();  // any thread: stop reading, close once every queued reply is written
  // Any thread: closes the connection if it is past one of its timeouts at the settings' now().
  void check_timeouts();

  void on_contacts(std::uint64_t subscription, const std::shared_ptr<const ContactBatch>& batch) override;
  void on_match_ended(std::uint64_t subscription) override;
  void on_overflow(std::uint64_t subscription) override;

 private:
  struct Subscription {
    std::shared_ptr<ContactSubscription> subscriber;
    std::weak_ptr<MatchHandle> match;
    std::uint32_t match_id = 0;
    std::uint64_t request_id = 0;
    std::uint64_t sequence = 0;  // of the last event pushed
  };

  // rpc_connection.cpp: the stream.
  void read();
  void on_read(const boost::system::error_code& error, std::size_t bytes);
  // Handles the buffered complete frames while there is room for their replies, then reads on or pauses.
  void process();
  // Room for more replies: this connection's backlog within half its cap, and the listener's budget
  // able to hold kReplyReserveBytes more.
  bool has_room() const;
  void handle_frame(std::span<const std::uint8_t> frame);
  // Checks the request's key (reads: service or admin key, unless open; admin calls: the admin key);
  // refuses it (Unauthorized, or RateLimited while the address is throttled) and returns false otherwise.
  bool authorize(RpcKind kind, bool admin, const flatbuffers::String* key, std::uint64_t request_id);
  // Charges a frame that was read and refused (its verification is work done).
  void charge_refused(std::size_t frame_bytes);
  void dispatch(const wire::Envelope& envelope, RpcKind kind);
  void refuse(wire::ErrorCode code, std::uint64_t request_id, std::string_view detail,
              std::uint32_t retry_after_ms = 0);
  void send_error(wire::ErrorCode code, std::uint64_t request_id, std::string_view detail,
                  std::uint32_t retry_after_ms = 0);
  void send(wire::Message type, flatbuffers::Offset<void> message, std::uint64_t request_id);
  void write();
  void on_write(const boost::system::error_code& error);
  void close(CloseReason reason);
  // Says why (when the client can still read it) and closes once that is written, or at the latest
  // when the write timeout finds the write stuck. Counted as a refusal unless `reason` is kIdleTimeout.
  void close_after(wire::ErrorCode code, std::string_view detail, CloseReason reason);
  std::size_t pending_bytes() const { return queued_.size() + writing_.size(); }
  std::size_t held_bytes() const { return reader_.buffered() + pending_bytes(); }
  // Moves this connection's MemoryBudget account to what it holds now.
  void account();

  // rpc_handlers.cpp: the requests.
  void answer_query(const QueryAnswer& answer, std::uint64_t request_id);
  void list_matches(std::uint64_t request_id);
  void match_status(const wire::MatchStatus& request, std::uint64_t request_id);
  void create_match(const wire::CreateMatch& request, std::uint64_t request_id);
  void end_match(const wire::EndMatch& request, std::uint64_t request_id);
  void issue_connect_token(const wire::IssueConnectToken& request, std::uint64_t request_id);

  // rpc_contacts.cpp: subscriptions.
  void subscribe(const wire::SubscribeContacts& request, std::uint64_t request_id);
  void unsubscribe(const wire::UnsubscribeContacts& request, std::uint64_t request_id);
  void cut(std::map<std::uint64_t, Subscription>::iterator it, wire::ErrorCode code, std::string_view detail);
  void drop_subscriptions();

  Socket socket_;
  std::shared_ptr<RpcShared> shared_;
  const std::uint64_t id_;
  const std::string address_;  // the source address (per-address limits)
  std::string peer_;           // address:port (logs)
  TokenBucket bucket_;
  MemoryBudget::Account memory_;
  double last_frame_at_ = 0;      // the last complete frame (or the accept)
  double frame_started_at_ = -1;  // when the unfinished frame began, -1: none
  double write_started_at_ = 0;
  CloseReason closing_reason_ = CloseReason::kPeer;
  FrameReader reader_;
  std::vector<std::uint8_t> read_buffer_;
  std::vector<std::uint8_t> frame_;  // the frame being handled, copied to an aligned buffer
  flatbuffers::FlatBufferBuilder fbb_;
  QueryScratch scratch_;
  std::vector<std::uint8_t> queued_;   // frames waiting for the write in progress
  std::vector<std::uint8_t> writing_;  // the write in progress
  std::vector<wire::ContactEvent> events_;
  std::map<std::uint64_t, Subscription> subscriptions_;
  std::uint64_t next_subscription_ = 1;
  bool reading_ = false;
  bool read_paused_ = false;
  bool write_active_ = false;
  bool closing_ = false;  // no more reads: close when the queue is written
  bool closed_ = false;
};

}  // namespace shiftcast
