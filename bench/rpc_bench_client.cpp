#include "bench/rpc_bench_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <thread>

#include "protocol/envelope.hpp"

namespace shiftcast::bench {
namespace {

// A reply that takes this long means the server is stuck, not slow: the phase fails instead of hanging.
constexpr int kSocketTimeoutSeconds = 10;
// Open loop: beyond this many requests in flight the server is not keeping up; further deadlines are
// skipped (and counted) so the client never piles up more than the socket buffers hold.
constexpr std::size_t kMaxOpenLoopInFlight = 1024;
constexpr unsigned long kOpenLoopTimerSlackNs = 1000;

constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;

void mix(std::uint64_t& h, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) {
    h ^= (value >> (8 * i)) & 0xffu;
    h *= kFnvPrime;
  }
}

wire::Vec3f to_wire(Vec3 v) {
  return {v.x, v.y, v.z};
}

flatbuffers::Offset<wire::RaycastRequest> raycast_request(flatbuffers::FlatBufferBuilder& fbb,
                                                          std::uint32_t match_id, const BenchRay& ray) {
  const wire::Vec3f origin = to_wire(ray.origin);
  const wire::Vec3f direction = to_wire(ray.direction);
  return wire::CreateRaycastRequest(fbb, match_id, &origin, &direction, kRayMaxDistance);
}

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

RayAnswer answer_of(const WorldHit& hit) {
  const TraceResult& t = hit.trace;
  RayAnswer a;
  a.hit = t.hit;
  a.start_solid = t.start_solid;
  a.all_solid = t.all_solid;
  a.fraction_bits = std::bit_cast<std::uint32_t>(t.fraction);
  const float end[3] = {t.end_position.x, t.end_position.y, t.end_position.z};
  const float normal[3] = {t.normal.x, t.normal.y, t.normal.z};
  for (int i = 0; i < 3; ++i) {
    a.end_bits[i] = std::bit_cast<std::uint32_t>(end[i]);
    a.normal_bits[i] = std::bit_cast<std::uint32_t>(normal[i]);
  }
  a.brush = t.brush;
  a.entity = hit.entity;
  return a;
}

RayAnswer answer_of(const wire::QueryHit& hit) {
  RayAnswer a;
  a.hit = hit.hit();
  a.start_solid = hit.start_solid();
  a.all_solid = hit.all_solid();
  a.fraction_bits = std::bit_cast<std::uint32_t>(hit.fraction());
  const wire::Vec3f zero{0, 0, 0};
  const wire::Vec3f& end = hit.end_position() ? *hit.end_position() : zero;
  const wire::Vec3f& normal = hit.normal() ? *hit.normal() : zero;
  const float e[3] = {end.x(), end.y(), end.z()};
  const float n[3] = {normal.x(), normal.y(), normal.z()};
  for (int i = 0; i < 3; ++i) {
    a.end_bits[i] = std::bit_cast<std::uint32_t>(e[i]);
    a.normal_bits[i] = std::bit_cast<std::uint32_t>(n[i]);
  }
  a.brush = hit.brush();
  a.entity = hit.entity();
  return a;
}

std::uint64_t checksum(std::span<const RayAnswer> answers) {
  std::uint64_t h = kFnvOffset;
  for (const RayAnswer& a : answers) {
    mix(h, std::uint32_t(a.hit) | std::uint32_t(a.start_solid) << 1 | std::uint32_t(a.all_solid) << 2);
    mix(h, a.fraction_bits);
    for (int i = 0; i < 3; ++i)
      mix(h, a.end_bits[i]);
    for (int i = 0; i < 3; ++i)
      mix(h, a.normal_bits[i]);
    mix(h, std::bit_cast<std::uint32_t>(a.brush));
    mix(h, a.entity);
  }
  return h;
}

// One phase on one connection: the pre-built requests, what is in flight, and what was measured.
struct RpcBenchConnection::Run {
  const PhaseSpec& phase;
  std::span<const BenchRay> rays;
  std::span<const RayAnswer> expected;
  std::vector<RayAnswer>* first_answers;
  BenchClock::time_point start;
  BenchClock::time_point measure_from;
  BenchClock::time_point end;
  std::vector<std::uint8_t> frames;  // every request framed, back to back
  std::vector<std::size_t> offsets;  // request j is frames[offsets[j], offsets[j + 1])
  std::vector<bool> seen;            // rays answered at least once
  std::deque<InFlight> in_flight;    // replies come in request order
  std::uint32_t next = 0;            // the request sent next
  PhaseStats stats;

  std::uint32_t requests() const { return std::uint32_t(offsets.size() - 1); }

  void build(std::uint32_t match_id) {
    flatbuffers::FlatBufferBuilder fbb(1024);
    std::vector<flatbuffers::Offset<wire::BatchQuery>> queries;
    offsets.assign(1, 0);
    for (std::size_t first = 0; first < rays.size(); first += std::size_t(phase.batch)) {
      fbb.Clear();
      const std::uint64_t request_id = offsets.size();  // request j has id j + 1: 0 is never used
      if (phase.batch == 1) {
        const auto request = raycast_request(fbb, match_id, rays[first]);
        finish_envelope(fbb, wire::Message::RaycastRequest, request.Union(), request_id);
      } else {
        queries.clear();
        for (int k = 0; k < phase.batch; ++k) {
          queries.push_back(wire::CreateBatchQuery(fbb, raycast_request(fbb, match_id, rays[first + k])));
        }
        const auto batch = wire::CreateBatchRequest(fbb, fbb.CreateVector(queries));
        finish_envelope(fbb, wire::Message::BatchRequest, batch.Union(), request_id);
      }
      append_frame(frames, {fbb.GetBufferPointer(), fbb.GetSize()});
      offsets.push_back(frames.size());
    }
  }

  void enqueue(std::vector<std::uint8_t>& out, BenchClock::time_point sent) {
    out.insert(out.end(), frames.begin() + std::ptrdiff_t(offsets[next]),
               frames.begin() + std::ptrdiff_t(offsets[next + 1]));
    in_flight.push_back({next, sent});
    next = (next + 1) % requests();
  }

  bool fail(std::string why) {
    stats.failure = std::move(why);
    return false;
  }

  void compare(std::size_t ray, const wire::QueryHit& hit) {
    const RayAnswer a = answer_of(hit);
    ++stats.compared;
    if (!(a == expected[ray])) ++stats.mismatched;
    if (!seen[ray]) {
      seen[ray] = true;
      ++stats.distinct_rays;
      if (first_answers != nullptr) (*first_answers)[ray] = a;
    }
  }

  // Verifies the reply to request `frame` and compares its answers with world_raycast's.
  bool check(std::span<const std::uint8_t> bytes, std::uint32_t frame) {
    const EnvelopeView v = verify_envelope(bytes, kMaxRpcFrameBytes);
    if (v.error != wire::ErrorCode::Ok) return fail(std::string("unverifiable reply: ") + to_string(v.error));
    const wire::Envelope& e = *v.envelope;
    if (e.request_id() != std::uint64_t(frame) + 1) {
      return fail("reply to request " + std::to_string(e.request_id()) + " where " +
                  std::to_string(frame + 1) + " was next");
    }
    if (const wire::RpcError* error = e.message_as_RpcError()) {
      return fail(std::string("server refused a request: ") + to_string(error->code()) + " (" +
                  (error->detail() ? error->detail()->str() : "") + ")");
    }
    const std::size_t first = std::size_t(frame) * std::size_t(phase.batch);
    if (phase.batch == 1) {
      const wire::RaycastReply* reply = e.message_as_RaycastReply();
      if (reply == nullptr || reply->hit() == nullptr) return fail("a raycast reply without a hit");
      compare(first, *reply->hit());
      return true;
    }
    const wire::BatchReply* reply = e.message_as_BatchReply();
    if (reply == nullptr || reply->results() == nullptr ||
        reply->results()->size() != std::size_t(phase.batch)) {
      return fail("a batch reply without one result per query");
    }
    for (std::uint32_t k = 0; k < reply->results()->size(); ++k) {
      const wire::BatchResult* r = reply->results()->Get(k);
      if (r->error() != nullptr) {
        return fail(std::string("server refused a batch query: ") + to_string(r->error()->code()));
      }
      if (r->raycast() == nullptr || r->raycast()->hit() == nullptr)
        return fail("a batch result without a hit");
      compare(first + k, *r->raycast()->hit());
    }
    return true;
  }

  // Closed loop: the replies received in the window. Open loop: latency of the requests scheduled in the
  // window (however late their replies), throughput from the replies received in it.
  void record(const InFlight& f, BenchClock::time_point now) {
    const bool open_loop = phase.rate > 0;
    const bool replied_in_window = now >= measure_from && now < end;
    const bool sent_in_window = f.sent >= measure_from && f.sent < end;
    if (replied_in_window) {
      ++stats.replies;
      stats.raycasts += std::uint64_t(phase.batch);
    }
    if (open_loop ? sent_in_window : replied_in_window) {
      stats.latencies_us.push_back(float(std::chrono::duration<double, std::micro>(now - f.sent).count()));
    }
  }
};

std::unique_ptr<RpcBenchConnection> RpcBenchConnection::connect(std::uint16_t port, std::string& error) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    error = errno_text("socket");
    return nullptr;
  }
  std::unique_ptr<RpcBenchConnection> c(new RpcBenchConnection(fd));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    error = errno_text("connect");
    return nullptr;
  }
  // Small requests must leave at once: Nagle would hold a pipelined request until the previous reply.
  const int one = 1;
  const timeval timeout{kSocketTimeoutSeconds, 0};
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout) != 0) {
    error = errno_text("setsockopt");
    return nullptr;
  }
  return c;
}

RpcBenchConnection::~RpcBenchConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool RpcBenchConnection::send_all(std::span<const std::uint8_t> bytes, std::string& error) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno == EAGAIN || errno == EWOULDBLOCK ? "send timed out" : errno_text("send");
      return false;
    }
    bytes = bytes.subspan(std::size_t(n));
  }
  return true;
}

bool RpcBenchConnection::receive(std::string& error) {
  while (true) {
    const ssize_t n = ::recv(fd_, receive_buffer_.data(), receive_buffer_.size(), 0);
    if (n > 0) {
      reader_.feed({receive_buffer_.data(), std::size_t(n)});
      return true;
    }
    if (n == 0) {
      error = "the server closed the connection";
      return false;
    }
    if (errno == EINTR) continue;
    error = errno == EAGAIN || errno == EWOULDBLOCK
                ? "no reply within " + std::to_string(kSocketTimeoutSeconds) + " s"
                : errno_text("recv");
    return false;
  }
}

bool RpcBenchConnection::take_replies(Run& run) {
  while (auto frame = reader_.next()) {
    const BenchClock::time_point now = BenchClock::now();
    if (run.in_flight.empty()) return run.fail("a reply to no request");
    const InFlight f = run.in_flight.front();
    run.in_flight.pop_front();
    if (!run.check(*frame, f.frame)) return false;
    run.record(f, now);
  }
  if (reader_.error() != wire::ErrorCode::Ok) {
    return run.fail(std::string("reply framing: ") + to_string(reader_.error()));
  }
  return true;
}

void RpcBenchConnection::run_closed_loop(Run& run) {
  const std::size_t depth = std::size_t(std::max(1, run.phase.depth));
  std::vector<std::uint8_t> out;
  std::string error;
  std::this_thread::sleep_until(run.start);  // every connection starts its window together
  while (true) {
    const BenchClock::time_point now = BenchClock::now();
    if (now < run.end && run.in_flight.size() < depth) {
      // Refill in one write: one system call for every request the replies just made room for.
      out.clear();
      while (run.in_flight.size() < depth)
        run.enqueue(out, now);
      if (!send_all(out, error)) return void(run.fail(error));
    }
    if (run.in_flight.empty()) return;
    if (!receive(error)) return void(run.fail(error));
    if (!take_replies(run)) return;
  }
}

void RpcBenchConnection::run_open_loop(Run& run) {
  const double interval_ns = 1e9 / run.phase.rate;
  // Deadlines come from the start time and the request's index, never from the previous send, so a
  // late send does not delay the ones after it.
  auto deadline = [&](std::uint64_t k) {
    return run.start + std::chrono::nanoseconds(std::llround(double(k) * interval_ns));
  };
  // The kernel's default timer slack (50 us) would wake this thread that late after each deadline, and
  // the latency, counted from the deadline, would carry it.
  ::prctl(PR_SET_TIMERSLACK, kOpenLoopTimerSlackNs);
  std::uint64_t k = 0;
  std::vector<std::uint8_t> out;
  std::string error;
  while (true) {
    const BenchClock::time_point now = BenchClock::now();
    if (now < run.end) {
      out.clear();
      for (; deadline(k) <= now && deadline(k) < run.end; ++k) {
        if (run.in_flight.size() < kMaxOpenLoopInFlight) {
          run.enqueue(out, deadline(k));
          if (deadline(k) >= run.measure_from) {
            run.stats.send_lateness_us.push_back(
                float(std::chrono::duration<double, std::micro>(now - deadline(k)).count()));
          }
        } else {
          ++run.stats.skipped_sends;
        }
      }
      if (!out.empty() && !send_all(out, error)) return void(run.fail(error));
    }
    const bool sending = now < run.end && deadline(k) < run.end;
    if (!sending && run.in_flight.empty()) return;
    const auto wait =
        sending
            ? std::max(deadline(k) - now, BenchClock::duration::zero())
            : std::chrono::duration_cast<BenchClock::duration>(std::chrono::seconds(kSocketTimeoutSeconds));
    const auto wait_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
    const timespec timeout{time_t(wait_ns / 1'000'000'000), long(wait_ns % 1'000'000'000)};
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::ppoll(&p, 1, &timeout, nullptr);
    if (ready < 0 && errno != EINTR) return void(run.fail(errno_text("ppoll")));
    if (ready == 0 && !sending) {
      return void(run.fail("no reply within " + std::to_string(kSocketTimeoutSeconds) + " s"));
    }
    if (ready > 0) {
      if (!receive(error)) return void(run.fail(error));
      if (!take_replies(run)) return;
    }
  }
}

PhaseStats RpcBenchConnection::run(const PhaseSpec& phase, std::uint32_t match_id,
                                   std::span<const BenchRay> rays, std::span<const RayAnswer> expected,
                                   BenchClock::time_point start, std::vector<RayAnswer>* first_answers) {
  Run run{phase, rays, expected, first_answers, start, {}, {}, {}, {}, {}, {}, 0, {}};
  run.measure_from =
      start + std::chrono::duration_cast<BenchClock::duration>(std::chrono::duration<double>(phase.warmup_s));
  run.end = run.measure_from +
            std::chrono::duration_cast<BenchClock::duration>(std::chrono::duration<double>(phase.seconds));
  if (phase.batch < 1 || rays.empty() || rays.size() % std::size_t(phase.batch) != 0 ||
      expected.size() != rays.size()) {
    run.stats.failure = "the rays do not divide into whole requests";
    return run.stats;
  }
  run.seen.assign(rays.size(), false);
  if (first_answers != nullptr) first_answers->assign(rays.size(), RayAnswer{});
  run.build(match_id);
  if (phase.rate > 0) {
    run_open_loop(run);
  } else {
    run_closed_loop(run);
  }
  return std::move(run.stats);
}

}  // namespace shiftcast::bench
