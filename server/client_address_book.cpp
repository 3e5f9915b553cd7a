#include "server/client_address_book.hpp"

#include <iterator>

#include "protocol/wire_constants.hpp"

namespace shiftcast {

void ClientAddressBook::set(std::uint64_t client_id, const boost::asio::ip::udp::endpoint& from) {
  std::lock_guard lock(mutex_);
  clients_[client_id] = from;
  departed_.erase(client_id);
}

void ClientAddressBook::erase(std::uint64_t client_id) {
  std::lock_guard lock(mutex_);
  clients_.erase(client_id);
}

void ClientAddressBook::depart(std::uint64_t client_id, std::uint64_t goodbye_sequence, double now) {
  std::lock_guard lock(mutex_);
  for (auto it = departed_.begin(); it != departed_.end();)
    it = it->second.until <= now ? departed_.erase(it) : std::next(it);
  const auto it = clients_.find(client_id);
  if (it == clients_.end()) return;
  if (goodbye_sequence != 0)
    departed_[client_id] = {it->second, goodbye_sequence, now + kGoodbyeGraceSeconds};
  clients_.erase(it);
}

void ClientAddressBook::clear() {
  std::lock_guard lock(mutex_);
  clients_.clear();
  departed_.clear();
}

bool ClientAddressBook::admits(std::uint64_t client_id, const boost::asio::ip::udp::endpoint& from) const {
  std::lock_guard lock(mutex_);
  const auto it = clients_.find(client_id);
  return it != clients_.end() && it->second == from;
}

bool ClientAddressBook::goodbye_copy(std::uint64_t client_id, const boost::asio::ip::udp::endpoint& from,
                                     std::uint64_t sequence, double now) const {
  std::lock_guard lock(mutex_);
  const auto it = departed_.find(client_id);
  return it != departed_.end() && it->second.from == from && it->second.goodbye_sequence == sequence &&
         now < it->second.until;
}

}  // namespace shiftcast
