#include "server/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string_view>

namespace shiftcast {

const std::vector<double> kLatencyBuckets{50e-6, 100e-6, 200e-6, 300e-6, 500e-6, 750e-6, 1e-3, 1.5e-3,
                                          2e-3,  3e-3,   5e-3,   7.5e-3, 10e-3,  20e-3,  50e-3};

namespace {

void atomic_add(std::atomic<double>& target, double v) {
  double old = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(old, old + v, std::memory_order_relaxed)) {
  }
}

// Doubles as Prometheus's own Go clients write them (strconv 'g', shortest round-trip digits: exponent
// form below 1e-4 and from 1e6 on), so an le label reads the same as in any other exporter.
void append_number(std::string& out, double v) {
  constexpr int kMinFixedExponent = -4;
  constexpr int kMaxFixedExponent = 5;
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
    int exponent = 0;
    const char* e = std::find(buf, end, 'e');
    std::from_chars(e + (e[1] == '+' ? 2 : 1), end, exponent);
    if (v != 0 && (exponent < kMinFixedExponent || exponent > kMaxFixedExponent)) {
      out.append(buf, end);
    } else {
      auto [fixed_end, fixed_ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed);
      out.append(buf, fixed_end);
    }
  }
}

void append_number(std::string& out, std::uint64_t v) {
  out += std::to_string(v);
}

void append_escaped(std::string& out, std::string_view text, bool escape_quotes) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && escape_quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

bool valid_name(std::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':') ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

void check_labels(const std::string& metric, const Labels& labels, bool histogram) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::string& label = labels[i].first;
    if (!valid_name(label, false) || label.starts_with("__") || (histogram && label == "le")) {
      throw std::logic_error("metric " + metric + ": invalid label name '" + label + "'");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (labels[j].first == label) throw std::logic_error("metric " + metric + ": label repeated: " + label);
    }
  }
}

// `name{a="x",b="y"` without the closing brace, so a histogram can add its le label; `extra` may be empty.
void append_series(std::string& out, std::string_view name, std::string_view suffix, const Labels& labels,
                   std::string_view extra_label, std::string_view extra_value) {
  out += name;
  out += suffix;
  if (labels.empty() && extra_label.empty()) return;
  out += '{';
  bool first = true;
  for (const auto& [label, value] : labels) {
    if (!first) out += ',';
    first = false;
    out += label;
    out += "=\"";
    append_escaped(out, value, true);
    out += '"';
  }
  if (!extra_label.empty()) {
    if (!first) out += ',';
    out += extra_label;
    out += "=\"";
    out += extra_value;
    out += '"';
  }
  out += '}';
}

}  // namespace

void Gauge::add(double v) {
  atomic_add(value_, v);
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), buckets_(new std::atomic<std::uint64_t>[bounds_.size() + 1]) {
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    if (!std::isfinite(bounds_[i]) || (i > 0 && !(bounds_[i] > bounds_[i - 1]))) {
      throw std::invalid_argument("histogram bounds must be finite and strictly increasing");
    }
  }
  for (std::size_t i = 0; i <= bounds_.size(); ++i)
    buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::observe(double value) {
  if (std::isnan(value)) return;
  // le semantics: a value equal to a bound belongs to that bound's bucket.
  std::size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  atomic_add(sum_, value);
}

std::uint64_t Histogram::count() const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i)
    n += buckets_[i].load(std::memory_order_relaxed);
  return n;
}

double Histogram::sum() const {
  return sum_.load(std::memory_order_relaxed);
}

std::vector<std::uint64_t> Histogram::bucket_counts() const {
  std::vector<std::uint64_t> out(bounds_.size() + 1);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = buckets_[i].load(std::memory_order_relaxed);
  return out;
}

double Histogram::quantile(double q) const {
  std::vector<std::uint64_t> counts = bucket_counts();
  std::uint64_t total = 0;
  for (std::uint64_t c : counts)
    total += c;
  if (total == 0) return 0;
  q = std::clamp(std::isnan(q) ? 0.0 : q, 0.0, 1.0);
  double rank = q * static_cast<double>(total);
  std::uint64_t below = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    std::uint64_t cumulative = below + counts[i];
    // The first non-empty bucket that reaches the rank; empty ones would divide by zero.
    if (counts[i] > 0 && static_cast<double>(cumulative) >= rank) {
      if (i == bounds_.size()) return bounds_.empty() ? 0 : bounds_.back();
      double upper = bounds_[i];
      double lower = i > 0 ? bounds_[i - 1] : std::min(0.0, upper);
      double fraction = (rank - static_cast<double>(below)) / static_cast<double>(counts[i]);
      return lower + (upper - lower) * std::clamp(fraction, 0.0, 1.0);
    }
    below = cumulative;
  }
  return bounds_.empty() ? 0 : bounds_.back();
}

struct MetricsRegistry::Series {
  Labels labels;
  // Shared: a holder of a *_series pointer keeps its series alive after remove_labelled.
  std::shared_ptr<Counter> counter;
  std::shared_ptr<Gauge> gauge;
  std::shared_ptr<Histogram> histogram;
};

struct MetricsRegistry::Family {
  std::string help;
  Kind kind;
  std::vector<Series> series;

  Series* find(const Labels& labels) {
    for (Series& s : series) {
      if (s.labels == labels) return &s;
    }
    return nullptr;
  }
};

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

MetricsRegistry::Family& MetricsRegistry::family(const std::string& name, const std::string& help,
                                                 Kind kind) {
  if (!valid_name(name, true)) throw std::logic_error("invalid metric name '" + name + "'");
  auto it = families_.find(name);
  if (it == families_.end()) {
    it = families_.emplace(name, std::make_unique<Family>(Family{help, kind, {}})).first;
  } else if (it->second->kind != kind) {
    throw std::logic_error("metric " + name + " registered again with another type");
  }
  return *it->second;
}

Counter& MetricsRegistry::counter(const std::string& name, const std::string& help, const Labels& labels) {
  return *counter_series(name, help, labels);
}

Gauge& MetricsRegistry::gauge(const std::string& name, const std::string& help, const Labels& labels) {
  return *gauge_series(name, help, labels);
}

Histogram& MetricsRegistry::histogram(const std::string& name, const std::string& help, const Labels& labels,
                                      const std::vector<double>& upper_bounds) {
  return *histogram_series(name, help, labels, upper_bounds);
}

std::shared_ptr<Counter> MetricsRegistry::counter_series(const std::string& name, const std::string& help,
                                                         const Labels& labels) {
  check_labels(name, labels, false);
  std::lock_guard lock(mutex_);
  Family& f = family(name, help, Kind::kCounter);
  if (Series* s = f.find(labels)) return s->counter;
  f.series.push_back(Series{labels, std::make_shared<Counter>(), nullptr, nullptr});
  return f.series.back().counter;
}

std::shared_ptr<Gauge> MetricsRegistry::gauge_series(const std::string& name, const std::string& help,
                                                     const Labels& labels) {
  check_labels(name, labels, false);
  std::lock_guard lock(mutex_);
  Family& f = family(name, help, Kind::kGauge);
  if (Series* s = f.find(labels)) return s->gauge;
  f.series.push_back(Series{labels, nullptr, std::make_shared<Gauge>(), nullptr});
  return f.series.back().gauge;
}

std::shared_ptr<Histogram> MetricsRegistry::histogram_series(const std::string& name, const std::string& help,
                                                             const Labels& labels,
                                                             const std::vector<double>& upper_bounds) {
  check_labels(name, labels, true);
  auto made = std::make_shared<Histogram>(upper_bounds);  // validates the bounds outside the lock
  std::lock_guard lock(mutex_);
  Family& f = family(name, help, Kind::kHistogram);
  if (Series* s = f.find(labels)) return s->histogram;
  f.series.push_back(Series{labels, nullptr, nullptr, std::move(made)});
  return f.series.back().histogram;
}

void MetricsRegistry::remove_labelled(const std::string& label, const std::string& value) {
  std::lock_guard lock(mutex_);
  for (auto it = families_.begin(); it != families_.end();) {
    std::vector<Series>& series = it->second->series;
    std::erase_if(series, [&](const Series& s) {
      return std::any_of(s.labels.begin(), s.labels.end(),
                         [&](const auto& pair) { return pair.first == label && pair.second == value; });
    });
    // A family with no series left goes too, so a later registration may give it another type.
    it = series.empty() ? families_.erase(it) : std::next(it);
  }
}

std::vector<std::pair<Labels, std::uint64_t>> MetricsRegistry::counter_values(const std::string& name) const {
  std::vector<std::pair<Labels, std::uint64_t>> out;
  std::lock_guard lock(mutex_);
  const auto it = families_.find(name);
  if (it == families_.end() || it->second->kind != Kind::kCounter) return out;
  for (const Series& s : it->second->series)
    out.emplace_back(s.labels, s.counter->value());
  return out;
}

std::string MetricsRegistry::render() const {
  std::string out;
  std::lock_guard lock(mutex_);
  for (const auto& [name, family] : families_) {
    out += "# HELP ";
    out += name;
    out += ' ';
    append_escaped(out, family->help, false);
    out += "\n# TYPE ";
    out += name;
    out += family->kind == Kind::kCounter ? " counter\n"
           : family->kind == Kind::kGauge ? " gauge\n"
                                          : " histogram\n";
    for (const Series& s : family->series) {
      if (s.counter) {
        append_series(out, name, "", s.labels, "", "");
        out += ' ';
        append_number(out, s.counter->value());
        out += '\n';
      } else if (s.gauge) {
        append_series(out, name, "", s.labels, "", "");
        out += ' ';
        append_number(out, s.gauge->value());
        out += '\n';
      } else {
        const Histogram& h = *s.histogram;
        std::vector<std::uint64_t> counts = h.bucket_counts();
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < counts.size(); ++i) {
          cumulative += counts[i];
          std::string le;
          append_number(le, i < h.bounds().size() ? h.bounds()[i] : std::numeric_limits<double>::infinity());
          append_series(out, name, "_bucket", s.labels, "le", le);
          out += ' ';
          append_number(out, cumulative);
          out += '\n';
        }
        append_series(out, name, "_sum", s.labels, "", "");
        out += ' ';
        append_number(out, h.sum());
        out += '\n';
        append_series(out, name, "_count", s.labels, "", "");
        out += ' ';
        append_number(out, cumulative);  // the +Inf bucket read above, so the two always agree
        out += '\n';
      }
    }
  }
  return out;
}

}  // namespace shiftcast
