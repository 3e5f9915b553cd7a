// Datagrams in batches (server/datagram_batch.hpp) over real loopback sockets: what send_datagrams
// sends is what one sendto per datagram would have sent, in order, across several sendmmsg calls, with a
// refused datagram counted and skipped; receive_datagrams takes what waits, says when the socket is
// empty, and shows an oversized datagram as one byte over the limit. The oracle is the list of datagrams
// itself, read back one recv at a time (or sent one sendto at a time).
#include "server/datagram_batch.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <numeric>
#include <vector>

namespace shiftcast {
namespace {

using boost::asio::ip::udp;

class DatagramBatchSockets : public ::testing::Test {
 protected:
  void SetUp() override {
    for (udp::socket* s : {&sender_, &receiver_}) {
      s->open(udp::v4());
      s->set_option(boost::asio::socket_base::receive_buffer_size(1 << 20));
      s->bind({boost::asio::ip::make_address("127.0.0.1"), 0});
      s->non_blocking(true);
    }
  }
  udp::endpoint to() const { return receiver_.local_endpoint(); }
  // Every datagram waiting on the receiver, one recv each (the oracle's reading).
  std::vector<std::vector<std::uint8_t>> read_all() {
    std::vector<std::vector<std::uint8_t>> out;
    std::vector<std::uint8_t> buffer(InboundBatch::kBufferBytes);
    for (;;) {
      const ssize_t n = ::recv(receiver_.native_handle(), buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (n < 0) break;
      out.emplace_back(buffer.begin(), buffer.begin() + n);
    }
    return out;
  }
  std::vector<std::uint8_t> payload(std::size_t i) const {
    // Sizes from empty to the datagram limit; the bytes name their datagram.
    const std::size_t size = i == 7 ? kMaxDatagramBytes : (i * 37) % 97;
    std::vector<std::uint8_t> bytes(size);
    for (std::size_t k = 0; k < size; ++k)
      bytes[k] = std::uint8_t(i * 31 + k);
    return bytes;
  }

  boost::asio::io_context context_;
  udp::socket sender_{context_};
  udp::socket receiver_{context_};
};

TEST_F(DatagramBatchSockets, SendDatagramsSendsEveryDatagramInOrderAcrossCalls) {
  DatagramBatch batch;
  const std::size_t count = 2 * kMaxDatagramsPerCall + 5;
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < count; ++i) {
    batch.add(payload(i), to());
    bytes += payload(i).size();
  }
  const BatchSendResult r = send_datagrams(sender_.native_handle(), batch.items());
  EXPECT_EQ(r.sent, count);
  EXPECT_EQ(r.failed, 0u);
  EXPECT_EQ(r.bytes_sent, bytes);
  const auto got = read_all();
  ASSERT_EQ(got.size(), count);
  for (std::size_t i = 0; i < count; ++i)
    EXPECT_EQ(got[i], payload(i)) << i;
}

TEST_F(DatagramBatchSockets, ARefusedDatagramIsCountedAndTheRestStillGo) {
  // An IPv6 destination on an IPv4 socket: the kernel refuses it, as it would a lone sendto.
  const udp::endpoint v6(boost::asio::ip::make_address("::1"), to().port());
  std::vector<std::uint8_t> probe{1, 2, 3};
  const bool lone_refused = ::sendto(sender_.native_handle(), probe.data(), probe.size(), 0, v6.data(),
                                     static_cast<socklen_t>(v6.size())) < 0;
  ASSERT_TRUE(lone_refused);
  DatagramBatch batch;
  const std::size_t count = kMaxDatagramsPerCall + 3;
  const std::size_t refused_at = 10, refused_too = kMaxDatagramsPerCall;  // two refusals, two calls
  std::vector<std::vector<std::uint8_t>> expected;
  for (std::size_t i = 0; i < count; ++i) {
    const bool refused = i == refused_at || i == refused_too;
    batch.add(payload(i), refused ? v6 : to());
    if (!refused) expected.push_back(payload(i));
  }
  const BatchSendResult r = send_datagrams(sender_.native_handle(), batch.items());
  EXPECT_EQ(r.failed, 2u);
  EXPECT_EQ(r.sent, count - 2);
  EXPECT_EQ(read_all(), expected);
}

TEST_F(DatagramBatchSockets, ReceiveDatagramsTakesWhatWaitsAndSaysWhenEmpty) {
  const std::size_t count = InboundBatch::kCapacity + 8;
  std::vector<std::vector<std::uint8_t>> sent;
  for (std::size_t i = 0; i < count; ++i) {
    // One oversized datagram: seen as over the limit (the buffer's size), so the verifier refuses it as such.
    std::vector<std::uint8_t> bytes =
        i == 3 ? std::vector<std::uint8_t>(kMaxDatagramBytes + 300, 9) : payload(i);
    ASSERT_GE(::sendto(sender_.native_handle(), bytes.data(), bytes.size(), 0, to().data(),
                       static_cast<socklen_t>(to().size())),
              0);
    if (i == 3) bytes.resize(InboundBatch::kBufferBytes);
    sent.push_back(std::move(bytes));
  }
  auto batch = std::make_unique<InboundBatch>();
  std::vector<std::vector<std::uint8_t>> got;
  const ReceiveResult first = receive_datagrams(receiver_.native_handle(), *batch);
  EXPECT_EQ(first.count, InboundBatch::kCapacity);
  EXPECT_FALSE(first.drained);  // a full batch: more may wait
  for (std::size_t i = 0; i < first.count; ++i) {
    got.emplace_back(batch->datagram(i).begin(), batch->datagram(i).end());
    EXPECT_EQ(batch->source(i), sender_.local_endpoint());
    // FlatBuffers reads the datagram in place: every buffer starts aligned for its 8-byte loads.
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(batch->datagram(i).data()) % 8, 0u) << i;
  }
  const ReceiveResult second = receive_datagrams(receiver_.native_handle(), *batch);
  EXPECT_EQ(second.count, 8u);
  EXPECT_TRUE(second.drained);
  for (std::size_t i = 0; i < second.count; ++i)
    got.emplace_back(batch->datagram(i).begin(), batch->datagram(i).end());
  EXPECT_EQ(got, sent);
  const ReceiveResult third = receive_datagrams(receiver_.native_handle(), *batch);
  EXPECT_EQ(third.count, 0u);
  EXPECT_TRUE(third.drained);
}

}  // namespace
}  // namespace shiftcast
