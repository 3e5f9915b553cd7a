// End to end over loopback: a flood of batched raycasts on several RPC connections runs on the RPC
// threads against published world views, so the tick schedule of every match is unaffected: no tick
// starts a period late and none is skipped while the flood runs, and the ticks keep counting.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/support/server_fixture.hpp"

namespace shiftcast {
namespace {

constexpr int kFloodConnections = 3;
constexpr int kBatchesPerConnection = 400;
constexpr int kRaysPerBatch = 256;
constexpr int kInFlight = 4;  // batches pipelined per connection

void flood(std::uint16_t port, std::uint32_t match, std::atomic<int>& answered) {
  RpcTestClient rpc(port);
  int sent = 0, received = 0;
  while (received < kBatchesPerConnection) {
    while (sent < kBatchesPerConnection && sent - received < kInFlight) {
      flatbuffers::FlatBufferBuilder fbb;
      std::vector<flatbuffers::Offset<wire::BatchQuery>> queries;
      for (int i = 0; i < kRaysPerBatch; ++i) {
        const wire::Vec3f o(-900.0f + 7 * i, -900.0f + 3 * sent, 40), d(1, 1, 0.1f);
        const auto filter = wire::CreateQueryFilter(fbb);
        queries.push_back(
            wire::CreateBatchQuery(fbb, wire::CreateRaycastRequest(fbb, match, &o, &d, 3000, filter)));
      }
      const std::string key = dev_service_key();
      finish_envelope(fbb, wire::Message::BatchRequest,
                      wire::CreateBatchRequestDirect(fbb, &queries, key.c_str()).Union(), sent);
      if (!rpc.send(fbb)) return;
      ++sent;
    }
    const auto reply = rpc.receive();
    if (!reply) return;
    const EnvelopeView v = verify_envelope(*reply, kMaxRpcFrameBytes);
    if (v.error == wire::ErrorCode::Ok && v.envelope->message_as_BatchReply() != nullptr)
      answered.fetch_add(int(v.envelope->message_as_BatchReply()->results()->size()));
    ++received;
  }
}

class ServerFloodTest : public ServerTest {};

TEST_F(ServerFloodTest, RpcFloodLeavesEveryMatchTickScheduleUnaffected) {
  // The rate limit is lifted so the flood is real work on the RPC thread, not refusals.
  start(test_server_config("count = 2\n",
                           "[rpc]\nrate = 1000000000\nburst = 1000000000\nglobal_rate = "
                           "1000000000\nglobal_burst = 1000000000\n"));
  const std::string before = metrics();
  const double ticks_before = metric_value(before, "shiftcast_tick_seconds_count{match=\"2\"}");
  std::atomic<int> answered{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kFloodConnections; ++c)
    threads.emplace_back(flood, server_.ports().rpc, std::uint32_t(1 + c % 2), std::ref(answered));
  for (auto& t : threads)
    t.join();
  const std::string after = metrics();
  EXPECT_EQ(answered.load(), kFloodConnections * kBatchesPerConnection * kRaysPerBatch);
  for (const char* match : {"1", "2"}) {
    const std::string m = std::string("{match=\"") + match + "\"}";
    EXPECT_EQ(metric_value(after, "shiftcast_late_ticks_total" + m),
              metric_value(before, "shiftcast_late_ticks_total" + m))
        << "match " << match;
    EXPECT_EQ(metric_value(after, "shiftcast_skipped_ticks_total" + m), 0) << "match " << match;
  }
  EXPECT_GT(metric_value(after, "shiftcast_tick_seconds_count{match=\"2\"}"), ticks_before);
  EXPECT_GT(metric_value(after, "shiftcast_rpc_requests_total{kind=\"batch\"}"), 0);
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
