#include "client-sim/report_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

namespace shiftcast {
namespace {

// Chart geometry, in SVG user units (the page scales the charts to its width).
constexpr double kWidth = 720;
constexpr double kHeight = 260;
constexpr double kLeft = 64;  // room for the y tick labels and the axis title
constexpr double kRight = 16;
constexpr double kTop = 28;  // the legend
constexpr double kBottom = 44;
constexpr int kTargetTicks = 5;
constexpr int kHistogramBins = 40;
constexpr double kHistogramTail = 0.999;  // the last bin starts here: a long tail does not flatten the rest

struct Series {
  std::string name;
  std::string color;
  std::vector<double> x;
  std::vector<double> y;
};

std::string escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A tick step of 1, 2 or 5 times a power of ten that cuts [0, top] into about kTargetTicks parts.
double nice_step(double top) {
  if (!(top > 0) || !std::isfinite(top)) return 1;
  const double rough = top / kTargetTicks;
  const double power = std::pow(10.0, std::floor(std::log10(rough)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * power >= rough) return m * power;
  }
  return 10 * power;
}

std::string number(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e9) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{:.3g}", v);
}

// Axes from 0 to a nice top on both sides, the grid, the tick labels and the two axis titles.
struct Axes {
  double x_top = 1, y_top = 1;
  double px(double x) const { return kLeft + (kWidth - kLeft - kRight) * std::clamp(x / x_top, 0.0, 1.0); }
  double py(double y) const {
    return kHeight - kBottom - (kHeight - kTop - kBottom) * std::clamp(y / y_top, 0.0, 1.0);
  }
};

Axes make_axes(double x_max, double y_max) {
  Axes a;
  const double xs = nice_step(x_max), ys = nice_step(y_max);
  a.x_top = std::max(xs, std::ceil(x_max / xs) * xs);
  a.y_top = std::max(ys, std::ceil(y_max / ys) * ys);
  return a;
}

std::string draw_axes(const Axes& a, std::string_view x_title, std::string_view y_title) {
  std::string s;
  const double xs = nice_step(a.x_top), ys = nice_step(a.y_top);
  for (double y = 0; y <= a.y_top * (1 + 1e-9); y += ys) {
    s += fmt::format(R"(<line class="grid" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", kLeft,
                     a.py(y), kWidth - kRight, a.py(y));
    s += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", kLeft - 6,
                     a.py(y) + 4, number(y));
  }
  for (double x = 0; x <= a.x_top * (1 + 1e-9); x += xs) {
    s += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", a.px(x),
                     kHeight - kBottom + 16, number(x));
  }
  s += fmt::format(R"(<line class="axis" x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}"/>)", kLeft,
                   kHeight - kBottom, kWidth - kRight);
  s += fmt::format(R"(<line class="axis" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)", kLeft,
                   kHeight - kBottom, kTop);
  s += fmt::format(R"(<text class="axis-title" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                   (kLeft + kWidth - kRight) / 2, kHeight - 8, escape(x_title));
  s += fmt::format(
      R"svg(<text class="axis-title" x="14" y="{0:.1f}" text-anchor="middle" transform="rotate(-90 14 {0:.1f})">{1}</text>)svg",
      (kTop + kHeight - kBottom) / 2, escape(y_title));
  return s;
}

std::string svg_open(std::string_view name, std::string_view title) {
  return fmt::format(
      R"(<figure><figcaption>{}</figcaption><svg data-chart="{}" viewBox="0 0 {} {}" role="img">)",
      escape(title), name, kWidth, kHeight);
}

// Lines over time; `budget` (> 0) a dashed horizontal line.
std::string line_chart(std::string_view name, std::string_view title, std::string_view y_title,
                       const std::vector<Series>& series, double budget = 0) {
  double x_max = 1, y_max = budget > 0 ? budget : 0;
  for (const Series& s : series) {
    for (const double x : s.x)
      x_max = std::max(x_max, x);
    for (const double y : s.y)
      y_max = std::max(y_max, y);
  }
  const Axes a = make_axes(x_max, y_max > 0 ? y_max : 1);
  std::string out = svg_open(name, title) + draw_axes(a, "time since the load started (s)", y_title);
  if (budget > 0) {
    out += fmt::format(R"(<line class="budget" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", kLeft,
                       a.py(budget), kWidth - kRight, a.py(budget));
  }
  double legend_x = kLeft;
  for (const Series& s : series) {
    std::string points;
    for (std::size_t i = 0; i < s.x.size(); ++i)
      points += fmt::format("{}{:.1f},{:.1f}", i ? " " : "", a.px(s.x[i]), a.py(s.y[i]));
    out += fmt::format(R"(<polyline class="series" data-series="{}" stroke="{}" points="{}"/>)",
                       escape(s.name), s.color, points);
    out += fmt::format(R"(<rect x="{:.1f}" y="8" width="12" height="4" fill="{}"/>)", legend_x, s.color);
    out += fmt::format(R"(<text class="legend" x="{:.1f}" y="14">{}</text>)", legend_x + 16, escape(s.name));
    legend_x += 24 + 7.0 * double(s.name.size());
  }
  if (budget > 0) {
    out += fmt::format(R"(<text class="legend" x="{:.1f}" y="14">- - budget {}</text>)", legend_x,
                       number(budget));
  }
  return out + "</svg></figure>\n";
}

// Counts of `samples` in kHistogramBins equal bins from 0 to the kHistogramTail quantile (rounded up to a
// nice value); what lies beyond counts in the last bin, which says so.
std::string histogram_chart(std::string_view name, std::string_view title, std::string_view x_title,
                            std::vector<double> samples, double budget) {
  std::sort(samples.begin(), samples.end());
  double top = samples.empty() ? 1 : samples[std::size_t(double(samples.size() - 1) * kHistogramTail)];
  top = std::max({top, budget, 1e-9});
  const double step = nice_step(top);
  top = std::ceil(top / step) * step;
  std::vector<std::uint64_t> bins(kHistogramBins, 0);
  for (const double v : samples) {
    const auto b = static_cast<std::size_t>(std::clamp(v / top * kHistogramBins, 0.0, kHistogramBins - 1.0));
    ++bins[b];
  }
  const std::uint64_t highest = std::max<std::uint64_t>(1, *std::max_element(bins.begin(), bins.end()));
  const Axes a = make_axes(top, double(highest));
  std::string out = svg_open(name, title) + draw_axes(a, x_title, "samples");
  const double width = (a.px(top) - a.px(0)) / kHistogramBins;
  for (int b = 0; b < kHistogramBins; ++b) {
    const double y = a.py(double(bins[std::size_t(b)]));
    out += fmt::format(
        R"(<rect class="bar" data-count="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)",
        bins[std::size_t(b)], a.px(top * b / kHistogramBins), y, std::max(0.0, width - 1), a.py(0) - y);
  }
  if (budget > 0) {
    out += fmt::format(R"(<line class="budget" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)",
                       a.px(budget), a.py(0), kTop);
  }
  out += fmt::format(
      R"(<text class="legend" x="{:.1f}" y="14">{} samples; the last bar holds everything beyond {}{}</text>)",
      kLeft, samples.size(), number(top * (kHistogramBins - 1) / kHistogramBins),
      budget > 0 ? fmt::format("; - - budget {}", number(budget)) : "");
  return out + "</svg></figure>\n";
}

std::string row(std::string_view name, const std::string& value) {
  return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape(name), escape(value));
}

// Several servers: one row per server, judged alone (SimServerRow), so the server that missed is named.
std::string servers_table(const SimReport& r) {
  std::string out =
      "<h2>Per server</h2>\n<table id=\"servers\">\n<tr><th>server</th><th>matches</th><th>clients "
      "(failed)</th><th>input&rarr;ack p99</th><th>events lost</th><th>prediction p99</th><th>tick "
      "p99</th><th>CPU</th><th>invariant violations</th><th>budgets</th></tr>\n";
  for (const SimServerRow& s : r.servers) {
    std::string verdict = !s.judged ? "not judged (no match placed)" : s.budgets_met ? "met" : "missed: ";
    for (std::size_t i = 0; s.judged && i < s.budgets_missed.size(); ++i)
      verdict += (i == 0 ? "" : ", ") + s.budgets_missed[i];
    const std::string server_side =
        s.server_metrics_ok ? "" : " (no /metrics: " + s.server_metrics_error + ")";
    out += fmt::format(
        "<tr data-server=\"{}\" data-met=\"{}\"><td>{}{}</td><td>{}</td><td>{} ({})</td><td>{} ms ({} "
        "ticks)</td><td>{}</td><td>{} units</td><td>{} ms</td><td>{}%</td><td>{}</td><td>{}</td></tr>\n",
        escape(s.server), s.budgets_met ? "true" : "false", escape(s.server), escape(server_side), s.matches,
        s.clients, s.clients_failed, number(s.input_ack_ms.p99), number(s.input_ack_p99_ticks), s.events_lost,
        number(s.movement_error.p99), number(s.server_tick_ms.p99), number(s.server_cpu_percent),
        s.invariant_violations, escape(verdict));
  }
  return out + "</table>\n";
}

constexpr std::string_view kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px auto; max-width: 760px; color: #222; }
h1 { font-size: 20px; } figure { margin: 16px 0; } figcaption { font-weight: 600; margin-bottom: 4px; }
svg { width: 100%; height: auto; background: #fff; border: 1px solid #ddd; }
.grid { stroke: #eee; } .axis { stroke: #444; } .tick, .legend { font-size: 11px; fill: #444; }
.axis-title { font-size: 12px; fill: #222; } .series { fill: none; stroke-width: 1.6; }
.budget { stroke: #c00; stroke-dasharray: 6 4; } .bar { fill: #3b6ea8; }
#verdict { padding: 10px 14px; border-radius: 6px; font-weight: 600; }
#verdict[data-met="true"] { background: #e4f4e4; color: #1d6b1d; }
#verdict[data-met="false"] { background: #fbe3e3; color: #9b1c1c; }
table { border-collapse: collapse; } th { text-align: left; padding-right: 16px; font-weight: 500; }
h2 { font-size: 16px; } #servers td { padding-right: 12px; } #servers tr[data-met="false"] td { color: #9b1c1c; }
)";

}  // namespace

std::string report_html(const SimReport& r, std::span<const TimelinePoint> timeline,
                        const SimRunResult& run) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += fmt::format("<title>shiftcast load report: {} x {} on {}</title>\n", r.matches, r.clients_per_match,
                     escape(r.level));
  out += fmt::format("<style>{}</style></head><body>\n", kStyle);
  out += fmt::format("<h1>shiftcast load report: {} match{} x {} clients on {}</h1>\n", r.matches,
                     r.matches == 1 ? "" : "es", r.clients_per_match, escape(r.level));
  out += fmt::format(R"(<div id="verdict" data-met="{}">{}</div>)", r.budgets_met ? "true" : "false",
                     r.budgets_met ? "Every budget met" : "Budgets missed");
  if (!r.budgets_missed.empty()) {
    out += "<ul id=\"missed\">";
    for (const std::string& m : r.budgets_missed)
      out += "<li>" + escape(m) + "</li>";
    out += "</ul>";
  }
  out += "\n<table>\n";
  out += row("run", fmt::format("{} Hz ticks, {} Hz snapshots, {:.1f} s of load, network {}", r.tick_rate,
                                r.snapshot_rate, r.load_seconds, r.network));
  out += row("clients",
             fmt::format("{} connected of {}, {} failed", r.clients_connected, r.clients, r.clients_failed));
  out += row("input to acknowledgement",
             fmt::format("p50 {} ms, p99 {} ms ({} ticks; budget {} ticks)", number(r.input_ack_ms.p50),
                         number(r.input_ack_ms.p99), number(r.input_ack_p99_ticks),
                         number(r.input_ack_budget_ticks)));
  out += row("bandwidth per client",
             fmt::format("down {} kbit/s (budget {}), up {} kbit/s (budget {})",
                         number(r.bandwidth_down_kbps), number(r.bandwidth_down_budget_kbps),
                         number(r.bandwidth_up_kbps), number(r.bandwidth_up_budget_kbps)));
  out += row("contact events", fmt::format("{} delivered, {} lost, {} out of order", r.events_delivered,
                                           r.events_lost, r.event_order_violations));
  out += row("prediction error", fmt::format("p99 {} units, p99.9 {}, max {}", number(r.movement_error.p99),
                                             number(r.movement_error.p999), number(r.movement_error.max)));
  out +=
      row("server", fmt::format("tick p99 {} ms, {} late ticks, {} invariant violations, CPU {}% of a core "
                                "({}% per player)",
                                number(r.server_tick_ms.p99), r.server_late_ticks, r.invariant_violations,
                                number(r.server_cpu_percent), number(r.server_cpu_percent_per_player)));
  out += "</table>\n";
  if (r.servers.size() > 1) out += servers_table(r);

  Series connected{"connected", "#3b6ea8", {}, {}}, failed{"failed", "#c44", {}, {}};
  Series tick{"p99", "#6a3d9a", {}, {}};
  Series ack50{"p50", "#3b6ea8", {}, {}}, ack99{"p99", "#e08a1e", {}, {}};
  Series down{"down", "#3b6ea8", {}, {}}, up{"up", "#2e9e57", {}, {}};
  Series rpc{"p99", "#3b6ea8", {}, {}};
  for (const TimelinePoint& p : timeline) {
    const auto add = [&p](Series& s, double v) {
      s.x.push_back(p.t);
      s.y.push_back(v);
    };
    add(connected, p.connected);
    add(failed, p.failed);
    add(ack50, p.input_ack_p50_ms);
    add(ack99, p.input_ack_p99_ms);
    if (p.has_rates) {
      add(down, p.down_kbps);
      add(up, p.up_kbps);
    }
    add(rpc, p.rpc_p99_ms);
    if (p.has_server_tick) add(tick, p.server_tick_p99_ms);
  }
  const double tick_ms = r.tick_rate > 0 ? 1000.0 / r.tick_rate : 0;
  out += line_chart("clients", "Clients", "clients", {connected, failed});
  out += line_chart("server_tick", "Server tick time, p99 per second (budget: the tick period)", "ms", {tick},
                    tick_ms);
  out += line_chart("input_ack", "Input to acknowledgement, per second", "ms", {ack50, ack99},
                    r.input_ack_budget_ticks * tick_ms);
  out += line_chart("bandwidth", "Bandwidth per client, IP/UDP headers included", "kbit/s", {down, up},
                    r.bandwidth_down_budget_kbps);
  out += line_chart("rpc", "RPC shot latency (raycasts), p99 per second", "ms", {rpc});

  std::vector<double> acks, errors;
  for (const SimClientStats& c : run.clients) {
    acks.insert(acks.end(), c.input_ack_ms.begin(), c.input_ack_ms.end());
    errors.insert(errors.end(), c.movement_error.begin(), c.movement_error.end());
  }
  out += histogram_chart("input_ack_histogram", "Input to acknowledgement, every command", "ms",
                         std::move(acks), r.input_ack_budget_ticks * tick_ms);
  out += histogram_chart("prediction_error_histogram", "Prediction error, every acknowledged snapshot",
                         "units", std::move(errors), 0);
  out += "</body></html>\n";
  return out;
}

}  // namespace shiftcast
