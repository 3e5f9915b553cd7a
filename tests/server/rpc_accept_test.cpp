// The RPC accept loop when the process is out of descriptors (EMFILE): each failure is counted and the
// accept retried after accept_retry_s, never in a loop that spins a thread; once descriptors are back,
// the waiting client is accepted and served.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/support/rpc_harness.hpp"
#include "tests/support/stepped_match_directory.hpp"

namespace shiftcast::rpc_test {
namespace {

// Finding: the RPC accept loop spun on persistent errors such as EMFILE.
TEST(RpcAcceptTest, OutOfDescriptorsIsCountedAndRetriedAfterAPauseNotInALoop) {
#ifdef SHIFTCAST_SANITIZE
  // UBSan's vptr check probes memory through a pipe; with every descriptor taken it reports a false
  // "invalid vptr" on the first type it meets in the window. The Release run of this test is the check.
  GTEST_SKIP() << "descriptor exhaustion under UBSan";
#endif
  SteppedMatchDirectory directory({});
  RpcSettings s;
  s.open_reads = true;
  s.accept_retry_s = 0.05;
  RpcHarness rpc(directory, s, 1);
  const int client = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(client, 0);
  // The soft limit at the lowest free descriptor: the server's next accept cannot get one.
  const int lowest_free = ::dup(0);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit low = old;
  low.rlim_cur = rlim_t(lowest_free);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(rpc.port());
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int connected = ::connect(client, reinterpret_cast<sockaddr*>(&to), sizeof to);
  // A bounded real-time wait: the accept keeps failing for 0.3 s (about six retries 50 ms apart).
  ::poll(nullptr, 0, 300);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &old), 0);
  ASSERT_EQ(connected, 0);
  const double failures = rpc.registry.counter("shiftcast_rpc_accept_failures_total", "").value();
  EXPECT_GE(failures, 2);
  EXPECT_LE(failures, 12) << "the accept loop retried without pausing";
  // Descriptors are back: the waiting client is accepted at the next retry and served.
  flatbuffers::FlatBufferBuilder fbb;
  const auto frame = request_frame(fbb, wire::Message::ListMatches, wire::CreateListMatches(fbb), 1);
  ASSERT_EQ(::send(client, frame.data(), frame.size(), MSG_NOSIGNAL), ssize_t(frame.size()));
  pollfd p{client, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, int(kTimeout.count())), 1);
  std::uint8_t reply[256];
  EXPECT_GT(::recv(client, reply, sizeof reply, 0), 4);
  ::close(client);
}

}  // namespace
}  // namespace shiftcast::rpc_test
