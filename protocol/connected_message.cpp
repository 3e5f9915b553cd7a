#include "protocol/connected_message.hpp"

#include <limits>

#include "protocol/byte_order_internal.hpp"

namespace shiftcast {
namespace {

// LEB128: 7 bits a byte, low first; the high bit says another byte follows.
constexpr std::uint8_t kVarintMore = 0x80;
constexpr std::uint8_t kVarintPayload = 0x7F;
constexpr int kVarintMaxBytes = 10;  // ceil(64 / 7)

// ServerFrame flags.
constexpr std::uint8_t kHasSnapshot = 0x01;
constexpr std::uint8_t kSnapshotComplete = 0x02;
constexpr std::uint8_t kHasOwn = 0x04;
constexpr std::uint8_t kHasEvents = 0x08;
constexpr std::uint8_t kServerFrameFlags = kHasSnapshot | kSnapshotComplete | kHasOwn | kHasEvents;
// KeepAlive flags.
constexpr std::uint8_t kHasSession = 0x01;

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t value) {
  while (value > kVarintPayload) {
    out.push_back(static_cast<std::uint8_t>((value & kVarintPayload) | kVarintMore));
    value >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(value));
}

void put_section(std::vector<std::uint8_t>& out, ByteSpan bytes) {
  put_varint(out, bytes.size());
  out.insert(out.end(), bytes.begin(), bytes.end());
}

// Reads front to back; the first failure sticks, so a message is checked once, at its end.
class ByteReader {
 public:
  explicit ByteReader(ByteSpan bytes) : bytes_(bytes) {}

  std::uint8_t byte() {
    if (at_ >= bytes_.size()) return fail();
    return bytes_[at_++];
  }

  // Shortest form only, and within 64 bits: one value, one encoding.
  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (int i = 0; i < kVarintMaxBytes; ++i) {
      const std::uint8_t b = byte();
      if (!ok_) return 0;
      const std::uint64_t payload = b & kVarintPayload;
      if (i == kVarintMaxBytes - 1 && payload > 1) return fail();  // beyond 2^64
      value |= payload << (7 * i);
      if ((b & kVarintMore) == 0) {
        if (i > 0 && payload == 0) return fail();  // a trailing zero group: not the shortest form
        return value;
      }
    }
    return fail();
  }

  // A length-prefixed section; never empty (absent sections have their flag clear).
  ByteSpan section() {
    const std::uint64_t size = varint();
    if (!ok_ || size == 0 || size > bytes_.size() - at_) {
      fail();
      return {};
    }
    const ByteSpan s = bytes_.subspan(at_, static_cast<std::size_t>(size));
    at_ += static_cast<std::size_t>(size);
    return s;
  }

  template <typename T>
  T fixed() {
    if (bytes_.size() - at_ < sizeof(T)) {
      fail();
      return 0;
    }
    const T value = detail::load_le<T>(bytes_.data() + at_);
    at_ += sizeof(T);
    return value;
  }

  ByteSpan rest() {
    const ByteSpan r = bytes_.subspan(at_);
    at_ = bytes_.size();
    return r;
  }

  // True when every read succeeded and nothing is left over.
  bool finished() const { return ok_ && at_ == bytes_.size(); }
  bool ok() const { return ok_; }

 private:
  std::uint8_t fail() {
    ok_ = false;
    return 0;
  }

  ByteSpan bytes_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

bool read_server_frame(ByteReader& in, ServerFrameMessage& f) {
  f.tick = in.varint();
  f.input_ack = in.varint();
  const std::uint8_t flags = in.byte();
  if (!in.ok() || (flags & ~kServerFrameFlags) != 0) return false;
  if ((flags & kHasSnapshot) != 0) {
    SnapshotSection s;
    const std::uint64_t baseline_offset = in.varint();
    const std::uint64_t own_entity = in.varint();
    s.block = in.section();
    if (!in.ok() || f.tick == 0 || baseline_offset >= f.tick ||
        own_entity > std::numeric_limits<std::uint32_t>::max())
      return false;
    s.baseline_tick = baseline_offset == 0 ? 0 : f.tick - baseline_offset;
    s.own_entity = static_cast<std::uint32_t>(own_entity);
    s.complete = (flags & kSnapshotComplete) != 0;
    f.snapshot = s;
  } else if ((flags & kSnapshotComplete) != 0) {
    return false;
  }
  if ((flags & kHasOwn) != 0) f.own = in.section();
  if ((flags & kHasEvents) != 0) f.events = in.section();
  return in.finished();
}

bool read_keep_alive(ByteReader& in, KeepAliveMessage& k) {
  k.tick = in.varint();
  k.events_received = in.varint();
  const std::uint8_t flags = in.byte();
  if (!in.ok() || (flags & ~kHasSession) != 0) return false;
  if ((flags & kHasSession) != 0) {
    SessionInfoFields s;
    s.tick_rate = in.fixed<std::uint16_t>();
    s.snapshot_rate = in.fixed<std::uint16_t>();
    s.keepalive_interval_ms = in.fixed<std::uint32_t>();
    s.timeout_ms = in.fixed<std::uint32_t>();
    k.session = s;
  }
  return in.finished();
}

}  // namespace

ReadMessage read_connected_message(ByteSpan plaintext) {
  ReadMessage r;
  ByteReader in(plaintext);
  const std::uint8_t kind = in.byte();
  if (!in.ok()) {
    r.error = wire::ErrorCode::Malformed;
    return r;
  }
  bool ok = false;
  switch (kind) {
    case static_cast<std::uint8_t>(MessageKind::kClientFrame):
      r.message.kind = MessageKind::kClientFrame;
      r.message.commands = in.rest();
      ok = true;
      break;
    case static_cast<std::uint8_t>(MessageKind::kServerFrame):
      r.message.kind = MessageKind::kServerFrame;
      ok = read_server_frame(in, r.message.server_frame);
      break;
    case static_cast<std::uint8_t>(MessageKind::kKeepAlive):
      r.message.kind = MessageKind::kKeepAlive;
      ok = read_keep_alive(in, r.message.keep_alive);
      break;
    case static_cast<std::uint8_t>(MessageKind::kDisconnect): {
      r.message.kind = MessageKind::kDisconnect;
      const std::uint8_t code = in.byte();
      ok = in.finished() && code <= static_cast<std::uint8_t>(wire::ErrorCode::MAX);
      r.message.disconnect_code = static_cast<wire::ErrorCode>(code);
      break;
    }
    default:
      r.error = wire::ErrorCode::UnexpectedMessage;
      return r;
  }
  if (!ok) r.error = wire::ErrorCode::Malformed;
  return r;
}

void write_client_frame(std::vector<std::uint8_t>& out, ByteSpan commands) {
  out.push_back(static_cast<std::uint8_t>(MessageKind::kClientFrame));
  out.insert(out.end(), commands.begin(), commands.end());
}

void write_server_frame(std::vector<std::uint8_t>& out, const ServerFrameMessage& frame) {
  out.push_back(static_cast<std::uint8_t>(MessageKind::kServerFrame));
  put_varint(out, frame.tick);
  put_varint(out, frame.input_ack);
  std::uint8_t flags = 0;
  if (frame.snapshot) flags |= kHasSnapshot | (frame.snapshot->complete ? kSnapshotComplete : 0);
  if (frame.own) flags |= kHasOwn;
  if (frame.events) flags |= kHasEvents;
  out.push_back(flags);
  if (frame.snapshot) {
    const SnapshotSection& s = *frame.snapshot;
    put_varint(out, s.baseline_tick == 0 ? 0 : frame.tick - s.baseline_tick);
    put_varint(out, s.own_entity);
    put_section(out, s.block);
  }
  if (frame.own) put_section(out, *frame.own);
  if (frame.events) put_section(out, *frame.events);
}

void write_keep_alive(std::vector<std::uint8_t>& out, const KeepAliveMessage& keep_alive) {
  out.push_back(static_cast<std::uint8_t>(MessageKind::kKeepAlive));
  put_varint(out, keep_alive.tick);
  put_varint(out, keep_alive.events_received);
  out.push_back(keep_alive.session ? kHasSession : 0);
  if (const auto& s = keep_alive.session) {
    detail::append_le(out, s->tick_rate);
    detail::append_le(out, s->snapshot_rate);
    detail::append_le(out, s->keepalive_interval_ms);
    detail::append_le(out, s->timeout_ms);
  }
}

void write_disconnect(std::vector<std::uint8_t>& out, wire::ErrorCode code) {
  static_assert(static_cast<unsigned>(wire::ErrorCode::MAX) <= 0xFF, "a Disconnect's code is one byte");
  out.push_back(static_cast<std::uint8_t>(MessageKind::kDisconnect));
  out.push_back(static_cast<std::uint8_t>(code));
}

}  // namespace shiftcast
