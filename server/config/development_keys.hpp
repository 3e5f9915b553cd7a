// The development keys committed in configs/keys/ are public: anyone who read the repository can mint
// connect tokens and call the admin API of a server that uses them. They are recognised here by the
// SHA-256 of their content (a copy under another name is still refused), so that validate() can refuse
// them whenever a listener binds anything but loopback.
//
//   if (is_development_token_key(*key_from_hex(line)) && !is_loopback(address)) refuse(...);
#pragma once

#include <string_view>

#include "protocol/crypto.hpp"
#include "server/config/ip_address.hpp"  // is_loopback_address, which the callers pair with these

namespace shiftcast {

// The token key's 32 bytes (not its hex text, so case and whitespace do not matter).
bool is_development_token_key(const Key& key);
// An API key (admin or service) as the server uses it: the key file's first line, trimmed.
bool is_development_api_key(std::string_view key);

}  // namespace shiftcast
