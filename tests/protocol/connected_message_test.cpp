// The connected message (protocol/connected_message.hpp): every message reads back as written, byte for
// byte; the documented layout holds for hand-made bytes; and every form a conforming writer never
// produces is refused. Oracles: the written fields, a second encoder written here from
// docs/protocol.md's tables (LEB128 by hand), and every proper prefix of every message.
#include "protocol/connected_message.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace shiftcast {
namespace {

using Bytes = std::vector<std::uint8_t>;

// The document's varint, written independently of the library's.
void leb128(Bytes& out, std::uint64_t v) {
  do {
    std::uint8_t b = v & 0x7f;
    v >>= 7;
    if (v != 0) b |= 0x80;
    out.push_back(b);
  } while (v != 0);
}

Bytes random_bytes(std::mt19937& rng, std::size_t max) {
  Bytes b(1 + rng() % max);
  for (auto& x : b)
    x = static_cast<std::uint8_t>(rng());
  return b;
}

std::uint64_t random_u64(std::mt19937_64& rng) {
  return rng() >> (rng() % 64);
}

TEST(ConnectedMessage, ServerFramesReadBackAsWrittenAndMatchTheDocumentsLayout) {
  std::mt19937 rng(5);
  std::mt19937_64 wide(6);
  for (int trial = 0; trial < 5000; ++trial) {
    const Bytes block = random_bytes(rng, 200), own = random_bytes(rng, 47), events = random_bytes(rng, 300);
    ServerFrameMessage f;
    f.tick = 1 + random_u64(wide) % (1ull << 62);
    f.input_ack = random_u64(wide);
    if (rng() % 3 != 0) {
      const std::uint64_t offset = rng() % 2 ? 0 : 1 + random_u64(wide) % f.tick;
      f.snapshot = SnapshotSection{offset == 0 || offset >= f.tick ? 0 : f.tick - offset,
                                   static_cast<std::uint32_t>(wide()), rng() % 2 == 0, block};
    }
    if (rng() % 2) f.own = own;
    if (rng() % 2) f.events = events;
    Bytes m;
    write_server_frame(m, f);

    // The document's layout, built by hand.
    Bytes expected{1};
    leb128(expected, f.tick);
    leb128(expected, f.input_ack);
    expected.push_back(static_cast<std::uint8_t>((f.snapshot ? 1 : 0) |
                                                 (f.snapshot && f.snapshot->complete ? 2 : 0) |
                                                 (f.own ? 4 : 0) | (f.events ? 8 : 0)));
    if (f.snapshot) {
      leb128(expected, f.snapshot->baseline_tick == 0 ? 0 : f.tick - f.snapshot->baseline_tick);
      leb128(expected, f.snapshot->own_entity);
      leb128(expected, block.size());
      expected.insert(expected.end(), block.begin(), block.end());
    }
    for (const auto* section : {f.own ? &own : nullptr, f.events ? &events : nullptr}) {
      if (section == nullptr) continue;
      leb128(expected, section->size());
      expected.insert(expected.end(), section->begin(), section->end());
    }
    ASSERT_EQ(m, expected) << trial;

    const ReadMessage r = read_connected_message(m);
    ASSERT_EQ(r.error, wire::ErrorCode::Ok) << trial;
    ASSERT_EQ(r.message.kind, MessageKind::kServerFrame);
    const ServerFrameMessage& g = r.message.server_frame;
    EXPECT_EQ(g.tick, f.tick);
    EXPECT_EQ(g.input_ack, f.input_ack);
    ASSERT_EQ(g.snapshot.has_value(), f.snapshot.has_value());
    if (f.snapshot) {
      EXPECT_EQ(g.snapshot->baseline_tick, f.snapshot->baseline_tick);
      EXPECT_EQ(g.snapshot->own_entity, f.snapshot->own_entity);
      EXPECT_EQ(g.snapshot->complete, f.snapshot->complete);
      EXPECT_EQ(Bytes(g.snapshot->block.begin(), g.snapshot->block.end()), block);
    }
    ASSERT_EQ(g.own.has_value(), f.own.has_value());
    if (f.own) {
      EXPECT_EQ(Bytes(g.own->begin(), g.own->end()), own);
    }
    ASSERT_EQ(g.events.has_value(), f.events.has_value());
    if (f.events) {
      EXPECT_EQ(Bytes(g.events->begin(), g.events->end()), events);
    }

    // Every proper prefix is refused, and so is one byte more.
    for (std::size_t n = 0; n < m.size(); ++n)
      ASSERT_NE(read_connected_message(std::span(m).first(n)).error, wire::ErrorCode::Ok)
          << trial << " " << n;
    Bytes longer = m;
    longer.push_back(0);
    EXPECT_EQ(read_connected_message(longer).error, wire::ErrorCode::Malformed);
  }
}

TEST(ConnectedMessage, TheOtherKindsReadBackAsWritten) {
  std::mt19937 rng(9);
  std::mt19937_64 wide(10);
  for (int trial = 0; trial < 2000; ++trial) {
    Bytes m;
    const Bytes commands = rng() % 8 ? random_bytes(rng, 40) : Bytes{};
    write_client_frame(m, commands);
    ReadMessage r = read_connected_message(m);
    ASSERT_EQ(r.error, wire::ErrorCode::Ok);
    ASSERT_EQ(r.message.kind, MessageKind::kClientFrame);
    EXPECT_EQ(Bytes(r.message.commands.begin(), r.message.commands.end()), commands);

    KeepAliveMessage k{random_u64(wide), random_u64(wide), std::nullopt};
    if (rng() % 2)
      k.session = SessionInfoFields{static_cast<std::uint16_t>(rng()), static_cast<std::uint16_t>(rng()),
                                    static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng())};
    m.clear();
    write_keep_alive(m, k);
    r = read_connected_message(m);
    ASSERT_EQ(r.error, wire::ErrorCode::Ok);
    ASSERT_EQ(r.message.kind, MessageKind::kKeepAlive);
    EXPECT_EQ(r.message.keep_alive.tick, k.tick);
    EXPECT_EQ(r.message.keep_alive.events_received, k.events_received);
    ASSERT_EQ(r.message.keep_alive.session.has_value(), k.session.has_value());
    if (k.session) {
      EXPECT_EQ(r.message.keep_alive.session->tick_rate, k.session->tick_rate);
      EXPECT_EQ(r.message.keep_alive.session->snapshot_rate, k.session->snapshot_rate);
      EXPECT_EQ(r.message.keep_alive.session->keepalive_interval_ms, k.session->keepalive_interval_ms);
      EXPECT_EQ(r.message.keep_alive.session->timeout_ms, k.session->timeout_ms);
    }
    for (std::size_t n = 0; n < m.size(); ++n)
      ASSERT_EQ(read_connected_message(std::span(m).first(n)).error, wire::ErrorCode::Malformed) << n;
  }
  Bytes d;
  write_disconnect(d, wire::ErrorCode::Timeout);
  EXPECT_EQ(d, (Bytes{3, static_cast<std::uint8_t>(wire::ErrorCode::Timeout)}));
  const ReadMessage r = read_connected_message(d);
  ASSERT_EQ(r.error, wire::ErrorCode::Ok);
  EXPECT_EQ(r.message.disconnect_code, wire::ErrorCode::Timeout);
}

// Hand-made bytes a conforming writer never produces: each refused with its reason.
TEST(ConnectedMessage, NonCanonicalAndInconsistentMessagesAreRefused) {
  struct Case {
    const char* name;
    Bytes bytes;
    wire::ErrorCode error;
  };
  const Case cases[] = {
      {"empty", {}, wire::ErrorCode::Malformed},
      {"unknown kind", {4}, wire::ErrorCode::UnexpectedMessage},
      {"a high kind", {0xff, 0, 0}, wire::ErrorCode::UnexpectedMessage},
      {"a keep-alive, well formed", {2, 0x64, 0, 0}, wire::ErrorCode::Ok},
      {"a varint with a trailing zero group", {2, 0xe4, 0x00, 0, 0}, wire::ErrorCode::Malformed},
      {"a varint past 2^64",
       {2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0},
       wire::ErrorCode::Malformed},
      {"a varint of 2^64 - 1",
       {2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0},
       wire::ErrorCode::Ok},
      {"an eleven-byte varint",
       {2, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 0},
       wire::ErrorCode::Malformed},
      {"a keep-alive's reserved flag", {2, 1, 0, 2}, wire::ErrorCode::Malformed},
      {"a keep-alive's session cut short", {2, 1, 0, 1, 64, 0, 32, 0}, wire::ErrorCode::Malformed},
      {"a frame, tick and ack only", {1, 5, 3, 0}, wire::ErrorCode::Ok},
      {"a frame's reserved flag", {1, 5, 3, 0x10}, wire::ErrorCode::Malformed},
      {"complete without a snapshot", {1, 5, 3, 0x02}, wire::ErrorCode::Malformed},
      {"a snapshot at tick 0", {1, 0, 3, 0x01, 0, 1, 1, 0x00}, wire::ErrorCode::Malformed},
      {"a baseline at tick 0", {1, 5, 3, 0x01, 5, 1, 1, 0x00}, wire::ErrorCode::Malformed},
      {"a baseline at tick 1", {1, 5, 3, 0x01, 4, 1, 1, 0x00}, wire::ErrorCode::Ok},
      {"an own entity past 2^32",
       {1, 5, 3, 0x01, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 1, 0},
       wire::ErrorCode::Malformed},
      {"an empty block", {1, 5, 3, 0x01, 0, 1, 0}, wire::ErrorCode::Malformed},
      {"an empty own section", {1, 5, 3, 0x04, 0}, wire::ErrorCode::Malformed},
      {"an events section past the end", {1, 5, 3, 0x08, 3, 1, 2}, wire::ErrorCode::Malformed},
      {"a disconnect without a code", {3}, wire::ErrorCode::Malformed},
      {"a disconnect's code past the last", {3, 0xfe}, wire::ErrorCode::Malformed},
      {"a disconnect with more", {3, 1, 0}, wire::ErrorCode::Malformed},
  };
  for (const Case& c : cases)
    EXPECT_EQ(read_connected_message(c.bytes).error, c.error) << c.name;
}

// The framing a frame adds around its sections stays within what a server reserves for it.
TEST(ConnectedMessage, AFramesOwnBytesStayWithinTheReservedOverhead) {
  const Bytes section(1100, 0x55);
  ServerFrameMessage f{~0ull, ~0ull, SnapshotSection{1, ~0u, true, section}, std::span(section).first(47),
                       std::span(section).first(500)};
  Bytes m;
  write_server_frame(m, f);
  EXPECT_LE(m.size() - 1100 - 47 - 500, kServerFrameOverheadBytes);
}

}  // namespace
}  // namespace shiftcast
