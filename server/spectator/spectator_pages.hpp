// SpectatorPages: the HTTP routes of the pictures (docs/server.md, "Pictures"): the operator dashboard and
// its JSON (no key: aggregate health only), and, with the spectator key, a match's live view, its floor
// plan and its WebSocket. Plug into HttpServer through HttpRoutes::page and HttpRoutes::upgrade:
//
//   SpectatorPages pages(directory, &metrics, spectator_key, &feed, {public_address, instance});
//   routes.page = [&](const HttpRequestView& r) { return pages.page(r); };
//   routes.upgrade = [&](const HttpRequestView& r, const auto& take) { return pages.upgrade(r, take); };
//
// Both run on the HTTP strand. Every refusal names its HttpClose reason, so the server counts it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "server/http_server.hpp"
#include "server/match_directory.hpp"
#include "server/spectator/floor_plan.hpp"

namespace shiftcast {

class MetricsRegistry;
class SpectatorFeed;

// The value of `name` in a query string (percent-decoding and '+' as space applied), or nothing.
std::optional<std::string> query_parameter(std::string_view query, std::string_view name);

// What a matchmaker needs to mint tokens for this server without asking it (docs/protocol.md, "Minting
// tokens"): the address tokens must name and this process's instance. Neither is a secret.
struct ServerIdentity {
  std::string public_address;
  std::uint64_t instance = 0;
};

class SpectatorPages {
 public:
  // `spectator_key` empty: the views are off (every view request is refused). `metrics` and `feed` may be
  // null (no rejections listed, no views). `identity` goes into /api/matches.
  SpectatorPages(MatchDirectory& directory, const MetricsRegistry* metrics, std::string spectator_key,
                 SpectatorFeed* feed, ServerIdentity identity = {});

  std::optional<HttpPage> page(const HttpRequestView& request);
  std::optional<HttpPage> upgrade(const HttpRequestView& request, const std::function<HttpUpgrade()>& take);
  // The dashboard's JSON; `spectator`: the request carried the key.
  std::string matches_json(bool spectator) const;

 private:
  bool has_key(std::string_view query) const;

  MatchDirectory& directory_;
  const MetricsRegistry* metrics_;
  const std::string key_;
  SpectatorFeed* feed_;
  const ServerIdentity identity_;
  FloorPlanCache plans_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace shiftcast
