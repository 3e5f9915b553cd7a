// ClientAddressBook: the clients a match has connected and the address each one plays from, readable
// from any thread. The UDP endpoint asks it on the receiving thread before it copies and posts a packet
// to the match's worker, so a packet naming an unknown client (or a known client from another address,
// which ClientConnection would refuse anyway) costs one uncontended lock and a counted refusal, never
// work on the match's worker. The match's worker writes it on every connect and leave.
//
//   book.set(client_id, from);                    // worker: connected (or reconnected from a new address)
//   if (!book.admits(id, from)) refuse(UnknownConnection);   // any thread
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
  void clear();
  bool admits(std::uint64_t client_id, const boost::asio::ip::udp::endpoint& from) const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, boost::asio::ip::udp::endpoint> clients_;
};

}  // namespace shiftcast
