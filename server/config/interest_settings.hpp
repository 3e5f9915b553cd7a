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
};

}  // namespace shiftcast
