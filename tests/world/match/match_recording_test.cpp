// The recording format (world/match/match_recording.hpp, docs/replay.md): a written round trip, the worked
// byte example of docs/replay.md checked byte for byte, and every kind of damage read as a typed error.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "world/match/match_recording.hpp"

namespace shiftcast {
namespace {

RecordingHeader sample_header() {
  RecordingHeader h;
  h.level_name = "oa_dm1";
  h.level_hash = 0x0123456789abcdefull;
  h.match_id = 7;
  h.tick_rate = 64;
  h.snapshot_rate = 32;
  h.max_players = 32;
  h.props = 8;
  h.seed = 3;
  h.level_check_period = 8;
  h.start_tick = 64;
  h.start_hash = 0xfeedfacecafebeefull;
  return h;
}

RecordedTick sample_tick(std::uint64_t tick) {
  RecordedTick t;
  t.tick = tick;
  t.joins.push_back({9, {1.5f, -2.25f, 3}, 0.5f});
  t.leaves.push_back(4);
  t.commands.push_back({9, {{1, 0, 0.25f, -0.125f, kButtonJump}, {0, -1, 0.5f, 0, kButtonFire}}});
  t.state_hash = 0x1111222233334444ull + tick;
  t.invariant_violations = 1;
  t.replacements = 1;
  return t;
}

RecordedQuery sample_query() {
  RecordedQuery q;
  q.kind = RecordedQueryKind::kOverlap;
  q.tick_used = 65.5;
  q.layers = 0xff;
  q.ignore = 3;
  q.include_level = false;
  q.origin = {10, 20, 30};
  q.shape_kind = 2;
  q.shape_radius = 15;
  q.shape_height = 56;
  q.hit = true;
  q.brush = 12;
  q.overlapped = {4, 9};
  return q;
}

std::vector<std::uint8_t> sample_file() {
  RecordingWriter w;
  w.header(sample_header());
  w.tick(sample_tick(65));
  w.query(sample_query());
  w.tick(sample_tick(66));
  return {w.bytes().begin(), w.bytes().end()};
}

TEST(MatchRecording, RoundTripsEveryField) {
  const std::vector<std::uint8_t> bytes = sample_file();
  const RecordingReadResult r = read_recording(bytes);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.recording.header, sample_header());
  ASSERT_EQ(r.recording.ticks.size(), 2u);
  EXPECT_EQ(r.recording.ticks[0], sample_tick(65));
  EXPECT_EQ(r.recording.ticks[1], sample_tick(66));
  ASSERT_EQ(r.recording.queries.size(), 1u);
  EXPECT_EQ(r.recording.queries[0], sample_query());
  EXPECT_FALSE(r.recording.truncated);
}

// docs/replay.md's worked example: the preamble and a header for level "a", every other field zero but
// tick_rate 64; the checksum is FNV-1a 32 over tag, length and payload, computed here independently.
TEST(MatchRecording, MatchesTheWorkedByteExample) {
  RecordingWriter w;
  RecordingHeader h{};
  h.level_name = "a";
  h.level_hash = 0;
  h.tick_rate = 64;
  h.snapshot_rate = 0;
  h.max_players = 0;
  h.props = 0;
  h.seed = 0;
  w.header(h);
  std::vector<std::uint8_t> expected = {'S', 'C', 'R', 'P', 1, 0, 0, 0, 'H', 57, 0, 0, 0, 1, 0, 0, 0, 'a'};
  expected.insert(expected.end(), 8, 0);           // level_hash
  expected.insert(expected.end(), 4, 0);           // match_id
  expected.insert(expected.end(), {64, 0, 0, 0});  // tick_rate
  expected.insert(expected.end(), 4 * 5, 0);       // snapshot_rate, max_players, props, seed, period
  expected.insert(expected.end(), 16, 0);          // start_tick, start_hash
  std::uint32_t sum = 2166136261u;
  for (std::size_t i = 8; i < expected.size(); ++i) {
    sum ^= expected[i];
    sum *= 16777619u;
  }
  for (int i = 0; i < 4; ++i)
    expected.push_back(std::uint8_t(sum >> (8 * i)));
  const std::vector<std::uint8_t> got(w.bytes().begin(), w.bytes().end());
  EXPECT_EQ(got, expected);
  EXPECT_EQ(sum, 0x8ced603au) << "the checksum docs/replay.md prints";
}

TEST(MatchRecording, EveryFlippedByteIsATypedError) {
  const std::vector<std::uint8_t> good = sample_file();
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::vector<std::uint8_t> bad = good;
    bad[i] ^= 0x10;
    const RecordingReadResult r = read_recording(bad);
    // A flip in a record's length may turn the rest into an apparently cut record: read as truncated,
    // which a replay reports; every other flip must be refused.
    if (r.ok()) {
      EXPECT_TRUE(r.recording.truncated) << "byte " << i;
      EXPECT_LT(r.recording.ticks.size(), 2u) << "byte " << i;
    } else {
      EXPECT_NE(r.error, RecordingError::kNone);
    }
  }
}

TEST(MatchRecording, CutShortReadsTheWholeRecordsBefore) {
  const std::vector<std::uint8_t> good = sample_file();
  std::size_t previous_ticks = 0;
  for (std::size_t n = 0; n < good.size(); ++n) {
    const std::vector<std::uint8_t> cut(good.begin(), good.begin() + std::ptrdiff_t(n));
    const RecordingReadResult r = read_recording(cut);
    if (n < 4) {
      EXPECT_EQ(r.error, RecordingError::kBadMagic) << n;
      continue;
    }
    if (!r.ok()) {
      EXPECT_EQ(r.error, RecordingError::kNoHeader) << n;
      continue;
    }
    // A cut at a record boundary reads as a shorter recording, one inside a record as truncated.
    EXPECT_LE(r.recording.ticks.size(), 2u) << n;
    EXPECT_GE(r.recording.ticks.size(), previous_ticks) << n;
    previous_ticks = r.recording.ticks.size();
  }
}

TEST(MatchRecording, RefusesWrongVersionsLengthsAndOrder) {
  std::vector<std::uint8_t> bytes = sample_file();
  bytes[4] = 2;
  EXPECT_EQ(read_recording(bytes).error, RecordingError::kWrongVersion);

  bytes = sample_file();
  bytes[8 + 1 + 3] = 0x7f;  // the header's length: far beyond kMaxRecordBytes
  EXPECT_EQ(read_recording(bytes).error, RecordingError::kBadRecord);

  RecordingWriter w;
  w.header(sample_header());
  w.tick(sample_tick(65));
  w.tick(sample_tick(67));
  EXPECT_EQ(read_recording(w.bytes()).error, RecordingError::kOutOfOrder);

  RecordingWriter no_header;
  no_header.tick(sample_tick(65));
  EXPECT_EQ(read_recording(no_header.bytes()).error, RecordingError::kNoHeader);
  EXPECT_EQ(read_recording_file("/nonexistent/recording.scrp").error, RecordingError::kIo);
}

}  // namespace
}  // namespace shiftcast
