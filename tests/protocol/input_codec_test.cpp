// Lean input commands (ClientFrame.commands_packed): what the server decodes is exactly what the client
// quantized (so its prediction runs the server's input), every quantization is the nearest step
// (checked against the closed forms written here), a bot's three commands are a few bytes, and
// untrusted bits are refused or are the one encoding of what they decode to.
#include "protocol/input_codec.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

namespace shiftcast {
namespace {

using Bytes = std::vector<std::uint8_t>;

float uniform(std::mt19937& rng, float lo, float hi) {
  return lo + (hi - lo) * (float(rng() >> 8) * 0x1p-24f);
}

bool same_command(const wire::InputCommand& a, const wire::InputCommand& b) {
  return a.sequence() == b.sequence() &&
         std::bit_cast<std::uint64_t>(a.view_tick()) == std::bit_cast<std::uint64_t>(b.view_tick()) &&
         std::bit_cast<std::uint32_t>(a.forward()) == std::bit_cast<std::uint32_t>(b.forward()) &&
         std::bit_cast<std::uint32_t>(a.right()) == std::bit_cast<std::uint32_t>(b.right()) &&
         std::bit_cast<std::uint32_t>(a.yaw()) == std::bit_cast<std::uint32_t>(b.yaw()) &&
         std::bit_cast<std::uint32_t>(a.pitch()) == std::bit_cast<std::uint32_t>(b.pitch()) &&
         a.buttons() == b.buttons();
}

PlayerInput random_input(std::mt19937& rng) {
  PlayerInput in;
  in.forward = rng() % 3 == 0 ? float(int(rng() % 3) - 1) : uniform(rng, -1, 1);
  in.right = rng() % 3 == 0 ? float(int(rng() % 3) - 1) : uniform(rng, -1, 1);
  in.yaw = uniform(rng, -3.2f, 3.2f);
  in.pitch = uniform(rng, -1.6f, 1.6f);
  in.buttons = static_cast<std::uint8_t>(rng() % 4);
  return in;
}

// A frame as the client session sends it: quantized, newest first, consecutive, the older ones a bot's
// small turns (or anything) before the newer.
ClientCommands random_frame(std::mt19937& rng) {
  ClientCommands frame;
  frame.events_received = rng() % 4 == 0 ? 0 : (std::uint64_t{rng()} << (rng() % 32));
  const std::size_t count = rng() % 4;
  const std::uint64_t newest =
      count + (rng() % 3 == 0 ? (std::uint64_t{rng()} << 32 | rng()) >> (rng() % 64) : rng() % 100000);
  PlayerInput input = random_input(rng);
  double view = rng() % 5 == 0 ? 1e9 * uniform(rng, 0, 1) : double(rng() % 100000) + (rng() % 4) * 0.25;
  for (std::size_t i = 0; i < count; ++i) {
    const PlayerInput q = quantize_input(input);
    frame.commands.emplace_back(newest - i, quantize_view_tick(view), q.forward, q.right, q.yaw, q.pitch,
                                q.buttons);
    if (rng() % 3 == 0) {
      input = random_input(rng);
    } else {
      input.yaw += uniform(rng, -0.05f, 0.05f);
      input.pitch = std::clamp(input.pitch + uniform(rng, -0.05f, 0.05f), -1.5f, 1.5f);
    }
    if (rng() % 2 == 0) view -= double(rng() % 3);
  }
  return frame;
}

Bytes packed(const ClientCommands& frame) {
  BitWriter w;
  write_client_commands(w, frame);
  return {w.bytes().begin(), w.bytes().end()};
}

std::optional<ClientCommands> unpacked(const Bytes& bytes) {
  BitReader in(bytes);
  auto frame = read_client_commands(in);
  if (!frame || in.finish() != BitReadError::kNone) return std::nullopt;
  return frame;
}

TEST(InputCodec, TheServerDecodesExactlyWhatTheClientQuantized) {
  std::mt19937 rng(31);
  for (int round = 0; round < 20000; ++round) {
    const ClientCommands frame = random_frame(rng);
    const auto back = unpacked(packed(frame));
    ASSERT_TRUE(back.has_value()) << round;
    ASSERT_EQ(back->events_received, frame.events_received) << round;
    ASSERT_EQ(back->commands.size(), frame.commands.size()) << round;
    for (std::size_t i = 0; i < frame.commands.size(); ++i)
      ASSERT_TRUE(same_command(back->commands[i], frame.commands[i])) << round << " command " << i;
  }
}

TEST(InputCodec, QuantizationIsTheNearestStepAndIdempotent) {
  std::mt19937 rng(32);
  const double unit = 2 * std::numbers::pi / 65536;
  for (int round = 0; round < 100000; ++round) {
    const PlayerInput in = random_input(rng);
    const PlayerInput q = quantize_input(in);
    ASSERT_EQ(quantize_input(q), q) << round;
    // Closed forms: moves to the nearest 1/127, angles to the nearest 2 pi / 65536 (yaw modulo a turn,
    // within [-pi, pi]), the two buttons kept.
    EXPECT_EQ(q.forward, float(std::lround(in.forward * 127.0f)) / 127.0f) << round;
    EXPECT_EQ(q.right, float(std::lround(in.right * 127.0f)) / 127.0f) << round;
    const double turn = std::remainder(double(q.yaw) - double(in.yaw), 2 * std::numbers::pi);
    EXPECT_LE(std::abs(turn), unit / 2 + 1e-6) << round;
    EXPECT_LE(std::abs(q.yaw), std::numbers::pi + 1e-6) << round;
    const double pitch = std::clamp(double(in.pitch), -std::numbers::pi / 2, std::numbers::pi / 2);
    EXPECT_LE(std::abs(double(q.pitch) - pitch), unit / 2 + 1e-6) << round;
    EXPECT_EQ(q.buttons, in.buttons & 3) << round;
  }
  const double v = 1234.5678;
  EXPECT_EQ(quantize_view_tick(v), std::round(v * 256) / 256);
  EXPECT_EQ(quantize_view_tick(-3), 0.0);
  EXPECT_EQ(quantize_view_tick(std::nan("")), 0.0);
}

TEST(InputCodec, ABotsThreeCommandsTakeAFewBytes) {
  // A bot running and turning a little: the newest whole, the two before as small deltas.
  ClientCommands frame;
  frame.events_received = 900;
  for (int i = 0; i < 3; ++i) {
    const PlayerInput q = quantize_input({0.7f, -0.3f, 1.0f - 0.01f * float(i), 0.1f, 0});
    frame.commands.emplace_back(5000 - i, 2400.0, q.forward, q.right, q.yaw, q.pitch, q.buttons);
  }
  BitWriter w;
  write_client_commands(w, frame);
  RecordProperty("three_commands_bits", static_cast<int>(w.bit_count()));
  // events 2 + 16, count 2; newest: sequence 1 + 16, view 2 + 32, moves 16, angles 32, buttons 2;
  // each older: view 1, moves 2, yaw 2 + 8, pitch 1, buttons 2.
  EXPECT_EQ(w.bit_count(), 18 + 2 + (17 + 34 + 16 + 32 + 2) + 2 * (1 + 2 + 10 + 1 + 2u));
  EXPECT_LE(w.byte_count() * 6, 3 * sizeof(wire::InputCommand));  // a sixth of the structs
}

void expect_refused_or_canonical(const Bytes& bytes, int round) {
  const auto frame = unpacked(bytes);
  if (!frame) return;
  ASSERT_EQ(packed(*frame), bytes) << round;
}

TEST(InputCodec, TruncatedFlippedAndRandomBitsAreRefusedOrCanonical) {
  std::mt19937 rng(33);
  for (int round = 0; round < 1000; ++round) {
    const Bytes bytes = packed(random_frame(rng));
    for (std::size_t n = 0; n < bytes.size(); ++n)
      ASSERT_FALSE(unpacked(Bytes(bytes.begin(), bytes.begin() + n)).has_value()) << round;
    for (std::size_t bit = 0; bit < bytes.size() * 8; ++bit) {
      Bytes flipped = bytes;
      flipped[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
      expect_refused_or_canonical(flipped, round);
    }
    Bytes noise(rng() % 32);
    for (auto& b : noise)
      b = static_cast<std::uint8_t>(rng());
    expect_refused_or_canonical(noise, round);
  }
}

TEST(InputCodec, ImpliedSequencesBelowOneAndOutOfRangeFieldsAreRefused) {
  {  // Three commands whose newest is 2: the oldest would be 0.
    BitWriter w;
    w.write_tiered(1, kEventsReceivedTiers);
    w.write_bits(3, kCommandCountBits);
    w.write_tiered(2, kCommandSequenceTiers);
    EXPECT_FALSE(unpacked({w.bytes().begin(), w.bytes().end()}).has_value());
  }
  {  // A move of 255 (q = 128), and a pitch beyond pi / 2.
    for (const bool bad_move : {true, false}) {
      BitWriter w;
      w.write_tiered(1, kEventsReceivedTiers);
      w.write_bits(1, kCommandCountBits);
      w.write_tiered(7, kCommandSequenceTiers);
      w.write_tiered(0, kViewTickTiers);
      w.write_bits(bad_move ? 255 : 127, kMoveBits);
      w.write_bits(127, kMoveBits);
      w.write_bits(0, kYawBits);
      w.write_bits(zigzag_encode(bad_move ? 0 : kMaxPitchSteps + 1), kPitchBits);
      w.write_bits(0, kButtonBits);
      EXPECT_FALSE(unpacked({w.bytes().begin(), w.bytes().end()}).has_value()) << bad_move;
    }
  }
}

}  // namespace
}  // namespace shiftcast
