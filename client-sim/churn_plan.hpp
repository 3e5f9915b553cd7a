// ChurnPlan: the seeded schedule of a churn run of shiftcast-sim (client-sim/churn_runner.hpp): which
// client slot joins and leaves when (and whether it says goodbye), when each match slot's match is
// replaced, when a passing RPC client comes (and whether it vanishes after half a frame), when a contact
// subscriber comes, how long it stays and whether it ever reads. Pure: time is a parameter, nothing here
// touches a socket, so the schedule is tested against a brute-force replay of its events.
//
//   ChurnPlan plan = make_churn_plan(options.churn, {.clients = 512, .matches = 8, .duration = 600,
//                                                    .seed = options.seed});
//   for (const ChurnEvent& e : plan.events) { wait_until(e.at); do(e); }   // events sorted by time
//
// The shape of the schedule:
// - client slot c joins first at a time spread over the ramp, plays a lifetime drawn from
//   [lifetime_min_s, lifetime_max_s], leaves (a goodbye with probability goodbye_fraction, else a
//   silent drop), and joins again after a delay drawn from [reconnect_delay_min_s, ..._max_s], with a
//   fresh token: at most `clients` slots are ever in play at once. Slot c plays in match slot c % matches.
// - match slot m's match is created at 0 and lives a lifetime drawn from [match_lifetime_min_s, ..._max_s];
//   at its end the replacement is created first, then the old one ended (kMatchCreate sorts before
//   kMatchEnd at the same time), so `matches` to `matches + 1` are alive at every moment of the run.
// - passing RPC clients and subscribers arrive as Poisson processes at their configured rates.
// Nothing is scheduled at or after `duration`: the run's end stops whoever is still there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shiftcast {

// The [churn] table of a load profile (configs/load/soak.toml); `enabled` also by --churn.
struct ChurnSettings {
  bool enabled = false;
  double ramp_s = 2;  // the first joins are spread over this long
  double lifetime_min_s = 5;
  double lifetime_max_s = 60;
  double goodbye_fraction = 0.3;  // of the leaves; the others close the socket without a word
  double reconnect_delay_min_s = 0.5;
  double reconnect_delay_max_s = 5;
  double match_lifetime_min_s = 30;
  double match_lifetime_max_s = 120;
  // CreateMatch's max_players; 0: twice the clients per match, as a silently dropped player holds its
  // place until the server times it out while its slot's next session already plays.
  int match_max_players = 0;
  double rpc_visits_per_second = 2;      // new TCP connections that make a few queries and close
  double rpc_abandon_fraction = 0.25;    // of them: send half a frame and vanish instead
  double subscribers_per_second = 0.5;   // SubscribeContacts connections that come and go
  double subscriber_lifetime_min_s = 5;  // how long a subscriber stays (the never-reading ones too)
  double subscriber_lifetime_max_s = 20;
  double subscriber_never_read_fraction = 0.5;  // never read a byte: the server must cut them off
  // Subscriptions a never-reading connection asks for (1..64, the server's default per-connection cap):
  // more fill its buffers sooner, so the server's cut comes within a short run too.
  int subscriber_never_read_subscriptions = 1;
};

// What make_churn_plan checks; an empty string when the settings make a plan.
std::string validate_churn_settings(const ChurnSettings& settings);

struct ChurnShape {
  int clients = 0;  // client slots in play at once, over every match
  int matches = 1;  // match slots
  double duration = 0;
  std::uint32_t seed = 1;
};

// Kinds sort in this order at equal times: a replacement match exists before the old one ends, and a
// slot's leave happens before anything joins.
enum class ChurnEventKind : std::uint8_t {
  kMatchCreate,
  kClientLeave,
  kMatchEnd,
  kClientJoin,
  kRpcVisit,
  kSubscriber,
};

struct ChurnEvent {
  double at = 0;  // seconds since the run started
  ChurnEventKind kind = ChurnEventKind::kClientJoin;
  int slot = 0;         // client slot (join, leave), match slot (create, end, subscriber), else 0
  int generation = 0;   // match: its slot's generation (0 first); client: its slot's session number
  bool quiet = false;   // leave: silent drop; rpc visit: half a frame; subscriber: never reads
  double lifetime = 0;  // subscriber: seconds it stays
};

struct ChurnPlan {
  std::vector<ChurnEvent> events;  // sorted by (at, kind, slot)
};

ChurnPlan make_churn_plan(const ChurnSettings& settings, const ChurnShape& shape);

}  // namespace shiftcast
