#include "protocol/rpc_frame.hpp"

#include "protocol/byte_order_internal.hpp"

namespace shiftcast {
namespace {

// The strictest alignment of any FlatBuffers scalar (u64, double). Vector storage from operator new is
// at least this aligned.
constexpr std::uintptr_t kFrameAlignment = 8;
static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= kFrameAlignment);

}  // namespace

void append_frame(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> payload) {
  const auto length = static_cast<std::uint32_t>(payload.size());
  static_assert(sizeof(length) == kRpcPrefixBytes);
  detail::append_le(out, length);
  out.insert(out.end(), payload.begin(), payload.end());
}

void FrameReader::feed(std::span<const std::uint8_t> bytes) {
  if (error_ != wire::ErrorCode::Ok) return;
  // Frames already handed out are dead once the caller feeds again (the contract of next()), so the
  // consumed prefix goes now: the buffer holds at most one partial frame plus what this feed brings.
  if (read_ > 0) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(read_));
    read_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

std::optional<std::span<const std::uint8_t>> FrameReader::next() {
  if (error_ != wire::ErrorCode::Ok) return std::nullopt;
  const std::size_t available = buffer_.size() - read_;
  if (available < kRpcPrefixBytes) return std::nullopt;
  static_assert(sizeof(std::uint32_t) == kRpcPrefixBytes);
  const std::size_t length = detail::load_le<std::uint32_t>(buffer_.data() + read_);
  // Judged on the prefix alone, before the payload arrives: a peer announcing a huge frame is cut off
  // without the server buffering any of it.
  if (length == 0 || length > max_) {
    error_ = length == 0 ? wire::ErrorCode::Malformed : wire::ErrorCode::TooLarge;
    buffer_.clear();
    buffer_.shrink_to_fit();
    read_ = 0;
    return std::nullopt;
  }
  if (available - kRpcPrefixBytes < length) return std::nullopt;
  const std::uint8_t* payload = buffer_.data() + read_ + kRpcPrefixBytes;
  read_ += kRpcPrefixBytes + length;
  if (reinterpret_cast<std::uintptr_t>(payload) % kFrameAlignment == 0) return std::span{payload, length};
  aligned_.assign(payload, payload + length);
  return std::span<const std::uint8_t>{aligned_};
}

}  // namespace shiftcast
