// The hostile-client suite for the UDP game listener, connect tokens, keys and listener addresses
// (issue 12). End to end against the real shiftcast-server on loopback: garbage and unexpected-message
// floods, handshake floods from one source, packets naming no connected client, forged and replayed
// tokens, a spent token replayed after a restart of the server process, a token refused by a full match
// retried, the development keys on a non-loopback address, and each listener on its own address. In
// process: the per-source limiter and the replay cache with time as an argument, and the config checks.
//
// Every wait is bounded and event-driven (poll on a socket or scrape /metrics until a count is reached);
// the flood oracles bound what the server may admit by burst + rate x (time the test really took), so a
// slow machine widens the bound instead of failing the test.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "protocol/envelope.hpp"
#include "protocol/packet.hpp"
#include "server/config/development_keys.hpp"
#include "server/config/server_config.hpp"
#include "server/source_limiter.hpp"
#include "server/token_replay_cache.hpp"
#include "tests/support/server_fixture.hpp"

namespace shiftcast {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The shipped defaults of [network] udp_preauth_rate and udp_preauth_burst (docs/server.md).
constexpr double kDefaultPreauthRate = 16;
constexpr double kDefaultPreauthBurst = 32;
constexpr int kFlood = 400;
// Loopback sources are exempt by default (this machine: the load tester); the floods here come from
// loopback, so they ask for loopback to be limited like any remote source.
constexpr char kLimitLoopback[] = "--udp-preauth-limit-loopback 1";

std::uint64_t unix_now() {
  return std::uint64_t(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The most datagrams one source may have admitted `elapsed` seconds after its first one.
double preauth_bound(double elapsed) {
  return kDefaultPreauthBurst + std::ceil(kDefaultPreauthRate * elapsed) + 1;
}

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// A UDP socket to `ip`:`port` that counts what comes back. `source` is the loopback address it sends
// from: the server limits pre-authentication work per source IP, so a flood from 127.0.0.9 and a player
// on 127.0.0.1 are two sources, as two machines would be.
class RawUdp {
 public:
  RawUdp(const char* ip, std::uint16_t port, const char* source = "127.0.0.1") {
    fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &from.sin_addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    ::inet_pton(AF_INET, ip, &addr.sin_addr);
    ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  }
  ~RawUdp() { ::close(fd_); }
  void send(std::span<const std::uint8_t> d) { ::send(fd_, d.data(), d.size(), 0); }
  // Receives whatever is queued or arrives within `timeout_ms`; the number of datagrams received.
  int drain(int timeout_ms) {
    int n = 0;
    std::uint8_t buffer[kMaxDatagramBytes + 1];
    pollfd p{fd_, POLLIN, 0};
    while (::poll(&p, 1, timeout_ms) > 0 && ::recv(fd_, buffer, sizeof buffer, 0) > 0) {
      ++n;
      timeout_ms = 0;
    }
    return n;
  }

 private:
  int fd_ = -1;
};

bool tcp_connects(const char* ip, std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  ::inet_pton(AF_INET, ip, &addr.sin_addr);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

class HostileUdp : public ServerTest {
 protected:
  // Scrapes /metrics until the two series add up to `total` (bounded); their values last seen.
  std::pair<double, double> wait_for_sum(const std::string& a, const std::string& b, double total) {
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    for (;;) {
      const std::string text = metrics();
      const std::pair<double, double> values{metric_value(text, a), metric_value(text, b)};
      if (values.first + values.second >= total || Clock::now() >= deadline) return values;
      if (player_) player_->pump_for(std::chrono::milliseconds(20));  // the wait between two scrapes
    }
  }
  std::unique_ptr<UdpTestClient> player_;
};

// --- floods -----------------------------------------------------------------------------------------

TEST_F(HostileUdp, GarbageAndUnexpectedMessagesAreRefusedWhileAPlayerPlays) {
  start(test_server_config(), kLimitLoopback);
  player_ = std::make_unique<UdpTestClient>(server_.ports().udp, token(1));
  ASSERT_TRUE(player_->connect());
  ASSERT_TRUE(player_->pump_until([&] { return player_->session().latest_snapshot_tick() > 0; }));
  const std::uint64_t tick_before = player_->session().latest_snapshot_tick();

  RawUdp raw("127.0.0.1", server_.ports().udp, "127.0.0.9");
  std::mt19937 rng(12);
  for (int i = 0; i < kFlood; ++i) {
    std::vector<std::uint8_t> junk(1 + rng() % (kMaxDatagramBytes + 50));
    for (auto& b : junk)
      b = std::uint8_t(rng());
    // Junk marked as a connected packet is refused by address, charged to its source
    // (PacketsNamingNoConnectedClientAreRefusedBeforeTheMatch): here, only what fails by its form.
    if (datagram_form(junk) == DatagramForm::kConnectedPacket) junk[0] ^= 0x01;
    raw.send(junk);
  }
  // Verifiable envelopes of a message a client never sends: pre-authentication work, charged.
  const auto start_unexpected = Clock::now();
  flatbuffers::FlatBufferBuilder fbb;
  finish_envelope(fbb, wire::Message::KeepAlive, wire::CreateKeepAlive(fbb, 1).Union());
  for (int i = 0; i < kFlood; ++i)
    raw.send({fbb.GetBufferPointer(), fbb.GetSize()});

  const auto [limited, unexpected] =
      wait_for_sum(rejected("udp", "rate_limited"), rejected("udp", "unexpected_message"), kFlood);
  EXPECT_LE(unexpected, preauth_bound(seconds_since(start_unexpected)));
  EXPECT_GE(limited, kFlood - preauth_bound(seconds_since(start_unexpected)));
  EXPECT_EQ(limited + unexpected, kFlood);
  const std::string text = metrics();
  EXPECT_GE(metric_value(text, rejected("udp", "malformed")) +
                metric_value(text, rejected("udp", "too_large")) +
                metric_value(text, rejected("udp", "wrong_identifier")),
            kFlood - 2);       // a random datagram could in theory pass the identifier check
  EXPECT_EQ(raw.drain(0), 0);  // nothing is ever answered
  // The player kept playing through it.
  EXPECT_TRUE(
      player_->pump_until([&] { return player_->session().latest_snapshot_tick() > tick_before + 8; }));
  EXPECT_EQ(player_->session().state(), ClientState::kConnected);
}

TEST_F(HostileUdp, HandshakeFloodFromOneSourceGetsOnlyItsBurst) {
  start(test_server_config(), kLimitLoopback);
  const std::vector<std::uint8_t> request = build_connection_request(token(7));
  RawUdp raw("127.0.0.1", server_.ports().udp, "127.0.0.9");
  const auto started = Clock::now();
  int challenges = 0;
  for (int i = 0; i < kFlood; ++i) {
    raw.send(request);
    if (i % 64 == 63) challenges += raw.drain(0);  // keep the socket's queue short
  }
  // Every request is either answered (one challenge each, packets out) or refused unanswered.
  const auto [limited, answered] =
      wait_for_sum(rejected("udp", "rate_limited"), "shiftcast_udp_packets_total{direction=\"out\"}", kFlood);
  challenges += raw.drain(100);
  const double bound = preauth_bound(seconds_since(started));
  // Each admitted request is answered with one challenge; everything beyond the bucket costs no crypto.
  EXPECT_LE(answered, bound);
  EXPECT_LE(challenges, answered);
  EXPECT_GE(challenges, 1);
  EXPECT_GE(limited, kFlood - bound);

  // Another source is unaffected: a player still connects.
  player_ = std::make_unique<UdpTestClient>(server_.ports().udp, token(8));
  EXPECT_TRUE(player_->connect());
}

TEST_F(HostileUdp, PacketsNamingNoConnectedClientAreRefusedBeforeTheMatch) {
  start(test_server_config(), kLimitLoopback);
  player_ = std::make_unique<UdpTestClient>(server_.ports().udp, token(1));
  ASSERT_TRUE(player_->connect());
  RawUdp raw("127.0.0.1", server_.ports().udp, "127.0.0.9");
  std::mt19937 rng(3);
  const auto started = Clock::now();
  for (int i = 0; i < kFlood; ++i) {
    // Match 1 exists and client 1 is connected, but from another address: a connected packet carries no
    // ids (the header names nobody), so every one of these is from an address with no connection.
    const std::uint64_t client = i % 4 == 0 ? 1 : 1000 + rng() % 100000;
    raw.send(seal_packet({1, client, std::uint64_t(i + 1), 0, 0}, Direction::kClientToServer, random_key(),
                         std::vector<std::uint8_t>(40, 7)));
  }
  const auto [limited, unknown] =
      wait_for_sum(rejected("udp", "rate_limited"), rejected("udp", "unknown_connection"), kFlood);
  // Refused on the receiving thread, within the source's bucket: none was posted to the match to be
  // refused there (which would count unknown_connection for every one, never rate_limited).
  EXPECT_LE(unknown, preauth_bound(seconds_since(started)));
  EXPECT_EQ(limited + unknown, kFlood);
  EXPECT_EQ(metric(rejected("udp", "decrypt_failed")), 0);
  EXPECT_EQ(raw.drain(0), 0);
  EXPECT_TRUE(player_->pump_until([&] { return player_->session().latest_snapshot_tick() > 4; }));
}

// --- tokens ---------------------------------------------------------------------------------------

TEST_F(HostileUdp, ForgedAndReplayedTokensAreRefused) {
  start();
  const std::string address = server_.address();
  const std::uint64_t expires = unix_now() + 30;
  // Forged under another key.
  UdpTestClient forged(server_.ports().udp,
                       issue_connect_token(random_key(), address, 1, 501, expires, server_.instance()));
  EXPECT_FALSE(forged.connect(std::chrono::seconds(5)));
  EXPECT_EQ(forged.session().code(), wire::ErrorCode::TokenInvalid);
  // Under the right key but for no server instance, as every token issued before this process started.
  UdpTestClient stale(server_.ports().udp, issue_connect_token(dev_token_key(), address, 1, 502, expires));
  EXPECT_FALSE(stale.connect(std::chrono::seconds(5)));
  EXPECT_EQ(stale.session().code(), wire::ErrorCode::WrongServer);
  // Under the right key for this instance: the development key works on loopback (tests, load tester).
  player_ = std::make_unique<UdpTestClient>(
      server_.ports().udp,
      issue_connect_token(dev_token_key(), address, 1, 503, expires, server_.instance()));
  ASSERT_TRUE(player_->connect());
  // A spent token replayed from another address.
  UdpTestClient replay(server_.ports().udp, player_->session().token());
  EXPECT_FALSE(replay.connect(std::chrono::seconds(5)));
  EXPECT_EQ(replay.session().code(), wire::ErrorCode::TokenReplayed);
  EXPECT_GE(metric(rejected("udp", "token_invalid")), 1);
  EXPECT_GE(metric(rejected("udp", "wrong_server")), 1);
  EXPECT_GE(metric(rejected("udp", "token_replayed")), 1);
  EXPECT_EQ(player_->session().state(), ClientState::kConnected);
}

TEST_F(HostileUdp, SpentTokenDoesNotConnectAfterTheServerRestarts) {
  start();
  const ConnectToken spent = token(21);
  {
    UdpTestClient first(server_.ports().udp, spent);
    ASSERT_TRUE(first.connect());
    first.disconnect();
  }
  const std::uint16_t udp_port = server_.ports().udp;
  const std::uint64_t first_instance = server_.instance();
  ASSERT_EQ(server_.stop(), 0);

  // The same address and port, the same match id 1, an empty replay cache: only the instance differs.
  start(replace_once(test_server_config(), "udp_port = 0", "udp_port = " + std::to_string(udp_port)));
  ASSERT_EQ(server_.address(), spent.server_address);
  EXPECT_NE(server_.instance(), first_instance);
  UdpTestClient replay(server_.ports().udp, spent);
  EXPECT_FALSE(replay.connect(std::chrono::seconds(5)));
  EXPECT_EQ(replay.session().code(), wire::ErrorCode::WrongServer);
  EXPECT_GE(metric(rejected("udp", "wrong_server")), 1);
  // A token of this process connects.
  player_ = std::make_unique<UdpTestClient>(server_.ports().udp, token(22));
  EXPECT_TRUE(player_->connect());
}

TEST_F(HostileUdp, TokenRefusedByAFullMatchCanBeRetried) {
  start(test_server_config("max_players = 1\n"));
  auto first = std::make_unique<UdpTestClient>(server_.ports().udp, token(31));
  ASSERT_TRUE(first->connect());
  const ConnectToken waiting = token(32);
  {
    UdpTestClient refused(server_.ports().udp, waiting);
    EXPECT_FALSE(refused.connect(std::chrono::seconds(5)));
    EXPECT_EQ(refused.session().code(), wire::ErrorCode::MatchFull);
  }
  first->disconnect();
  // The seat frees when the match handles the goodbye (its next tick); until then the retry may be refused
  // as MatchFull again, never as TokenReplayed.
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  bool connected = false;
  wire::ErrorCode last = wire::ErrorCode::Ok;
  while (!connected && Clock::now() < deadline) {
    player_ = std::make_unique<UdpTestClient>(server_.ports().udp, waiting);
    connected = player_->connect(std::chrono::seconds(3));
    last = player_->session().code();
    if (!connected && last != wire::ErrorCode::MatchFull) break;
  }
  EXPECT_TRUE(connected) << "last refusal: " << wire::EnumNameErrorCode(last);
  // Once accepted the token is spent.
  UdpTestClient replay(server_.ports().udp, waiting);
  EXPECT_FALSE(replay.connect(std::chrono::seconds(5)));
  EXPECT_EQ(replay.session().code(), wire::ErrorCode::TokenReplayed);
}

// --- keys and listeners ---------------------------------------------------------------------------

TEST_F(HostileUdp, DevelopmentKeysAreRefusedOnANonLoopbackAddress) {
  const std::string error = server_.start(
      replace_once(test_server_config(), "bind_address = \"127.0.0.1\"", "bind_address = \"0.0.0.0\""), dir_,
      "", std::chrono::seconds(20));
  EXPECT_NE(error.find("exited (status 2)"), std::string::npos) << error;
  EXPECT_NE(error.find("token_key_file"), std::string::npos) << error;
  EXPECT_NE(error.find("admin_key_file"), std::string::npos) << error;
  EXPECT_NE(error.find("[network] bind_address = \"0.0.0.0\" is not loopback"), std::string::npos) << error;
}

TEST_F(HostileUdp, OpeningTheGamePortOpensNeitherRpcNorHttp) {
  // bind_address (the UDP listener's) on another loopback address: RPC and HTTP stay on 127.0.0.1.
  start(replace_once(test_server_config(), "bind_address = \"127.0.0.1\"", "bind_address = \"127.0.0.2\""));
  EXPECT_EQ(server_.address().rfind("127.0.0.2:", 0), 0u) << server_.address();
  EXPECT_FALSE(tcp_connects("127.0.0.2", server_.ports().rpc));
  EXPECT_FALSE(tcp_connects("127.0.0.2", server_.ports().http));
  EXPECT_TRUE(tcp_connects("127.0.0.1", server_.ports().http));
  const ConnectToken t = token(41);  // over RPC on 127.0.0.1
  ASSERT_EQ(t.server_address, server_.address());
  RawUdp game("127.0.0.2", server_.ports().udp);
  game.send(build_connection_request(t));
  EXPECT_EQ(game.drain(5000), 1);  // the challenge
}

// --- in process: limits and config ----------------------------------------------------------------

TEST(HostileUdpLimits, OneSourceGetsItsBurstThenItsRate) {
  SourceLimiter limiter({.rate = 4, .burst = 8, .max_sources = 16});
  const auto a = boost::asio::ip::make_address("192.0.2.1");
  const auto b = boost::asio::ip::make_address("2001:db8::1");
  int admitted = 0;
  for (int i = 0; i < 100; ++i)
    admitted += limiter.admit(a, 10.0) ? 1 : 0;
  EXPECT_EQ(admitted, 8);
  EXPECT_TRUE(limiter.admit(b, 10.0));   // another source has its own bucket
  EXPECT_FALSE(limiter.admit(a, 10.2));  // 0.8 units refilled
  EXPECT_TRUE(limiter.admit(a, 10.26));  // 1.04
  EXPECT_FALSE(limiter.admit(a, 10.26));
  admitted = 0;
  for (int i = 0; i < 100; ++i)
    admitted += limiter.admit(a, 20.0) ? 1 : 0;
  EXPECT_EQ(admitted, 8);  // refilled to the burst, never beyond
  // IPv4 and its v4-mapped IPv6 form are one source.
  EXPECT_FALSE(limiter.admit(boost::asio::ip::make_address("::ffff:192.0.2.1"), 20.0));
  // Loopback is this machine: exempt unless asked.
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(limiter.admit(boost::asio::ip::make_address("127.0.0.1"), 20.0));
    EXPECT_TRUE(limiter.admit(boost::asio::ip::make_address("::1"), 20.0));
    EXPECT_TRUE(limiter.admit(boost::asio::ip::make_address("::ffff:127.0.0.9"), 20.0));
  }
  SourceLimiter strict({.rate = 4, .burst = 8, .max_sources = 16, .limit_loopback = true});
  admitted = 0;
  for (int i = 0; i < 100; ++i)
    admitted += strict.admit(boost::asio::ip::make_address("127.0.0.1"), 0) ? 1 : 0;
  EXPECT_EQ(admitted, 8);
}

TEST(HostileUdpLimits, ManySourcesShareOneBucketWhenTheTableIsFull) {
  SourceLimiter limiter({.rate = 1, .burst = 2, .max_sources = 4});
  auto source = [](int i) { return boost::asio::ip::make_address_v4(0xc0000200u + std::uint32_t(i)); };
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(limiter.admit(source(i), 0));
  EXPECT_EQ(limiter.tracked(), 4u);
  // Sources 4.. find the table full of buckets still owed: they share the overflow bucket (burst 2).
  int admitted = 0;
  for (int i = 4; i < 1000; ++i)
    admitted += limiter.admit(source(i), 0.5) ? 1 : 0;
  EXPECT_EQ(admitted, 2);
  EXPECT_EQ(limiter.tracked(), 4u);
  // Once the first four refilled (idle), they are forgotten and new sources get buckets of their own.
  EXPECT_TRUE(limiter.admit(source(2000), 10));
  EXPECT_TRUE(limiter.admit(source(2000), 10));
  EXPECT_FALSE(limiter.admit(source(2000), 10));
  EXPECT_LE(limiter.tracked(), 4u);
}

TEST(HostileUdpLimits, ReleasedTokenCanBeSpentAgainOnce) {
  TokenReplayCache cache(8);
  TokenReplayCache::Mac mac{};
  mac[0] = 1;
  EXPECT_TRUE(cache.spend(mac, 100, 10));
  EXPECT_FALSE(cache.spend(mac, 100, 10));  // a concurrent replay while the match decides
  cache.release(mac);                       // the match refused it (full)
  EXPECT_FALSE(cache.spent(mac));
  EXPECT_TRUE(cache.spend(mac, 100, 11));  // the retry
  EXPECT_FALSE(cache.spend(mac, 100, 11));
}

class HostileUdpConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("shiftcast_hostile_udp_config_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    // The development keys under other names, the token key in upper case: recognised by content.
    std::ifstream token_in(kKeys + "dev-token.key");
    std::string token_hex;
    std::getline(token_in, token_hex);
    for (char& c : token_hex)
      c = char(std::toupper(static_cast<unsigned char>(c)));
    std::ofstream(dir_ / "renamed-token.key") << "  " << token_hex << "\n";
    std::ofstream(dir_ / "renamed-admin.key") << dev_admin_key() << "\n";
    std::ofstream(dir_ / "private-token.key")
        << "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n";
    std::ofstream(dir_ / "private-admin.key") << "a-private-admin-key-of-some-length\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string error_of(const std::string& network, const std::string& token_key, const std::string& admin_key,
                       const std::string& service_key = "") {
    const std::string service = service_key.empty() ? "" : "service_key_file = \"" + service_key + "\"\n";
    const std::string text = "[network]\n" + network + "\n[security]\ntoken_key_file = \"" + token_key +
                             "\"\nadmin_key_file = \"" + admin_key + "\"\n" + service +
                             "[[level]]\nname = \"arena\"\npath = \"" + SHIFTCAST_SOURCE_DIR +
                             "/configs/levels/arena.map\"\n";
    try {
      validate(parse_server_config(text, dir_.string(), "test.toml"));
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }

  const std::string kKeys = std::string(SHIFTCAST_SOURCE_DIR) + "/configs/keys/";
  fs::path dir_;
};

TEST_F(HostileUdpConfig, DevelopmentKeysAreRefusedWhenAnyListenerIsNotLoopback) {
  const std::string dev_token = kKeys + "dev-token.key";
  const std::string dev_admin = kKeys + "dev-admin.key";
  // Loopback everywhere: fine (tests, the load tester, configs/server.toml).
  EXPECT_EQ(error_of("", dev_token, dev_admin), "");
  EXPECT_EQ(error_of("udp_bind_address = \"127.0.0.5\"\nrpc_bind_address = \"::1\"", dev_token, dev_admin),
            "");
  // Any listener elsewhere: each development key is named, with the listener that exposes it.
  std::string e = error_of("udp_bind_address = \"0.0.0.0\"", dev_token, dev_admin);
  EXPECT_NE(e.find("[security] token_key_file = \"" + dev_token + "\": the committed development key"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("[security] admin_key_file = \"" + dev_admin + "\""), std::string::npos) << e;
  EXPECT_NE(e.find("[network] udp_bind_address = \"0.0.0.0\""), std::string::npos) << e;
  e = error_of("rpc_bind_address = \"192.0.2.10\"", "renamed-token.key", "private-admin.key");
  EXPECT_NE(e.find("token_key_file = \"renamed-token.key\""), std::string::npos) << e;
  EXPECT_EQ(e.find("admin_key_file"), std::string::npos) << e;
  EXPECT_NE(e.find("rpc_bind_address = \"192.0.2.10\""), std::string::npos) << e;
  e = error_of("http_bind_address = \"::\"", "private-token.key", "renamed-admin.key");
  EXPECT_NE(e.find("admin_key_file = \"renamed-admin.key\""), std::string::npos) << e;
  EXPECT_NE(e.find("http_bind_address = \"::\""), std::string::npos) << e;
  // The development service key too (a read key is every player's position).
  e = error_of("http_bind_address = \"::\"", "private-token.key", "private-admin.key",
               kKeys + "dev-service.key");
  EXPECT_NE(e.find("[security] service_key_file = \"" + kKeys + "dev-service.key\": the committed"),
            std::string::npos)
      << e;
  EXPECT_EQ(error_of("", dev_token, dev_admin, kKeys + "dev-service.key"), "");
  // The legacy key names the UDP listener's address too.
  e = error_of("bind_address = \"0.0.0.0\"", dev_token, "private-admin.key");
  EXPECT_NE(e.find("token_key_file"), std::string::npos) << e;
  // Private keys on every interface: fine.
  EXPECT_EQ(
      error_of("bind_address = \"0.0.0.0\"\nrpc_bind_address = \"0.0.0.0\"\nhttp_bind_address = \"0.0.0.0\"",
               "private-token.key", "private-admin.key"),
      "");
}

TEST_F(HostileUdpConfig, EachListenerHasItsOwnAddressRpcAndHttpDefaultToLoopback) {
  ServerConfig c = parse_server_config("[network]\nbind_address = \"0.0.0.0\"\n", dir_.string());
  EXPECT_EQ(effective_udp_bind_address(c), "0.0.0.0");
  EXPECT_EQ(c.rpc.bind_address, "127.0.0.1");  // never follows bind_address
  EXPECT_EQ(c.http_bind_address, "127.0.0.1");
  c = parse_server_config(
      "[network]\nbind_address = \"0.0.0.0\"\nudp_bind_address = \"10.0.0.1\"\nrpc_bind_address = "
      "\"10.0.0.2\"\nhttp_bind_address = \"10.0.0.3\"\nudp_preauth_rate = 5\nudp_preauth_burst = 6\n"
      "udp_preauth_sources = 7\nudp_preauth_limit_loopback = 1\n",
      dir_.string());
  EXPECT_EQ(effective_udp_bind_address(c), "10.0.0.1");
  EXPECT_EQ(c.rpc.bind_address, "10.0.0.2");
  EXPECT_EQ(c.http_bind_address, "10.0.0.3");
  EXPECT_EQ(c.udp_preauth_rate, 5.0);
  EXPECT_EQ(c.udp_preauth_burst, 6.0);
  EXPECT_EQ(c.udp_preauth_sources, 7);
  EXPECT_EQ(c.udp_preauth_limit_loopback, 1);
  const ServerConfig defaults;
  EXPECT_EQ(defaults.udp_preauth_rate, kDefaultPreauthRate);
  EXPECT_EQ(defaults.udp_preauth_burst, kDefaultPreauthBurst);
  EXPECT_EQ(defaults.udp_preauth_limit_loopback, 0);
  // A burst below one handshake (two datagrams) could never connect anyone.
  EXPECT_NE(
      error_of("udp_preauth_burst = 1", "private-token.key", "private-admin.key").find("udp_preauth_burst"),
      std::string::npos);
  EXPECT_NE(
      error_of("rpc_bind_address = \"\"", "private-token.key", "private-admin.key").find("rpc_bind_address"),
      std::string::npos);
  EXPECT_TRUE(is_loopback_address("127.3.2.1"));
  EXPECT_TRUE(is_loopback_address("::ffff:127.0.0.1"));
  EXPECT_FALSE(is_loopback_address("0.0.0.0"));
  EXPECT_FALSE(is_loopback_address("::"));
}

}  // namespace
}  // namespace shiftcast
