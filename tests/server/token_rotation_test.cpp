// Rotating the token key without dropping a match (docs/server.md, "Rotating the token key"): a server
// given the new key and the previous one accepts tokens under either, counts which key opened each
// (shiftcast_tokens_opened_total{key}), issues under the new key only, and refuses a token under any other
// key as TokenInvalid, counted.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "tests/support/fixed_keys.hpp"
#include "tests/support/server_fixture.hpp"
#include "tools/token/token_mint.hpp"

namespace shiftcast {
namespace {

constexpr char kOpenedCurrent[] = R"(shiftcast_tokens_opened_total{key="current"})";
constexpr char kOpenedPrevious[] = R"(shiftcast_tokens_opened_total{key="previous"})";

std::uint64_t unix_now() {
  return std::uint64_t(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

class TokenRotation : public ServerTest {
 protected:
  // Starts the server with `current` as its token key and `previous` as the one before it (flags over the
  // test config, as an operator's deployment would override the file).
  void start_rotating(const Key& current, const Key& previous) {
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "current.key") << to_hex(current) << "\n";
    std::ofstream(dir_ / "previous.key") << to_hex(previous) << "\n";
    start(test_server_config(), "--token-key-file '" + (dir_ / "current.key").string() +
                                    "' --previous-token-key-file '" + (dir_ / "previous.key").string() + "'");
  }
  ConnectToken token_under(const Key& key, std::uint64_t client) {
    return issue_connect_token(key, server_.address(), 1, client, unix_now() + 30, server_.instance());
  }
};

TEST_F(TokenRotation, TokensUnderThePreviousKeyConnectUntilItIsDropped) {
  const Key current = fixed_key(41);
  const Key previous = fixed_key(42);
  start_rotating(current, previous);
  EXPECT_EQ(metric(kOpenedCurrent), 0);
  EXPECT_EQ(metric(kOpenedPrevious), 0);

  // A matchmaker that has not rolled yet still mints under the previous key: its players get in.
  UdpTestClient late_roller(server_.ports().udp, token_under(previous, 9001));
  ASSERT_TRUE(late_roller.connect());
  EXPECT_TRUE(late_roller.pump_until([&] { return late_roller.session().latest_snapshot_tick() > 0; }));
  EXPECT_GE(metric(kOpenedPrevious), 1);
  EXPECT_EQ(metric(kOpenedCurrent), 0);

  // A third key (an old key dropped long ago, or a forger's): TokenInvalid, counted, opened by neither.
  const double previous_opened = metric(kOpenedPrevious);
  UdpTestClient forged(server_.ports().udp, token_under(fixed_key(43), 9002));
  EXPECT_FALSE(forged.connect(std::chrono::seconds(5)));
  EXPECT_EQ(forged.session().code(), wire::ErrorCode::TokenInvalid);
  EXPECT_GE(metric(rejected("udp", "token_invalid")), 1);
  EXPECT_EQ(metric(kOpenedPrevious), previous_opened);
  EXPECT_EQ(metric(kOpenedCurrent), 0);

  // The new key, minted outside and issued by the admin RPC (which seals under the current key only).
  UdpTestClient rolled(server_.ports().udp, token_under(current, 9003));
  ASSERT_TRUE(rolled.connect());
  UdpTestClient issued(server_.ports().udp, token(9004));
  ASSERT_TRUE(issued.connect());
  EXPECT_GE(metric(kOpenedCurrent), 2);
  EXPECT_EQ(metric(kOpenedPrevious), previous_opened);
  // The player of the previous key plays on beside them.
  const std::uint64_t seen = late_roller.session().latest_snapshot_tick();
  EXPECT_TRUE(late_roller.pump_until([&] { return late_roller.session().latest_snapshot_tick() > seen; }));
  EXPECT_TRUE(rolled.pump_until([&] { return rolled.session().latest_snapshot_tick() > 0; }));
  EXPECT_EQ(late_roller.session().state(), ClientState::kConnected);
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(TokenRotation, WithoutAPreviousKeyItsTokensAreRefused) {
  const Key previous = fixed_key(42);
  start();  // the development key alone
  UdpTestClient old(server_.ports().udp, token_under(previous, 9101));
  EXPECT_FALSE(old.connect(std::chrono::seconds(5)));
  EXPECT_EQ(old.session().code(), wire::ErrorCode::TokenInvalid);
  EXPECT_EQ(metric(kOpenedPrevious), 0);
  EXPECT_EQ(metric(kOpenedCurrent), 0);
  EXPECT_GE(metric(rejected("udp", "token_invalid")), 1);
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
