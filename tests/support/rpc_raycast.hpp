// A raycast over the real server's RPC, as a game service sends it (the service key, a layer mask, an
// AsOf), and its reply read back: shared by the end-to-end query and spectator tests.
//
//   RpcTestClient rpc(server.ports().rpc);
//   RayReply r = raycast(rpc, match, origin, direction, 1000, kLayerAll, wire::AsOfKind::Tick, 120);
#pragma once

#include "collision/vec3.hpp"
#include "protocol/envelope.hpp"
#include "protocol/shiftcast_generated.h"
#include "protocol/wire_constants.hpp"
#include "tests/support/rpc_test_client.hpp"
#include "tests/support/server_process.hpp"

namespace shiftcast {

struct RayReply {
  wire::ErrorCode error = wire::ErrorCode::Ok;
  bool hit = false;
  float fraction = 1;
  Vec3 end{};
  Vec3 normal{};
  std::int32_t brush = -1;
  std::uint32_t entity = 0;
  double tick_used = 0;
  wire::RewindClamp clamp = wire::RewindClamp::None;
};

inline flatbuffers::Offset<wire::RaycastRequest> build_ray(flatbuffers::FlatBufferBuilder& fbb,
                                                           std::uint32_t match, Vec3 o, Vec3 d,
                                                           float max_distance, std::uint32_t mask,
                                                           wire::AsOfKind as_of, double tick,
                                                           bool level = true) {
  const wire::Vec3f origin(o.x, o.y, o.z), direction(d.x, d.y, d.z);
  const auto filter = wire::CreateQueryFilter(fbb, mask, 0, level);
  const auto when = wire::CreateAsOf(fbb, as_of, tick, 0);
  return wire::CreateRaycastRequest(fbb, match, &origin, &direction, max_distance, filter, when,
                                    fbb.CreateString(dev_service_key()));
}

inline RayReply read_ray(const wire::RaycastReply* r) {
  RayReply out;
  const wire::QueryHit* h = r->hit();
  out.hit = h->hit();
  out.fraction = h->fraction();
  out.end = {h->end_position()->x(), h->end_position()->y(), h->end_position()->z()};
  out.normal = {h->normal()->x(), h->normal()->y(), h->normal()->z()};
  out.brush = h->brush();
  out.entity = h->entity();
  out.tick_used = r->rewind()->tick_used();
  out.clamp = r->rewind()->clamp();
  return out;
}

inline RayReply raycast(RpcTestClient& rpc, std::uint32_t match, Vec3 o, Vec3 d, float max_distance,
                        std::uint32_t mask, wire::AsOfKind as_of = wire::AsOfKind::Now, double tick = 0,
                        bool level = true) {
  flatbuffers::FlatBufferBuilder fbb;
  finish_envelope(fbb, wire::Message::RaycastRequest,
                  build_ray(fbb, match, o, d, max_distance, mask, as_of, tick, level).Union(), 1);
  RayReply out;
  out.error = wire::ErrorCode::Internal;
  if (!rpc.send(fbb)) return out;
  const auto bytes = rpc.receive();
  if (!bytes) return out;
  const EnvelopeView v = verify_envelope(*bytes, kMaxRpcFrameBytes);
  if (v.error != wire::ErrorCode::Ok) return out;
  if (const auto* e = v.envelope->message_as_RpcError()) {
    out.error = e->code();
    return out;
  }
  const auto* r = v.envelope->message_as_RaycastReply();
  if (r == nullptr || r->hit() == nullptr || r->rewind() == nullptr) return out;
  return read_ray(r);
}

}  // namespace shiftcast
