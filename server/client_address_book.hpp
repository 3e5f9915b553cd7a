// ClientAddressBook: which connection each source address plays on, for the whole server and readable
// from any thread. Connected packets carry no ids (protocol version 4): the UDP endpoint looks the
// datagram's source up here on the receiving thread, before it copies and posts the packet to the
// match's worker, so a packet from an address with no connection costs one uncontended lock and a
// counted refusal, never work on a match's worker. A match writes it on every connect and leave (on its
// own worker). One address holds one connection: a client connecting again from the same address
// replaces its old route (the old connection then hears nothing and times out).
//
// It also remembers, for kGoodbyeGraceSeconds, the addresses whose client left with a goodbye: a copy of
// that goodbye (the same low 16 sequence bits) arriving after the connection was dropped is counted as
// DuplicatePacket (docs/protocol.md, "Disconnect"), not as a packet for no connection. Times are
// steady-clock seconds, passed in.
//
//   book.set(from, {match_id, client_id});              // worker: connected (or again, from this address)
//   book.depart(from, {match_id, client_id}, goodbye_sequence, now);  // worker: dropped (0: no goodbye)
//   auto route = book.find(from);                       // endpoint: whose packet is this?
//   if (!route) refuse(book.goodbye_copy(from, low_bits, now) ? DuplicatePacket : UnknownConnection);
#pragma once

#include <boost/asio/ip/udp.hpp>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace shiftcast {

struct AddressRoute {
  std::uint32_t match_id = 0;
  std::uint64_t client_id = 0;
  bool operator==(const AddressRoute&) const = default;
};

class ClientAddressBook {
 public:
  void set(const boost::asio::ip::udp::endpoint& from, const AddressRoute& route);
  // The connection `route` from `from` was dropped; nothing changes when the address already routes
  // elsewhere (its client connected again). With a goodbye (its sequence, nonzero), copies of it stay
  // recognisable until now + kGoodbyeGraceSeconds; departures older than that are forgotten here.
  void depart(const boost::asio::ip::udp::endpoint& from, const AddressRoute& route,
              std::uint64_t goodbye_sequence, double now);
  // Every route of an ending match.
  void erase_match(std::uint32_t match_id);
  std::optional<AddressRoute> find(const boost::asio::ip::udp::endpoint& from) const;
  bool admits(const AddressRoute& route, const boost::asio::ip::udp::endpoint& from) const {
    return find(from) == route;
  }
  // True for a packet from an address whose client left with a goodbye carrying these low 16 sequence
  // bits, within the grace. The header is not authenticated here (the keys went with the connection):
  // this decides only which reason a refusal is counted under, never whether anything is answered.
  bool goodbye_copy(const boost::asio::ip::udp::endpoint& from, std::uint16_t sequence_low_bits,
                    double now) const;

 private:
  struct Departure {
    std::uint16_t goodbye_low_bits = 0;
    double until = 0;
  };
  struct EndpointHash {
    std::size_t operator()(const boost::asio::ip::udp::endpoint& e) const;
  };

  mutable std::mutex mutex_;
  std::unordered_map<boost::asio::ip::udp::endpoint, AddressRoute, EndpointHash> routes_;
  std::unordered_map<boost::asio::ip::udp::endpoint, Departure, EndpointHash> departed_;
};

}  // namespace shiftcast
