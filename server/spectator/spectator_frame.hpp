// SpectatorFrame: what a live view is sent (docs/server.md, "Pictures": the binary frame and the JSON text
// messages), built once per match and update from the tick history and shared by every viewer.
//
//   std::string frame = encode_spectator_frame(*view, newest_tick, contacts, shots);   // binary message
//   std::string outlines = encode_outlines(props);                                    // text message
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "server/contact_feed.hpp"
#include "world/match/match_recording.hpp"
#include "world/match/tick_history.hpp"

namespace shiftcast {

inline constexpr std::uint8_t kSpectatorFrameKind = 1;
inline constexpr std::uint8_t kSpectatorFrameVersion = 1;
inline constexpr std::size_t kSpectatorHeaderBytes = 24;
inline constexpr std::size_t kSpectatorEntityBytes = 44;
inline constexpr std::size_t kSpectatorContactBytes = 36;
inline constexpr std::size_t kSpectatorShotBytes = 64;
// Per frame, at most: contacts beyond are left out (a pile-up of crates), the newest shots are kept.
inline constexpr std::size_t kSpectatorMaxContacts = 512;
inline constexpr std::size_t kSpectatorMaxShots = 64;

// A raycast with the pose it was judged against: the hit entity as the rewound history had it.
struct SpectatorShot {
  RecordedQuery query;
  bool posed = false;
  Pose pose;
  float radius = 0;
};

// The circle a player, projectile or sphere covers seen from above (0 for props: they have outlines).
float spectator_radius(const Entity& entity);

// One prop's outline seen from above, in its own frame: one convex polygon (x0, y0, x1, y1, ...) per box,
// hull or brush, counter-clockwise.
std::vector<std::vector<std::array<float, 2>>> prop_outline(const Entity& prop);

std::string encode_spectator_frame(const WorldView& view, std::uint64_t newest_tick,
                                   std::span<const ContactRecord> contacts,
                                   std::span<const SpectatorShot> shots);
// Rewrites a frame's "newest tick" field (the spectator delay's frames leave later than they were built).
void stamp_newest_tick(std::string& frame, std::uint64_t newest_tick);
// {"type":"outlines","outlines":{"<id>":[[x0,y0,...],...],...}} for these props.
std::string encode_outlines(std::span<const Entity* const> props);

}  // namespace shiftcast
