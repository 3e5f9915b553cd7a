// Every bad input the RPC can get, each on its own connection, refused with its typed ErrorCode (and the
// request's id when the envelope can be read), counted once under that reason, and followed either by the
// same connection answering a good request (the stream stayed in step) or by the close a broken stream
// needs. Meanwhile a second connection keeps getting answers equal to world_raycast's.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tests/support/query_requests.hpp"
#include "tests/support/rpc_harness.hpp"

namespace shiftcast::rpc_test {
namespace {

using namespace shiftcast::query_test;

constexpr int kMaxBatch = 16;

struct BadInput {
  std::string name;
  std::vector<std::uint8_t> bytes;
  wire::ErrorCode code;
  std::uint64_t request_id = 0;  // what the refusal must carry
  bool closes = false;           // the stream cannot be resynchronised: the server closes it
  bool half_close = false;       // the client stops sending after the bytes
};

std::vector<std::uint8_t> random_bytes(std::mt19937& rng, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  for (auto& b : out)
    b = std::uint8_t(rng());
  return out;
}

template <typename T>
std::vector<std::uint8_t> envelope(
    wire::Message type, std::uint64_t id,
    const std::function<flatbuffers::Offset<T>(flatbuffers::FlatBufferBuilder&)>& body) {
  flatbuffers::FlatBufferBuilder fbb;
  return request_frame(fbb, type, body(fbb), id);
}

std::vector<BadInput> bad_inputs(std::uint32_t match) {
  std::mt19937 rng(31);
  std::vector<BadInput> cases;
  cases.push_back({"random payload", framed(random_bytes(rng, 300)), wire::ErrorCode::WrongIdentifier});
  // Too short to hold a root offset and an identifier: nothing in it can be read, so id 0.
  {
    const std::vector<std::uint8_t> short_payload{7, 0, 0, 0, 'S', 'H', 'C'};
    cases.push_back({"payload of 7 bytes", framed(short_payload), wire::ErrorCode::Malformed});
  }
  {
    std::vector<std::uint8_t> junk = random_bytes(rng, 300);
    std::copy_n(kFileIdentifier, 4, junk.begin() + 4);
    cases.push_back({"random payload with the identifier", framed(junk), wire::ErrorCode::Malformed});
  }
  {
    std::vector<std::uint8_t> stream = random_bytes(rng, 64);
    const std::uint32_t n = stream[0] | stream[1] << 8 | stream[2] << 16 | std::uint32_t(stream[3]) << 24;
    EXPECT_GT(n, kMaxRpcFrameBytes) << "the seed's first four bytes must announce an oversized frame";
    cases.push_back({"random stream", stream, wire::ErrorCode::TooLarge, 0, true});
  }
  {
    std::vector<std::uint8_t> whole =
        envelope<wire::RaycastRequest>(wire::Message::RaycastRequest, 5, [&](auto& fbb) {
          return add_raycast(fbb, match, {0, 0, 50}, {1, 0, 0}, 100);
        });
    whole.resize(whole.size() / 2);
    cases.push_back(
        {"truncated frame, then the client closes", whole, wire::ErrorCode::Malformed, 0, true, true});
  }
  {
    std::vector<std::uint8_t> oversized = framed(std::vector<std::uint8_t>(16, 0xab));
    const std::uint32_t n = kMaxRpcFrameBytes + 1;
    for (int i = 0; i < 4; ++i)
      oversized[std::size_t(i)] = std::uint8_t(n >> (8 * i));
    cases.push_back({"oversized length prefix", oversized, wire::ErrorCode::TooLarge, 0, true});
  }
  cases.push_back({"zero length prefix", {0, 0, 0, 0, 1, 2, 3}, wire::ErrorCode::Malformed, 0, true});
  {
    flatbuffers::FlatBufferBuilder fbb;
    const auto e = wire::CreateEnvelope(fbb, kProtocolVersion, 70, wire::Message::ListMatches,
                                        wire::CreateListMatches(fbb).Union());
    fbb.Finish(e, "XXXX");
    cases.push_back({"wrong identifier", framed({fbb.GetBufferPointer(), fbb.GetSize()}),
                     wire::ErrorCode::WrongIdentifier});
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    const auto e = wire::CreateEnvelope(fbb, kProtocolVersion + 1, 71, wire::Message::ListMatches,
                                        wire::CreateListMatches(fbb).Union());
    wire::FinishEnvelopeBuffer(fbb, e);
    cases.push_back({"wrong version", framed({fbb.GetBufferPointer(), fbb.GetSize()}),
                     wire::ErrorCode::WrongVersion, 71});
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    wire::FinishEnvelopeBuffer(fbb, wire::CreateEnvelope(fbb, kProtocolVersion, 72));
    cases.push_back(
        {"no message", framed({fbb.GetBufferPointer(), fbb.GetSize()}), wire::ErrorCode::Malformed, 72});
  }
  cases.push_back({"a reply sent as a request",
                   envelope<wire::RaycastReply>(wire::Message::RaycastReply, 73,
                                                [](auto& fbb) { return wire::CreateRaycastReply(fbb); }),
                   wire::ErrorCode::UnexpectedMessage, 73});
  cases.push_back({"a UDP message",
                   envelope<wire::KeepAlive>(wire::Message::KeepAlive, 74,
                                             [](auto& fbb) { return wire::CreateKeepAlive(fbb, 1); }),
                   wire::ErrorCode::UnexpectedMessage, 74});
  cases.push_back(
      {"NaN origin",
       envelope<wire::RaycastRequest>(wire::Message::RaycastRequest, 75,
                                      [&](auto& fbb) {
                                        return add_raycast(fbb, match, {kNaN, 0, 0}, {1, 0, 0}, 100);
                                      }),
       wire::ErrorCode::BadArgument, 75});
  cases.push_back(
      {"infinite sweep end",
       envelope<wire::SweepRequest>(
           wire::Message::SweepRequest, 76,
           [&](auto& fbb) {
             return add_sweep(fbb, match, {wire::ShapeKind::Sphere, 4}, {0, 0, 50}, {0, kInf, 50});
           }),
       wire::ErrorCode::BadArgument, 76});
  cases.push_back(
      {"unknown match",
       envelope<wire::RaycastRequest>(wire::Message::RaycastRequest, 77,
                                      [&](auto& fbb) {
                                        return add_raycast(fbb, match + 1000, {0, 0, 50}, {1, 0, 0}, 100);
                                      }),
       wire::ErrorCode::UnknownMatch, 77});
  cases.push_back(
      {"wrong admin key",
       envelope<wire::EndMatch>(wire::Message::EndMatch, 78,
                                [&](auto& fbb) { return wire::CreateEndMatchDirect(fbb, "guess", match); }),
       wire::ErrorCode::Unauthorized, 78});
  cases.push_back(
      {"batch over the limit",
       envelope<wire::BatchRequest>(
           wire::Message::BatchRequest, 79,
           [&](auto& fbb) {
             std::vector<flatbuffers::Offset<wire::BatchQuery>> q;
             for (int i = 0; i <= kMaxBatch; ++i) {
               q.push_back(wire::CreateBatchQuery(fbb, add_raycast(fbb, match, {0, 0, 50}, {1, 0, 0}, 10)));
             }
             return wire::CreateBatchRequest(fbb, fbb.CreateVector(q));
           }),
       wire::ErrorCode::BadArgument, 79});
  cases.push_back({"unknown subscription",
                   envelope<wire::UnsubscribeContacts>(
                       wire::Message::UnsubscribeContacts, 80,
                       [](auto& fbb) { return wire::CreateUnsubscribeContacts(fbb, 12345); }),
                   wire::ErrorCode::BadArgument, 80});
  cases.push_back({"subscription kinds beyond the four",
                   envelope<wire::SubscribeContacts>(
                       wire::Message::SubscribeContacts, 81,
                       [&](auto& fbb) { return wire::CreateSubscribeContacts(fbb, match, 0, 0x30); }),
                   wire::ErrorCode::BadArgument, 81});
  return cases;
}

class RpcRefusalTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { arena_ = new ArenaMatch(8, 8, 4, 20); }
  static void TearDownTestSuite() {
    delete arena_;
    arena_ = nullptr;
  }
  static inline ArenaMatch* arena_ = nullptr;
};

// A raycast that must come back with world_raycast's answer on the tick the reply names.
void expect_answered(const ArenaMatch& arena, LoopbackClient& c, std::uint64_t id, Vec3 origin, Vec3 dir) {
  const std::uint32_t match = arena.id;
  flatbuffers::FlatBufferBuilder fbb;
  ASSERT_TRUE(c.send(
      request_frame(fbb, wire::Message::RaycastRequest, add_raycast(fbb, match, origin, dir, 3000), id)));
  const std::optional<Frame> f = c.read_frame();
  ASSERT_TRUE(f.has_value()) << "request " << id;
  EXPECT_EQ(f->envelope()->request_id(), id);
  const wire::RaycastReply* r = f->envelope()->message_as_RaycastReply();
  ASSERT_NE(r, nullptr) << "request " << id;
  const auto tick = std::uint64_t(r->rewind()->tick_used());
  expect_hit(r->hit(),
             world_raycast(arena.stepped()->level_tree(), arena.entities_at(tick), origin, dir, 3000, {}),
             int(id));
}

TEST_F(RpcRefusalTest, EveryBadInputIsRefusedWithItsCodeWhileAnotherConnectionIsServed) {
  RpcSettings settings;
  settings.open_reads = true;  // reads and their keys are hostile_rpc_test.cpp's
  settings.admin_key = "the real key";
  settings.max_batch = kMaxBatch;
  RpcHarness rpc(arena_->directory, settings);
  LoopbackClient good(rpc.port());
  ASSERT_TRUE(good.connected());
  std::mt19937 rng(32);
  std::uint64_t good_id = 1;
  for (const BadInput& c : bad_inputs(arena_->id)) {
    SCOPED_TRACE(c.name);
    const std::uint64_t counted_before = rpc.rejections.count(c.code);
    LoopbackClient bad(rpc.port());
    ASSERT_TRUE(bad.connected());
    ASSERT_TRUE(bad.send(c.bytes));
    if (c.half_close) bad.shutdown_send();
    arena_->stepped()->step();  // the match ticks on regardless
    const std::optional<Frame> f = bad.read_frame();
    ASSERT_TRUE(f.has_value());
    const wire::RpcError* e = f->envelope()->message_as_RpcError();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->code(), c.code) << (e->detail() ? e->detail()->str() : "");
    EXPECT_EQ(f->envelope()->request_id(), c.request_id);
    ASSERT_NE(e->detail(), nullptr);
    EXPECT_FALSE(e->detail()->str().empty());
    EXPECT_EQ(rpc.rejections.count(c.code), counted_before + 1);
    if (c.closes) {
      EXPECT_TRUE(bad.closed_by_server());
    } else {
      expect_answered(*arena_, bad, 900, random_point(rng), {1, 0.25f, -0.1f});
    }
    expect_answered(*arena_, good, good_id++, random_point(rng), {0.3f, -1, -0.2f});
  }
}

}  // namespace
}  // namespace shiftcast::rpc_test
