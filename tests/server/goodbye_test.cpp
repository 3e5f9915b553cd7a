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
  const std::uint64_t bye_sequence =
      open_test_packet(bye, Direction::kClientToServer, p.client.token().client_to_server).header.sequence;
  EXPECT_EQ(c.on_packet(bye, kClientAddress, kStart + 0.03), wire::ErrorCode::Ok);
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(c.close_reason(), wire::ErrorCode::ClientDisconnected);
  EXPECT_EQ(c.goodbye_sequence(), bye_sequence);
  for (int copy = 1; copy < kGoodbyeCopies; ++copy) {
    EXPECT_EQ(c.on_packet(bye, kClientAddress, kStart + 0.03), wire::ErrorCode::DuplicatePacket) << copy;
  }
  EXPECT_EQ(c.on_packet(late_frame, kClientAddress, kStart + 0.04), wire::ErrorCode::UnknownConnection);
  // A forgery of the goodbye's sequence does not authenticate: DecryptFailed, as on an open connection.
  EXPECT_EQ(c.on_packet(tamper(bye, false), kClientAddress, kStart + 0.05), wire::ErrorCode::DecryptFailed);
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
  constexpr AddressRoute kFirst{7, 42}, kSecond{7, 43};
  ClientAddressBook book;
  book.set(from, kFirst);
  EXPECT_TRUE(book.admits(kFirst, from));
  EXPECT_FALSE(book.admits(kFirst, other_port));
  // One address, one connection: a second connection from it replaces the first's route.
  book.set(from, kSecond);
  EXPECT_FALSE(book.admits(kFirst, from));
  ASSERT_TRUE(book.find(from).has_value());
  EXPECT_EQ(book.find(from)->client_id, kSecond.client_id);
  book.depart(from, kFirst, kBye, kLeft);  // the replaced connection's drop changes nothing
  EXPECT_TRUE(book.admits(kSecond, from));
  EXPECT_FALSE(book.goodbye_copy(from, kBye, kLeft));  // connected: the connection judges its packets

  book.depart(from, kSecond, kBye, kLeft);
  EXPECT_FALSE(book.find(from).has_value());
  EXPECT_TRUE(book.goodbye_copy(from, kBye, kLeft));
  EXPECT_TRUE(book.goodbye_copy(from, kBye, kLeft + kGoodbyeGraceSeconds - 0.001));
  EXPECT_FALSE(book.goodbye_copy(from, kBye, kLeft + kGoodbyeGraceSeconds));  // the grace is over
  EXPECT_FALSE(book.goodbye_copy(from, kBye + 1, kLeft));                     // not the goodbye
  EXPECT_FALSE(book.goodbye_copy(from, kBye - 1, kLeft));                     // a late older packet
  EXPECT_FALSE(book.goodbye_copy(other_port, kBye, kLeft));                   // another address
  // Only the low 16 bits travel: the copy of a goodbye sent at sequence 9 + 65536 looks the same.
  book.set(other_port, kFirst);
  book.depart(other_port, kFirst, kBye + 65536, kLeft);
  EXPECT_TRUE(book.goodbye_copy(other_port, kBye, kLeft));

  // Dropped without a goodbye (a timeout, a server's Disconnect): nothing to recognise.
  const ip::udp::endpoint third(ip::make_address("10.0.0.8"), 5000);
  book.set(third, {8, 1});
  book.depart(third, {8, 1}, 0, kLeft);
  EXPECT_FALSE(book.find(third).has_value());
  EXPECT_FALSE(book.goodbye_copy(third, 0, kLeft));

  // Back with a fresh token: its packets are the new connection's again, not copies.
  book.set(from, kFirst);
  EXPECT_TRUE(book.admits(kFirst, from));
  EXPECT_FALSE(book.goodbye_copy(from, kBye, kLeft));

  // A later departure forgets the ones whose grace ended (the book does not grow with every leave), and
  // an ending match takes every route of its own, no other.
  book.set(third, {9, 5});
  book.depart(third, {9, 5}, 3, kLeft + 2 * kGoodbyeGraceSeconds);
  EXPECT_FALSE(book.goodbye_copy(other_port, kBye, kLeft));  // forgotten, not merely expired
  EXPECT_TRUE(book.goodbye_copy(third, 3, kLeft + 2 * kGoodbyeGraceSeconds));
  book.set(other_port, {8, 2});
  book.erase_match(7);
  EXPECT_FALSE(book.find(from).has_value());
  EXPECT_TRUE(book.admits({8, 2}, other_port));
}

}  // namespace
}  // namespace shiftcast
