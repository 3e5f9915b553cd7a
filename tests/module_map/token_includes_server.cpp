// Forbidden: tools/token (shiftcast-token) may use the protocol alone; a matchmaker links it without the
// server.
#include "server/server.hpp"
