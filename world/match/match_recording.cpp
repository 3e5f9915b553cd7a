#include "world/match/match_recording.hpp"

#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace shiftcast {

namespace {

// Record tags (docs/replay.md).
constexpr std::uint8_t kTagHeader = 'H';
constexpr std::uint8_t kTagTick = 'T';
constexpr std::uint8_t kTagQuery = 'Q';
// Tag, length (u32) before the payload; checksum (u32) after it.
constexpr std::size_t kRecordOverhead = 1 + 4 + 4;
constexpr std::size_t kPreambleBytes = 8;

std::uint32_t fnv1a32(std::span<const std::uint8_t> bytes) {
  std::uint32_t h = 2166136261u;
  for (std::uint8_t b : bytes) {
    h ^= b;
    h *= 16777619u;
  }
  return h;
}

// Little-endian, whatever the host: the file is the same bytes on every machine.
class Out {
 public:
  explicit Out(std::vector<std::uint8_t>& b) : b_(b) {}
  void u8(std::uint8_t v) { b_.push_back(v); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
      b_.push_back(std::uint8_t(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i)
      b_.push_back(std::uint8_t(v >> (8 * i)));
  }
  void i32(std::int32_t v) { u32(std::uint32_t(v)); }
  void f32(float v) { u32(std::bit_cast<std::uint32_t>(v)); }
  void f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
  void vec(Vec3 v) {
    f32(v.x);
    f32(v.y);
    f32(v.z);
  }
  void str(const std::string& s) {
    u32(std::uint32_t(s.size()));
    b_.insert(b_.end(), s.begin(), s.end());
  }

 private:
  std::vector<std::uint8_t>& b_;
};

// Reads a record's payload; any read past its end sets `bad` and returns zeros, checked once at the end.
class In {
 public:
  explicit In(std::span<const std::uint8_t> p) : p_(p) {}
  bool bad() const { return bad_; }
  bool done() const { return at_ == p_.size(); }
  std::size_t left() const { return p_.size() - at_; }
  std::uint8_t u8() { return std::uint8_t(take(1)); }
  // 0 or 1 only: any other byte would read as true and be written back as 1, a file that does not
  // round-trip.
  bool flag() {
    const std::uint8_t v = u8();
    if (v > 1) bad_ = true;
    return v == 1;
  }
  std::uint32_t u32() { return std::uint32_t(take(4)); }
  std::uint64_t u64() { return take(8); }
  std::int32_t i32() { return std::int32_t(u32()); }
  float f32() { return std::bit_cast<float>(u32()); }
  double f64() { return std::bit_cast<double>(u64()); }
  Vec3 vec() {
    const float x = f32();
    const float y = f32();
    return {x, y, f32()};
  }
  std::string str() {
    const std::uint32_t n = u32();
    if (n > left()) {
      bad_ = true;
      return {};
    }
    std::string s(reinterpret_cast<const char*>(p_.data() + at_), n);
    at_ += n;
    return s;
  }
  // A count of items at least `item_bytes` each: more than the bytes left is corruption (and would
  // otherwise make a reserve() allocate gigabytes).
  std::uint32_t count(std::size_t item_bytes) {
    const std::uint32_t n = u32();
    if (std::size_t(n) * item_bytes > left()) {
      bad_ = true;
      return 0;
    }
    return n;
  }

 private:
  std::uint64_t take(int n) {
    if (bad_ || left() < std::size_t(n)) {
      bad_ = true;
      return 0;
    }
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= std::uint64_t(p_[at_ + std::size_t(i)]) << (8 * i);
    at_ += std::size_t(n);
    return v;
  }
  std::span<const std::uint8_t> p_;
  std::size_t at_ = 0;
  bool bad_ = false;
};

constexpr std::size_t kInputBytes = 4 * 4 + 1;

void put_input(Out& o, const PlayerInput& in) {
  o.f32(in.forward);
  o.f32(in.right);
  o.f32(in.yaw);
  o.f32(in.pitch);
  o.u8(in.buttons);
}

PlayerInput get_input(In& in) {
  PlayerInput p;
  p.forward = in.f32();
  p.right = in.f32();
  p.yaw = in.f32();
  p.pitch = in.f32();
  p.buttons = in.u8();
  return p;
}

RecordingHeader get_header(In& in) {
  RecordingHeader h;
  h.level_name = in.str();
  h.level_hash = in.u64();
  h.match_id = in.u32();
  h.tick_rate = in.i32();
  h.snapshot_rate = in.i32();
  h.max_players = in.i32();
  h.props = in.i32();
  h.seed = in.u32();
  h.level_check_period = in.i32();
  h.start_tick = in.u64();
  h.start_hash = in.u64();
  return h;
}

RecordedTick get_tick(In& in) {
  RecordedTick t;
  t.tick = in.u64();
  const std::uint32_t joins = in.count(4 + 16);
  for (std::uint32_t i = 0; i < joins; ++i) {
    RecordedJoin j;
    j.entity = in.u32();
    j.feet = in.vec();
    j.yaw = in.f32();
    t.joins.push_back(j);
  }
  const std::uint32_t leaves = in.count(4);
  for (std::uint32_t i = 0; i < leaves; ++i)
    t.leaves.push_back(in.u32());
  const std::uint32_t players = in.count(8);
  for (std::uint32_t i = 0; i < players && !in.bad(); ++i) {
    RecordedCommands c;
    c.entity = in.u32();
    const std::uint32_t n = in.count(kInputBytes);
    for (std::uint32_t k = 0; k < n; ++k)
      c.commands.push_back(get_input(in));
    t.commands.push_back(std::move(c));
  }
  t.state_hash = in.u64();
  t.invariant_violations = in.i32();
  t.replacements = in.i32();
  return t;
}

RecordedQuery get_query(In& in) {
  RecordedQuery q;
  const std::uint8_t kind = in.u8();
  q.kind = RecordedQueryKind(kind > 2 ? 255 : kind);
  q.request_id = in.u64();
  q.tick_used = in.f64();
  q.layers = in.u32();
  q.ignore = in.u32();
  q.include_level = in.flag();
  q.origin = in.vec();
  q.target = in.vec();
  q.max_distance = in.f32();
  q.yaw = in.f32();
  q.shape_kind = in.u8();
  q.shape_offset = in.vec();
  q.shape_radius = in.f32();
  q.shape_height = in.f32();
  q.shape_half_extents = in.vec();
  q.hit = in.flag();
  q.entity = in.u32();
  q.brush = in.i32();
  q.fraction = in.f32();
  q.point = in.vec();
  q.normal = in.vec();
  const std::uint32_t n = in.count(4);
  for (std::uint32_t i = 0; i < n; ++i)
    q.overlapped.push_back(in.u32());
  return q;
}

RecordingReadResult fail(RecordingReadResult r, RecordingError e, std::size_t offset, std::string message) {
  r.error = e;
  r.offset = offset;
  r.message = std::move(message);
  return r;
}

}  // namespace

std::uint64_t fnv1a64(std::span<const std::uint8_t> bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (std::uint8_t b : bytes) {
    h ^= b;
    h *= 1099511628211ull;
  }
  return h;
}

std::uint64_t level_fingerprint(const CompiledLevel& level) {
  CompiledLevel copy = level;
  copy.bsp_stats.build_ms = 0;
  copy.navmesh_build_ms = 0;
  copy.level.name.clear();  // the path it was loaded from: the same level from another directory
  // The potentially visible set decides what clients are sent, never what the simulation does (and its
  // compile time is a measurement): recordings made before levels carried one still replay.
  copy.visibility = {};
  copy.visibility_origin = VisibilityOrigin::kNone;
  copy.visibility_cell_size = 0;
  copy.visibility_build_ms = 0;
  return fnv1a64(serialize_compiled_level(copy));
}

const char* to_string(RecordedQueryKind kind) {
  switch (kind) {
    case RecordedQueryKind::kRaycast:
      return "raycast";
    case RecordedQueryKind::kSweep:
      return "sweep";
    case RecordedQueryKind::kOverlap:
      return "overlap";
  }
  return "unknown";
}

const char* to_string(RecordingError error) {
  switch (error) {
    case RecordingError::kNone:
      return "none";
    case RecordingError::kIo:
      return "io";
    case RecordingError::kBadMagic:
      return "bad_magic";
    case RecordingError::kWrongVersion:
      return "wrong_version";
    case RecordingError::kNoHeader:
      return "no_header";
    case RecordingError::kBadChecksum:
      return "bad_checksum";
    case RecordingError::kBadRecord:
      return "bad_record";
    case RecordingError::kOutOfOrder:
      return "out_of_order";
  }
  return "unknown";
}

RecordingWriter::RecordingWriter() {
  Out o(buffer_);
  for (char c : kRecordingMagic)
    o.u8(std::uint8_t(c));
  o.u32(kRecordingVersion);
}

void RecordingWriter::finish_record(std::uint8_t tag, std::size_t start) {
  // The payload was appended after a placeholder tag and length: fill them in, then checksum all three.
  const std::size_t payload = buffer_.size() - start - 5;
  buffer_[start] = tag;
  for (int i = 0; i < 4; ++i)
    buffer_[start + 1 + std::size_t(i)] = std::uint8_t(payload >> (8 * i));
  const std::uint32_t sum = fnv1a32(std::span(buffer_).subspan(start));
  Out(buffer_).u32(sum);
}

void RecordingWriter::header(const RecordingHeader& h) {
  const std::size_t start = buffer_.size();
  buffer_.resize(start + 5);
  Out o(buffer_);
  o.str(h.level_name);
  o.u64(h.level_hash);
  o.u32(h.match_id);
  o.i32(h.tick_rate);
  o.i32(h.snapshot_rate);
  o.i32(h.max_players);
  o.i32(h.props);
  o.u32(h.seed);
  o.i32(h.level_check_period);
  o.u64(h.start_tick);
  o.u64(h.start_hash);
  finish_record(kTagHeader, start);
}

void RecordingWriter::tick(const RecordedTick& t) {
  const std::size_t start = buffer_.size();
  buffer_.resize(start + 5);
  Out o(buffer_);
  o.u64(t.tick);
  o.u32(std::uint32_t(t.joins.size()));
  for (const RecordedJoin& j : t.joins) {
    o.u32(j.entity);
    o.vec(j.feet);
    o.f32(j.yaw);
  }
  o.u32(std::uint32_t(t.leaves.size()));
  for (EntityId id : t.leaves)
    o.u32(id);
  o.u32(std::uint32_t(t.commands.size()));
  for (const RecordedCommands& c : t.commands) {
    o.u32(c.entity);
    o.u32(std::uint32_t(c.commands.size()));
    for (const PlayerInput& in : c.commands)
      put_input(o, in);
  }
  o.u64(t.state_hash);
  o.i32(t.invariant_violations);
  o.i32(t.replacements);
  finish_record(kTagTick, start);
}

void RecordingWriter::query(const RecordedQuery& q) {
  const std::size_t start = buffer_.size();
  buffer_.resize(start + 5);
  Out o(buffer_);
  o.u8(std::uint8_t(q.kind));
  o.u64(q.request_id);
  o.f64(q.tick_used);
  o.u32(q.layers);
  o.u32(q.ignore);
  o.u8(q.include_level ? 1 : 0);
  o.vec(q.origin);
  o.vec(q.target);
  o.f32(q.max_distance);
  o.f32(q.yaw);
  o.u8(q.shape_kind);
  o.vec(q.shape_offset);
  o.f32(q.shape_radius);
  o.f32(q.shape_height);
  o.vec(q.shape_half_extents);
  o.u8(q.hit ? 1 : 0);
  o.u32(q.entity);
  o.i32(q.brush);
  o.f32(q.fraction);
  o.vec(q.point);
  o.vec(q.normal);
  o.u32(std::uint32_t(q.overlapped.size()));
  for (EntityId id : q.overlapped)
    o.u32(id);
  finish_record(kTagQuery, start);
}

RecordingReadResult read_recording(std::span<const std::uint8_t> bytes) {
  RecordingReadResult r;
  if (bytes.size() < 4 || std::memcmp(bytes.data(), kRecordingMagic, 4) != 0)
    return fail(std::move(r), RecordingError::kBadMagic, 0, "not a shiftcast recording (no SCRP magic)");
  if (bytes.size() < kPreambleBytes)
    return fail(std::move(r), RecordingError::kNoHeader, 4, "the file ends inside its preamble");
  In pre(bytes.subspan(4, 4));
  const std::uint32_t version = pre.u32();
  if (version != kRecordingVersion)
    return fail(std::move(r), RecordingError::kWrongVersion, 4,
                "format version " + std::to_string(version) + ", this reader knows " +
                    std::to_string(kRecordingVersion));
  std::size_t at = kPreambleBytes;
  bool have_header = false;
  while (at < bytes.size()) {
    if (bytes.size() - at < kRecordOverhead) {
      r.recording.truncated = true;
      break;
    }
    const std::uint8_t tag = bytes[at];
    In len_in(bytes.subspan(at + 1, 4));
    const std::uint32_t length = len_in.u32();
    if (length > kMaxRecordBytes)
      return fail(std::move(r), RecordingError::kBadRecord, at,
                  "a record of " + std::to_string(length) + " bytes (at most " +
                      std::to_string(kMaxRecordBytes) + ")");
    if (bytes.size() - at < kRecordOverhead + length) {
      r.recording.truncated = true;
      break;
    }
    const std::span<const std::uint8_t> record = bytes.subspan(at, 5 + std::size_t(length));
    In sum_in(bytes.subspan(at + 5 + length, 4));
    if (fnv1a32(record) != sum_in.u32())
      return fail(std::move(r), RecordingError::kBadChecksum, at, "the record's checksum does not match");
    In in(record.subspan(5));
    if (!have_header && tag != kTagHeader)
      return fail(std::move(r), RecordingError::kNoHeader, at, "the first record is not a header");
    if (tag == kTagHeader) {
      if (have_header) return fail(std::move(r), RecordingError::kBadRecord, at, "a second header");
      r.recording.header = get_header(in);
      have_header = true;
    } else if (tag == kTagTick) {
      RecordedTick t = get_tick(in);
      const std::uint64_t expected =
          r.recording.ticks.empty() ? r.recording.header.start_tick + 1 : r.recording.ticks.back().tick + 1;
      if (!in.bad() && t.tick != expected)
        return fail(std::move(r), RecordingError::kOutOfOrder, at,
                    "tick " + std::to_string(t.tick) + " where " + std::to_string(expected) + " was next");
      r.recording.ticks.push_back(std::move(t));
    } else if (tag == kTagQuery) {
      RecordedQuery q = get_query(in);
      if (std::uint8_t(q.kind) > 2)
        return fail(std::move(r), RecordingError::kBadRecord, at, "unknown query kind");
      r.recording.queries.push_back(std::move(q));
    } else {
      return fail(std::move(r), RecordingError::kBadRecord, at, "unknown record tag " + std::to_string(tag));
    }
    if (in.bad() || !in.done())
      return fail(std::move(r), RecordingError::kBadRecord, at, "the record's fields do not fill its length");
    at += kRecordOverhead + length;
  }
  if (!have_header) return fail(std::move(r), RecordingError::kNoHeader, at, "the file has no header record");
  return r;
}

RecordingReadResult read_recording_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    RecordingReadResult r;
    return fail(std::move(r), RecordingError::kIo, 0, path + ": cannot open");
  }
  const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  if (f.bad()) {
    RecordingReadResult r;
    return fail(std::move(r), RecordingError::kIo, 0, path + ": read error");
  }
  return read_recording(bytes);
}

}  // namespace shiftcast
