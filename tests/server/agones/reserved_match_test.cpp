// What the Agones client needs of the match registry, driven directly (a MatchRegistry over real matches
// on the shipped arena level, a worker io_context the test runs itself): an id reserved before its match
// exists (published as shiftcast-match-id before Ready) that no other create takes; the end of every
// match reported with the number left (the Shutdown decision); a worker's pulse stamped by its matches'
// ticks (the heartbeat). Oracles: the ids and counts the test arranged, the pulse's own earlier value.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "server/hosted_level.hpp"
#include "server/match_registry.hpp"
#include "server/udp_endpoint.hpp"

namespace shiftcast {
namespace {

namespace asio = boost::asio;

constexpr auto kDrainBound = std::chrono::seconds(10);

class ReservedMatch : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ServerConfig server;
    LevelConfig arena{"arena", std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map", ""};
    HostedLevelResult r = load_hosted_level(arena, server);
    ASSERT_TRUE(r.ok()) << r.error;
    level_ = new std::shared_ptr<const HostedLevel>(std::move(r.level));
  }
  static void TearDownTestSuite() {
    delete level_;
    level_ = nullptr;
  }

  void SetUp() override {
    UdpEndpointServices s;
    s.rejections = &rejections_;
    endpoint_ = std::make_unique<UdpEndpoint>(worker_, s);  // never opened
    MatchServices services;
    services.metrics = &metrics_;
    services.rejections = &rejections_;
    services.on_match_finished = [this](std::uint32_t id, std::size_t left) {
      finished_.emplace_back(id, left);
    };
    registry_ = std::make_unique<MatchRegistry>(
        std::vector<MatchWorker>{{&worker_, endpoint_.get(), pulse_}},
        std::map<std::string, std::shared_ptr<const HostedLevel>>{{"arena", *level_}}, MatchDefaults{},
        services);
  }
  void drain() {
    worker_.restart();
    worker_.run_for(kDrainBound);
  }

  static inline std::shared_ptr<const HostedLevel>* level_ = nullptr;
  MetricsRegistry metrics_;
  Rejections rejections_{metrics_, "udp"};
  asio::io_context worker_;
  std::shared_ptr<WorkerPulse> pulse_ =
      std::make_shared<WorkerPulse>(WorkerPulse::Clock::time_point(WorkerPulse::Clock::duration(1)));
  std::unique_ptr<UdpEndpoint> endpoint_;
  std::unique_ptr<MatchRegistry> registry_;
  std::vector<std::pair<std::uint32_t, std::size_t>> finished_;
};

TEST_F(ReservedMatch, AReservedIdIsTakenOnlyByTheCreateThatNamesIt) {
  const CreatedMatch first = registry_->create({.level = "arena", .max_players = 4});
  ASSERT_EQ(first.error, wire::ErrorCode::Ok) << first.detail;
  EXPECT_EQ(first.match_id, 1u);
  const std::uint32_t reserved = registry_->reserve_id();
  EXPECT_EQ(reserved, 2u);
  const CreatedMatch admin = registry_->create({.level = "arena", .max_players = 4});
  EXPECT_EQ(admin.match_id, 3u);  // an admin CreateMatch skips the reserved id
  // A failed create with the reserved id (unknown level) leaves it reserved.
  EXPECT_EQ(registry_->create({.level = "nowhere", .id = reserved}).error, wire::ErrorCode::UnknownLevel);
  const CreatedMatch allocated = registry_->create({.level = "arena", .max_players = 2, .id = reserved});
  ASSERT_EQ(allocated.error, wire::ErrorCode::Ok) << allocated.detail;
  EXPECT_EQ(allocated.match_id, reserved);
  ASSERT_NE(registry_->find(reserved), nullptr);
  EXPECT_EQ(registry_->find(reserved)->health().summary.max_players, 2);
  // Taken: not again, and no id that was never reserved.
  EXPECT_EQ(registry_->create({.level = "arena", .id = reserved}).error, wire::ErrorCode::BadArgument);
  EXPECT_EQ(registry_->create({.level = "arena", .id = 99}).error, wire::ErrorCode::BadArgument);
  EXPECT_EQ(registry_->size(), 3u);
}

TEST_F(ReservedMatch, EveryEndIsReportedWithTheMatchesLeft) {
  const std::uint32_t a = registry_->create({.level = "arena"}).match_id;
  const std::uint32_t b = registry_->create({.level = "arena"}).match_id;
  // The worker runs until the end is reported (the other match keeps it busy: it never runs dry).
  const auto run_until_reported = [&](std::size_t reports) {
    const auto deadline = std::chrono::steady_clock::now() + kDrainBound;
    worker_.restart();
    while (finished_.size() < reports && std::chrono::steady_clock::now() < deadline)
      worker_.run_one_for(std::chrono::milliseconds(500));
  };
  ASSERT_EQ(registry_->end(b), wire::ErrorCode::Ok);
  run_until_reported(1);
  ASSERT_EQ(registry_->end(a), wire::ErrorCode::Ok);
  run_until_reported(2);
  const std::vector<std::pair<std::uint32_t, std::size_t>> expected{{b, 1}, {a, 0}};
  EXPECT_EQ(finished_, expected);
}

TEST_F(ReservedMatch, TicksStampTheWorkersPulse) {
  const auto before = pulse_->last();
  const std::uint32_t id = registry_->create({.level = "arena"}).match_id;
  const auto deadline = std::chrono::steady_clock::now() + kDrainBound;
  // The match's first handlers: its start, then its first tick when the timer fires.
  while (pulse_->last() == before && std::chrono::steady_clock::now() < deadline)
    worker_.run_one_for(std::chrono::milliseconds(500));
  EXPECT_GT(pulse_->last(), before);
  EXPECT_GT(registry_->find(id)->health().summary.tick, 0u);
  registry_->end(id);
  drain();
}

}  // namespace
}  // namespace shiftcast
