// Datagrams in batches, both ways: the datagrams one tick of a match sends, in order, handed to the
// kernel together (DatagramBatch, send_datagrams), and the datagrams waiting on a socket taken in one
// call (InboundBatch, receive_datagrams).
// A match sends a snapshot or an acknowledgement to each of its clients every tick; one system call per
// datagram made the calls themselves (entry, exit, file lookup) a third of the server's time in the load
// ladder. A batch keeps the datagrams and their order, and UdpEndpoint::send_all gives them to the kernel
// with sendmmsg, kMaxDatagramsPerCall at a time: each client receives exactly the bytes it did before.
// On the way in, recvmmsg takes what is waiting, so a busy socket costs one call per batch, not one
// call and one reactor wake-up per datagram.
//
//   DatagramBatch& out = ...;                    // a match's, reused every tick (keeps its capacity)
//   out.add(connection.build_frame(...), client.endpoint);
//   endpoint.send_all(out);                      // sends in order, counts, and clears the batch
//
//   InboundBatch& in = ...;                      // an endpoint's (large: keep one, on the heap)
//   const ReceiveResult r = receive_datagrams(fd, in);     // never blocks
//   for (std::size_t i = 0; i < r.count; ++i) handle(in.datagram(i), in.source(i));
#pragma once

#include <sys/socket.h>

#include <array>
#include <boost/asio/ip/udp.hpp>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/wire_constants.hpp"

namespace shiftcast {

// Datagrams per sendmmsg call: large enough to amortize the call, small enough for the stack arrays.
inline constexpr std::size_t kMaxDatagramsPerCall = 64;

struct OutgoingDatagram {
  std::vector<std::uint8_t> bytes;
  boost::asio::ip::udp::endpoint to;
};

// What sending a batch did, for the endpoint's counters: as many sent and failed as datagrams given.
struct BatchSendResult {
  std::size_t sent = 0;
  std::size_t bytes_sent = 0;
  std::size_t failed = 0;
};

class DatagramBatch {
 public:
  void add(std::vector<std::uint8_t> datagram, const boost::asio::ip::udp::endpoint& to) {
    items_.push_back({std::move(datagram), to});
  }
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  std::span<const OutgoingDatagram> items() const { return items_; }
  void clear() { items_.clear(); }

 private:
  std::vector<OutgoingDatagram> items_;
};

// Sends `datagrams` in order on the non-blocking UDP socket `fd`, kMaxDatagramsPerCall per call. A
// datagram the kernel refuses (a full send buffer, an unreachable address) is counted as failed and
// skipped, and the rest are still tried: the same outcome as one send per datagram.
BatchSendResult send_datagrams(int fd, std::span<const OutgoingDatagram> datagrams);

// Buffers for the datagrams one receive_datagrams call takes.
class InboundBatch {
 public:
  static constexpr std::size_t kCapacity = 32;
  // More than the largest datagram, so an oversized one is seen as such, not cut to fit; aligned buffers
  // (DatagramBuffer, protocol/wire_constants.hpp).
  static constexpr std::size_t kBufferBytes = kDatagramBufferBytes;

  std::span<const std::uint8_t> datagram(std::size_t i) const { return {buffers_[i].data(), sizes_[i]}; }
  boost::asio::ip::udp::endpoint source(std::size_t i) const;

 private:
  friend struct ReceiveResult receive_datagrams(int fd, InboundBatch& batch);
  std::array<DatagramBuffer, kCapacity> buffers_{};
  std::array<sockaddr_storage, kCapacity> sources_{};
  std::array<socklen_t, kCapacity> source_sizes_{};
  std::array<std::size_t, kCapacity> sizes_{};
};

struct ReceiveResult {
  std::size_t count = 0;  // datagrams now in the batch, 0..kCapacity
  // Nothing more is waiting (the call stopped at EAGAIN): the next datagram's arrival wakes the reactor.
  // False with a full batch (more may wait) or after a socket error such as an ICMP refusal report.
  bool drained = false;
};

// Takes the datagrams waiting on the non-blocking UDP socket `fd`, up to kCapacity, without blocking.
ReceiveResult receive_datagrams(int fd, InboundBatch& batch);

}  // namespace shiftcast
