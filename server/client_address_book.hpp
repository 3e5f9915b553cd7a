// ClientAddressBook: the clients a match has connected and the address each one plays from, readable
// from any thread. The UDP endpoint asks it on the receiving thread before it copies and posts a packet
// to the match's worker, so a packet naming an unknown client (or a known client from another address,
// which ClientConnection would refuse anyway) costs one uncontended lock and a counted refusal, never
// work on the match's worker. The match's worker writes it on every connect and leave.
//
// It also remembers, for kGoodbyeGraceSeconds, the clients that left with a goodbye: a copy of that
// goodbye arriving after the connection was dropped is counted as DuplicatePacket (docs/protocol.md,
// "Disconnect"), not as a packet for no connection. Times are steady-clock seconds, passed in.
//
//   book.set(client_id, from);                    // worker: connected (or reconnected from a new address)
//   book.depart(client_id, goodbye_sequence, now);  // worker: dropped (goodbye_sequence 0: no goodbye)
//   if (!book.admits(id, from)) refuse(book.goodbye_copy(id, from, seq, now) ? DuplicatePacket
//                                                                             : UnknownConnection);
#pragma once

#include <boost/asio/ip/udp.hpp>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace shiftcast {

class ClientAddressBook {
 public:
  void set(std::uint64_t client_id, const boost::asio::ip::udp::endpoint& from);
  void erase(std::uint64_t client_id);
  // The client's connection was dropped. With a goodbye (its sequence, nonzero), its copies stay
  // recognisable until now + kGoodbyeGraceSeconds; departures older than that are forgotten here.
  void depart(std::uint64_t client_id, std::uint64_t goodbye_sequence, double now);
  void clear();
  bool admits(std::uint64_t client_id, const boost::asio::ip::udp::endpoint& from) const;
  // True for a packet from a departed client's address carrying its goodbye's sequence, within the
  // grace. The header is not authenticated here (the keys went with the connection): this decides only
  // which reason a refusal is counted under, never whether anything is answered or used.
  bool goodbye_copy(std::uint64_t client_id, const boost::asio::ip::udp::endpoint& from,
                    std::uint64_t sequence, double now) const;

 private:
  struct Departure {
    boost::asio::ip::udp::endpoint from;
    std::uint64_t goodbye_sequence = 0;
    double until = 0;
  };

  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, boost::asio::ip::udp::endpoint> clients_;
  std::unordered_map<std::uint64_t, Departure> departed_;
};

}  // namespace shiftcast
