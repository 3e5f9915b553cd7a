// The spectator pages (server/spectator/pages), compiled into the server by embed_pages.cmake: served as
// they are, self-contained (inline script and style, nothing fetched from elsewhere).
#pragma once

#include <string_view>

namespace shiftcast {

std::string_view dashboard_page();   // GET /
std::string_view match_view_page();  // GET /matches/{id}

}  // namespace shiftcast
