// shiftcast-token: mints connect tokens for any server of a fleet from the shared token key, without a
// round trip to the server (tools/token/token_command.hpp has the options; docs/protocol.md, "Minting
// tokens", the output and a test vector).
//
//   shiftcast-token --key-file token.key --server 203.0.113.7:40000 --server-instance 0123456789abcdef
//                   --match 1 --client 42 --valid-seconds 30 > token.json
//
// Exit status: 0 with the token on stdout; 2 with the reasons on stderr for any bad input.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/token/token_command.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const shiftcast::TokenCommandResult r = shiftcast::run_token_command(args, std::uint64_t(now));
  std::fwrite(r.out.data(), 1, r.out.size(), stdout);
  std::fputs(r.err.c_str(), stderr);
  return std::fflush(stdout) == 0 ? r.status : 1;
}
