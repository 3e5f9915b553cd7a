// MatchRegistry: the server's MatchDirectory. Creates matches on the workers round robin, finds them for
// the UDP endpoints and the RPC threads (a shared lock for a map lookup), ends them.
//
//   MatchRegistry registry(workers, levels, defaults, services);
//   CreatedMatch m = registry.create({.level = "oa_dm1", .props = 20});   // any thread
//   std::shared_ptr<Match> match = registry.find_match(id);               // UDP routing
//   registry.end_all([] { ... });                                          // shutdown
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "server/match.hpp"
#include "world/match/match_defaults.hpp"

namespace shiftcast {

struct MatchWorker {
  boost::asio::io_context* context = nullptr;
  UdpEndpoint* endpoint = nullptr;
  std::shared_ptr<WorkerPulse> pulse;  // its matches stamp it every tick; null: none
};

struct MatchDefaults {
  int tick_rate = kDefaultTickRate;
  int snapshot_rate = kDefaultSnapshotRate;
  int max_players = kDefaultMaxPlayers;  // the cap a CreateMatch may ask for
  int max_matches = 64;
  ConnectionSettings connection;
  double shutdown_flush_s = 1;
  std::size_t max_subscriptions_per_match = 1024;  // contact subscriptions on one match
  std::string recording_directory;                 // non-empty: every match is recorded there
  InterestSettings interest;                       // every match's interest management
};

class MatchRegistry final : public MatchDirectory {
 public:
  MatchRegistry(std::vector<MatchWorker> workers,
                std::map<std::string, std::shared_ptr<const HostedLevel>> levels,
                const MatchDefaults& defaults, const MatchServices& services);

  std::shared_ptr<MatchHandle> find(std::uint32_t match_id) const override;
  std::vector<std::shared_ptr<MatchHandle>> list() const override;
  CreatedMatch create(const CreateMatchSpec& spec) override;
  wire::ErrorCode end(std::uint32_t match_id) override;

  std::shared_ptr<Match> find_match(std::uint32_t match_id) const;
  // An id no match has or will get unless a CreateMatchSpec names it (the Agones match id, published
  // before the match exists). Any thread.
  std::uint32_t reserve_id();
  // Ends every match (each flushes its reliable events first); `on_done` runs once, on a worker, after
  // the last one finished, those an EndMatch had already begun to end included. Safe to race with end().
  void end_all(std::function<void()> on_done);
  std::size_t size() const;

 private:
  void forget(std::uint32_t match_id);
  std::vector<MatchWorker> workers_;
  std::map<std::string, std::shared_ptr<const HostedLevel>> levels_;
  MatchDefaults defaults_;
  MatchServices services_;
  mutable std::shared_mutex mutex_;
  std::map<std::uint32_t, std::shared_ptr<Match>> matches_;
  std::uint32_t next_id_ = 1;
  std::set<std::uint32_t> reserved_;  // reserve_id()'s ids not yet created
  std::size_t next_worker_ = 0;
};

}  // namespace shiftcast
