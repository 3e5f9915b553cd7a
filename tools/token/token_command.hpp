// shiftcast-token's command line, as a function the tests call in process too: parses the arguments,
// reads the key file, mints (tools/token/token_mint.hpp) and formats (tools/token/token_json.hpp).
//
//   shiftcast-token --key-file FILE --server IP:PORT --server-instance HEX16 --match ID --client ID
//                   [--valid-seconds N | --expires-at UNIX] [--format json|request] [--now UNIX]
//                   [--nonce HEX48] [--client-to-server-key HEX64] [--server-to-client-key HEX64]
//
//   TokenCommandResult r = run_token_command(args, unix_now());
//   fwrite(r.out.data(), 1, r.out.size(), stdout); fputs(r.err.c_str(), stderr); return r.status;
//
// Exit status 0 with the token on `out`; 2 with every problem on `err` (one per line) and nothing on
// `out` for bad input (an unknown or repeated option, bad hex, a zero instance, a bad address, an expiry
// in the past, an unreadable key file).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shiftcast {

inline constexpr std::uint64_t kDefaultMintValidSeconds = 30;  // as the server's token_valid_seconds

struct TokenCommandResult {
  int status = 0;
  std::string out;  // json: text; request: the ConnectionRequest datagram's raw bytes
  std::string err;
};

// `args` without the program name; `now_unix` is the clock unless --now overrides it.
TokenCommandResult run_token_command(const std::vector<std::string>& args, std::uint64_t now_unix);

extern const char* const kTokenCommandUsage;

}  // namespace shiftcast
