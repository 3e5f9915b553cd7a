#include "protocol/envelope.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "protocol/wire_constants.hpp"

namespace shiftcast {
namespace {

std::vector<std::uint8_t> keep_alive(std::uint64_t tick, std::uint64_t request_id = 0) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto body = wire::CreateKeepAlive(fbb, tick);
  finish_envelope(fbb, wire::Message::KeepAlive, body.Union(), request_id);
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

// A bigger message with strings, vectors and nested tables, so truncation hits every kind of field.
std::vector<std::uint8_t> match_list() {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<wire::MatchInfo>> matches;
  for (std::uint32_t i = 1; i <= 3; ++i) {
    matches.push_back(wire::CreateMatchInfoDirect(fbb, i, "arena", 60, 1000 + i, 4, 32, 50));
  }
  const auto body = wire::CreateListMatchesReplyDirect(fbb, &matches);
  finish_envelope(fbb, wire::Message::ListMatchesReply, body.Union(), 42);
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

TEST(EnvelopeTest, RoundTripKeepsVersionRequestIdAndMessage) {
  const auto bytes = keep_alive(99, 1234);
  const EnvelopeView view = verify_envelope(bytes, kMaxDatagramBytes);
  ASSERT_EQ(view.error, wire::ErrorCode::Ok);
  ASSERT_NE(view.envelope, nullptr);
  EXPECT_EQ(view.envelope->version(), kProtocolVersion);
  EXPECT_EQ(view.envelope->request_id(), 1234u);
  ASSERT_NE(view.envelope->message_as_KeepAlive(), nullptr);
  EXPECT_EQ(view.envelope->message_as_KeepAlive()->tick(), 99u);
}

TEST(EnvelopeTest, HeaderLayoutIsRootOffsetThenIdentifier) {
  const auto bytes = keep_alive(1);
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(std::memcmp(bytes.data() + 4, "SHC1", 4), 0);
  const std::uint32_t root = bytes[0] | bytes[1] << 8 | bytes[2] << 16 | std::uint32_t{bytes[3]} << 24;
  EXPECT_LT(root, bytes.size());
  EXPECT_GE(root, 8u);
}

// A cut buffer is refused unless the cut took only the builder's trailing alignment padding (fewer than 8
// zero bytes after the last object), in which case the message is untouched and still reads the same.
TEST(EnvelopeTest, EveryTruncationIsRefusedOrLostOnlyPadding) {
  for (const auto& bytes : {keep_alive(7, 3), match_list()}) {
    ASSERT_EQ(verify_envelope(bytes, kMaxRpcFrameBytes).error, wire::ErrorCode::Ok);
    int refused = 0;
    for (std::size_t length = 0; length < bytes.size(); ++length) {
      const auto cut = std::span(bytes).first(length);
      const EnvelopeView view = verify_envelope(cut, kMaxRpcFrameBytes);
      if (view.error != wire::ErrorCode::Ok) {
        // Below 8 bytes there is no identifier to judge; above, the prefix still carries "SHC1".
        EXPECT_EQ(view.error, wire::ErrorCode::Malformed) << length;
        EXPECT_EQ(view.envelope, nullptr) << length;
        ++refused;
        continue;
      }
      EXPECT_LT(bytes.size() - length, 8u) << length;
      for (std::size_t i = length; i < bytes.size(); ++i)
        EXPECT_EQ(bytes[i], 0) << length;
      EXPECT_EQ(view.envelope->request_id(),
                verify_envelope(bytes, kMaxRpcFrameBytes).envelope->request_id());
    }
    EXPECT_GE(refused, static_cast<int>(bytes.size()) - 7);
  }
}

TEST(EnvelopeTest, WrongIdentifier) {
  auto bytes = keep_alive(7);
  bytes[7] = '2';
  const EnvelopeView view = verify_envelope(bytes, kMaxDatagramBytes);
  EXPECT_EQ(view.error, wire::ErrorCode::WrongIdentifier);
  EXPECT_EQ(view.envelope, nullptr);
}

TEST(EnvelopeTest, WrongVersion) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto body = wire::CreateKeepAlive(fbb, 5);
  const auto envelope =
      wire::CreateEnvelope(fbb, kProtocolVersion + 1, 0, wire::Message::KeepAlive, body.Union());
  wire::FinishEnvelopeBuffer(fbb, envelope);
  const EnvelopeView view = verify_envelope({fbb.GetBufferPointer(), fbb.GetSize()}, kMaxDatagramBytes);
  EXPECT_EQ(view.error, wire::ErrorCode::WrongVersion);
  EXPECT_EQ(view.envelope, nullptr);
}

// An old client (protocol version 5: a player's yaw in 1/65536 turn, the own position always whole) is
// refused before anything reads its message.
TEST(EnvelopeTest, ThePreviousVersionIsRefused) {
  static_assert(kProtocolVersion == 6, "name the version before this one below");
  flatbuffers::FlatBufferBuilder fbb;
  const auto body = wire::CreateKeepAlive(fbb, 5);
  wire::FinishEnvelopeBuffer(fbb, wire::CreateEnvelope(fbb, 5, 0, wire::Message::KeepAlive, body.Union()));
  const EnvelopeView view = verify_envelope({fbb.GetBufferPointer(), fbb.GetSize()}, kMaxDatagramBytes);
  EXPECT_EQ(view.error, wire::ErrorCode::WrongVersion);
  EXPECT_EQ(view.envelope, nullptr);
}

TEST(EnvelopeTest, MissingMessageIsMalformed) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto envelope = wire::CreateEnvelope(fbb, kProtocolVersion, 8);
  wire::FinishEnvelopeBuffer(fbb, envelope);
  EXPECT_EQ(verify_envelope({fbb.GetBufferPointer(), fbb.GetSize()}, kMaxDatagramBytes).error,
            wire::ErrorCode::Malformed);
}

// A peer with a newer schema may send a message this one does not know: it verifies (FlatBuffers skips
// unknown union members), and the receiver refuses it as UnexpectedMessage by its type.
TEST(EnvelopeTest, UnknownUnionMemberVerifiesAndIsNotAnyKnownMessage) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto body = wire::CreateKeepAlive(fbb, 5);
  const auto unknown = static_cast<wire::Message>(static_cast<int>(wire::Message::MAX) + 1);
  wire::FinishEnvelopeBuffer(fbb, wire::CreateEnvelope(fbb, kProtocolVersion, 0, unknown, body.Union()));
  const EnvelopeView view = verify_envelope({fbb.GetBufferPointer(), fbb.GetSize()}, kMaxDatagramBytes);
  ASSERT_EQ(view.error, wire::ErrorCode::Ok);
  EXPECT_EQ(view.envelope->message_type(), unknown);
  EXPECT_EQ(view.envelope->message_as_KeepAlive(), nullptr);
}

TEST(EnvelopeTest, OversizedIsTooLargeBeforeAnythingElse) {
  const auto bytes = keep_alive(7);
  EXPECT_EQ(verify_envelope(bytes, bytes.size()).error, wire::ErrorCode::Ok);
  EXPECT_EQ(verify_envelope(bytes, bytes.size() - 1).error, wire::ErrorCode::TooLarge);
  const std::vector<std::uint8_t> junk(kMaxDatagramBytes + 1, 0xee);
  EXPECT_EQ(verify_envelope(junk, kMaxDatagramBytes).error, wire::ErrorCode::TooLarge);
}

TEST(EnvelopeTest, RandomBytesNeverVerify) {
  std::mt19937 rng(20240601);
  for (int round = 0; round < 5000; ++round) {
    std::vector<std::uint8_t> bytes(rng() % 300);
    for (auto& b : bytes)
      b = static_cast<std::uint8_t>(rng());
    // Half the buffers carry the right identifier so the verifier itself is exercised.
    if (round % 2 == 0 && bytes.size() >= 8) std::memcpy(bytes.data() + 4, "SHC1", 4);
    const EnvelopeView view = verify_envelope(bytes, kMaxDatagramBytes);
    EXPECT_TRUE(view.error == wire::ErrorCode::Malformed || view.error == wire::ErrorCode::WrongIdentifier)
        << "round " << round << ": " << to_string(view.error);
    EXPECT_EQ(view.envelope, nullptr);
  }
}

TEST(EnvelopeTest, RandomMutationsOfAValidBufferNeverCrash) {
  std::mt19937 rng(77);
  const auto original = match_list();
  int accepted = 0;
  for (int round = 0; round < 5000; ++round) {
    auto bytes = original;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f)
      bytes[rng() % bytes.size()] = static_cast<std::uint8_t>(rng());
    const EnvelopeView view = verify_envelope(bytes, kMaxRpcFrameBytes);
    if (view.error != wire::ErrorCode::Ok) {
      EXPECT_EQ(view.envelope, nullptr);
      continue;
    }
    ++accepted;
    // Whatever verified must be readable end to end without leaving the buffer.
    if (const auto* reply = view.envelope->message_as_ListMatchesReply(); reply && reply->matches()) {
      for (const auto* match : *reply->matches()) {
        if (match->level()) {
          EXPECT_LE(match->level()->size(), bytes.size());
        }
      }
    }
  }
  EXPECT_LT(accepted, 5000);  // mutations of offsets and the identifier must be caught
}

TEST(EnvelopeTest, ErrorCodeNamesAreSnakeCaseUniqueAndComplete) {
  EXPECT_STREQ(to_string(wire::ErrorCode::Ok), "ok");
  EXPECT_STREQ(to_string(wire::ErrorCode::Malformed), "malformed");
  EXPECT_STREQ(to_string(wire::ErrorCode::WrongIdentifier), "wrong_identifier");
  EXPECT_STREQ(to_string(wire::ErrorCode::TokenExpired), "token_expired");
  EXPECT_STREQ(to_string(wire::ErrorCode::RateLimited), "rate_limited");
  EXPECT_STREQ(to_string(wire::ErrorCode::AmplificationRefused), "amplification_refused");
  EXPECT_STREQ(to_string(wire::ErrorCode::MatchEnded), "match_ended");
  std::set<std::string> seen;
  for (const wire::ErrorCode code : wire::EnumValuesErrorCode()) {
    const std::string name = to_string(code);
    ASSERT_FALSE(name.empty());
    EXPECT_NE(name, "unknown");
    for (char c : name)
      EXPECT_TRUE(std::islower(static_cast<unsigned char>(c)) || c == '_') << name;
    EXPECT_NE(name.front(), '_');
    EXPECT_TRUE(seen.insert(name).second) << name;
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(wire::ErrorCode::MAX) + 1);
  EXPECT_STREQ(to_string(static_cast<wire::ErrorCode>(60000)), "unknown");
}

}  // namespace
}  // namespace shiftcast

// Found by fuzz/fuzz_envelope (fuzz/corpus/envelope/regression-misaligned-events): a ServerFrame whose
// contact events (structs with 64-bit fields) sit 4 bytes off their alignment passes the FlatBuffers
// verifier, which checks only the vector's length word; every reader would then load them misaligned.
namespace shiftcast {
namespace {

TEST(EnvelopeTest, MisalignedVectorsOfEightByteStructsAreMalformed) {
  std::ifstream in(std::string(SHIFTCAST_SOURCE_DIR) + "/fuzz/corpus/envelope/regression-misaligned-events",
                   std::ios::binary);
  ASSERT_TRUE(in.good());
  const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
  // A version-2 ServerFrame: since version 3 its struct events are a deprecated field nothing reads
  // (ServerFrame.events_packed replaced them), and the frame is refused before anything is read.
  EXPECT_NE(verify_envelope(bytes, kMaxRpcFrameBytes).error, wire::ErrorCode::Ok);

  // The builder aligns them: an honest frame with events and commands verifies.
  flatbuffers::FlatBufferBuilder fbb;
  const wire::ContactEvent events[] = {wire::ContactEvent(1, 2, 0.5f, 0, 0, 3, 1, 0, 4, {}, {}, 0, 1)};
  const auto frame = wire::CreateContactPush(fbb, 1, 2, fbb.CreateVectorOfStructs(events, 1));
  finish_envelope(fbb, wire::Message::ContactPush, frame.Union());
  const std::vector<std::uint8_t> honest(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  EXPECT_EQ(verify_envelope(honest, kMaxRpcFrameBytes).error, wire::ErrorCode::Ok);
}

}  // namespace
}  // namespace shiftcast
