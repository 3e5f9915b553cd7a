// Network conditions for shiftcast-sim: a bad network between each simulated client and the server, in
// the manner of netcode's network simulator and GameNetworkingSockets' fake lag, loss, reorder and
// duplication. NetworkConditions says what each direction does (parsed from `--net "..."` or a profile's
// [network] table); a LinkSimulator applies one direction of it to one client's datagrams. Time is a
// parameter and the draws come from the link's own seed, so a run's links are reproducible.
//
//   NetParseResult p = parse_network_conditions("loss=5%,latency=50ms,jitter=10ms,up.dup=1%");
//   if (!p.ok()) fail(p.error->message);          // names the bad item
//   LinkSimulator up(p.conditions.up, link_seed(run_seed, client_index, LinkDirection::kUp));
//   up.submit(datagram, now);                     // every datagram, as it is sent
//   while (...) { wait until up.next_due(); up.pop_due(now, out); socket.send(each of out); }
//
// How one submitted datagram goes through a link, in this order (each draw is independent):
//   1. loss: dropped with probability `loss` (counted dropped_loss), else
//   2. duplication: with probability `duplicate` a second copy is made (counted duplicated); each copy
//      then goes through 3 and 4 on its own, with its own draws;
//   3. bandwidth cap (rate > 0): the copy's bytes plus kUdpIpv4HeaderBytes are serialized at `rate`
//      behind whatever is queued; a copy that would make the queue hold more than rate x queue seconds of
//      bytes is dropped at the tail (counted dropped_queue). It leaves the bottleneck when its last byte
//      is sent ("departure"); without a cap, departure = the submit time;
//   4. delay: due = departure + latency + jitter x u, u uniform in [0, 1) (jitter only adds, never
//      subtracts). Jitter alone never reorders: a copy is never due before the copy submitted before it
//      (a real queue is first in, first out), which keeps due within [departure + latency,
//      departure + latency + jitter]. With probability `reorder` the copy is instead held back by
//      jitter + reorder_delay more (counted reordered) and skips that first-in-first-out rule: it lands
//      after every datagram submitted within reorder_delay after it.
// So: delivered = submitted - dropped_loss - dropped_queue + duplicated, exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace shiftcast {

inline constexpr std::uint64_t kLinkHeaderBytes = 28;  // = kUdpIpv4HeaderBytes (sim_stats.hpp)
inline constexpr double kDefaultReorderDelaySeconds = 0.020;
inline constexpr double kDefaultQueueSeconds = 0.250;  // the cap's queue holds this long at its rate

// One direction of a client's path. Probabilities in [0, 1), times in seconds, rate in bits per second.
struct LinkConditions {
  double loss = 0;
  double latency = 0;  // one way
  double jitter = 0;   // added uniformly in [0, jitter]
  double duplicate = 0;
  double reorder = 0;
  double reorder_delay = kDefaultReorderDelaySeconds;  // beyond jitter, for a reordered datagram
  double rate_bits = 0;                                // 0: no cap
  double queue = kDefaultQueueSeconds;                 // the cap's queue bound, in seconds at its rate

  bool active() const {
    return loss > 0 || latency > 0 || jitter > 0 || duplicate > 0 || reorder > 0 || rate_bits > 0;
  }
  // The longest any delivered copy waits past its departure.
  double worst_delay() const { return latency + jitter + (reorder > 0 ? jitter + reorder_delay : 0); }
  std::uint64_t queue_bytes() const;  // the cap's bound; 0 without a cap
};

bool operator==(const LinkConditions& a, const LinkConditions& b);

struct NetworkConditions {
  LinkConditions up;    // client to server
  LinkConditions down;  // server to client
  bool active() const { return up.active() || down.active(); }
  // The round trip the budgets scale with: both latencies plus both jitters' worst case. Reordered
  // datagrams are left out: a later datagram carries the same commands and acknowledgements.
  double round_trip() const { return up.latency + up.jitter + down.latency + down.jitter; }
};

enum class NetParseErrorKind : std::uint8_t {
  kEmptyItem,     // ",," or a trailing comma
  kNoValue,       // "loss" without "=..."
  kUnknownKey,    // "lost=5%", "left.loss=5%"
  kBadNumber,     // "loss=five%"
  kBadUnit,       // "latency=50", "loss=5", "rate=512kB"
  kOutOfRange,    // "loss=100%", "jitter=-1ms"
  kDuplicateKey,  // "loss=1%,loss=2%"
};
const char* to_string(NetParseErrorKind kind);

struct NetParseError {
  NetParseErrorKind kind;
  std::string item;     // the item as written
  std::string message;  // "item 'loss=100%': loss must be 0% or more and below 100%"
};

struct NetParseResult {
  NetworkConditions conditions;
  std::optional<NetParseError> error;
  bool ok() const { return !error.has_value(); }
};

// Items separated by commas: key=value, where key is loss, latency, jitter, dup, reorder, reorder_delay,
// rate or queue (both directions) or up.KEY / down.KEY (that direction only; wins over the plain key
// wherever it stands). Values: loss, dup, reorder in percent ("5%", "0.5%"), below 100%; latency,
// jitter, reorder_delay, queue in "ms" or "s", 0..10 s (queue above 0); rate in "kbit", "mbit" or "bit"
// (per second), above 0. Spaces around items are ignored; "" and "none" mean a clean network.
NetParseResult parse_network_conditions(std::string_view text);
// The canonical text of `c` ("none" when clean): parsing it gives `c` back.
std::string describe(const NetworkConditions& c);
std::string describe(const LinkConditions& c);

enum class LinkDirection : std::uint8_t { kUp = 0, kDown = 1 };
// Distinct for every (client, direction) of a run.
std::uint64_t link_seed(std::uint32_t run_seed, std::uint64_t client_index, LinkDirection direction);

struct LinkCounters {
  std::uint64_t submitted = 0;
  std::uint64_t dropped_loss = 0;
  std::uint64_t dropped_queue = 0;
  std::uint64_t duplicated = 0;
  std::uint64_t reordered = 0;
  std::uint64_t delivered = 0;  // popped by pop_due
  LinkCounters& operator+=(const LinkCounters& o);
};

// The draws of a link: SplitMix64, so a seed gives the same stream on every platform.
class LinkRandom {
 public:
  explicit LinkRandom(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  double uniform();  // [0, 1), 53 bits

 private:
  std::uint64_t state_;
};

// One direction of one client's path. Not thread-safe; no clock inside.
class LinkSimulator {
 public:
  LinkSimulator(const LinkConditions& conditions, std::uint64_t seed);

  // The datagram enters the link at `now` (seconds, any clock, non-decreasing across calls).
  void submit(std::span<const std::uint8_t> datagram, double now);
  // Appends every datagram due at or before `now` to `out`, in due order (ties in submit order), and
  // returns how many. The buffers come from the link's pool: give them back with recycle() once used.
  std::size_t pop_due(double now, std::vector<std::vector<std::uint8_t>>& out);
  // Returns buffers pop_due handed out (out is left empty), so a busy link allocates nothing.
  void recycle(std::vector<std::vector<std::uint8_t>>& used);
  // When the earliest held datagram is due; nullopt when none is held.
  std::optional<double> next_due() const;
  std::size_t held() const { return queue_.size(); }

  const LinkConditions& conditions() const { return conditions_; }
  const LinkCounters& counters() const { return counters_; }

 private:
  struct Held {
    double due;
    std::uint64_t order;  // submit order of the copy: ties go out first in, first out
    std::vector<std::uint8_t> bytes;
    bool operator>(const Held& o) const { return due != o.due ? due > o.due : order > o.order; }
  };
  void enqueue_copy(std::span<const std::uint8_t> datagram, double now);

  LinkConditions conditions_;
  LinkRandom random_;
  LinkCounters counters_;
  std::priority_queue<Held, std::vector<Held>, std::greater<>> queue_;
  std::vector<std::vector<std::uint8_t>> pool_;
  std::uint64_t next_order_ = 0;
  double bottleneck_free_at_ = 0;  // when the cap's last queued byte leaves
  double last_in_order_due_ = 0;   // first in, first out for copies not reordered
  double bytes_per_second_ = 0;
  std::uint64_t queue_bytes_ = 0;
};

// Both directions of one client's path, for shiftcast-sim's SimClient: what it sends goes through `up`,
// what it receives through `down`; deliver() hands each due datagram to `f` and recycles the buffers.
struct ClientLinks {
  ClientLinks(const NetworkConditions& c, std::uint32_t run_seed, std::uint64_t client_index)
      : up(c.up, link_seed(run_seed, client_index, LinkDirection::kUp)),
        down(c.down, link_seed(run_seed, client_index, LinkDirection::kDown)) {}

  template <class F>
  void deliver(LinkSimulator& link, double now, F&& f) {
    std::vector<std::vector<std::uint8_t>>& out = &link == &up ? up_due_ : down_due_;
    link.pop_due(now, out);
    for (const std::vector<std::uint8_t>& d : out)
      f(std::span<const std::uint8_t>(d));
    link.recycle(out);
  }
  std::optional<double> next_due() const;

  LinkSimulator up;
  LinkSimulator down;

 private:
  std::vector<std::vector<std::uint8_t>> up_due_, down_due_;
};

}  // namespace shiftcast
