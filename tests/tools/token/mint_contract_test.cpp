// The Python reference (tests/contract/mint_token.py, written from docs/protocol.md alone, with Debian's
// python3-nacl and the flatc Python bindings) is the oracle of shiftcast-token's bytes: for the documented
// inputs and for seeded random ones (addresses of both families, instances, ids, expiries, keys, nonces)
// both print the same JSON and the same ConnectionRequest datagram, byte for byte, and the in-process
// library agrees. Bad input is refused by both.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <sstream>
#include <string>

#include "tests/support/tool_process.hpp"
#include "tests/tools/token/doc_vectors.hpp"
#include "tools/token/token_json.hpp"
#include "tools/token/token_mint.hpp"

namespace shiftcast {
namespace {

// Debian's interpreter, where python3-nacl and python3-flatbuffers are installed.
constexpr char kPython[] = "/usr/bin/python3";

class MintContract : public ToolProcessTest {
 protected:
  ToolRun python(const std::string& arguments) const {
    // Appended piece by piece: gcc 12's -Wrestrict misreads `"'" + std::string(...)` (a false positive).
    std::string command = "'";
    command += SHIFTCAST_SOURCE_DIR;
    command += "/tests/contract/mint_token.py' --generated '";
    command += SHIFTCAST_PYTHON_PROTOCOL_DIR;
    command += "' ";
    command += arguments;
    return run(kPython, command);
  }
  ToolRun cpp(const std::string& arguments) const { return run(SHIFTCAST_TOKEN_TOOL, arguments); }
};

template <std::size_t N>
std::array<std::uint8_t, N> random_bytes(std::mt19937_64& rng) {
  std::array<std::uint8_t, N> out;
  for (auto& b : out)
    b = std::uint8_t(rng());
  return out;
}

TEST_F(MintContract, TheDocumentedInputsGiveTheSameBytesInPython) {
  write_file(dir_ / "token.key", std::string(kDocTokenKeyHex) + "\n");
  const std::string args = documented_mint_arguments(path("token.key"));
  const ToolRun json = python(args);
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(json.out, doc_vector_text("minted_token_json"));
  const ToolRun request = python(args + " --format request");
  ASSERT_EQ(request.status, 0) << request.err;
  EXPECT_EQ(std::vector<std::uint8_t>(request.out.begin(), request.out.end()),
            doc_vector_bytes("connection_request"));
}

TEST_F(MintContract, SeededRandomInputsGiveTheSameBytesInPythonAndCpp) {
  std::mt19937_64 rng(20261127);
  for (int i = 0; i < 8; ++i) {
    MintRequest r;
    r.token_key = random_bytes<kKeyBytes>(rng);
    const unsigned port = 1 + unsigned(rng() % 65535);
    if (i % 3 == 2) {
      char group[8];
      std::snprintf(group, sizeof group, "%x", unsigned(rng() % 0x10000));
      r.server_address = "[2001:db8::" + std::string(group) + "]:" + std::to_string(port);
    } else {
      r.server_address = std::to_string(rng() % 256) + "." + std::to_string(rng() % 256) + "." +
                         std::to_string(rng() % 256) + "." + std::to_string(rng() % 256) + ":" +
                         std::to_string(port);
    }
    r.server_instance = rng() | 1;
    r.match_id = std::uint32_t(rng() % 0xffffffffu) + 1;
    r.client_id = (rng() >> 1) + 1;
    const std::uint64_t now = 1'700'000'000 + rng() % 100'000'000;
    r.expires_at = now + 1 + rng() % kMaxTokenValidSeconds;
    r.nonce = random_bytes<kTokenNonceBytes>(rng);
    r.client_to_server = random_bytes<kKeyBytes>(rng);
    r.server_to_client = random_bytes<kKeyBytes>(rng);
    const std::string key_file = "token" + std::to_string(i) + ".key";
    write_file(dir_ / key_file, to_hex(r.token_key) + "\n");
    std::ostringstream args;
    args << "--key-file " << path(key_file) << " --server '" << r.server_address << "' --server-instance "
         << server_instance_hex(r.server_instance) << " --match " << r.match_id << " --client " << r.client_id
         << " --expires-at " << r.expires_at << " --now " << now << " --nonce " << to_hex(*r.nonce)
         << " --client-to-server-key " << to_hex(*r.client_to_server) << " --server-to-client-key "
         << to_hex(*r.server_to_client);
    SCOPED_TRACE(args.str());

    const MintResult in_process = mint_connect_token(r, now);
    ASSERT_TRUE(in_process.ok()) << in_process.error;
    for (const char* format : {"json", "request"}) {
      const ToolRun from_python = python(args.str() + " --format " + format);
      const ToolRun from_cpp = cpp(args.str() + " --format " + format);
      ASSERT_EQ(from_python.status, 0) << from_python.err;
      ASSERT_EQ(from_cpp.status, 0) << from_cpp.err;
      EXPECT_EQ(from_cpp.out, from_python.out) << format;
      if (std::string(format) == "json") {
        EXPECT_EQ(from_cpp.out, connect_token_json(*in_process.token));
      } else {
        const std::vector<std::uint8_t> want = build_connection_request(*in_process.token);
        EXPECT_EQ(from_cpp.out, std::string(want.begin(), want.end()));
      }
    }
  }
}

TEST_F(MintContract, BothRefuseAZeroInstanceAndAPastExpiry) {
  write_file(dir_ / "token.key", std::string(kDocTokenKeyHex) + "\n");
  const std::string base =
      "--key-file " + path("token.key") + " --server 127.0.0.1:40000 --match 1 --client 2";
  for (const std::string& bad : {base + " --server-instance 0000000000000000 --now 100 --expires-at 130",
                                 base + " --server-instance 0000000000000001 --now 100 --expires-at 100"}) {
    const ToolRun p = python(bad);
    const ToolRun c = cpp(bad);
    EXPECT_EQ(p.status, 2) << bad << "\n" << p.err;
    EXPECT_EQ(c.status, 2) << bad << "\n" << c.err;
    EXPECT_EQ(p.out, "");
    EXPECT_EQ(c.out, "");
  }
}

}  // namespace
}  // namespace shiftcast
