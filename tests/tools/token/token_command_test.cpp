// shiftcast-token as a process: the documented arguments print the documented JSON and, with --format
// request, the documented ConnectionRequest datagram; every kind of bad input (bad hex, a zero or short
// instance, a bad address, an expiry in the past or too far, a missing, unknown or repeated option, an
// unreadable key file) exits 2 with its reason on stderr and nothing on stdout.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/tool_process.hpp"
#include "tests/tools/token/doc_vectors.hpp"

namespace shiftcast {
namespace {

class TokenCommand : public ToolProcessTest {
 protected:
  void SetUp() override {
    ToolProcessTest::SetUp();
    write_file(dir_ / "token.key", std::string(kDocTokenKeyHex) + "\n");
  }
  ToolRun mint(const std::string& arguments) const { return run(SHIFTCAST_TOKEN_TOOL, arguments); }
};

TEST_F(TokenCommand, TheDocumentedArgumentsPrintTheDocumentedTokenAndRequest) {
  const ToolRun json = mint(documented_mint_arguments(path("token.key")));
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(json.err, "");
  EXPECT_EQ(json.out, doc_vector_text("minted_token_json"));
  const ToolRun request = mint(documented_mint_arguments(path("token.key")) + " --format request");
  ASSERT_EQ(request.status, 0) << request.err;
  const std::vector<std::uint8_t> want = doc_vector_bytes("connection_request");
  ASSERT_EQ(want.size(), 1000u);
  EXPECT_EQ(std::vector<std::uint8_t>(request.out.begin(), request.out.end()), want);
}

TEST_F(TokenCommand, DefaultsToThirtySecondsFromTheClockAndFreshKeys) {
  const std::string common = "--key-file " + path("token.key") +
                             " --server 127.0.0.1:40000 --server-instance 00000000000000aa --match 1"
                             " --client 9 --now 1700000000";
  const ToolRun a = mint(common);
  const ToolRun b = mint(common);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(a.out.find("\"expires_at\": 1700000030,"), std::string::npos) << a.out;
  EXPECT_NE(a.out, b.out);  // a fresh nonce and keys each run
  const ToolRun c = mint(common + " --valid-seconds 3600");
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("\"expires_at\": 1700003600,"), std::string::npos) << c.out;
  const ToolRun help = mint("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("usage: shiftcast-token"), std::string::npos);
}

TEST_F(TokenCommand, BadInputExitsTwoWithItsReason) {
  write_file(dir_ / "bad.key", "not hex\n");
  const std::string key = "--key-file " + path("token.key");
  const std::string rest = " --match 1 --client 9 --now 1700000000";
  const std::string good = key + " --server 127.0.0.1:40000 --server-instance 00000000000000aa" + rest;
  struct Case {
    std::string arguments;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {key + " --server 127.0.0.1:40000 --server-instance 0000000000000000" + rest,
       "server instance 0000000000000000: no server has instance 0"},
      {key + " --server 127.0.0.1:40000 --server-instance aa" + rest,
       "--server-instance aa: must be 16 hex digits"},
      {key + " --server 127.0.0.1:40000 --server-instance 00000000000000zz" + rest,
       "--server-instance 00000000000000zz: must be 16 hex digits"},
      {key + " --server localhost:40000 --server-instance 00000000000000aa" + rest,
       "server address \"localhost:40000\": must be ip:port"},
      {key + " --server 127.0.0.1:0 --server-instance 00000000000000aa" + rest, "server address"},
      {good + " --expires-at 1699999999", "expiry 1699999999: not after now (1700000000)"},
      {good + " --expires-at 1700000000", "not after now"},
      {good + " --expires-at 1700003601", "more than 3600 s"},
      {good + " --valid-seconds 0", "--valid-seconds 0: must be 1..3600"},
      {good + " --valid-seconds 3601", "--valid-seconds 3601: must be 1..3600"},
      {good + " --valid-seconds 30 --expires-at 1700000030", "give one of them"},
      {good + " --nonce 0011", "--nonce: must be 48 hex digits"},
      {good + " --client-to-server-key xyz", "--client-to-server-key: must be 64 hex digits"},
      {good + " --server-to-client-key " + std::string(kDocTokenKeyHex) + "00",
       "--server-to-client-key: must be 64 hex digits"},
      {good + " --format base64", "--format base64: json or request"},
      {good + " --match 2", "--match: given twice"},
      {good + " --bogus 1", "unknown argument --bogus"},
      {good + " --now", "--now: needs a value"},
      {"--server 127.0.0.1:40000 --server-instance 00000000000000aa" + rest, "--key-file is required"},
      {key + rest, "--server is required"},
      {key + " --server 127.0.0.1:40000" + rest, "--server-instance is required"},
      {"--key-file " + path("missing.key") + " --server 127.0.0.1:40000 --server-instance 00000000000000aa" +
           rest,
       "cannot read it"},
      {"--key-file " + path("bad.key") + " --server 127.0.0.1:40000 --server-instance 00000000000000aa" +
           rest,
       "the first line must be 64 hex digits"},
      {key + " --server 127.0.0.1:40000 --server-instance 00000000000000aa --match x --client 9",
       "--match x: must be a match id"},
      {key + " --server 127.0.0.1:40000 --server-instance 00000000000000aa --match 1 --client 0 --now "
             "1700000000",
       "client id 0"},
  };
  ASSERT_EQ(mint(good).status, 0);
  for (const Case& c : cases) {
    const ToolRun r = mint(c.arguments);
    EXPECT_EQ(r.status, 2) << c.arguments;
    EXPECT_EQ(r.out, "") << c.arguments;
    EXPECT_NE(r.err.find(c.reason), std::string::npos) << c.arguments << "\n" << r.err;
  }
}

}  // namespace
}  // namespace shiftcast
