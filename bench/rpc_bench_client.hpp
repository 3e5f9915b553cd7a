// The client side of shiftcast-rpc-bench: one blocking TCP connection to a server's RPC port, driven by
// one thread, sending pre-built raycast requests (single or batched) pipelined, and checking every reply
// against the answer world_raycast gave in-process for the same ray.
//
//   std::string error;
//   auto conn = RpcBenchConnection::connect(port, error);       // 127.0.0.1, TCP_NODELAY
//   PhaseStats s = conn->run(phase, match_id, rays, expected, start, &first_answers);
//   if (!s.failure.empty()) fail(s.failure);
//
// Requests are built before the phase starts, so the client spends its time on the socket, not on
// FlatBuffers: on a machine whose cores the server shares, client work would be measured as server work.
// A closed-loop phase keeps `depth` requests in flight (latency = send to reply); an open-loop phase sends
// at fixed deadlines computed from the start time (latency = scheduled send to reply, so a late client or
// a queue in the server both count, and nothing is hidden by the sender waiting for the server).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collision/vec3.hpp"
#include "protocol/rpc_frame.hpp"
#include "world/match/world_query.hpp"

namespace shiftcast::bench {

using BenchClock = std::chrono::steady_clock;

inline constexpr float kRayMaxDistance = 4096.0f;

struct BenchRay {
  Vec3 origin;
  Vec3 direction;  // unit
};

// Everything a reply says about a ray's hit, floats as bit patterns: two answers are equal only when
// every bit is.
struct RayAnswer {
  bool hit = false;
  bool start_solid = false;
  bool all_solid = false;
  std::uint32_t fraction_bits = 0;
  std::uint32_t end_bits[3] = {};
  std::uint32_t normal_bits[3] = {};
  std::int32_t brush = kNoBrush;
  std::uint32_t entity = 0;
  bool operator==(const RayAnswer&) const = default;
};

RayAnswer answer_of(const WorldHit& hit);
RayAnswer answer_of(const wire::QueryHit& hit);
// Order-dependent 64-bit digest of answers (FNV-1a over their fields).
std::uint64_t checksum(std::span<const RayAnswer> answers);

struct PhaseSpec {
  const char* name = "";
  int batch = 1;           // raycasts per request: 1 sends RaycastRequest, more send one BatchRequest
  int depth = 1;           // closed loop: requests in flight per connection
  double rate = 0;         // open loop: requests per second per connection; 0 means closed loop
  double warmup_s = 0.25;  // run but not measured: connections and caches settle
  double seconds = 3;      // the measured window
};

struct PhaseStats {
  std::vector<float> latencies_us;  // one per request measured (see the file comment for which)
  std::uint64_t replies = 0;        // requests answered within the window
  std::uint64_t raycasts = 0;       // raycasts answered within the window
  std::uint64_t compared = 0;       // raycast answers checked against world_raycast (whole phase)
  std::uint64_t mismatched = 0;
  std::vector<float> send_lateness_us;  // open loop: how long after its deadline each request left
  std::uint64_t skipped_sends = 0;      // open loop: deadlines passed with too many requests in flight
  std::uint64_t distinct_rays = 0;      // rays answered at least once (whole phase)
  std::string failure;                  // empty unless a reply was missing, refused or unverifiable
};

class RpcBenchConnection {
 public:
  // Connects to 127.0.0.1:port; null and `error` set when that fails.
  static std::unique_ptr<RpcBenchConnection> connect(std::uint16_t port, std::string& error);
  ~RpcBenchConnection();
  RpcBenchConnection(const RpcBenchConnection&) = delete;
  RpcBenchConnection& operator=(const RpcBenchConnection&) = delete;

  // Runs one phase from `start` (warm-up, then the measured window, then the replies still in flight).
  // rays.size() must be a multiple of phase.batch; request j asks rays [j·batch, (j+1)·batch) and they are
  // sent round robin. `expected[i]` is world_raycast's answer for rays[i]. When `first_answers` is given
  // it receives the first reply for each ray (rays never answered keep a default RayAnswer).
  PhaseStats run(const PhaseSpec& phase, std::uint32_t match_id, std::span<const BenchRay> rays,
                 std::span<const RayAnswer> expected, BenchClock::time_point start,
                 std::vector<RayAnswer>* first_answers);

 private:
  explicit RpcBenchConnection(int fd) : fd_(fd) {}
  struct InFlight {
    std::uint32_t frame;
    BenchClock::time_point sent;  // open loop: the scheduled time
  };
  struct Run;  // one phase's state (rpc_bench_client.cpp)

  void run_closed_loop(Run& run);
  void run_open_loop(Run& run);
  // Checks and records every complete reply the reader holds; false once the phase has failed.
  bool take_replies(Run& run);
  bool send_all(std::span<const std::uint8_t> bytes, std::string& error);
  // Waits for bytes (at most the socket's receive timeout) and feeds them to the reader.
  bool receive(std::string& error);

  int fd_ = -1;
  FrameReader reader_;
  std::vector<std::uint8_t> receive_buffer_ = std::vector<std::uint8_t>(1 << 16);
};

}  // namespace shiftcast::bench
