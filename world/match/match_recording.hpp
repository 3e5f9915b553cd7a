// Match recordings: everything needed to re-run a hosted match bit for bit, as a file (docs/replay.md
// is the written standard, with a worked byte example). A recording is a 8-byte preamble ("SCRP" and the
// format version) and then checksummed records: one header, then per tick the players who joined (as
// spawned), left, the commands each player was given, and the state hash after the step; and the RPC
// queries the match answered with the tick each was judged at and a summary of the answer.
//
//   RecordingWriter w;                       // encodes into memory; the caller decides when to write
//   w.header(h);                             // once, first
//   w.tick(t);  w.query(q);                  // any number, in the order they happened
//   fwrite(w.bytes().data(), 1, w.bytes().size(), f);  w.clear();
//
//   RecordingReadResult r = read_recording(bytes);   // untrusted bytes: every field is checked
//   if (!r.ok()) log(to_string(r.error), r.offset, r.message);
//
// A file cut short after a whole record (a server killed mid-match) reads as the recording up to that
// record and says so (Recording::truncated); a record cut short, a record whose checksum fails, or
// counts that run past their record are typed errors, never a crash.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collision/vec3.hpp"
#include "world/level/compiled_level.hpp"
#include "world/match/entity.hpp"
#include "world/match/match_defaults.hpp"
#include "world/match/player_input.hpp"

namespace shiftcast {

inline constexpr std::uint32_t kRecordingVersion = 1;
inline constexpr char kRecordingMagic[4] = {'S', 'C', 'R', 'P'};
// No record is longer: a tick of 1024 players each given 255 commands fits with room to spare; a length
// beyond it is corruption, refused before anything is allocated.
inline constexpr std::uint32_t kMaxRecordBytes = 16u << 20;

// FNV-1a 64 over bytes.
std::uint64_t fnv1a64(std::span<const std::uint8_t> bytes);
// The level's fingerprint in the header: fnv1a64 of its compiled bytes with the build timings zeroed and
// the source path cleared (measurements and a location, different on every import of the same source),
// and without the potentially visible set (it never changes what the simulation does).
std::uint64_t level_fingerprint(const CompiledLevel& level);

struct RecordingHeader {
  std::string level_name;
  std::uint64_t level_hash = 0;  // level_fingerprint(level)
  std::uint32_t match_id = 0;
  std::int32_t tick_rate = kDefaultTickRate;
  std::int32_t snapshot_rate = kDefaultSnapshotRate;
  std::int32_t max_players = kDefaultMaxPlayers;
  std::int32_t props = 0;
  std::uint32_t seed = 1;
  // The SimulationConfig fields a hosted match does not leave at their defaults: the tick rate, and the
  // level-check period (its default differs between debug and release builds).
  std::int32_t level_check_period = 0;
  std::uint64_t start_tick = 0;  // the tick the scene was at when recording began (after settling)
  std::uint64_t start_hash = 0;  // Simulation::state_hash then

  bool operator==(const RecordingHeader&) const = default;
};

struct RecordedJoin {
  EntityId entity = kNoEntity;
  Vec3 feet;
  float yaw = 0;
  bool operator==(const RecordedJoin&) const = default;
};

struct RecordedCommands {
  EntityId entity = kNoEntity;
  std::vector<PlayerInput> commands;  // in the order they were applied; empty is never written
  bool operator==(const RecordedCommands&) const = default;
};

// One tick: joins and leaves happen before the commands, the commands before the step.
struct RecordedTick {
  std::uint64_t tick = 0;  // the simulation's tick after the step
  std::vector<RecordedJoin> joins;
  std::vector<EntityId> leaves;
  std::vector<RecordedCommands> commands;
  std::uint64_t state_hash = 0;  // after the step
  std::int32_t invariant_violations = 0;
  std::int32_t replacements = 0;
  bool operator==(const RecordedTick&) const = default;
};

enum class RecordedQueryKind : std::uint8_t { kRaycast = 0, kSweep = 1, kOverlap = 2 };
const char* to_string(RecordedQueryKind kind);

// A query as the match answered it. Sweeps and overlaps carry their shape as Shape stores it (kind,
// offset, radius, height, half extents; no hulls over RPC); a batch is recorded as its members.
struct RecordedQuery {
  RecordedQueryKind kind = RecordedQueryKind::kRaycast;
  std::uint64_t request_id = 0;
  double tick_used = 0;      // the history tick the query was judged at (fractional: interpolated)
  std::uint32_t layers = 0;  // QueryFilter: mask, ignore, level
  EntityId ignore = kNoEntity;
  bool include_level = true;
  Vec3 origin;  // raycast origin, sweep start, overlap centre
  Vec3 target;  // raycast direction (unit), sweep end; unused by overlaps
  float max_distance = 0;
  float yaw = 0;
  std::uint8_t shape_kind = 0;
  Vec3 shape_offset;
  float shape_radius = 0;
  float shape_height = 0;
  Vec3 shape_half_extents;
  // The answer: a hit (raycast, sweep) or what was overlapped.
  bool hit = false;
  EntityId entity = kNoEntity;
  std::int32_t brush = -1;
  float fraction = 0;  // the trace's fraction of the ray (max_distance) or the sweep's path
  Vec3 point;
  Vec3 normal;
  std::vector<EntityId> overlapped;
  bool operator==(const RecordedQuery&) const = default;
};

struct Recording {
  RecordingHeader header;
  std::vector<RecordedTick> ticks;
  std::vector<RecordedQuery> queries;
  bool truncated = false;  // the file ended inside a record: everything before it was read
};

enum class RecordingError : std::uint8_t {
  kNone,
  kIo,            // the file could not be opened or read
  kBadMagic,      // the first four bytes are not "SCRP"
  kWrongVersion,  // a format version this reader does not know
  kNoHeader,      // the first record is not a header (or the file ends before it)
  kBadChecksum,   // a record's bytes are not the ones written
  kBadRecord,     // an unknown tag, a length beyond kMaxRecordBytes, counts past the record's end
  kOutOfOrder,    // tick numbers that do not increase by one
};
const char* to_string(RecordingError error);

struct RecordingReadResult {
  Recording recording;
  RecordingError error = RecordingError::kNone;
  std::size_t offset = 0;  // where the error was found
  std::string message;
  bool ok() const { return error == RecordingError::kNone; }
};

RecordingReadResult read_recording(std::span<const std::uint8_t> bytes);
RecordingReadResult read_recording_file(const std::string& path);

class RecordingWriter {
 public:
  // Starts with the preamble: the first bytes() handed out begin the file.
  RecordingWriter();
  void header(const RecordingHeader& h);
  void tick(const RecordedTick& t);
  void query(const RecordedQuery& q);
  std::span<const std::uint8_t> bytes() const { return buffer_; }
  void clear() { buffer_.clear(); }

 private:
  void finish_record(std::uint8_t tag, std::size_t start);
  std::vector<std::uint8_t> buffer_;
};

}  // namespace shiftcast
