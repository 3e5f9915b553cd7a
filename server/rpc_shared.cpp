// What the RPC server and its connections share (RpcShared, declared in server/rpc_connection.hpp): the
// metrics, the keys, the memory budget, the query budget and the auth throttle; and the names of request
// kinds and close reasons as metric labels.
#include <sodium.h>

#include <chrono>
#include <utility>

#include "protocol/crypto.hpp"
#include "server/rpc_connection.hpp"

namespace shiftcast {

const char* to_string(RpcKind kind) {
  switch (kind) {
    case RpcKind::kRaycast:
      return "raycast";
    case RpcKind::kSweep:
      return "sweep";
    case RpcKind::kOverlap:
      return "overlap";
    case RpcKind::kBatch:
      return "batch";
    case RpcKind::kSubscribe:
      return "subscribe_contacts";
    case RpcKind::kUnsubscribe:
      return "unsubscribe_contacts";
    case RpcKind::kListMatches:
      return "list_matches";
    case RpcKind::kMatchStatus:
      return "match_status";
    case RpcKind::kCreateMatch:
      return "create_match";
    case RpcKind::kEndMatch:
      return "end_match";
    case RpcKind::kIssueConnectToken:
      return "issue_connect_token";
    case RpcKind::kCount:
      break;
  }
  return "unknown";
}

const char* to_string(CloseReason reason) {
  switch (reason) {
    case CloseReason::kPeer:
      return "peer";
    case CloseReason::kBrokenStream:
      return "broken_stream";
    case CloseReason::kIdleTimeout:
      return "idle_timeout";
    case CloseReason::kReadTimeout:
      return "read_timeout";
    case CloseReason::kWriteTimeout:
      return "write_timeout";
    case CloseReason::kMemory:
      return "memory";
    case CloseReason::kShutdown:
      return "shutdown";
    case CloseReason::kCount:
      break;
  }
  return "unknown";
}

RpcMetrics::RpcMetrics(MetricsRegistry& registry) {
  for (std::size_t i = 0; i < kRpcKinds; ++i) {
    const Labels kind{{"kind", to_string(static_cast<RpcKind>(i))}};
    requests[i] = &registry.counter("shiftcast_rpc_requests_total", "RPC requests answered, by kind", kind);
    seconds[i] =
        &registry.histogram("shiftcast_rpc_seconds", "Time to answer an RPC request", kind, kLatencyBuckets);
  }
  connections = &registry.gauge("shiftcast_rpc_connections", "Open RPC connections");
  contact_events =
      &registry.counter("shiftcast_rpc_contact_events_total", "Contact events pushed to subscribers");
  for (std::size_t i = 0; i < kCloseReasons; ++i) {
    closed[i] = &registry.counter("shiftcast_rpc_closed_total", "RPC connections closed, by reason",
                                  {{"reason", to_string(static_cast<CloseReason>(i))}});
  }
  memory_bytes =
      &registry.gauge("shiftcast_rpc_memory_bytes",
                      "Bytes of unfinished request frames and unwritten replies held for RPC peers");
  memory_peak_bytes =
      &registry.gauge("shiftcast_rpc_memory_peak_bytes", "The most shiftcast_rpc_memory_bytes has been");
  auth_failures =
      &registry.counter("shiftcast_rpc_auth_failures_total", "RPC requests with a wrong or missing key");
  auth_throttled = &registry.counter("shiftcast_rpc_auth_throttled_total",
                                     "Keyed RPC requests refused unchecked: their address failed too often");
  accept_failures =
      &registry.counter("shiftcast_rpc_accept_failures_total",
                        "RPC accepts that failed (out of descriptors, ...), each retried later");
  refused_connections = &registry.counter("shiftcast_rpc_refused_connections_total",
                                          "RPC connections turned away at a limit", {{"limit", "listener"}});
  refused_per_address = &registry.counter("shiftcast_rpc_refused_connections_total",
                                          "RPC connections turned away at a limit", {{"limit", "address"}});
}

namespace {

using Hash = std::array<std::uint8_t, 32>;

Hash hash_key(std::string_view key) {
  Hash h{};
  crypto_generichash(h.data(), h.size(), reinterpret_cast<const unsigned char*>(key.data()), key.size(),
                     nullptr, 0);
  return h;
}

}  // namespace

RpcShared::RpcShared(MatchDirectory& directory_in, RpcSettings settings_in, MetricsRegistry& registry,
                     Rejections& rejections_in)
    : directory(directory_in),
      settings(std::move(settings_in)),
      rejections(rejections_in),
      metrics(registry),
      memory(settings.memory_budget_bytes),
      budget(settings.global_rate, settings.global_burst, now()),
      auth(AuthThrottleSettings{settings.auth_failure_burst, settings.auth_failure_rate,
                                settings.global_auth_failure_burst, settings.global_auth_failure_rate},
           now()) {
  crypto_init();
  admin_key_hash = hash_key(settings.admin_key);
  service_key_hash = hash_key(settings.service_key);
}

double RpcShared::now() const {
  if (settings.now) return settings.now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::uint64_t RpcShared::unix_now() const {
  if (settings.unix_now) return settings.unix_now();
  return std::uint64_t(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

bool RpcShared::admin_key_matches(const flatbuffers::String* given) const {
  if (settings.admin_key.empty() || given == nullptr) return false;
  const Hash h = hash_key(given->string_view());
  return sodium_memcmp(h.data(), admin_key_hash.data(), h.size()) == 0;
}

bool RpcShared::read_key_matches(const flatbuffers::String* given) const {
  if (given == nullptr) return false;
  const Hash h = hash_key(given->string_view());
  // Both compared, whichever matches, so the time says nothing about which key it was.
  const bool service =
      !settings.service_key.empty() && sodium_memcmp(h.data(), service_key_hash.data(), h.size()) == 0;
  const bool admin =
      !settings.admin_key.empty() && sodium_memcmp(h.data(), admin_key_hash.data(), h.size()) == 0;
  return service || admin;
}

void RpcShared::update_memory_metrics() {
  metrics.memory_bytes->set(double(memory.used()));
  metrics.memory_peak_bytes->set(double(memory.peak()));
}

}  // namespace shiftcast
