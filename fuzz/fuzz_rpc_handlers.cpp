// Target: the RPC's query handlers against a small live level: a match on configs/levels/valve220_room.map
// with players and props, stepped once at start-up (tests/support/stepped_match_directory.hpp: real level,
// real simulation, real tick history). Each input is one request frame's bytes, verified as RpcConnection
// verifies them, then answered through the QueryService entry points the connection calls
// (answer_raycast, answer_sweep, answer_overlap, answer_batch with batch_cost; server/query_service.hpp).
// Promise: whatever verifies is answered or refused: an error code, or a reply of the request's own
// kind that verifies as an Envelope; never a crash, never a hang (libFuzzer's -timeout), and the cost
// the rate limit charges is finite and not negative.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "protocol/envelope.hpp"
#include "server/query_service.hpp"
#include "tests/support/stepped_match_directory.hpp"

namespace shiftcast::fuzz {
namespace {

// The server's default rpc.max_batch (configs/server.toml).
constexpr int kMaxBatch = 4096;
constexpr int kWarmTicks = 80;  // more than the second of history a match keeps at 64 Hz

struct Fixture {
  SteppedMatchDirectory directory{
      {{"room", std::string(SHIFTCAST_FUZZ_CONFIG_DIR) + "/levels/valve220_room.map"}}};
  std::uint32_t match_id = 0;
  Fixture() {
    const CreatedMatch created = directory.create({.level = "room", .max_players = 4, .props = 4, .seed = 1});
    require(created.error == wire::ErrorCode::Ok, "fixture: the match could not be created");
    match_id = created.match_id;
    for (int i = 0; i < kWarmTicks; ++i)
      directory.stepped(match_id)->step();
    // The seeds name this match: make sure a plain raycast in the room is answered, or the target would
    // only ever exercise refusals.
    flatbuffers::FlatBufferBuilder request;
    const wire::Vec3f origin(0, 0, 64), direction(1, 0, 0);
    request.Finish(wire::CreateRaycastRequest(request, match_id, &origin, &direction, 2000));
    QueryScratch scratch;
    flatbuffers::FlatBufferBuilder reply;
    const QueryAnswer a = answer_raycast(
        directory, *flatbuffers::GetRoot<wire::RaycastRequest>(request.GetBufferPointer()), scratch, reply);
    require(a.error.ok() && match_id == 1, "fixture: a raycast in the room (match 1) is not answered");
  }
};

void check(const QueryAnswer& answer, wire::Message expected, flatbuffers::FlatBufferBuilder& fbb) {
  if (!answer.error.ok()) return;  // refused with a typed reason
  require(answer.type == expected, "query handler: a reply of another kind than the request");
  require(!answer.reply.IsNull(), "query handler: Ok without a reply");
  finish_envelope(fbb, answer.type, answer.reply, 1);
  const EnvelopeView view =
      verify_envelope({fbb.GetBufferPointer(), fbb.GetSize()}, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
  require(view.error == wire::ErrorCode::Ok, "query handler: a reply that does not verify");
  require(view.envelope->message_type() == expected, "query handler: the reply envelope names another kind");
}

}  // namespace
}  // namespace shiftcast::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  using namespace shiftcast::fuzz;
  static const Fixture fixture;
  const std::vector<std::uint8_t> bytes = copy({data, size});
  const EnvelopeView view = verify_envelope(bytes, kMaxRpcFrameBytes);
  if (view.error != wire::ErrorCode::Ok) return 0;
  const wire::Envelope& envelope = *view.envelope;
  QueryScratch scratch;
  flatbuffers::FlatBufferBuilder fbb;
  switch (envelope.message_type()) {
    case wire::Message::RaycastRequest:
      check(answer_raycast(fixture.directory, *envelope.message_as_RaycastRequest(), scratch, fbb),
            wire::Message::RaycastReply, fbb);
      break;
    case wire::Message::SweepRequest:
      check(answer_sweep(fixture.directory, *envelope.message_as_SweepRequest(), scratch, fbb),
            wire::Message::SweepReply, fbb);
      break;
    case wire::Message::OverlapRequest:
      check(answer_overlap(fixture.directory, *envelope.message_as_OverlapRequest(), scratch, fbb),
            wire::Message::OverlapReply, fbb);
      break;
    case wire::Message::BatchRequest: {
      const wire::BatchRequest& batch = *envelope.message_as_BatchRequest();
      const double cost = batch_cost(batch);
      require(std::isfinite(cost) && cost >= 0, "batch_cost: not a finite, non-negative cost");
      check(answer_batch(fixture.directory, batch, kMaxBatch, scratch, fbb), wire::Message::BatchReply, fbb);
      break;
    }
    default:
      break;  // not a query: RpcConnection answers it (admin, subscriptions) or refuses it as unexpected
  }
  return 0;
}
