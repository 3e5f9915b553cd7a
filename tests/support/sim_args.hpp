// parse_sim_options over a list of arguments, as the tests write them (the program name is prepended).
//
//   SimOptions o = parse_sim_args({"--config", path, "--level", "arena"});   // throws SimUsageError
#pragma once

#include <string>
#include <vector>

#include "client-sim/sim_options.hpp"

namespace shiftcast {

inline SimOptions parse_sim_args(std::vector<std::string> args) {
  args.insert(args.begin(), "shiftcast-sim");
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  return parse_sim_options(static_cast<int>(args.size()), argv.data());
}

}  // namespace shiftcast
