// The real `shiftcast-level simulate` end to end (the bot driver and the match setup it runs are tested
// in tests/world/match): figures in range and consistent with each other, closed-form tick counts and landing
// windows, determinism of the state hash, and the exit statuses.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/tool_process.hpp"
#include "world/tools/simulate_command.hpp"

namespace shiftcast {
namespace {

// ------------------------------------------------------------------------------------ the real binary

#ifdef SHIFTCAST_LEVEL_TOOL

const std::string kArena = std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map";

// The number after the keys, each searched after the previous one ({"tick_ms", "p50"} finds the p50
// inside tick_ms); nullopt when a key is missing or its value is not a number.
std::optional<double> json_number(const std::string& json, std::initializer_list<std::string_view> keys) {
  std::size_t at = 0;
  for (std::string_view key : keys) {
    std::string needle = "\"";
    needle += key;
    needle += "\":";
    at = json.find(needle, at);
    if (at == std::string::npos) return std::nullopt;
    at += key.size() + 3;
  }
  const char* start = json.c_str() + at;
  char* end = nullptr;
  const double v = std::strtod(start, &end);
  if (end == start) return std::nullopt;
  return v;
}

std::string hash_line(const std::string& out) {
  const std::size_t at = out.rfind("state hash 0x");  // the report's own line, after any printout
  return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

class SimulateCommandTest : public ToolProcessTest {
 protected:
  ToolRun run(const std::string& arguments) const {
    return ToolProcessTest::run(SHIFTCAST_LEVEL_TOOL, arguments);
  }
};

const std::string kSmallMatch = " --players 8 --projectiles 16 --props 8 --tick-rate 64 --seconds 5";

TEST_F(SimulateCommandTest, SmallMatchOnTheArenaReportsConsistentFigures) {
  const ToolRun r = run("simulate '" + kArena + "'" + kSmallMatch + " --seed 7 --json " + path("run.json"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  const std::string json = read_file(dir_ / "run.json");
  ASSERT_FALSE(json.empty());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "run.json.tmp"));

  EXPECT_EQ(json_number(json, {"invariant_violations"}), 0.0) << r.out;
  EXPECT_EQ(json_number(json, {"ticks"}), 5.0 * 64);
  EXPECT_EQ(json_number(json, {"players"}), 8.0);
  const std::optional<double> p50 = json_number(json, {"tick_ms", "p50"});
  const std::optional<double> p99 = json_number(json, {"tick_ms", "p99"});
  const std::optional<double> max = json_number(json, {"tick_ms", "max"});
  ASSERT_TRUE(p50 && p99 && max) << json;
  EXPECT_GT(*p50, 0);
  EXPECT_LE(*p50, *p99);
  EXPECT_LE(*p99, *max);
  EXPECT_GT(json_number(json, {"contacts_per_second"}).value_or(0), 0) << json;
  const double fired = json_number(json, {"projectiles_fired"}).value_or(0);
  EXPECT_GT(fired, 0);
  EXPECT_EQ(fired, json_number(json, {"projectiles_fired_by_bots"}).value_or(-1) +
                       json_number(json, {"projectile_top_ups"}).value_or(-1));
  EXPECT_GT(json_number(json, {"projectiles_fired_by_bots"}).value_or(0), 0) << "bots never fired";
  EXPECT_LE(json_number(json, {"projectile_hits"}).value_or(-1), fired + 16);

  // Blow's cascade: every stage tests what the previous one left undecided; the hard case decides all.
  double left = -1;
  for (const char* stage : {"spheres", "boxes", "plane", "hard"}) {
    const std::optional<double> tests = json_number(json, {"filters", stage, "tests"});
    const std::optional<double> definitive = json_number(json, {"filters", stage, "definitive"});
    ASSERT_TRUE(tests && definitive) << stage << "\n" << json;
    if (left >= 0) {
      EXPECT_EQ(*tests, left) << stage;
    }
    EXPECT_LE(*definitive, *tests) << stage;
    left = *tests - *definitive;
  }
  EXPECT_EQ(left, 0);
  EXPECT_EQ(json_number(json, {"filters", "spheres", "mean_us"}), std::nullopt)
      << "timed without --filter-timing";

  // The printed hash is the JSON's, and stdout carries the tables.
  const std::size_t at = json.find("\"state_hash\": \"0x");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(hash_line(r.out), "state hash " + json.substr(at + 15, 18));
  for (const char* line :
       {"tick ms ", "contacts ", "bounding spheres", "hard case", "invariant violations 0"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " missing:\n" << r.out;
  }
}

TEST_F(SimulateCommandTest, StateHashIsDeterministicPerSeed) {
  const ToolRun imported = run("import '" + kArena + "' -o " + path("arena.level"));
  ASSERT_EQ(imported.status, 0) << imported.err;
  const std::string level = path("arena.level");
  const ToolRun a = run("simulate " + level + kSmallMatch + " --seed 3");
  const ToolRun b = run("simulate " + level + kSmallMatch + " --seed 3");
  const ToolRun c = run("simulate " + level + kSmallMatch + " --seed 4");
  const ToolRun source = run("simulate '" + kArena + "'" + kSmallMatch + " --seed 3");
  for (const ToolRun* r : {&a, &b, &c, &source})
    ASSERT_EQ(r->status, 0) << r->err;
  ASSERT_NE(hash_line(a.out), "");
  EXPECT_EQ(hash_line(a.out), hash_line(b.out));
  EXPECT_NE(hash_line(a.out), hash_line(c.out));
  // The compiled file and the source it came from are the same level: the same match.
  EXPECT_EQ(hash_line(a.out), hash_line(source.out));
}

// --until stops at a tick and prints the state there; the oracle is a run whose --seconds ends at that
// very tick (the same seed is the same match, so its final state hash is the printout's).
TEST_F(SimulateCommandTest, UntilStopsAtTheTickAndPrintsItsState) {
  const std::string match = " --players 8 --projectiles 16 --props 8 --tick-rate 64 --seed 3";
  const ToolRun too_early = run("simulate '" + kArena + "'" + match + " --seconds 5 --until 1");
  EXPECT_EQ(too_early.status, kExitUsage);
  EXPECT_NE(too_early.err.find("is not after the first simulated tick"), std::string::npos) << too_early.err;
  const ToolRun no_until = run("simulate '" + kArena + "'" + match + " --seconds 5 --entity 1");
  EXPECT_EQ(no_until.status, kExitUsage);

  // 2 s of ticks after the settling: the first simulated tick is whatever --until 1 named.
  const std::string first = too_early.err.substr(too_early.err.rfind('(') + 1);
  const std::uint64_t start = std::stoull(first);
  const std::uint64_t until = start + 128;
  const ToolRun stopped = run("simulate '" + kArena + "'" + match + " --seconds 5 --until " +
                              std::to_string(until) + " --entity 1");
  const ToolRun ended = run("simulate '" + kArena + "'" + match + " --seconds 2");
  ASSERT_EQ(stopped.status, 0) << stopped.err;
  ASSERT_EQ(ended.status, 0) << ended.err;
  const std::string header = "entities at tick " + std::to_string(until) + " (state hash 0x";
  const std::size_t at = stopped.out.find(header);
  ASSERT_NE(at, std::string::npos) << stopped.out;
  const std::string printed = stopped.out.substr(at + header.size(), 16);
  EXPECT_EQ(hash_line(ended.out), "state hash 0x" + printed);
  EXPECT_EQ(hash_line(stopped.out), hash_line(ended.out));
  // --entity 1: entity 1 is printed.
  EXPECT_NE(stopped.out.find("\n  1 player"), std::string::npos) << stopped.out;
}

TEST_F(SimulateCommandTest, LandingSceneReportsItsWindow) {
  const ToolRun r =
      run("simulate '" + kArena +
          "' --scene landing --players 12 --props 20 --projectiles 8 --tick-rate 64 --seconds 1.5 "
          "--filter-timing --json " +
          path("landing.json"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  const std::string json = read_file(dir_ / "landing.json");
  EXPECT_EQ(json_number(json, {"invariant_violations"}), 0.0) << r.out;
  EXPECT_EQ(json_number(json, {"landing", "drops"}), 1.0);
  // One drop of 64–128 units at 800 u/s² lasts sqrt(2h/g): 25.6 to 36.2 ticks at 64 Hz, a tick either way.
  const double window = json_number(json, {"landing", "window_ticks"}).value_or(0);
  EXPECT_GE(window, 24);
  EXPECT_LE(window, 38);
  EXPECT_LE(json_number(json, {"landing", "tick_ms", "p99"}).value_or(1e9),
            json_number(json, {"tick_ms", "max"}).value_or(0));
  EXPECT_NE(json_number(json, {"filters", "hard", "mean_us"}), std::nullopt) << "--filter-timing not applied";
}

TEST_F(SimulateCommandTest, BadArgumentsExitTwoWithUsage) {
  const std::string level = "'" + kArena + "'";
  for (const std::string& args :
       {std::string("simulate"), "simulate " + level + " --players -1", "simulate " + level + " --players 8x",
        "simulate " + level + " --players 99999", "simulate " + level + " --tick-rate 10",
        "simulate " + level + " --tick-rate 129", "simulate " + level + " --seconds 0",
        "simulate " + level + " --seconds nan", "simulate " + level + " --seconds 0.001",
        "simulate " + level + " --scene brawl", "simulate " + level + " --seed -3",
        "simulate " + level + " --json", "simulate " + level + " --frobnicate",
        "simulate " + level + " " + level}) {
    const ToolRun r = run(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("usage: shiftcast-level simulate"), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
}

TEST_F(SimulateCommandTest, BadLevelsExitOne) {
  std::ofstream(dir_ / "garbage.level", std::ios::binary) << "not a level at all, just some bytes";
  std::ofstream(dir_ / "broken.map", std::ios::binary) << "{\n\"classname\" \"worldspawn\"\n{\n( 0 0 0 ) (";
  for (const char* file : {"missing.level", "missing.map", "garbage.level", "broken.map"}) {
    const std::string name = file;
    const ToolRun r = run("simulate " + path(name) + kSmallMatch);
    EXPECT_EQ(r.status, 1) << name << "\n" << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << name << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir_ / (name + ".json")));
  }
}

#endif  // SHIFTCAST_LEVEL_TOOL

}  // namespace
}  // namespace shiftcast
