// InterestSettings: how the server decides which entities and contact events each player is sent
// (interest management, server/interest_filter.hpp, docs/server.md "Interest"). ServerConfig embeds it
// as its [interest] section; every match of the server uses it.
#pragma once

namespace shiftcast {

struct InterestSettings {
  // 0: every client is sent the whole world and the contacts of its own entity only (the behaviour
  // before issue 15), for comparison runs.
  int enabled = 1;
  // Entities this close to a player's eye (units, to the nearest point of their bounds) are always sent,
  // seen or not. A hidden player closing in is then already in the client's world when it rounds the
  // corner: two players running at each other (2 x 320 u/s) cover 512 units in 0.8 s, more than a round
  // trip, the interpolation delay and a few lost snapshots together; it is also about where Quake III's
  // sounds (footsteps, shots) fade out, so what a player could hear is sent too.
  double radius = 512;
  // On a level without a potentially visible set: entities beyond this distance are culled. 0 sends
  // everything: without a set nothing says what is hidden, and an arena's long sight lines (across an
  // open room, 3,000 units and more) are exactly where a player must see an opponent.
  double no_set_radius = 0;
  // 1: a client is also streamed the persist record of every touch of its own entity, one per tick while
  // the touch lasts. 0 (the default): only its begin and end; the client knows the touch lasts between
  // them, and the RPC contact feed carries every tick's record for services that want them. Persist
  // records of a client's own player sliding along walls and leaning on others were 60% of all events.
  // With `enabled` = 0 they are always sent (the behaviour before issue 15, for comparison runs).
  int persist_events = 0;
  // 1: beyond `radius`, a player the set admits is sent only while a straight line from the eye reaches
  // its box grown by `sight_margin` (server/line_of_sight.hpp), or did within `sight_hold_s`. The set is
  // per cluster and an arena's clusters see most of each other: on oa_dm1 it keeps 73% of the other
  // players, a clear line reaches 20%. It is also what keeps a wallhack from showing players behind
  // walls. 0: the set alone decides (the behaviour before this setting).
  int line_of_sight = 1;
  // Units the target's box is grown by before the test, so a player about to come into view is sent
  // before it does: 32 units is 0.1 s of running (320 u/s), the snapshot period, a few ticks of
  // interpolation and some of a round trip.
  double sight_margin = 32;
  // Seconds a player stays sent after its last clear line, so one at the edge of view is not removed and
  // re-added (at a whole entity's cost) every few snapshots.
  double sight_hold_s = 0.25;
};

}  // namespace shiftcast
