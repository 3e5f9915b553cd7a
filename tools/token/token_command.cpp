#include "tools/token/token_command.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <string_view>

#include "protocol/connect_token.hpp"
#include "tools/token/token_json.hpp"
#include "tools/token/token_mint.hpp"

namespace shiftcast {

const char* const kTokenCommandUsage =
    "usage: shiftcast-token --key-file FILE --server IP:PORT --server-instance HEX16 --match ID --client ID\n"
    "                       [--valid-seconds N | --expires-at UNIX] [--format json|request] [--now UNIX]\n"
    "                       [--nonce HEX48] [--client-to-server-key HEX64] [--server-to-client-key HEX64]\n"
    "  Mints a connect token for the server at IP:PORT (its public_address) whose process published\n"
    "  HEX16 as its instance (GET /api/matches \"server_instance\", or the GameServer annotation\n"
    "  shiftcast-server-instance), sealed under the token key in FILE (64 hex digits, first line).\n"
    "  --valid-seconds N   1..3600, default 30; or --expires-at UNIX, a unix time within that window\n"
    "  --format json       (default) the token as JSON for the game client (docs/protocol.md, \"Minting\")\n"
    "  --format request    the client's first datagram, ConnectionRequest, as raw bytes\n"
    "  --now UNIX          the clock to check the expiry against (reproducible output); default the "
    "system's\n"
    "  --nonce, --client-to-server-key, --server-to-client-key: fixed values for test vectors only;\n"
    "                      by default each is fresh and random, as a real token's must be\n";

namespace {

constexpr std::string_view kOptions[] = {
    "key-file", "server",        "server-instance",      "match",
    "client",   "valid-seconds", "expires-at",           "format",
    "now",      "nonce",         "client-to-server-key", "server-to-client-key"};

template <class T>
std::optional<T> whole_number(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

template <std::size_t N>
std::optional<std::array<std::uint8_t, N>> fixed_bytes(std::string_view hex) {
  const std::optional<std::vector<std::uint8_t>> bytes = from_hex(hex, N);
  if (!bytes) return std::nullopt;
  std::array<std::uint8_t, N> out{};
  std::copy(bytes->begin(), bytes->end(), out.begin());
  return out;
}

// The key file's first line (whitespace trimmed by key_from_hex), as the server reads token_key_file.
std::optional<Key> read_token_key(const std::string& path, std::vector<std::string>& problems) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    problems.push_back("--key-file " + path + ": cannot read it");
    return std::nullopt;
  }
  std::string line;
  std::getline(in, line);
  std::optional<Key> key = key_from_hex(line);
  if (!key) problems.push_back("--key-file " + path + ": the first line must be 64 hex digits");
  return key;
}

TokenCommandResult refused(const std::vector<std::string>& problems) {
  TokenCommandResult r;
  r.status = 2;
  for (const std::string& p : problems)
    r.err += "shiftcast-token: " + p + "\n";
  r.err += kTokenCommandUsage;
  return r;
}

}  // namespace

TokenCommandResult run_token_command(const std::vector<std::string>& args, std::uint64_t now_unix) {
  std::map<std::string, std::string, std::less<>> given;
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") return {0, kTokenCommandUsage, ""};
    const std::string_view name = std::string_view(arg).substr(std::min<std::size_t>(2, arg.size()));
    if (!arg.starts_with("--") ||
        std::find(std::begin(kOptions), std::end(kOptions), name) == std::end(kOptions)) {
      problems.push_back("unknown argument " + arg);
      continue;
    }
    if (i + 1 == args.size()) {
      problems.push_back(arg + ": needs a value");
      break;
    }
    if (!given.emplace(std::string(name), args[++i]).second) problems.push_back(arg + ": given twice");
  }
  auto value = [&](std::string_view name) -> const std::string* {
    const auto it = given.find(name);
    return it == given.end() ? nullptr : &it->second;
  };
  for (std::string_view required : {"key-file", "server", "server-instance", "match", "client"}) {
    if (value(required) == nullptr) problems.push_back("--" + std::string(required) + " is required");
  }

  MintRequest request;
  if (const std::string* v = value("server")) request.server_address = *v;
  if (const std::string* v = value("server-instance")) {
    const std::optional<std::uint64_t> instance = parse_server_instance(*v);
    if (!instance) {
      problems.push_back("--server-instance " + *v + ": must be 16 hex digits, as the server publishes it");
    } else {
      request.server_instance = *instance;
    }
  }
  if (const std::string* v = value("match")) {
    const auto id = whole_number<std::uint32_t>(*v);
    if (!id) problems.push_back("--match " + *v + ": must be a match id, 1..4294967295");
    request.match_id = id.value_or(0);
  }
  if (const std::string* v = value("client")) {
    const auto id = whole_number<std::uint64_t>(*v);
    if (!id) problems.push_back("--client " + *v + ": must be a client id, 1..18446744073709551615");
    request.client_id = id.value_or(0);
  }
  if (const std::string* v = value("now")) {
    const auto now = whole_number<std::uint64_t>(*v);
    if (!now) problems.push_back("--now " + *v + ": must be unix seconds");
    now_unix = now.value_or(now_unix);
  }
  const std::string* valid = value("valid-seconds");
  const std::string* expires = value("expires-at");
  if (valid != nullptr && expires != nullptr) {
    problems.push_back("--valid-seconds and --expires-at: give one of them");
  } else if (expires != nullptr) {
    const auto at = whole_number<std::uint64_t>(*expires);
    if (!at) problems.push_back("--expires-at " + *expires + ": must be unix seconds");
    request.expires_at = at.value_or(0);
  } else {
    const auto seconds = valid != nullptr ? whole_number<std::uint64_t>(*valid) : kDefaultMintValidSeconds;
    if (!seconds || *seconds == 0 || *seconds > kMaxTokenValidSeconds) {
      problems.push_back("--valid-seconds " + *valid + ": must be 1.." +
                         std::to_string(kMaxTokenValidSeconds));
    } else {
      request.expires_at = now_unix + *seconds;
    }
  }
  const std::string format = value("format") != nullptr ? *value("format") : "json";
  if (format != "json" && format != "request") problems.push_back("--format " + format + ": json or request");
  if (const std::string* v = value("nonce")) {
    request.nonce = fixed_bytes<kTokenNonceBytes>(*v);
    if (!request.nonce) problems.push_back("--nonce: must be 48 hex digits (24 bytes)");
  }
  if (const std::string* v = value("client-to-server-key")) {
    request.client_to_server = fixed_bytes<kKeyBytes>(*v);
    if (!request.client_to_server) problems.push_back("--client-to-server-key: must be 64 hex digits");
  }
  if (const std::string* v = value("server-to-client-key")) {
    request.server_to_client = fixed_bytes<kKeyBytes>(*v);
    if (!request.server_to_client) problems.push_back("--server-to-client-key: must be 64 hex digits");
  }
  if (const std::string* v = value("key-file")) {
    if (std::optional<Key> key = read_token_key(*v, problems)) request.token_key = *key;
  }
  if (!problems.empty()) return refused(problems);

  const MintResult minted = mint_connect_token(request, now_unix);
  if (!minted.ok()) {
    std::vector<std::string> lines;
    for (std::size_t begin = 0; begin <= minted.error.size();) {
      const std::size_t end = std::min(minted.error.find('\n', begin), minted.error.size());
      lines.push_back(minted.error.substr(begin, end - begin));
      begin = end + 1;
    }
    return refused(lines);
  }
  TokenCommandResult r;
  if (format == "json") {
    r.out = connect_token_json(*minted.token);
  } else {
    const std::vector<std::uint8_t> datagram = build_connection_request(*minted.token);
    r.out.assign(datagram.begin(), datagram.end());
  }
  return r;
}

}  // namespace shiftcast
