#include "protocol/input_codec.hpp"

#include <algorithm>
#include <cmath>

namespace shiftcast {
namespace {

constexpr std::int32_t kHalfTurnSteps = 32768;
constexpr double kMaxViewTick = 35184372088832.0;  // 2^45 ticks: q = 256 x view_tick stays below 2^53
constexpr std::uint64_t kViewTickLimit = std::uint64_t{1} << 53;

// Quantized fields: the integers the wire carries.
struct Steps {
  std::int32_t forward = 0, right = 0, yaw = 0, pitch = 0;  // yaw in [-32768, 32767]
  std::uint32_t buttons = 0;
  std::uint64_t view = 0;  // view_tick x 256
};

std::int32_t move_steps(float v) {
  if (!std::isfinite(v)) return 0;
  return static_cast<std::int32_t>(std::lround(std::clamp(v, -1.0f, 1.0f) * kMoveSteps));
}
std::int32_t yaw_steps(float yaw) {
  if (!std::isfinite(yaw)) return 0;
  const double turns = double(yaw) / kAngleUnit;  // exact enough: |yaw| is a few turns at most
  const auto s = static_cast<std::int64_t>(std::llround(std::fmod(turns, 65536.0)));
  return static_cast<std::int32_t>(((s + kHalfTurnSteps) % 65536 + 65536) % 65536 - kHalfTurnSteps);
}
std::int32_t pitch_steps(float pitch) {
  if (!std::isfinite(pitch)) return 0;
  const double s = std::clamp(double(pitch) / kAngleUnit, -double(kMaxPitchSteps), double(kMaxPitchSteps));
  return static_cast<std::int32_t>(std::lround(s));
}
std::uint64_t view_steps(double view_tick) {
  if (!std::isfinite(view_tick)) return 0;
  return static_cast<std::uint64_t>(std::llround(std::clamp(view_tick, 0.0, kMaxViewTick) * kViewTickSteps)) %
         kViewTickLimit;
}

Steps steps_of(const wire::InputCommand& c) {
  return {move_steps(c.forward()), move_steps(c.right()), yaw_steps(c.yaw()),
          pitch_steps(c.pitch()),  c.buttons() & 3u,      view_steps(c.view_tick())};
}

float move_of(std::int32_t q) {
  return static_cast<float>(q) / kMoveSteps;
}
float angle_of(std::int32_t q) {
  return static_cast<float>(q * kAngleUnit);
}

wire::InputCommand command_of(std::uint64_t sequence, const Steps& s) {
  return wire::InputCommand(sequence, static_cast<double>(s.view) / kViewTickSteps, move_of(s.forward),
                            move_of(s.right), angle_of(s.yaw), angle_of(s.pitch),
                            static_cast<std::uint8_t>(s.buttons));
}

std::int32_t wrap_yaw(std::int32_t s) {
  return ((s + kHalfTurnSteps) % 65536 + 65536) % 65536 - kHalfTurnSteps;
}

void write_move(BitWriter& out, std::int32_t q) {
  out.write_bits(static_cast<std::uint64_t>(q + 127), kMoveBits);
}
bool read_move(BitReader& in, std::int32_t& q) {
  const std::uint64_t raw = in.read_bits(kMoveBits);
  q = static_cast<std::int32_t>(raw) - 127;
  return raw <= 254 || !in.ok();
}

}  // namespace

PlayerInput quantize_input(const PlayerInput& input) {
  const wire::InputCommand c =
      command_of(0, {move_steps(input.forward), move_steps(input.right), yaw_steps(input.yaw),
                     pitch_steps(input.pitch), input.buttons & 3u, 0});
  return {c.forward(), c.right(), c.yaw(), c.pitch(), c.buttons()};
}

double quantize_view_tick(double view_tick) {
  return static_cast<double>(view_steps(view_tick)) / kViewTickSteps;
}

void write_client_commands(BitWriter& out, const ClientCommands& frame) {
  out.write_tiered(frame.events_received, kEventsReceivedTiers);
  const std::size_t count = std::min<std::size_t>(frame.commands.size(), 3);
  out.write_bits(count, kCommandCountBits);
  Steps newer;
  for (std::size_t i = 0; i < count; ++i) {
    const Steps s = steps_of(frame.commands[i]);
    if (i == 0) {
      out.write_tiered(frame.commands[i].sequence(), kCommandSequenceTiers);
      out.write_tiered(s.view, kViewTickTiers);
      write_move(out, s.forward);
      write_move(out, s.right);
      out.write_bits(static_cast<std::uint64_t>(s.yaw) & 0xffffu, kYawBits);
      out.write_bits(zigzag_encode(s.pitch), kPitchBits);
    } else {
      out.write_tiered_signed(static_cast<std::int64_t>(newer.view - s.view), kViewTickDeltaTiers);
      // The same move as the newer command costs a bit.
      for (const auto& [q, n] : {std::pair{s.forward, newer.forward}, std::pair{s.right, newer.right}}) {
        out.write_bool(q != n);
        if (q != n) write_move(out, q);
      }
      out.write_tiered_signed(wrap_yaw(s.yaw - newer.yaw), kCommandYawDeltaTiers);
      out.write_tiered_signed(s.pitch - newer.pitch, kCommandPitchDeltaTiers);
    }
    out.write_bits(s.buttons, kButtonBits);
    newer = s;
  }
}

std::optional<ClientCommands> read_client_commands(BitReader& in) {
  ClientCommands frame;
  frame.events_received = in.read_tiered(kEventsReceivedTiers);
  const std::uint64_t count = in.read_bits(kCommandCountBits);
  Steps newer;
  std::uint64_t sequence = 0;
  for (std::uint64_t i = 0; i < count && in.ok(); ++i) {
    Steps s;
    if (i == 0) {
      sequence = in.read_tiered(kCommandSequenceTiers);
      // The redundant commands' sequences are implied: each one below the newer, never 0.
      if (in.ok() && sequence < count) return std::nullopt;
      s.view = in.read_tiered(kViewTickTiers);
      if (!read_move(in, s.forward) || !read_move(in, s.right)) return std::nullopt;
      s.yaw = wrap_yaw(static_cast<std::int32_t>(in.read_bits(kYawBits)));
      s.pitch = static_cast<std::int32_t>(in.read_signed(kPitchBits));
    } else {
      --sequence;
      const std::int64_t view_delta = in.read_tiered_signed(kViewTickDeltaTiers);
      const std::uint64_t view = newer.view - static_cast<std::uint64_t>(view_delta);
      if (in.ok() && view >= kViewTickLimit) return std::nullopt;  // wrapped below 0 or past 2^53
      s.view = view;
      s.forward = newer.forward;
      s.right = newer.right;
      if (in.read_bool() && (!read_move(in, s.forward) || (in.ok() && s.forward == newer.forward)))
        return std::nullopt;
      if (in.read_bool() && (!read_move(in, s.right) || (in.ok() && s.right == newer.right)))
        return std::nullopt;
      const std::int64_t yaw_delta = in.read_tiered_signed(kCommandYawDeltaTiers);
      if (yaw_delta < -kHalfTurnSteps || yaw_delta >= kHalfTurnSteps) return std::nullopt;
      s.yaw = wrap_yaw(newer.yaw + static_cast<std::int32_t>(yaw_delta));
      const std::int64_t pitch_delta = in.read_tiered_signed(kCommandPitchDeltaTiers);
      if (pitch_delta < -2 * kMaxPitchSteps || pitch_delta > 2 * kMaxPitchSteps) return std::nullopt;
      s.pitch = newer.pitch + static_cast<std::int32_t>(pitch_delta);
    }
    if (s.pitch < -kMaxPitchSteps || s.pitch > kMaxPitchSteps) return std::nullopt;
    s.buttons = static_cast<std::uint32_t>(in.read_bits(kButtonBits));
    if (!in.ok()) return std::nullopt;
    frame.commands.push_back(command_of(sequence, s));
    newer = s;
  }
  if (!in.ok()) return std::nullopt;
  return frame;
}

}  // namespace shiftcast
