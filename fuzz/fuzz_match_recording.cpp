// Target: the match-recording reader (world/match/match_recording.hpp, docs/replay.md): magic, version,
// record framing, checksums and every field of header, tick and query records. Promise: a RecordingError with
// a message, or a recording that the writer encodes back to exactly the bytes read (every record read whole,
// in order: the reader neither drops nor invents a field).
//
// Input: a recording file, as is.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "world/match/match_recording.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  const std::span<const std::uint8_t> bytes(data, size);
  const RecordingReadResult r = read_recording(bytes);
  if (!r.ok()) {
    if (r.error == RecordingError::kNone || r.message.empty() || r.offset > size) std::abort();
    return 0;
  }
  // Re-encode in file order: the header, then ticks and queries interleaved as they were read is not
  // known, so only recordings without queries (or without ticks) are compared byte for byte.
  if (r.recording.truncated || (!r.recording.ticks.empty() && !r.recording.queries.empty())) return 0;
  RecordingWriter w;
  w.header(r.recording.header);
  for (const RecordedTick& t : r.recording.ticks)
    w.tick(t);
  for (const RecordedQuery& q : r.recording.queries)
    w.query(q);
  const std::span<const std::uint8_t> again = w.bytes();
  if (again.size() != size || !std::equal(again.begin(), again.end(), bytes.begin())) std::abort();
  return 0;
}
