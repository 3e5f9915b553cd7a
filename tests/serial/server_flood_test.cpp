// End to end over loopback: a flood of batched raycasts on several RPC connections, some of them batches
// over the limit, while two matches tick. Asserted without timing: every request is answered or refused
// with a counted reason, the client's tallies equal the server's /metrics counters exactly, every ray of
// every answered batch has its result, and both matches' tick counters advance. Whether ticks start late
// under the flood is a property of the machine, not of the code: shiftcast-rpc-bench reports it
// (docs/server.md, "RPC load and the tick schedule").
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <thread>

#include "tests/support/server_fixture.hpp"

namespace shiftcast {
namespace {

constexpr int kFloodConnections = 3;
constexpr int kBatchesPerConnection = 400;
constexpr int kRaysPerBatch = 256;  // = [rpc] max_batch below: a batch one larger is refused
constexpr int kOversizeEvery = 8;   // every 8th batch asks one query too many
constexpr int kInFlight = 4;        // batches pipelined per connection

// What one client saw, by outcome.
struct Tally {
  int answered = 0;       // BatchReply
  long long results = 0;  // results in those replies
  int bad_argument = 0;   // RpcError BadArgument (the oversize batches)
  int other = 0;          // any other reply, or a missing one
};

void add_batch(flatbuffers::FlatBufferBuilder& fbb, std::uint32_t match, int sequence, int rays) {
  std::vector<flatbuffers::Offset<wire::BatchQuery>> queries;
  for (int i = 0; i < rays; ++i) {
    const wire::Vec3f o(-900.0f + 7 * i, -900.0f + 3 * sequence, 40), d(1, 1, 0.1f);
    const auto filter = wire::CreateQueryFilter(fbb);
    queries.push_back(
        wire::CreateBatchQuery(fbb, wire::CreateRaycastRequest(fbb, match, &o, &d, 3000, filter)));
  }
  const std::string key = dev_service_key();
  finish_envelope(fbb, wire::Message::BatchRequest,
                  wire::CreateBatchRequestDirect(fbb, &queries, key.c_str()).Union(),
                  std::uint64_t(sequence));
}

bool oversize(int sequence) {
  return sequence % kOversizeEvery == kOversizeEvery - 1;
}

void count_reply(const std::optional<std::vector<std::uint8_t>>& reply, Tally& tally) {
  if (!reply) {
    ++tally.other;
    return;
  }
  const EnvelopeView v = verify_envelope(*reply, kMaxRpcFrameBytes);
  if (v.error != wire::ErrorCode::Ok) {
    ++tally.other;
  } else if (const auto* batch = v.envelope->message_as_BatchReply()) {
    ++tally.answered;
    tally.results += batch->results() == nullptr ? 0 : batch->results()->size();
  } else if (const auto* error = v.envelope->message_as_RpcError();
             error != nullptr && error->code() == wire::ErrorCode::BadArgument) {
    ++tally.bad_argument;
  } else {
    ++tally.other;
  }
}

void flood(std::uint16_t port, std::uint32_t match, Tally& tally) {
  RpcTestClient rpc(port);
  int sent = 0, received = 0;
  while (received < kBatchesPerConnection) {
    while (sent < kBatchesPerConnection && sent - received < kInFlight) {
      flatbuffers::FlatBufferBuilder fbb;
      add_batch(fbb, match, sent, oversize(sent) ? kRaysPerBatch + 1 : kRaysPerBatch);
      if (!rpc.send(fbb)) return;
      ++sent;
    }
    count_reply(rpc.receive(), tally);
    ++received;
  }
  // A connection handles its frames in order, and counts each before it handles the next: once this
  // last (empty, so refused) batch is answered, every counter of the flood's requests is final.
  flatbuffers::FlatBufferBuilder fbb;
  add_batch(fbb, match, sent, 0);
  if (rpc.send(fbb)) count_reply(rpc.receive(), tally);
}

class ServerFloodTest : public ServerTest {};

TEST_F(ServerFloodTest, EveryFloodedRequestIsAnsweredOrRefusedAndCountedWhileMatchesTick) {
  // The rate limit is lifted so the flood is real work on the RPC threads, and the only refusals are the
  // ones the flood asks for (oversize and empty batches), whose number is known in advance.
  start(test_server_config("count = 2\n", "[rpc]\nmax_batch = " + std::to_string(kRaysPerBatch) +
                                              "\nrate = 1000000000\nburst = 1000000000\nglobal_rate = "
                                              "1000000000\nglobal_burst = 1000000000\n"));
  const std::string batches = "shiftcast_rpc_requests_total{kind=\"batch\"}";
  const std::string bad_argument = rejected("rpc", "bad_argument");
  const std::array<std::string, 2> ticks{"shiftcast_tick_seconds_count{match=\"1\"}",
                                         "shiftcast_tick_seconds_count{match=\"2\"}"};
  const std::string before = metrics();

  std::array<Tally, kFloodConnections> tallies{};
  std::vector<std::thread> threads;
  for (int c = 0; c < kFloodConnections; ++c)
    threads.emplace_back(flood, server_.ports().rpc, std::uint32_t(1 + c % 2),
                         std::ref(tallies[std::size_t(c)]));
  for (auto& t : threads)
    t.join();
  const std::string after = metrics();

  Tally total;
  for (const Tally& t : tallies) {
    total.answered += t.answered;
    total.results += t.results;
    total.bad_argument += t.bad_argument;
    total.other += t.other;
  }
  // The closed form of what was asked: per connection, every kOversizeEvery-th batch too large, plus the
  // final empty one.
  const int oversize_per_connection = kBatchesPerConnection / kOversizeEvery;
  EXPECT_EQ(total.other, 0);
  EXPECT_EQ(total.answered, kFloodConnections * (kBatchesPerConnection - oversize_per_connection));
  EXPECT_EQ(total.bad_argument, kFloodConnections * (oversize_per_connection + 1));
  EXPECT_EQ(total.results, static_cast<long long>(total.answered) * kRaysPerBatch);
  // The server counted exactly what the clients saw.
  EXPECT_EQ(metric_value(after, batches) - metric_value(before, batches), total.answered);
  EXPECT_EQ(metric_value(after, bad_argument) - metric_value(before, bad_argument), total.bad_argument);
  // The matches kept ticking through the flood.
  for (const std::string& series : ticks)
    EXPECT_GT(metric_value(after, series), metric_value(before, series)) << series;
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
