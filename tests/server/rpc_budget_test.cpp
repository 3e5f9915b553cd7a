// The RPC listener's CPU and time bounds with a clock the test drives (RpcSettings::now): the global
// query budget shared fairly by every connection, refused frames paid for, batches refused for their
// size without being charged, and the idle and read timeouts. The closed forms come from the settings
// (server/query_cost.hpp's model: a short raycast costs 1, a small frame at least 1).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "tests/support/query_requests.hpp"
#include "tests/support/rpc_harness.hpp"

namespace shiftcast::rpc_test {
namespace {

using namespace shiftcast::query_test;

class RpcBudgetTest : public ArenaQueryTest<4, 0, 7, 8> {
 protected:
  RpcSettings settings() {
    RpcSettings s;
    s.open_reads = true;
    s.now = [clock = clock_] { return clock->load(); };
    s.timeout_check_s = 3600;  // the test calls check_timeouts itself
    return s;
  }
  std::vector<std::uint8_t> batch(int raycasts, std::uint64_t id) {
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<wire::BatchQuery>> q;
    for (int i = 0; i < raycasts; ++i)
      q.push_back(wire::CreateBatchQuery(fbb, add_raycast(fbb, match_id_, {0, 0, 100}, {1, 0, 0}, 50)));
    return request_frame(fbb, wire::Message::BatchRequest, wire::CreateBatchRequest(fbb, fbb.CreateVector(q)),
                         id);
  }
  std::vector<std::uint8_t> raycast(std::uint64_t id) {
    flatbuffers::FlatBufferBuilder fbb;
    return request_frame(fbb, wire::Message::RaycastRequest,
                         add_raycast(fbb, match_id_, {0, 0, 100}, {1, 0, 0}, 50), id);
  }
  // The code of the next reply (Ok: not an RpcError); Internal when none came.
  static wire::ErrorCode next_code(LoopbackClient& c, std::uint32_t* retry_after_ms = nullptr) {
    const std::optional<Frame> f = c.read_frame();
    if (!f) return wire::ErrorCode::Internal;
    const wire::RpcError* e = f->envelope()->message_as_RpcError();
    if (e != nullptr && retry_after_ms != nullptr) *retry_after_ms = e->retry_after_ms();
    return e == nullptr ? wire::ErrorCode::Ok : e->code();
  }

  std::shared_ptr<std::atomic<double>> clock_ = std::make_shared<std::atomic<double>>(100.0);
};

// Finding: buckets were per connection with no global bound; 64 connections within their own limits
// pushed a legitimate raycast to 1.4 s.
TEST_F(RpcBudgetTest, FloodingConnectionsShareTheGlobalBudgetAndCannotStarveAnother) {
  constexpr double kGlobal = 1000;  // per second, and the global burst
  constexpr int kHogs = 4;
  constexpr int kBatch = 100;  // raycasts: cost 100
  RpcSettings s = settings();
  s.rate = 1000;
  s.burst = 1000;
  s.global_rate = kGlobal;
  s.global_burst = kGlobal;
  RpcHarness rpc(arena_->directory, s);
  std::vector<std::unique_ptr<LoopbackClient>> hogs;
  for (int i = 0; i < kHogs; ++i)
    hogs.push_back(std::make_unique<LoopbackClient>(rpc.port()));
  LoopbackClient legitimate(rpc.port());
  // Shares follow the number of open connections: wait (bounded) until the server counts all five.
  const auto deadline = std::chrono::steady_clock::now() + kTimeout;
  while (rpc.server->connections() < kHogs + 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  ASSERT_EQ(rpc.server->connections(), kHogs + 1);
  std::uint64_t id = 1;
  for (int second = 0; second < 8; ++second) {
    clock_->store(100.0 + second);
    // Each hog asks for three batches a second: 300, more than its fair share of 1000 / 5 = 200 (its
    // bucket holds and refills 200).
    int admitted = 0;
    for (auto& hog : hogs) {
      for (int k = 0; k < 3; ++k)
        ASSERT_TRUE(hog->send(batch(kBatch, id++)));
      for (int k = 0; k < 3; ++k)
        admitted += next_code(*hog) == wire::ErrorCode::Ok ? kBatch : 0;
    }
    ASSERT_TRUE(legitimate.send(raycast(id++)));
    const wire::ErrorCode legit = next_code(legitimate);
    SCOPED_TRACE(second);
    // The hogs get their shares, never more than the global rate together, and the legitimate
    // connection's share is still there for it, every second including the first.
    EXPECT_EQ(legit, wire::ErrorCode::Ok);
    EXPECT_LE(admitted, kGlobal) << "the hogs took more than the global rate";
    EXPECT_EQ(admitted, kHogs * 200);
  }
}

// Finding: frames refused before the bucket (wrong version, unexpected message) were free.
TEST_F(RpcBudgetTest, RefusedFramesCostOneUnitEachAndADebtorIsRefusedUntilPaid) {
  RpcSettings s = settings();
  s.rate = 10;
  s.burst = 100;
  RpcHarness rpc(arena_->directory, s);
  LoopbackClient c(rpc.port());
  std::vector<std::uint8_t> flood;
  for (int i = 0; i < 300; ++i) {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(wire::CreateEnvelope(fbb, kProtocolVersion + 1, std::uint64_t(i + 1), wire::Message::KeepAlive,
                                    wire::CreateKeepAlive(fbb).Union()),
               kFileIdentifier);
    const auto f = framed({fbb.GetBufferPointer(), fbb.GetSize()});
    flood.insert(flood.end(), f.begin(), f.end());
  }
  ASSERT_TRUE(c.send(flood));
  // 100 in the bucket: 100 refused for what they are, the 101st too (the bucket was not yet in debt),
  // then every one costs again and is refused RateLimited.
  for (int i = 0; i < 300; ++i)
    ASSERT_EQ(next_code(c), i <= 100 ? wire::ErrorCode::WrongVersion : wire::ErrorCode::RateLimited) << i;
  std::uint32_t retry = 0;
  ASSERT_TRUE(c.send(raycast(1000)));
  EXPECT_EQ(next_code(c, &retry), wire::ErrorCode::RateLimited);
  EXPECT_GT(retry, 0u);
  clock_->store(100.0 + 100.0);  // 1000 units later the debt (at most the burst) is paid and more
  ASSERT_TRUE(c.send(raycast(1001)));
  EXPECT_EQ(next_code(c), wire::ErrorCode::Ok);
  // A frame over kFrameCostBytes is not even verified without the tokens to read it.
  RpcSettings small = settings();
  small.rate = 10;
  small.burst = 100;
  RpcHarness rpc2(arena_->directory, small);
  LoopbackClient big(rpc2.port());
  std::vector<std::uint8_t> junk(200 * 1024, 0x33);  // 200 units to read, 100 in the bucket
  ASSERT_TRUE(big.send(framed(junk)));
  EXPECT_EQ(next_code(big), wire::ErrorCode::RateLimited);
  EXPECT_EQ(rpc2.rejections.count(wire::ErrorCode::WrongIdentifier), 0u);
}

// Finding: a batch over max_batch whose cost was over the burst was refused RateLimited with
// retry_after_ms 4294967295, and a refused batch was still charged.
TEST_F(RpcBudgetTest, OversizedBatchesAreBadArgumentAndNotChargedTheirQueries) {
  RpcSettings s = settings();
  s.rate = 1;
  s.burst = 20;
  s.max_batch = 8;
  RpcHarness rpc(arena_->directory, s);
  LoopbackClient c(rpc.port());
  std::uint32_t retry = 99;
  ASSERT_TRUE(c.send(batch(30, 1)));  // over max_batch, and its cost over the burst
  EXPECT_EQ(next_code(c, &retry), wire::ErrorCode::BadArgument);
  EXPECT_EQ(retry, 0u);
  for (std::uint64_t id = 2; id <= 4; ++id) {
    ASSERT_TRUE(c.send(batch(9, id)));  // over max_batch, cost 9 each if it were charged
    EXPECT_EQ(next_code(c), wire::ErrorCode::BadArgument);
  }
  // The four refused frames cost what reading them did (about 5 units in all), not their queries: a
  // legal batch of 8 still passes.
  ASSERT_TRUE(c.send(batch(8, 5)));
  EXPECT_EQ(next_code(c), wire::ErrorCode::Ok);
  EXPECT_EQ(rpc.rejections.count(wire::ErrorCode::RateLimited), 0u);
}

// Finding: no idle or read timeout, so slots were held for ever. Finding: an idle close was counted in
// shiftcast_rejected_total{channel="rpc",reason="timeout"} as if it were a refusal.
TEST_F(RpcBudgetTest, IdleAndUnfinishedFramesTimeOutButSubscribersMayWait) {
  RpcSettings s = settings();
  s.idle_timeout_s = 30;
  s.read_timeout_s = 10;
  // The clock jumps while a reply's write completion may still be on its way to the connection's strand:
  // that write must not look stuck, and a check that finds it still active leaves the connection alone,
  // so the test checks again (bounded) until the timeout is told.
  s.write_timeout_s = 1000;
  RpcHarness rpc(arena_->directory, s);
  const auto timed_out = [&](LoopbackClient& c) {
    for (int attempt = 0; attempt < 20; ++attempt) {
      rpc.server->check_timeouts();
      const std::optional<Frame> f = c.read_frame(std::chrono::milliseconds(100));
      if (f) {
        const wire::RpcError* e = f->envelope()->message_as_RpcError();
        return e != nullptr && e->code() == wire::ErrorCode::Timeout;
      }
    }
    return false;
  };
  LoopbackClient slow(rpc.port()), idle(rpc.port()), subscriber(rpc.port());
  // A request, then 3 bytes of a 100-byte frame in the same write: once the request is answered, the
  // server has read the start of the unfinished frame (at 100).
  std::vector<std::uint8_t> bytes = raycast(9);
  bytes.insert(bytes.end(), {100, 0, 0, 0, 1, 2, 3});
  ASSERT_TRUE(slow.send(bytes));
  EXPECT_EQ(next_code(slow), wire::ErrorCode::Ok);
  {
    flatbuffers::FlatBufferBuilder fbb;
    ASSERT_TRUE(subscriber.send(request_frame(fbb, wire::Message::SubscribeContacts,
                                              wire::CreateSubscribeContacts(fbb, match_id_), 1)));
    EXPECT_EQ(next_code(subscriber), wire::ErrorCode::Ok);
  }
  // Frames are read at once, and the clock only moves when the test says: a request round trip proves
  // the slow client's bytes were read before the clock moves on.
  ASSERT_TRUE(idle.send(raycast(1)));
  EXPECT_EQ(next_code(idle), wire::ErrorCode::Ok);
  clock_->store(109);
  rpc.server->check_timeouts();
  ASSERT_TRUE(idle.send(raycast(2)));  // at 109: idle for 9 s, nothing is due
  EXPECT_EQ(next_code(idle), wire::ErrorCode::Ok);
  clock_->store(110.5);
  EXPECT_TRUE(timed_out(slow));  // its frame began at 100: 10.5 s > 10
  EXPECT_TRUE(slow.closed_by_server());
  // A frame left unfinished (a slow-loris) is a refusal, counted before its error frame is sent.
  const auto refused_timeouts = [&] {
    return rpc.registry.counter("shiftcast_rejected_total", "", {{"channel", "rpc"}, {"reason", "timeout"}})
        .value();
  };
  EXPECT_EQ(refused_timeouts(), 1u);
  clock_->store(139.5);  // the idle client's last request was at 109: 30.5 s
  // Told why, as the slow one was.
  EXPECT_TRUE(timed_out(idle));
  EXPECT_TRUE(idle.closed_by_server());
  // An idle client closed is normal life, not a refusal: counted as a close alone (below).
  EXPECT_EQ(refused_timeouts(), 1u);
  EXPECT_EQ(rpc.rejections.count(wire::ErrorCode::Timeout), 1u);
  // The subscriber sent nothing since 100 either, but waits for pushes: it stays.
  // (The server counts a close just after the socket closes: a bounded wait for the count.)
  const auto deadline = std::chrono::steady_clock::now() + kTimeout;
  while (rpc.server->connections() > 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  EXPECT_EQ(rpc.server->connections(), 1);
  EXPECT_EQ(rpc.registry.counter("shiftcast_rpc_closed_total", "", {{"reason", "read_timeout"}}).value(), 1u);
  EXPECT_EQ(rpc.registry.counter("shiftcast_rpc_closed_total", "", {{"reason", "idle_timeout"}}).value(), 1u);
}

}  // namespace
}  // namespace shiftcast::rpc_test
