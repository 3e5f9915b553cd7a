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
#include "protocol/connected_message.hpp"
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

  constexpr std::uint64_t kTick = 4242;
  std::vector<std::uint8_t> message;
  shiftcast::write_keep_alive(message, {kTick, 3, std::nullopt});

  const shiftcast::PacketHeader header{
      .match_id = 7, .client_id = 99, .sequence = 12, .ack = 11, .ack_bits = 5};
  const std::vector<std::uint8_t> datagram =
      shiftcast::seal_packet(header, shiftcast::Direction::kServerToClient, key, message);
  check(datagram.size() <= shiftcast::kMaxDatagramBytes, "datagram fits");
  check(shiftcast::datagram_form(datagram) == shiftcast::DatagramForm::kConnectedPacket,
        "a connected packet by its first byte");

  // The receiver has seen sequences up to 10 and sent up to 11 of its own.
  const shiftcast::PacketIdentity identity{7, 99};
  const shiftcast::OpenedPacket opened =
      shiftcast::open_packet(datagram, shiftcast::Direction::kServerToClient, key, identity, {10, 11});
  check(opened.error == shiftcast::wire::ErrorCode::Ok, "packet opens");
  check(opened.header.sequence == 12 && opened.header.ack == 11 && opened.header.ack_bits == 5,
        "header round-trips");
  const shiftcast::ReadMessage read = shiftcast::read_connected_message(opened.message);
  check(read.error == shiftcast::wire::ErrorCode::Ok &&
            read.message.kind == shiftcast::MessageKind::kKeepAlive &&
            read.message.keep_alive.tick == kTick && read.message.keep_alive.events_received == 3,
        "KeepAlive round-trips");

  // The other direction's keys never open it: the direction is authenticated.
  check(shiftcast::open_packet(datagram, shiftcast::Direction::kClientToServer, key, identity, {10, 11})
                .error == shiftcast::wire::ErrorCode::DecryptFailed,
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
