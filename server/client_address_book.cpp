#include "server/client_address_book.hpp"

#include <functional>
#include <iterator>
#include <string_view>

#include "protocol/wire_constants.hpp"

namespace shiftcast {

// From what operator== compares (address and port), never from the sockaddr's padding bytes.
std::size_t ClientAddressBook::EndpointHash::operator()(const boost::asio::ip::udp::endpoint& e) const {
  std::size_t h = std::hash<unsigned short>{}(e.port());
  const auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  if (e.address().is_v4()) {
    mix(e.address().to_v4().to_uint());
  } else {
    const auto bytes = e.address().to_v6().to_bytes();
    mix(std::hash<std::string_view>{}(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
    mix(e.address().to_v6().scope_id());
  }
  return h;
}

void ClientAddressBook::set(const boost::asio::ip::udp::endpoint& from, const AddressRoute& route) {
  std::lock_guard lock(mutex_);
  routes_[from] = route;
  departed_.erase(from);
}

void ClientAddressBook::depart(const boost::asio::ip::udp::endpoint& from, const AddressRoute& route,
                               std::uint64_t goodbye_sequence, double now) {
  std::lock_guard lock(mutex_);
  for (auto it = departed_.begin(); it != departed_.end();)
    it = it->second.until <= now ? departed_.erase(it) : std::next(it);
  const auto it = routes_.find(from);
  if (it == routes_.end() || !(it->second == route)) return;
  if (goodbye_sequence != 0)
    departed_[from] = {static_cast<std::uint16_t>(goodbye_sequence), now + kGoodbyeGraceSeconds};
  routes_.erase(it);
}

void ClientAddressBook::erase_match(std::uint32_t match_id) {
  std::lock_guard lock(mutex_);
  std::erase_if(routes_, [&](const auto& entry) { return entry.second.match_id == match_id; });
}

std::optional<AddressRoute> ClientAddressBook::find(const boost::asio::ip::udp::endpoint& from) const {
  std::lock_guard lock(mutex_);
  const auto it = routes_.find(from);
  if (it == routes_.end()) return std::nullopt;
  return it->second;
}

bool ClientAddressBook::goodbye_copy(const boost::asio::ip::udp::endpoint& from,
                                     std::uint16_t sequence_low_bits, double now) const {
  std::lock_guard lock(mutex_);
  const auto it = departed_.find(from);
  return it != departed_.end() && it->second.goodbye_low_bits == sequence_low_bits && now < it->second.until;
}

}  // namespace shiftcast
