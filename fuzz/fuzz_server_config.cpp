// Target: the server's TOML configuration (server/server_config.hpp): parse_server_config over any text,
// then validate(); and apply_override over any flag and value. Key file paths are pinned to the committed
// development keys before validate() so no input makes the target read arbitrary files (/dev/zero).
// Promise: a bad file or value is a ConfigError naming the key or line; no other exception, no crash.
//
// Input: u8 mode | text.  mode bit 0 clear: the text is a config file; set: "flag\nvalue" for
// apply_override on the shipped defaults.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.hpp"
#include "server/config/server_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string config_dir = SHIFTCAST_FUZZ_CONFIG_DIR;
  if (data[0] & 1) {
    const std::size_t newline = text.find('\n');
    const std::string_view flag = text.substr(0, newline);
    const std::string_view value =
        newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    ServerConfig config;
    config.config_dir = config_dir;
    try {
      apply_override(config, flag, value);
    } catch (const ConfigError& e) {
      fuzz::require(e.what()[0] != '\0', "apply_override: an error without a message");
    }
    return 0;
  }
  ServerConfig config;
  try {
    config = parse_server_config(text, config_dir, "fuzz.toml");
  } catch (const ConfigError& e) {
    fuzz::require(e.what()[0] != '\0', "parse_server_config: an error without a message");
    return 0;
  }
  config.token_key_file = "keys/dev-token.key";
  config.admin_key_file = "keys/dev-admin.key";
  try {
    validate(config);
  } catch (const ConfigError& e) {
    fuzz::require(e.what()[0] != '\0', "validate: an error without a message");
  }
  return 0;
}
