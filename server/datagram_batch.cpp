#include "server/datagram_batch.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace shiftcast {

BatchSendResult send_datagrams(int fd, std::span<const OutgoingDatagram> datagrams) {
  BatchSendResult result;
  std::array<mmsghdr, kMaxDatagramsPerCall> headers{};
  std::array<iovec, kMaxDatagramsPerCall> vectors{};
  std::size_t next = 0;
  while (next < datagrams.size()) {
    const std::size_t count = std::min(kMaxDatagramsPerCall, datagrams.size() - next);
    for (std::size_t i = 0; i < count; ++i) {
      const OutgoingDatagram& d = datagrams[next + i];
      // sendmmsg only reads through these pointers; the casts are the C API's.
      vectors[i].iov_base = const_cast<std::uint8_t*>(d.bytes.data());
      vectors[i].iov_len = d.bytes.size();
      headers[i] = {};
      headers[i].msg_hdr.msg_name = const_cast<sockaddr*>(d.to.data());
      headers[i].msg_hdr.msg_namelen = static_cast<socklen_t>(d.to.size());
      headers[i].msg_hdr.msg_iov = &vectors[i];
      headers[i].msg_hdr.msg_iovlen = 1;
    }
    int sent = 0;
    do {
      sent = ::sendmmsg(fd, headers.data(), static_cast<unsigned>(count), 0);
    } while (sent < 0 && errno == EINTR);
    if (sent <= 0) {
      // The first datagram of this call failed: count it, go on with the next one.
      ++result.failed;
      ++next;
      continue;
    }
    for (int i = 0; i < sent; ++i)
      result.bytes_sent += datagrams[next + std::size_t(i)].bytes.size();
    result.sent += std::size_t(sent);
    next += std::size_t(sent);
  }
  return result;
}

boost::asio::ip::udp::endpoint InboundBatch::source(std::size_t i) const {
  boost::asio::ip::udp::endpoint from;
  const std::size_t size = std::min<std::size_t>(source_sizes_[i], from.capacity());
  std::memcpy(from.data(), &sources_[i], size);
  from.resize(size);
  return from;
}

ReceiveResult receive_datagrams(int fd, InboundBatch& batch) {
  std::array<mmsghdr, InboundBatch::kCapacity> headers{};
  std::array<iovec, InboundBatch::kCapacity> vectors{};
  for (std::size_t i = 0; i < InboundBatch::kCapacity; ++i) {
    vectors[i].iov_base = batch.buffers_[i].data();
    vectors[i].iov_len = batch.buffers_[i].size();
    headers[i].msg_hdr.msg_name = &batch.sources_[i];
    headers[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
    headers[i].msg_hdr.msg_iov = &vectors[i];
    headers[i].msg_hdr.msg_iovlen = 1;
  }
  int received = 0;
  do {
    received =
        ::recvmmsg(fd, headers.data(), static_cast<unsigned>(InboundBatch::kCapacity), MSG_DONTWAIT, nullptr);
  } while (received < 0 && errno == EINTR);
  ReceiveResult result;
  if (received < 0) {
    result.drained = errno == EAGAIN || errno == EWOULDBLOCK;
    return result;
  }
  result.count = std::size_t(received);
  // Fewer than asked: the call ran out of datagrams (an error after the first is reported by the next).
  result.drained = result.count < InboundBatch::kCapacity;
  for (std::size_t i = 0; i < result.count; ++i) {
    batch.sizes_[i] = headers[i].msg_len;
    batch.source_sizes_[i] = headers[i].msg_hdr.msg_namelen;
  }
  return result;
}

}  // namespace shiftcast
