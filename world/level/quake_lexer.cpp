#include "world/level/quake_lexer_internal.hpp"

namespace shiftcast {

bool is_quake_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

}  // namespace shiftcast
