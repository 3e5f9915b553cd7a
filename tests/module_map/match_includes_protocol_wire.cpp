// Forbidden: world/match may use the protocol's plain types (PlayerInput) alone, not the wire.
#include "protocol/envelope.hpp"
