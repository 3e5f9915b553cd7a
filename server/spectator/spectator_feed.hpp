// SpectatorFeed: the live views of a server's matches (docs/server.md, "Pictures"). At most `rate` times a
// second, for each match somebody watches, it builds one frame from what the match published (the tick
// history, the contact feed, the shot log: what RPC queries read too) and hands the same bytes to every
// viewer of that match, after the spectator delay. Nothing here ever waits for a match's worker, and a
// viewer that falls behind is cut off (server/spectator/viewer.hpp), so watching costs a tick nothing.
//
//   SpectatorFeed feed(io, directory, settings, &metrics);   // io: the HTTP threads
//   feed.start();
//   routes.upgrade = [&](view, take) { return feed.upgrade(match_id, take); };   // HTTP strand
//   feed.stop();                                             // closes every viewer
//
// Everything runs on the feed's own strand; upgrade() may be called from any thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "server/http_server.hpp"
#include "server/match_directory.hpp"
#include "server/spectator/viewer.hpp"

namespace shiftcast {

class MetricsRegistry;
class Counter;
class Gauge;

struct SpectatorSettings {
  std::chrono::milliseconds delay{0};
  int rate = 20;  // updates a second, 1..20
  std::size_t byte_budget = 1 << 20;
  int max_viewers = 16;
};

class SpectatorFeed {
 public:
  SpectatorFeed(boost::asio::io_context& io, MatchDirectory& directory, SpectatorSettings settings,
                MetricsRegistry* metrics);
  ~SpectatorFeed();
  SpectatorFeed(const SpectatorFeed&) = delete;
  SpectatorFeed& operator=(const SpectatorFeed&) = delete;

  void start();
  // Any thread: every viewer gets a close frame; no more frames are built.
  void stop();
  // Any thread (the HTTP strand): takes the connection for `match_id`'s view, or says why not (unknown
  // match, too many viewers). The caller has checked the key.
  std::optional<HttpPage> upgrade(std::uint32_t match_id, const std::function<HttpUpgrade()>& take);
  int viewers() const;

 private:
  struct Channel;
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace shiftcast
