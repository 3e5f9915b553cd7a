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
};

}  // namespace shiftcast
