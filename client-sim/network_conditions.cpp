#include "client-sim/network_conditions.hpp"

#include "client-sim/text_trim.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "client-sim/sim_stats.hpp"

namespace shiftcast {

static_assert(kLinkHeaderBytes == kUdpIpv4HeaderBytes);

namespace {

constexpr double kMaxDelaySeconds = 10;  // latency, jitter, reorder_delay, queue
constexpr double kMaxRateBits = 100e9;
constexpr double kPercent = 100;
constexpr double kMillisecond = 1e-3;
constexpr double kKilo = 1e3;
constexpr double kMega = 1e6;
constexpr double kBitsPerByte = 8;

enum class Unit : std::uint8_t { kPercent, kTime, kRate };

struct Key {
  std::string_view name;
  Unit unit;
  double LinkConditions::*field;
};

constexpr Key kKeys[] = {
    {"loss", Unit::kPercent, &LinkConditions::loss},
    {"latency", Unit::kTime, &LinkConditions::latency},
    {"jitter", Unit::kTime, &LinkConditions::jitter},
    {"dup", Unit::kPercent, &LinkConditions::duplicate},
    {"reorder", Unit::kPercent, &LinkConditions::reorder},
    {"reorder_delay", Unit::kTime, &LinkConditions::reorder_delay},
    {"rate", Unit::kRate, &LinkConditions::rate_bits},
    {"queue", Unit::kTime, &LinkConditions::queue},
};

const Key* find_key(std::string_view name) {
  for (const Key& k : kKeys)
    if (k.name == name) return &k;
  return nullptr;
}

struct Parsed {
  std::optional<NetParseErrorKind> error;
  std::string why;
  double value = 0;
};

Parsed fail(NetParseErrorKind kind, std::string why) {
  return {kind, std::move(why), 0};
}

// The number and its unit, converted to the field's own unit (fraction, seconds, bits per second).
Parsed parse_value(const Key& key, std::string_view text) {
  double number = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(begin, end, number);
  if (ec != std::errc() || stop == begin || !std::isfinite(number)) {
    return fail(NetParseErrorKind::kBadNumber, fmt::format("'{}' is not a number", text));
  }
  const std::string_view unit(stop, std::size_t(end - stop));
  switch (key.unit) {
    case Unit::kPercent: {
      if (unit != "%")
        return fail(NetParseErrorKind::kBadUnit, fmt::format("{} needs a percentage (5%)", key.name));
      if (number < 0 || number >= kPercent)
        return fail(NetParseErrorKind::kOutOfRange,
                    fmt::format("{} must be 0% or more and below 100%", key.name));
      return {std::nullopt, {}, number / kPercent};
    }
    case Unit::kTime: {
      double seconds = 0;
      if (unit == "ms") {
        seconds = number * kMillisecond;
      } else if (unit == "s") {
        seconds = number;
      } else {
        return fail(NetParseErrorKind::kBadUnit, fmt::format("{} needs ms or s (50ms)", key.name));
      }
      const bool positive = key.field == &LinkConditions::queue;
      if (seconds < 0 || seconds > kMaxDelaySeconds || (positive && seconds == 0))
        return fail(NetParseErrorKind::kOutOfRange, fmt::format("{} must be {} 0 and at most 10 s", key.name,
                                                                positive ? "above" : "at least"));
      return {std::nullopt, {}, seconds};
    }
    case Unit::kRate: {
      double bits = 0;
      if (unit == "kbit") {
        bits = number * kKilo;
      } else if (unit == "mbit") {
        bits = number * kMega;
      } else if (unit == "bit") {
        bits = number;
      } else {
        return fail(NetParseErrorKind::kBadUnit,
                    fmt::format("{} needs kbit, mbit or bit (512kbit)", key.name));
      }
      if (!(bits >= 1) || bits > kMaxRateBits)
        return fail(NetParseErrorKind::kOutOfRange,
                    fmt::format("{} must be 1 bit/s .. 100000 mbit/s", key.name));
      return {std::nullopt, {}, bits};
    }
  }
  return fail(NetParseErrorKind::kBadUnit, "unknown unit");
}

// Shortest text that reads back to the same value.
std::string number_text(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}

std::string value_text(const Key& key, double v) {
  switch (key.unit) {
    case Unit::kPercent:
      return number_text(v * kPercent) + "%";
    case Unit::kTime:
      return number_text(v / kMillisecond) + "ms";
    case Unit::kRate:
      return number_text(v / kKilo) + "kbit";
  }
  return number_text(v);
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

std::uint64_t LinkConditions::queue_bytes() const {
  if (!(rate_bits > 0)) return 0;
  return std::uint64_t(std::ceil(rate_bits / kBitsPerByte * queue));
}

bool operator==(const LinkConditions& a, const LinkConditions& b) {
  for (const Key& k : kKeys)
    if (a.*k.field != b.*k.field) return false;
  return true;
}

const char* to_string(NetParseErrorKind kind) {
  switch (kind) {
    case NetParseErrorKind::kEmptyItem:
      return "empty item";
    case NetParseErrorKind::kNoValue:
      return "no value";
    case NetParseErrorKind::kUnknownKey:
      return "unknown key";
    case NetParseErrorKind::kBadNumber:
      return "bad number";
    case NetParseErrorKind::kBadUnit:
      return "bad unit";
    case NetParseErrorKind::kOutOfRange:
      return "out of range";
    case NetParseErrorKind::kDuplicateKey:
      return "duplicate key";
  }
  return "unknown";
}

NetParseResult parse_network_conditions(std::string_view text) {
  NetParseResult result;
  text = trim_blanks(text);
  if (text.empty() || text == "none") return result;

  struct Setting {
    const Key* key;
    int scope;  // 0 both, 1 up, 2 down
    double value;
  };
  std::vector<Setting> settings;
  auto error = [&](NetParseErrorKind kind, std::string_view item, const std::string& why) {
    result.error = NetParseError{kind, std::string(item), fmt::format("item '{}': {}", item, why)};
    return result;
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = trim_blanks(text.substr(start, comma - start));
    start = comma + 1;
    if (item.empty())
      return error(NetParseErrorKind::kEmptyItem, item, "empty (two commas, or one at an end)");
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) return error(NetParseErrorKind::kNoValue, item, "needs key=value");
    std::string_view name = trim_blanks(item.substr(0, eq));
    const std::string_view value = trim_blanks(item.substr(eq + 1));
    int scope = 0;
    if (name.starts_with("up.")) {
      scope = 1;
      name.remove_prefix(3);
    } else if (name.starts_with("down.")) {
      scope = 2;
      name.remove_prefix(5);
    }
    const Key* key = find_key(name);
    if (key == nullptr) {
      return error(NetParseErrorKind::kUnknownKey, item,
                   "unknown key (loss, latency, jitter, dup, reorder, reorder_delay, rate, queue, each "
                   "optionally up. or down.)");
    }
    for (const Setting& s : settings)
      if (s.key == key && s.scope == scope)
        return error(NetParseErrorKind::kDuplicateKey, item, "given twice");
    const Parsed parsed = parse_value(*key, value);
    if (parsed.error) return error(*parsed.error, item, parsed.why);
    settings.push_back({key, scope, parsed.value});
  }
  // The plain keys first, so a direction's own key wins wherever it stands.
  for (int pass = 0; pass < 2; ++pass) {
    for (const Setting& s : settings) {
      if ((s.scope == 0) != (pass == 0)) continue;
      if (s.scope != 2) result.conditions.up.*s.key->field = s.value;
      if (s.scope != 1) result.conditions.down.*s.key->field = s.value;
    }
  }
  return result;
}

std::string describe(const LinkConditions& c) {
  static const LinkConditions kDefault;
  std::string out;
  for (const Key& k : kKeys) {
    if (c.*k.field == kDefault.*k.field) continue;
    out += fmt::format("{}{}={}", out.empty() ? "" : ",", k.name, value_text(k, c.*k.field));
  }
  return out.empty() ? "none" : out;
}

std::string describe(const NetworkConditions& c) {
  if (c.up == c.down) return describe(c.up);
  static const LinkConditions kDefault;
  std::string out;
  for (const Key& k : kKeys) {
    const double up = c.up.*k.field;
    const double down = c.down.*k.field;
    auto add = [&](std::string_view prefix, double v) {
      out += fmt::format("{}{}{}={}", out.empty() ? "" : ",", prefix, k.name, value_text(k, v));
    };
    if (up == down) {
      if (up != kDefault.*k.field) add("", up);
      continue;
    }
    if (up != kDefault.*k.field) add("up.", up);
    if (down != kDefault.*k.field) add("down.", down);
  }
  return out.empty() ? "none" : out;
}

std::uint64_t link_seed(std::uint32_t run_seed, std::uint64_t client_index, LinkDirection direction) {
  return (std::uint64_t(run_seed) << 32) ^ (client_index << 1) ^ std::uint64_t(direction);
}

LinkCounters& LinkCounters::operator+=(const LinkCounters& o) {
  submitted += o.submitted;
  dropped_loss += o.dropped_loss;
  dropped_queue += o.dropped_queue;
  duplicated += o.duplicated;
  reordered += o.reordered;
  delivered += o.delivered;
  return *this;
}

std::uint64_t LinkRandom::next() {
  return splitmix64(state_);
}

double LinkRandom::uniform() {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
  return double(next() >> 11) * kTwoToMinus53;
}

LinkSimulator::LinkSimulator(const LinkConditions& conditions, std::uint64_t seed)
    : conditions_(conditions),
      random_(seed),
      bytes_per_second_(conditions.rate_bits / kBitsPerByte),
      queue_bytes_(conditions.queue_bytes()) {}

void LinkSimulator::submit(std::span<const std::uint8_t> datagram, double now) {
  ++counters_.submitted;
  // Every draw is made whatever the probabilities, so one seed gives one stream of draws for any
  // conditions: a test's model can replay it.
  const bool lost = random_.uniform() < conditions_.loss;
  const bool twice = random_.uniform() < conditions_.duplicate;
  if (lost) {
    ++counters_.dropped_loss;
    return;
  }
  enqueue_copy(datagram, now);
  if (twice) {
    ++counters_.duplicated;
    enqueue_copy(datagram, now);
  }
}

void LinkSimulator::enqueue_copy(std::span<const std::uint8_t> datagram, double now) {
  const double jitter = conditions_.jitter * random_.uniform();
  const bool reordered = random_.uniform() < conditions_.reorder;
  double departure = now;
  if (bytes_per_second_ > 0) {
    const double wire = double(datagram.size() + kLinkHeaderBytes);
    const double start = std::max(bottleneck_free_at_, now);
    const double backlog = (start - now) * bytes_per_second_;  // bytes queued ahead of this one
    if (backlog + wire > double(queue_bytes_)) {
      ++counters_.dropped_queue;
      return;
    }
    bottleneck_free_at_ = start + wire / bytes_per_second_;
    departure = bottleneck_free_at_;
  }
  double due = departure + conditions_.latency + jitter;
  if (reordered) {
    ++counters_.reordered;
    due += conditions_.jitter + conditions_.reorder_delay;
  } else {
    due = std::max(due, last_in_order_due_);
    last_in_order_due_ = due;
  }
  std::vector<std::uint8_t> bytes;
  if (!pool_.empty()) {
    bytes = std::move(pool_.back());
    pool_.pop_back();
  }
  bytes.assign(datagram.begin(), datagram.end());
  queue_.push(Held{due, next_order_++, std::move(bytes)});
}

std::size_t LinkSimulator::pop_due(double now, std::vector<std::vector<std::uint8_t>>& out) {
  std::size_t n = 0;
  while (!queue_.empty() && queue_.top().due <= now) {
    // top() is const; the element is removed right after, so moving its bytes out is safe.
    out.push_back(std::move(const_cast<Held&>(queue_.top()).bytes));
    queue_.pop();
    ++n;
  }
  counters_.delivered += n;
  return n;
}

void LinkSimulator::recycle(std::vector<std::vector<std::uint8_t>>& used) {
  for (std::vector<std::uint8_t>& b : used)
    pool_.push_back(std::move(b));
  used.clear();
}

std::optional<double> LinkSimulator::next_due() const {
  if (queue_.empty()) return std::nullopt;
  return queue_.top().due;
}

std::optional<double> ClientLinks::next_due() const {
  const std::optional<double> a = up.next_due();
  const std::optional<double> b = down.next_due();
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

}  // namespace shiftcast
