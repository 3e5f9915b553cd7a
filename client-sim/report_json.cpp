#include "client-sim/sim_report.hpp"

#include "client-sim/churn_report.hpp"
#include "server/config/json_text.hpp"

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

namespace shiftcast {
namespace {

// Shortest text that reads back to the same double; null for NaN and infinities (JSON has neither).
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}
std::string json_number(std::uint64_t v) {
  return std::to_string(v);
}
std::string json_number(int v) {
  return std::to_string(v);
}

// Pretty-printed, two spaces a level, keys in the order written: the same report gives the same bytes.
class JsonWriter {
 public:
  void value(std::string_view key, const std::string& raw) {
    prefix(key);
    out_ += raw;
  }
  void open(std::string_view key, char bracket) {
    prefix(key);
    out_ += bracket;
    has_items_.push_back(false);
  }
  void close(char bracket) {
    bool had_items = has_items_.back();
    has_items_.pop_back();
    if (had_items) newline();
    out_ += bracket;
  }
  void percentiles(std::string_view key, const Percentiles& p, bool with_p999 = false) {
    open(key, '{');
    value("p50", json_number(p.p50));
    value("p95", json_number(p.p95));
    value("p99", json_number(p.p99));
    if (with_p999) value("p999", json_number(p.p999));
    value("max", json_number(p.max));
    value("count", json_number(p.count));
    close('}');
  }
  void strings(std::string_view key, const std::vector<std::string>& items) {
    open(key, '[');
    for (const std::string& item : items)
      value({}, json_quoted(item));
    close(']');
  }
  void link(std::string_view key, const LinkCounters& c) {
    open(key, '{');
    value("submitted", json_number(c.submitted));
    value("dropped_loss", json_number(c.dropped_loss));
    value("dropped_queue", json_number(c.dropped_queue));
    value("duplicated", json_number(c.duplicated));
    value("reordered", json_number(c.reordered));
    value("delivered", json_number(c.delivered));
    close('}');
  }
  std::string text() const { return out_ + "\n"; }

 private:
  void newline() {
    out_ += '\n';
    out_.append(2 * has_items_.size(), ' ');
  }
  // Separator and key of the next item (none for the root value or array elements).
  void prefix(std::string_view key) {
    if (has_items_.empty()) return;
    if (has_items_.back()) out_ += ',';
    has_items_.back() = true;
    newline();
    if (!key.empty()) out_ += json_quoted(key) + ": ";
  }
  std::string out_;
  std::vector<bool> has_items_;
};

}  // namespace

std::string report_json(const SimReport& r) {
  JsonWriter w;
  w.open({}, '{');
  w.value("matches", json_number(r.matches));
  w.value("clients_per_match", json_number(r.clients_per_match));
  w.value("tick_rate", json_number(r.tick_rate));
  w.value("snapshot_rate", json_number(r.snapshot_rate));
  w.value("snapshot_rate_expected", json_number(r.snapshot_rate_expected));
  w.value("level", json_quoted(r.level));
  w.value("clients", json_number(r.clients));
  w.value("clients_connected", json_number(r.clients_connected));
  w.value("clients_failed", json_number(r.clients_failed));
  w.strings("failures", r.failures);
  w.value("connect_seconds", json_number(r.connect_seconds));
  w.value("load_seconds", json_number(r.load_seconds));
  w.value("client_late_ticks", json_number(r.client_late_ticks));
  w.value("tick_rate_achieved", json_number(r.tick_rate_achieved));
  w.value("snapshot_rate_achieved", json_number(r.snapshot_rate_achieved));
  w.percentiles("input_ack_ms", r.input_ack_ms);
  w.value("input_ack_p99_ticks", json_number(r.input_ack_p99_ticks));
  w.value("input_ack_budget_ticks", json_number(r.input_ack_budget_ticks));
  w.open("network", '{');
  w.value("conditions", json_quoted(r.network));
  w.value("round_trip_ms", json_number(r.round_trip_ms));
  w.link("up", r.link_up);
  w.link("down", r.link_down);
  w.close('}');
  w.open("rpc_ms", '{');
  for (const auto& [kind, p] : r.rpc_ms)
    w.percentiles(kind, p);
  w.close('}');
  w.value("rpc_errors", json_number(r.rpc_errors));
  w.open("rpc_errors_by_code", '{');
  for (const auto& [code, count] : r.rpc_errors_by_code)
    w.value(code, json_number(count));
  w.close('}');
  w.open("bandwidth_kbps", '{');
  w.value("up", json_number(r.bandwidth_up_kbps));
  w.value("down", json_number(r.bandwidth_down_kbps));
  w.close('}');
  w.open("bandwidth_split_kbps", '{');
  for (const auto* split : {&r.bandwidth_down_split_kbps, &r.bandwidth_up_split_kbps}) {
    w.open(split == &r.bandwidth_down_split_kbps ? "down" : "up", '{');
    for (const auto& [kind, kbps] : *split)
      w.value(kind, json_number(kbps));
    w.close('}');
  }
  w.close('}');
  w.value("packet_loss_down", json_number(r.packet_loss_down));
  w.value("events_delivered", json_number(r.events_delivered));
  w.value("events_lost", json_number(r.events_lost));
  w.value("event_order_violations", json_number(r.event_order_violations));
  w.value("snapshot_continuity_violations", json_number(r.snapshot_continuity_violations));
  w.value("clients_predicting", json_number(r.clients_predicting));
  w.percentiles("movement_error", r.movement_error, true);
  w.value("server_metrics_ok", r.server_metrics_ok ? "true" : "false");
  w.value("server_metrics_error", json_quoted(r.server_metrics_error));
  w.percentiles("server_tick_ms", r.server_tick_ms);
  w.value("server_late_ticks", json_number(r.server_late_ticks));
  w.value("invariant_violations", json_number(r.invariant_violations));
  w.value("server_cpu_percent", json_number(r.server_cpu_percent));
  w.value("server_cpu_percent_per_player", json_number(r.server_cpu_percent_per_player));
  w.value("sim_cpu_percent", json_number(r.sim_cpu_percent));
  w.value("sim_cpu_percent_per_client", json_number(r.sim_cpu_percent_per_client));
  if (r.churn.enabled) {
    w.open("churn", '{');
    for (const ChurnField& f : churn_fields(r.churn))
      w.value(f.name, json_number(f.value));
    w.close('}');
  }
  w.value("budgets_met", r.budgets_met ? "true" : "false");
  w.strings("budgets_missed", r.budgets_missed);
  // Last, so the totals above are the first of each name (scripts that search the text find them).
  w.value("placement", json_quoted(r.placement));
  w.open("servers", '[');
  for (const SimServerRow& s : r.servers) {
    w.open({}, '{');
    w.value("server", json_quoted(s.server));
    w.value("matches", json_number(s.matches));
    w.value("matches_seen", json_number(s.matches_seen));
    w.value("clients", json_number(s.clients));
    w.value("clients_connected", json_number(s.clients_connected));
    w.value("clients_failed", json_number(s.clients_failed));
    w.percentiles("input_ack_ms", s.input_ack_ms);
    w.value("input_ack_p99_ticks", json_number(s.input_ack_p99_ticks));
    w.value("events_lost", json_number(s.events_lost));
    w.value("event_order_violations", json_number(s.event_order_violations));
    w.value("snapshot_rate_achieved", json_number(s.snapshot_rate_achieved));
    w.percentiles("movement_error", s.movement_error, true);
    w.value("server_metrics_ok", s.server_metrics_ok ? "true" : "false");
    w.value("server_metrics_error", json_quoted(s.server_metrics_error));
    w.percentiles("server_tick_ms", s.server_tick_ms);
    w.value("server_late_ticks", json_number(s.server_late_ticks));
    w.value("invariant_violations", json_number(s.invariant_violations));
    w.value("server_cpu_percent", json_number(s.server_cpu_percent));
    w.value("judged", s.judged ? "true" : "false");
    w.value("budgets_met", s.budgets_met ? "true" : "false");
    w.strings("budgets_missed", s.budgets_missed);
    w.close('}');
  }
  w.close(']');
  w.close('}');
  return w.text();
}

}  // namespace shiftcast
