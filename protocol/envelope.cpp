#include "protocol/envelope.hpp"

#include <array>
#include <cctype>
#include <cstdint>
#include <string>

#include "protocol/wire_constants.hpp"

namespace shiftcast {
namespace {

// The deepest legal nesting is Envelope > BatchReply > [BatchResult] > BatchResult > RaycastReply >
// QueryHit; anything much deeper is an attack on the verifier's stack.
constexpr flatbuffers::uoffset_t kMaxVerifierDepth = 16;
// A table takes at least 4 bytes (its vtable offset), so an honest buffer holds at most size/4 tables.
// More means offsets pointing at the same table again and again: refuse it instead of verifying it
// over and over.
constexpr std::size_t kMinTableBytes = 4;
// The root offset (4 bytes) and the file identifier (4 bytes).
constexpr std::size_t kHeaderBytes = sizeof(flatbuffers::uoffset_t) + flatbuffers::kFileIdentifierLength;

// "WrongIdentifier" -> "wrong_identifier".
std::string snake_case(const char* camel) {
  std::string out;
  for (const char* c = camel; *c != '\0'; ++c) {
    const auto u = static_cast<unsigned char>(*c);
    if (std::isupper(u)) {
      if (!out.empty()) out.push_back('_');
      out.push_back(static_cast<char>(std::tolower(u)));
    } else {
      out.push_back(*c);
    }
  }
  return out;
}

// Derived from the schema's own names, so a new ErrorCode gets its label without anyone remembering to
// add one here. Built once (thread-safe static initialisation), immutable afterwards.
const std::array<std::string, kErrorCodeCount>& error_code_names() {
  static const std::array<std::string, kErrorCodeCount> names = [] {
    std::array<std::string, kErrorCodeCount> table;
    for (std::size_t i = 0; i < kErrorCodeCount; ++i)
      table[i] = snake_case(wire::EnumNamesErrorCode()[i]);
    return table;
  }();
  return names;
}

// The FlatBuffers verifier checks a vector's length word (4-byte alignment), not the alignment of the
// structs in it; the schema's structs with 64-bit fields need 8. Readers take such vectors in place, so
// a hostile buffer with the vector 4 bytes off would make every read a misaligned access (undefined
// behaviour; found by fuzz/fuzz_envelope). Honest builders align them, so this refuses only forgeries.
template <class T>
bool structs_aligned(const flatbuffers::Vector<const T*>* v) {
  return v == nullptr || reinterpret_cast<std::uintptr_t>(v->Data()) % alignof(T) == 0;
}

bool struct_vectors_aligned(const wire::Envelope& envelope) {
  if (const auto* push = envelope.message_as_ContactPush()) return structs_aligned(push->events());
  return true;
}

}  // namespace

EnvelopeView verify_envelope(std::span<const std::uint8_t> bytes, std::size_t max_bytes) {
  // FlatBuffers cannot address 2 GiB or more, whatever limit the caller allows.
  if (bytes.size() > max_bytes || bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return {nullptr, wire::ErrorCode::TooLarge};
  }
  if (bytes.size() < kHeaderBytes) return {nullptr, wire::ErrorCode::Malformed};
  if (!wire::EnvelopeBufferHasIdentifier(bytes.data())) return {nullptr, wire::ErrorCode::WrongIdentifier};

  flatbuffers::Verifier::Options options;
  options.max_depth = kMaxVerifierDepth;
  options.max_tables = static_cast<flatbuffers::uoffset_t>(bytes.size() / kMinTableBytes);
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), options);
  if (!wire::VerifyEnvelopeBuffer(verifier)) return {nullptr, wire::ErrorCode::Malformed};

  const wire::Envelope* envelope = wire::GetEnvelope(bytes.data());
  if (envelope->version() != kProtocolVersion) return {nullptr, wire::ErrorCode::WrongVersion};
  if (envelope->message_type() == wire::Message::NONE || envelope->message() == nullptr) {
    return {nullptr, wire::ErrorCode::Malformed};
  }
  if (!struct_vectors_aligned(*envelope)) return {nullptr, wire::ErrorCode::Malformed};
  return {envelope, wire::ErrorCode::Ok};
}

void finish_envelope(flatbuffers::FlatBufferBuilder& fbb, wire::Message type,
                     flatbuffers::Offset<void> message, std::uint64_t request_id) {
  const auto envelope = wire::CreateEnvelope(fbb, kProtocolVersion, request_id, type, message);
  wire::FinishEnvelopeBuffer(fbb, envelope);
}

const char* to_string(wire::ErrorCode code) {
  const auto index = static_cast<std::size_t>(code);
  if (index >= kErrorCodeCount) return "unknown";
  return error_code_names()[index].c_str();
}

}  // namespace shiftcast
