// A goodbye (Disconnect) is one packet sent kGoodbyeCopies times: the server acts on the first copy and
// counts every later one as DuplicatePacket, both while it still holds the closed connection (its replay
// window refuses the repeated sequence) and for kGoodbyeGraceSeconds after it dropped it (the address
// book remembers the goodbye). Oracles: the goodbye's own sequence, and the clock the test passes.
#include <gtest/gtest.h>

#include <boost/asio/ip/address.hpp>

#include "server/client_address_book.hpp"
#include "tests/support/channel_harness.hpp"

namespace shiftcast {
namespace {

using namespace channel_test;
namespace ip = boost::asio::ip;

TEST(Goodbye, CopiesOfTheClientsGoodbyeAreDuplicatesAndLaterPacketsUnknown) {
  Connected p;
  ClientConnection& c = p.connection();
  // A packet sent before the goodbye that arrives after it: authentic and new, but the connection is over.
  const std::vector<std::uint8_t> late_frame = p.client.send_command(command_input(1), 0, kStart + 0.01);
  const std::vector<std::uint8_t> bye = p.client.disconnect(kStart + 0.02);
  ASSERT_FALSE(bye.empty());
  const std::uint64_t bye_sequence = as_packet(bye).sequence();
  EXPECT_EQ(c.on_packet(as_packet(bye), kClientAddress, kStart + 0.03), wire::ErrorCode::Ok);
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(c.close_reason(), wire::ErrorCode::ClientDisconnected);
  EXPECT_EQ(c.goodbye_sequence(), bye_sequence);
  for (int copy = 1; copy < kGoodbyeCopies; ++copy) {
    EXPECT_EQ(c.on_packet(as_packet(bye), kClientAddress, kStart + 0.03), wire::ErrorCode::DuplicatePacket)
        << copy;
  }
  EXPECT_EQ(c.on_packet(as_packet(late_frame), kClientAddress, kStart + 0.04),
            wire::ErrorCode::UnknownConnection);
  // A forgery of the goodbye's sequence does not authenticate: DecryptFailed, as on an open connection.
  EXPECT_EQ(c.on_packet(as_packet(tamper(bye, false)), kClientAddress, kStart + 0.05),
            wire::ErrorCode::DecryptFailed);
}

TEST(Goodbye, AConnectionClosedByTheServerHasNoGoodbyeSequence) {
  Connected p;
  ClientConnection& c = p.connection();
  (void)c.build_disconnect(wire::ErrorCode::MatchEnded, kStart + 1);
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(c.goodbye_sequence(), 0u);
}

TEST(Goodbye, TheAddressBookKnowsAGoodbyesCopiesForTheGraceOnly) {
  const ip::udp::endpoint from(ip::make_address("10.0.0.7"), 5000);
  const ip::udp::endpoint other_port(ip::make_address("10.0.0.7"), 5001);
  constexpr double kLeft = 100;
  constexpr std::uint64_t kBye = 9;
  ClientAddressBook book;
  book.set(42, from);
  book.set(43, from);
  EXPECT_TRUE(book.admits(42, from));
  EXPECT_FALSE(book.goodbye_copy(42, from, kBye, kLeft));  // connected: the connection judges its packets
  book.depart(42, kBye, kLeft);
  EXPECT_FALSE(book.admits(42, from));
  EXPECT_TRUE(book.goodbye_copy(42, from, kBye, kLeft));
  EXPECT_TRUE(book.goodbye_copy(42, from, kBye, kLeft + kGoodbyeGraceSeconds - 0.001));
  EXPECT_FALSE(book.goodbye_copy(42, from, kBye, kLeft + kGoodbyeGraceSeconds));  // the grace is over
  EXPECT_FALSE(book.goodbye_copy(42, from, kBye + 1, kLeft));                     // not the goodbye
  EXPECT_FALSE(book.goodbye_copy(42, from, kBye - 1, kLeft));                     // a late older packet
  EXPECT_FALSE(book.goodbye_copy(42, other_port, kBye, kLeft));                   // another address
  EXPECT_FALSE(book.goodbye_copy(7, from, kBye, kLeft));                          // another client

  // Dropped without a goodbye (a timeout, a server's Disconnect): nothing to recognise.
  book.depart(43, 0, kLeft);
  EXPECT_FALSE(book.admits(43, from));
  EXPECT_FALSE(book.goodbye_copy(43, from, 0, kLeft));

  // Back with a fresh token: its packets are the new connection's again, not copies.
  book.set(42, from);
  EXPECT_TRUE(book.admits(42, from));
  EXPECT_FALSE(book.goodbye_copy(42, from, kBye, kLeft));

  // A later departure forgets the ones whose grace ended (the book does not grow with every leave).
  book.set(44, other_port);
  book.depart(42, kBye, kLeft);
  book.depart(44, 3, kLeft + 2 * kGoodbyeGraceSeconds);
  EXPECT_FALSE(book.goodbye_copy(42, from, kBye, kLeft));  // forgotten, not merely expired
  EXPECT_TRUE(book.goodbye_copy(44, other_port, 3, kLeft + 2 * kGoodbyeGraceSeconds));
}

}  // namespace
}  // namespace shiftcast
