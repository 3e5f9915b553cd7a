// The PackageConsumer test's program: uses the installed shiftcast headers with their installed spelling,
// builds a solid-leaf BSP from one box brush and raycasts it, and frames, seals, opens and verifies a
// protocol packet. Every answer is checked against its closed form; exit code 0 only if all hold.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

#include "collision/brush.hpp"
#include "collision/bsp_build.hpp"
#include "collision/bsp_tree.hpp"
#include "collision/vec3.hpp"
#include "protocol/crypto.hpp"
#include "protocol/envelope.hpp"
#include "protocol/packet.hpp"
#include "protocol/shiftcast_generated.h"
#include "protocol/wire_constants.hpp"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

// The ray's hit distance is exact up to float rounding of the planes at this scale.
constexpr float kDistanceTolerance = 1e-3f;

void check_collision() {
  using shiftcast::Vec3;
  const std::vector<shiftcast::Brush> brushes{shiftcast::brush_from_box({-16, -16, -16}, {16, 16, 16})};
  const shiftcast::BspBuildResult built = shiftcast::build_bsp(brushes, {});
  check(built.error == shiftcast::BspBuildError::kNone, "build_bsp of one box brush");
  check(built.tree.check() == shiftcast::BspLoadError::kNone, "BspTree::check");

  // From x = -100 towards +x: enters the box's -x face at x = -16, i.e. 84 units along the ray.
  constexpr float kMaxDistance = 200;
  const shiftcast::TraceResult hit = built.tree.raycast({-100, 0, 0}, {1, 0, 0}, kMaxDistance);
  check(hit.status == shiftcast::QueryStatus::kOk && hit.hit, "ray at the box hits");
  check(std::fabs(hit.fraction * kMaxDistance - 84.0f) < kDistanceTolerance, "hit at 84 units");
  check(hit.normal == (Vec3{-1, 0, 0}), "normal of the -x face");
  check(hit.brush == 0, "brush 0");

  // Parallel to the box, 10 units above its top face: no hit.
  const shiftcast::TraceResult miss = built.tree.raycast({-100, 0, 26}, {1, 0, 0}, kMaxDistance);
  check(!miss.hit && miss.fraction == 1.0f, "ray above the box misses");
  check(built.tree.point_brush({0, 0, 0}) == 0 && built.tree.point_brush({0, 0, 40}) == shiftcast::kNoBrush,
        "point_brush inside and outside");
}

void check_protocol() {
  check(shiftcast::crypto_init(), "crypto_init");
  shiftcast::Key key{};
  for (std::size_t i = 0; i < key.size(); ++i)
    key[i] = static_cast<std::uint8_t>(i * 7 + 1);

  flatbuffers::FlatBufferBuilder fbb;
  constexpr std::uint64_t kTick = 4242;
  const auto body = shiftcast::wire::CreateKeepAlive(fbb, kTick, 3);
  shiftcast::finish_envelope(fbb, shiftcast::wire::Message::KeepAlive, body.Union());
  const std::span<const std::uint8_t> inner{fbb.GetBufferPointer(), fbb.GetSize()};

  const shiftcast::PacketHeader header{
      .match_id = 7, .client_id = 99, .sequence = 12, .ack = 11, .ack_bits = 5};
  const std::vector<std::uint8_t> datagram =
      shiftcast::seal_packet(header, shiftcast::Direction::kServerToClient, key, inner);
  check(datagram.size() <= shiftcast::kMaxDatagramBytes, "datagram fits");

  const shiftcast::EnvelopeView view = shiftcast::verify_envelope(datagram, shiftcast::kMaxDatagramBytes);
  check(view.error == shiftcast::wire::ErrorCode::Ok, "outer envelope verifies");
  const shiftcast::wire::Packet* packet = view.envelope ? view.envelope->message_as_Packet() : nullptr;
  check(packet != nullptr, "outer envelope holds a Packet");
  if (packet == nullptr) return;

  const shiftcast::OpenedPacket opened =
      shiftcast::open_packet(*packet, shiftcast::Direction::kServerToClient, key);
  check(opened.error == shiftcast::wire::ErrorCode::Ok, "packet opens");
  check(opened.header.sequence == 12 && opened.header.client_id == 99 && opened.header.match_id == 7,
        "header round-trips");
  const shiftcast::wire::Envelope* envelope =
      opened.error == shiftcast::wire::ErrorCode::Ok ? opened.inner_envelope() : nullptr;
  const shiftcast::wire::KeepAlive* keep_alive = envelope ? envelope->message_as_KeepAlive() : nullptr;
  check(keep_alive != nullptr && keep_alive->tick() == kTick && keep_alive->events_received() == 3,
        "inner KeepAlive round-trips");

  // The other direction's keys never open it: the direction is authenticated.
  check(shiftcast::open_packet(*packet, shiftcast::Direction::kClientToServer, key).error ==
            shiftcast::wire::ErrorCode::DecryptFailed,
        "wrong direction is refused");
}

}  // namespace

int main() {
  check_collision();
  check_protocol();
  if (failures != 0) return 1;
  std::puts("package consumer: collision and protocol answers hold");
  return 0;
}
