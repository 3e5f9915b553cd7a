#include "server/client_address_book.hpp"

namespace shiftcast {

void ClientAddressBook::set(std::uint64_t client_id, const boost::asio::ip::udp::endpoint& from) {
  std::lock_guard lock(mutex_);
  clients_[client_id] = from;
}

void ClientAddressBook::erase(std::uint64_t client_id) {
  std::lock_guard lock(mutex_);
  clients_.erase(client_id);
}

void ClientAddressBook::clear() {
  std::lock_guard lock(mutex_);
  clients_.clear();
}

bool ClientAddressBook::admits(std::uint64_t client_id, const boost::asio::ip::udp::endpoint& from) const {
  std::lock_guard lock(mutex_);
  const auto it = clients_.find(client_id);
  return it != clients_.end() && it->second == from;
}

}  // namespace shiftcast
