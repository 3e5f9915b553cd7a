// Target: the RPC frame reader fed the stream in chunk sizes taken from the input, judged against a
// reference reading of the whole stream at once.
// Promise: the frames handed out are exactly the stream's, in order, 8-byte aligned, whatever the chunking;
// a zero length stops the reader with Malformed, a length over the limit with TooLarge, and nothing is
// buffered after that; otherwise what is buffered is the incomplete tail.
//
// Input: u16 max_frame_bytes - 1 | u8 count, then count chunk sizes (u8; 0 means 4096) used in turn |
//        the stream.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "protocol/rpc_frame.hpp"

namespace shiftcast::fuzz {
namespace {

struct Reference {
  std::vector<std::vector<std::uint8_t>> frames;
  wire::ErrorCode error = wire::ErrorCode::Ok;
  std::size_t tail = 0;  // bytes of an incomplete frame at the end
};

Reference read_whole(std::span<const std::uint8_t> stream, std::size_t max) {
  Reference r;
  std::size_t at = 0;
  while (stream.size() - at >= 4) {
    const std::size_t length = std::size_t{stream[at]} | std::size_t{stream[at + 1]} << 8 |
                               std::size_t{stream[at + 2]} << 16 | std::size_t{stream[at + 3]} << 24;
    if (length == 0 || length > max) {
      r.error = length == 0 ? wire::ErrorCode::Malformed : wire::ErrorCode::TooLarge;
      return r;
    }
    if (stream.size() - at - 4 < length) break;
    r.frames.emplace_back(stream.begin() + static_cast<std::ptrdiff_t>(at + 4),
                          stream.begin() + static_cast<std::ptrdiff_t>(at + 4 + length));
    at += 4 + length;
  }
  r.tail = stream.size() - at;
  return r;
}

}  // namespace
}  // namespace shiftcast::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  using namespace shiftcast::fuzz;
  Input in(data, size);
  const std::size_t max = std::size_t{in.u16()} + 1;
  std::vector<std::size_t> chunks;
  for (int n = in.u8() % 17; n > 0; --n) {
    const std::uint8_t c = in.u8();
    chunks.push_back(c == 0 ? 4096 : c);
  }
  if (chunks.empty()) chunks.push_back(1);
  const std::vector<std::uint8_t> stream = copy(in.rest());
  const Reference want = read_whole(stream, max);

  FrameReader reader(max);
  std::size_t next_frame = 0;
  std::size_t fed = 0;
  for (std::size_t i = 0; fed < stream.size(); ++i) {
    const std::size_t n = std::min(chunks[i % chunks.size()], stream.size() - fed);
    reader.feed(std::span(stream).subspan(fed, n));
    fed += n;
    while (const auto frame = reader.next()) {
      require(next_frame < want.frames.size(), "FrameReader: more frames than the stream holds");
      const auto& w = want.frames[next_frame++];
      require(frame->size() == w.size() && std::equal(frame->begin(), frame->end(), w.begin()),
              "FrameReader: a frame differs from the stream's");
      require(reinterpret_cast<std::uintptr_t>(frame->data()) % 8 == 0, "FrameReader: a misaligned frame");
    }
  }
  require(reader.error() == want.error, "FrameReader: wrong error");
  require(next_frame == want.frames.size(), "FrameReader: frames missing");
  if (want.error == wire::ErrorCode::Ok) {
    require(reader.buffered() == want.tail, "FrameReader: buffered is not the incomplete tail");
  } else {
    require(reader.buffered() == 0, "FrameReader: still buffering after an error");
  }
  return 0;
}
