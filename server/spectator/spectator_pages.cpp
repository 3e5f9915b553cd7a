#include "server/spectator/spectator_pages.hpp"

#include <fmt/format.h>

#include <boost/beast/http/status.hpp>

#include <charconv>
#include <cmath>
#include <map>

#include "server/config/json_text.hpp"
#include "server/hosted_level.hpp"
#include "server/metrics.hpp"
#include "server/spectator/page_assets.hpp"
#include "server/spectator/spectator_feed.hpp"

namespace shiftcast {
namespace {

using http_status = boost::beast::http::status;

constexpr char kHtml[] = "text/html; charset=utf-8";
constexpr char kJson[] = "application/json";
constexpr char kText[] = "text/plain; charset=utf-8";

HttpPage ok(std::string body, const char* type) {
  return {unsigned(http_status::ok), std::move(body), type, std::nullopt};
}
HttpPage refuse(http_status status, std::string body, HttpClose reason) {
  return {unsigned(status), std::move(body), kText, reason};
}
HttpPage refused_key() {
  return refuse(http_status::forbidden, "spectator key required\n", HttpClose::kSpectatorRefused);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "/prefix/{id}suffix": the id, when the path is exactly that.
std::optional<std::uint32_t> match_id_in(std::string_view path, std::string_view prefix,
                                         std::string_view suffix) {
  if (!path.starts_with(prefix) || !path.ends_with(suffix) || path.size() <= prefix.size() + suffix.size())
    return std::nullopt;
  const std::string_view digits = path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
  std::uint32_t id = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return id;
}

// Compares every byte whatever the first difference, so the time taken says nothing about the key.
bool same_key(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

std::optional<std::string> query_parameter(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    if (pair.substr(0, eq) != name) continue;
    const std::string_view raw = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    std::string value;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '+') {
        value += ' ';
      } else if (raw[i] == '%' && i + 2 < raw.size() && hex_digit(raw[i + 1]) >= 0 &&
                 hex_digit(raw[i + 2]) >= 0) {
        value += char(hex_digit(raw[i + 1]) * 16 + hex_digit(raw[i + 2]));
        i += 2;
      } else {
        value += raw[i];
      }
    }
    return value;
  }
  return std::nullopt;
}

SpectatorPages::SpectatorPages(MatchDirectory& directory, const MetricsRegistry* metrics,
                               std::string spectator_key, SpectatorFeed* feed, ServerIdentity identity)
    : directory_(directory),
      metrics_(metrics),
      key_(std::move(spectator_key)),
      feed_(feed),
      identity_(std::move(identity)) {}

bool SpectatorPages::has_key(std::string_view query) const {
  if (key_.empty()) return false;
  const std::optional<std::string> given = query_parameter(query, "key");
  return given && same_key(*given, key_);
}

std::optional<HttpPage> SpectatorPages::page(const HttpRequestView& request) {
  if (request.path == "/") return ok(std::string(dashboard_page()), kHtml);
  if (request.path == "/api/matches") return ok(matches_json(has_key(request.query)), kJson);
  if (const auto id = match_id_in(request.path, "/matches/", "")) {
    if (!has_key(request.query)) return refused_key();
    if (!directory_.find(*id)) return refuse(http_status::not_found, "no such match\n", HttpClose::kNotFound);
    return ok(std::string(match_view_page()), kHtml);
  }
  if (const auto id = match_id_in(request.path, "/api/matches/", "/plan")) {
    if (!has_key(request.query)) return refused_key();
    const std::shared_ptr<MatchHandle> match = directory_.find(*id);
    if (!match || match->hosted_level() == nullptr)
      return refuse(http_status::not_found, "no such match\n", HttpClose::kNotFound);
    std::optional<double> z;
    if (const std::optional<std::string> text = query_parameter(request.query, "z")) {
      double value = NAN;
      const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
      if (ec != std::errc() || end != text->data() + text->size() || !std::isfinite(value))
        return refuse(http_status::bad_request, "z must be a number\n", HttpClose::kBadParameter);
      z = value;
    }
    const std::shared_ptr<const std::string> plan = plans_.get(*match->hosted_level(), z);
    if (!plan) return refuse(http_status::bad_request, "z is outside the level\n", HttpClose::kBadParameter);
    return ok(*plan, kJson);
  }
  return std::nullopt;
}

std::optional<HttpPage> SpectatorPages::upgrade(const HttpRequestView& request,
                                                const std::function<HttpUpgrade()>& take) {
  const auto id = match_id_in(request.path, "/api/matches/", "/live");
  if (!id || feed_ == nullptr) return refuse(http_status::not_found, "not found\n", HttpClose::kNotFound);
  if (!has_key(request.query)) return refused_key();
  return feed_->upgrade(*id, take);
}

std::string SpectatorPages::matches_json(bool spectator) const {
  const double uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  // The server's address and instance first: what a matchmaker mints tokens with (docs/protocol.md,
  // "Minting tokens"); the instance as the 16 lowercase hex digits shiftcast-token takes.
  std::string out = fmt::format(
      R"({{"server_address":"{}","server_instance":"{:016x}","uptime_s":{:.1f},"spectator":{},"viewers":{},)"
      R"("rejections":{{)",
      json_escaped(identity_.public_address), identity_.instance, uptime, spectator ? "true" : "false",
      feed_ ? feed_->viewers() : 0);
  if (metrics_ != nullptr) {
    std::map<std::string, std::map<std::string, std::uint64_t>> by_channel;
    for (const auto& [labels, value] : metrics_->counter_values("shiftcast_rejected_total")) {
      if (value == 0) continue;
      std::string channel, reason;
      for (const auto& [k, v] : labels) {
        if (k == "channel") channel = v;
        if (k == "reason") reason = v;
      }
      by_channel[channel][reason] += value;
    }
    bool first_channel = true;
    for (const auto& [channel, reasons] : by_channel) {
      out += fmt::format(R"({}"{}":{{)", first_channel ? "" : ",", json_escaped(channel));
      first_channel = false;
      bool first = true;
      for (const auto& [reason, n] : reasons) {
        out += fmt::format(R"({}"{}":{})", first ? "" : ",", json_escaped(reason), n);
        first = false;
      }
      out += '}';
    }
  }
  out += R"(},"matches":[)";
  bool first = true;
  for (const std::shared_ptr<MatchHandle>& m : directory_.list()) {
    const MatchHealth h = m->health();
    out += fmt::format(
        R"({}{{"id":{},"level":"{}","players":{},"max_players":{},"tick_rate":{},"tick":{},"entities":{},)"
        R"("late_ticks":{},"contacts":{},"invariant_violations":{},"replacements":{},"ended":{},)",
        first ? "" : ",", h.summary.match_id, json_escaped(h.summary.level), h.summary.players,
        h.summary.max_players, h.summary.tick_rate, h.summary.tick, h.summary.entities, h.late_ticks,
        h.contacts, h.invariant_violations, h.replacements, m->ended() ? "true" : "false");
    first = false;
    out += R"("tick_ms_bounds":[)";
    for (std::size_t i = 0; i < h.tick_ms_bounds.size(); ++i)
      out += fmt::format("{}{}", i ? "," : "", h.tick_ms_bounds[i]);
    out += R"(],"tick_counts":[)";
    for (std::size_t i = 0; i < h.tick_counts.size(); ++i)
      out += fmt::format("{}{}", i ? "," : "", h.tick_counts[i]);
    out += "]}";
  }
  out += "]}";
  return out;
}

}  // namespace shiftcast
