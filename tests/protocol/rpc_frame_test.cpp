#include "protocol/rpc_frame.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "protocol/envelope.hpp"

namespace shiftcast {
namespace {

using Bytes = std::vector<std::uint8_t>;

// Frames of assorted sizes (1 byte up to a few KB), all distinct.
std::vector<Bytes> assorted_frames(std::mt19937& rng, int count) {
  std::vector<Bytes> frames;
  for (int i = 0; i < count; ++i) {
    Bytes frame(1 + rng() % (i % 7 == 0 ? 5000 : 60));
    for (auto& b : frame)
      b = static_cast<std::uint8_t>(rng());
    frames.push_back(std::move(frame));
  }
  return frames;
}

Bytes concatenate(const std::vector<Bytes>& frames) {
  Bytes stream;
  for (const auto& f : frames)
    append_frame(stream, f);
  return stream;
}

// Feeds `stream` in pieces of the sizes `piece` returns and collects every frame the reader yields.
template <typename PieceSize>
std::vector<Bytes> read_all(const Bytes& stream, PieceSize piece) {
  FrameReader reader;
  std::vector<Bytes> out;
  std::size_t at = 0;
  while (at < stream.size()) {
    const std::size_t n = std::min(piece(), stream.size() - at);
    reader.feed(std::span(stream).subspan(at, n));
    at += n;
    while (auto frame = reader.next()) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(frame->data()) % 8, 0u);
      out.emplace_back(frame->begin(), frame->end());
    }
  }
  EXPECT_EQ(reader.error(), wire::ErrorCode::Ok);
  EXPECT_EQ(reader.buffered(), 0u);
  return out;
}

TEST(RpcFrameTest, PrefixIsFourByteLittleEndianLength) {
  Bytes out;
  const Bytes payload(0x0102 + 3, 0xab);
  append_frame(out, payload);
  ASSERT_EQ(out.size(), 4 + payload.size());
  EXPECT_EQ(out[0], 0x05);
  EXPECT_EQ(out[1], 0x01);
  EXPECT_EQ(out[2], 0x00);
  EXPECT_EQ(out[3], 0x00);
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), out.begin() + 4));
}

TEST(RpcFrameTest, ByteByByteYieldsExactlyTheFrames) {
  std::mt19937 rng(1);
  const auto frames = assorted_frames(rng, 40);
  EXPECT_EQ(read_all(concatenate(frames), [] { return std::size_t{1}; }), frames);
}

TEST(RpcFrameTest, RandomChunksYieldExactlyTheFrames) {
  std::mt19937 rng(2);
  const auto frames = assorted_frames(rng, 200);
  const Bytes stream = concatenate(frames);
  for (std::size_t max_chunk : {2u, 7u, 64u, 1500u, 20000u}) {
    std::mt19937 chunks(static_cast<unsigned>(max_chunk));
    EXPECT_EQ(read_all(stream, [&] { return 1 + chunks() % max_chunk; }), frames) << max_chunk;
  }
  EXPECT_EQ(read_all(stream, [&] { return stream.size(); }), frames);
}

TEST(RpcFrameTest, PartialFrameWaitsForTheRest) {
  const Bytes payload{1, 2, 3, 4, 5};
  Bytes stream;
  append_frame(stream, payload);
  FrameReader reader;
  reader.feed(std::span(stream).first(6));
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_EQ(reader.buffered(), 6u);
  reader.feed(std::span(stream).subspan(6));
  const auto frame = reader.next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(Bytes(frame->begin(), frame->end()), payload);
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_EQ(reader.error(), wire::ErrorCode::Ok);
}

TEST(RpcFrameTest, ZeroLengthIsMalformedAndStopsTheReader) {
  Bytes stream;
  append_frame(stream, Bytes{9, 9});
  stream.insert(stream.end(), {0, 0, 0, 0});
  append_frame(stream, Bytes{7});
  FrameReader reader;
  reader.feed(stream);
  ASSERT_TRUE(reader.next().has_value());
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_EQ(reader.error(), wire::ErrorCode::Malformed);
  reader.feed(stream);
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_EQ(reader.error(), wire::ErrorCode::Malformed);
}

TEST(RpcFrameTest, LengthOverTheLimitIsTooLargeBeforeThePayloadArrives) {
  FrameReader reader(100);
  Bytes ok;
  append_frame(ok, Bytes(100, 1));
  reader.feed(ok);
  ASSERT_TRUE(reader.next().has_value());
  const Bytes prefix{101, 0, 0, 0};  // only the prefix: the payload never needs to arrive
  reader.feed(prefix);
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_EQ(reader.error(), wire::ErrorCode::TooLarge);
  EXPECT_EQ(reader.buffered(), 0u);
  reader.feed(ok);
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_EQ(reader.error(), wire::ErrorCode::TooLarge);

  FrameReader default_limit;
  const Bytes huge{0xff, 0xff, 0xff, 0x7f};
  default_limit.feed(huge);
  EXPECT_FALSE(default_limit.next().has_value());
  EXPECT_EQ(default_limit.error(), wire::ErrorCode::TooLarge);
}

TEST(RpcFrameTest, BufferIsCompactedBetweenFeeds) {
  FrameReader reader;
  Bytes frame;
  append_frame(frame, Bytes(1000, 3));
  for (int i = 0; i < 100; ++i) {
    reader.feed(frame);
    ASSERT_TRUE(reader.next().has_value());
    EXPECT_EQ(reader.buffered(), 0u);
  }
  // Half a frame left over, then the other half plus a whole one: only unread bytes are kept.
  reader.feed(std::span(frame).first(500));
  EXPECT_EQ(reader.buffered(), 500u);
  Bytes rest(frame.begin() + 500, frame.end());
  rest.insert(rest.end(), frame.begin(), frame.end());
  reader.feed(rest);
  EXPECT_EQ(reader.buffered(), 2 * frame.size());
  EXPECT_TRUE(reader.next().has_value());
  EXPECT_TRUE(reader.next().has_value());
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(RpcFrameTest, FramedEnvelopesVerifyAfterReading) {
  Bytes stream;
  for (std::uint64_t id = 1; id <= 5; ++id) {
    flatbuffers::FlatBufferBuilder fbb;
    const auto body = wire::CreateMatchStatus(fbb, static_cast<std::uint32_t>(id * 10));
    finish_envelope(fbb, wire::Message::MatchStatus, body.Union(), id);
    append_frame(stream, {fbb.GetBufferPointer(), fbb.GetSize()});
  }
  FrameReader reader;
  reader.feed(stream);
  std::uint64_t expected_id = 1;
  while (auto frame = reader.next()) {
    const EnvelopeView view = verify_envelope(*frame, kMaxRpcFrameBytes);
    ASSERT_EQ(view.error, wire::ErrorCode::Ok);
    EXPECT_EQ(view.envelope->request_id(), expected_id);
    EXPECT_EQ(view.envelope->message_as_MatchStatus()->match_id(), expected_id * 10);
    ++expected_id;
  }
  EXPECT_EQ(expected_id, 6u);
}

}  // namespace
}  // namespace shiftcast
