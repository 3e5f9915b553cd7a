// SimOptions: a server config, a profile and flags written to a temporary directory reach their fields
// (the oracle is the values written); flags override the config and the profile wherever they stand; the
// shipped profiles load against the shipped server config, and default.toml states the code's defaults;
// every validation error is reported with its reason, several at once.
#include "client-sim/sim_options.hpp"
#include "tests/support/sim_args.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace shiftcast {
namespace {

namespace fs = std::filesystem;

const std::string kSourceDir = SHIFTCAST_SOURCE_DIR;

SimOptions parse(std::vector<std::string> args) {
  return parse_sim_args(std::move(args));
}

// The SimUsageError message parsing `args` throws; "" when they parse.
std::string error_of(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const SimUsageError& e) {
    return e.what();
  }
  return "";
}

class SimOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(SHIFTCAST_BINARY_DIR) / "test-tmp" /
           (std::string("sim_options_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "keys");
    fs::create_directories(dir_ / "levels");
    write("keys/admin.key", "  the-admin-key \r\nsecond line ignored\n");
    write("keys/empty.key", "   \nkey on the second line\n");
    write("levels/arena.map", "// not parsed by the options\n");
    write("levels/other.map", "// not parsed by the options\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return path(name);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A server config in configs/server.toml's shape, with keys the sim must ignore (it reads the file with
  // the server's own reader, so a section the server does not know is refused here too).
  std::string server_config(const std::string& network_extra = "",
                            const std::string& key_file = "keys/admin.key") {
    return write("server.toml",
                 "[network]\nbind_address = \"0.0.0.0\"\nudp_port = 41000\nrpc_port = 41001\n"
                 "http_port = 41002\nthreads = 3\n" +
                     network_extra +
                     "\n[match]\ntick_rate = 100\n[security]\ntoken_key_file = \"nope.key\"\n"
                     "admin_key_file = \"" +
                     key_file +
                     "\"\n"
                     "[[level]]\nname = \"arena\"\npath = \"levels/arena.map\"\n"
                     "[[level]]\nname = \"fallen\"\npath = \"levels/missing.bsp\"\n"
                     "fallback = \"levels/other.map\"\n"
                     "[[level]]\nname = \"gone\"\npath = \"levels/missing.bsp\"\n"
                     "fallback = \"levels/missing.map\"\n"
                     "[[initial_match]]\nlevel = \"arena\"\n");
  }

  // Every key of every profile table, each with a value unlike its default.
  std::string full_profile() {
    return write("profile.toml",
                 "[run]\nmatches = 3\nclients = 7\nduration = 12.5\nconnect_timeout = 4\ntick_rate = 60\n"
                 "snapshot_rate = 20\nlevel = \"arena\"\nseed = 99\nthreads = 2\npredict_fraction = 0.5\n"
                 "[budgets]\ninput_ack_p99_ticks = 4.5\nevents_lost = 1\nclients_failed = 2\n"
                 "invariant_violations = 3\nrpc_p99_ms = 40\nmovement_error_p99 = 16.25\n"
                 "snapshot_rate_min_fraction = 0.75\nserver_tick_p99_ms = 8\nevent_order_violations = 5\n"
                 "[behaviour]\njump_per_second = 0.25\nstrafe_per_second = 1.5\nfire_per_second = 3\n"
                 "rewound_fraction = 0.125\n");
  }

  fs::path dir_;
};

TEST_F(SimOptionsTest, ServerConfigProfileAndFlagsReachTheirFields) {
  const std::string config = server_config();
  const std::string profile = full_profile();
  SimOptions o = parse({"--profile", profile, "--clients", "9", "--config", config, "--json", "out.json"});
  EXPECT_EQ(o.server_config, config);
  EXPECT_EQ(o.host, "127.0.0.1");  // 0.0.0.0 in the server's file
  EXPECT_EQ(o.rpc_port, 41001);
  EXPECT_EQ(o.http_port, 41002);
  EXPECT_EQ(o.admin_key, "the-admin-key");  // first line, trimmed, relative to the config's directory
  EXPECT_EQ(o.matches, 3);
  EXPECT_EQ(o.clients, 9);  // the flag over the profile
  EXPECT_DOUBLE_EQ(o.duration, 12.5);
  EXPECT_DOUBLE_EQ(o.connect_timeout, 4);
  EXPECT_EQ(o.tick_rate, 60);  // the profile's, not the server's [match] tick_rate
  EXPECT_EQ(o.snapshot_rate, 20);
  EXPECT_EQ(o.level, "arena");
  EXPECT_EQ(fs::path(o.level_file), fs::path(path("levels/arena.map")));
  EXPECT_EQ(o.seed, 99u);
  EXPECT_EQ(o.threads, 2);
  EXPECT_DOUBLE_EQ(o.predict_fraction, 0.5);
  EXPECT_EQ(o.json_path, "out.json");
  EXPECT_TRUE(o.progress);
  EXPECT_FALSE(o.help);
  EXPECT_DOUBLE_EQ(o.budgets.input_ack_p99_ticks, 4.5);
  EXPECT_EQ(o.budgets.events_lost, 1u);
  EXPECT_EQ(o.budgets.clients_failed, 2u);
  EXPECT_EQ(o.budgets.invariant_violations, 3u);
  EXPECT_DOUBLE_EQ(o.budgets.rpc_p99_ms, 40);
  EXPECT_DOUBLE_EQ(o.budgets.movement_error_p99, 16.25);
  EXPECT_DOUBLE_EQ(o.budgets.snapshot_rate_min_fraction, 0.75);
  EXPECT_DOUBLE_EQ(o.budgets.server_tick_p99_ms, 8);
  EXPECT_EQ(o.budgets.event_order_violations, 5u);
  EXPECT_FLOAT_EQ(o.behaviour.jump_per_second, 0.25f);
  EXPECT_FLOAT_EQ(o.behaviour.strafe_per_second, 1.5f);
  EXPECT_FLOAT_EQ(o.behaviour.fire_per_second, 3);
  EXPECT_FLOAT_EQ(o.behaviour.rewound_fraction, 0.125f);
}

TEST_F(SimOptionsTest, FlagsOverrideTheConfigWhereverTheyStand) {
  const std::string config = server_config();
  // Flags before --config, in both spellings, and --admin-key over the key file.
  SimOptions o = parse({"--host", "10.1.2.3", "--rpc-port=5000", "--http-port", "6000", "--admin-key",
                        "flag-key", "--level", "arena", "--config", config});
  EXPECT_EQ(o.host, "10.1.2.3");
  EXPECT_EQ(o.rpc_port, 5000);
  EXPECT_EQ(o.http_port, 6000);
  EXPECT_EQ(o.admin_key, "flag-key");

  // A level whose path is missing uses its fallback; --level-file wins over both.
  EXPECT_EQ(fs::path(parse({"--config", config, "--level", "fallen"}).level_file),
            fs::path(path("levels/other.map")));
  const std::string own = path("levels/other.map");
  EXPECT_EQ(parse({"--level-file", own, "--config", config, "--level", "gone"}).level_file, own);

  // With --admin-key, an unreadable key file in the config does not matter.
  const std::string broken = server_config("", "keys/missing.key");
  EXPECT_EQ(parse({"--config", broken, "--admin-key", "k", "--level", "arena"}).admin_key, "k");
}

TEST_F(SimOptionsTest, EveryFlagSetsItsField) {
  const std::string level = path("levels/arena.map");
  const std::string profile = full_profile();
  SimOptions o = parse({"--host",       "::1", "--rpc-port",         "1",     "--http-port",  "65535",
                        "--admin-key",  "a b", "--matches",          "4",     "--clients",    "1024",
                        "--duration",   "0.5", "--connect-timeout",  "2.5",   "--json",       "r.json",
                        "--tick-rate",  "128", "--snapshot-rate",    "128",   "--level",      "x",
                        "--level-file", level, "--profile",          profile, "--seed",       "4294967295",
                        "--threads",    "8",   "--predict-fraction", "0.125", "--no-progress"});
  EXPECT_EQ(o.host, "::1");
  EXPECT_EQ(o.rpc_port, 1);
  EXPECT_EQ(o.http_port, 65535);
  EXPECT_EQ(o.admin_key, "a b");
  EXPECT_EQ(o.matches, 4);
  EXPECT_EQ(o.clients, 1024);
  EXPECT_DOUBLE_EQ(o.duration, 0.5);
  EXPECT_DOUBLE_EQ(o.connect_timeout, 2.5);
  EXPECT_EQ(o.json_path, "r.json");
  EXPECT_EQ(o.tick_rate, 128);
  EXPECT_EQ(o.snapshot_rate, 128);
  EXPECT_EQ(o.level, "x");
  EXPECT_EQ(o.level_file, level);
  EXPECT_EQ(o.profile_path, profile);
  EXPECT_EQ(o.seed, 4294967295u);
  EXPECT_EQ(o.threads, 8);
  EXPECT_DOUBLE_EQ(o.predict_fraction, 0.125);
  EXPECT_FALSE(o.progress);
  EXPECT_TRUE(parse({"--matches", "0", "--help"}).help);  // --help needs nothing else to be valid
}

// configs/load/default.toml documents the defaults: loading it must change nothing but the paths.
TEST_F(SimOptionsTest, ShippedProfilesLoadAgainstTheShippedServerConfig) {
  const std::string config = kSourceDir + "/configs/server.toml";
  std::ifstream key_file(kSourceDir + "/configs/keys/dev-admin.key");
  std::string key;
  std::getline(key_file, key);
  ASSERT_FALSE(key.empty());
  SimOptions defaults;
  SimOptions o = parse({"--config", config, "--profile", kSourceDir + "/configs/load/default.toml"});
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.rpc_port, 40001);
  EXPECT_EQ(o.http_port, 40002);
  EXPECT_EQ(o.admin_key, key.substr(0, key.find_last_not_of(" \t\r") + 1));
  const bool have_openarena = fs::is_regular_file(kSourceDir + "/data/openarena/maps/oa_dm1.bsp");
  EXPECT_EQ(fs::path(o.level_file).filename(), have_openarena ? "oa_dm1.bsp" : "arena.map");
  EXPECT_EQ(o.matches, defaults.matches);
  EXPECT_EQ(o.clients, defaults.clients);
  EXPECT_EQ(o.duration, defaults.duration);
  EXPECT_EQ(o.connect_timeout, defaults.connect_timeout);
  EXPECT_EQ(o.tick_rate, defaults.tick_rate);
  EXPECT_EQ(o.snapshot_rate, defaults.snapshot_rate);
  EXPECT_EQ(o.level, defaults.level);
  EXPECT_EQ(o.seed, defaults.seed);
  EXPECT_EQ(o.threads, defaults.threads);
  EXPECT_EQ(o.budgets.input_ack_p99_ticks, defaults.budgets.input_ack_p99_ticks);
  EXPECT_EQ(o.budgets.events_lost, defaults.budgets.events_lost);
  EXPECT_EQ(o.budgets.clients_failed, defaults.budgets.clients_failed);
  EXPECT_EQ(o.budgets.invariant_violations, defaults.budgets.invariant_violations);
  EXPECT_EQ(o.budgets.rpc_p99_ms, defaults.budgets.rpc_p99_ms);
  EXPECT_EQ(o.budgets.movement_error_p99, defaults.budgets.movement_error_p99);
  EXPECT_EQ(o.budgets.snapshot_rate_min_fraction, defaults.budgets.snapshot_rate_min_fraction);
  EXPECT_EQ(o.budgets.server_tick_p99_ms, defaults.budgets.server_tick_p99_ms);
  EXPECT_EQ(o.budgets.event_order_violations, defaults.budgets.event_order_violations);
  // The one exception: issue 15's bandwidth limits are the default profile's, not the code's (0, none),
  // so profiles that do not name them (smoke, soak) are not judged on bandwidth.
  EXPECT_EQ(o.budgets.down_kbit_per_client, 45);
  EXPECT_EQ(o.budgets.up_kbit_per_client, 40);
  EXPECT_EQ(defaults.budgets.down_kbit_per_client, 0);
  EXPECT_EQ(o.behaviour.jump_per_second, defaults.behaviour.jump_per_second);
  EXPECT_EQ(o.behaviour.strafe_per_second, defaults.behaviour.strafe_per_second);
  EXPECT_EQ(o.behaviour.fire_per_second, defaults.behaviour.fire_per_second);
  EXPECT_EQ(o.behaviour.rewound_fraction, defaults.behaviour.rewound_fraction);

  SimOptions smoke = parse({"--config", config, "--profile", kSourceDir + "/configs/load/smoke.toml"});
  EXPECT_GE(smoke.matches, 1);
  EXPECT_LE(smoke.matches * smoke.clients, o.matches * o.clients);  // smaller than the default run
  EXPECT_LT(smoke.duration, o.duration);
  EXPECT_EQ(smoke.budgets.input_ack_p99_ticks, o.budgets.input_ack_p99_ticks);  // the same budgets
  EXPECT_EQ(smoke.budgets.rpc_p99_ms, o.budgets.rpc_p99_ms);
  EXPECT_EQ(smoke.budgets.snapshot_rate_min_fraction, o.budgets.snapshot_rate_min_fraction);
}

struct ErrorCase {
  std::vector<std::string> args;  // appended to a valid command line
  std::string message;            // a part of the error
};

TEST_F(SimOptionsTest, EveryInvalidValueIsRefusedWithItsReason) {
  const std::vector<std::string> valid{"--admin-key", "k", "--level-file", path("levels/arena.map")};
  ASSERT_EQ(error_of(valid), "");
  const std::vector<ErrorCase> cases{
      {{"--matches", "0"}, "matches = 0: must be at least 1"},
      {{"--clients", "0"}, "clients = 0: must be 1..1024 per match"},
      {{"--clients", "1025"}, "clients = 1025: must be 1..1024 per match"},
      {{"--duration", "0"}, "duration = 0: must be above 0 s"},
      {{"--duration", "-2"}, "duration = -2: must be above 0 s"},
      {{"--duration", "nan"}, "--duration 'nan': not a number"},
      {{"--duration", "3s"}, "--duration '3s': not a number"},
      {{"--connect-timeout", "0"}, "connect timeout = 0: must be above 0 s"},
      {{"--tick-rate", "19"}, "tick rate = 19: must be 20..128"},
      {{"--tick-rate", "129"}, "tick rate = 129: must be 20..128"},
      {{"--snapshot-rate", "0"}, "snapshot rate = 0: must be 1..tick rate (64)"},
      {{"--snapshot-rate", "65"}, "snapshot rate = 65: must be 1..tick rate (64)"},
      {{"--tick-rate", "30", "--snapshot-rate", "31"}, "snapshot rate = 31: must be 1..tick rate (30)"},
      {{"--rpc-port", "0"}, "--rpc-port 0: must be 1..65535"},
      {{"--rpc-port", "65536"}, "--rpc-port 65536: must be 1..65535"},
      {{"--http-port", "port"}, "--http-port 'port': not an integer"},
      {{"--http-port", "-1"}, "--http-port -1: must be 1..65535"},
      {{"--seed", "4294967296"}, "--seed 4294967296: must be 0..4294967295"},
      {{"--threads", "-1"}, "threads = -1: must be 0 (one per core)..1024"},
      {{"--predict-fraction", "1.5"}, "predict fraction = 1.5: must be 0..1"},
      {{"--predict-fraction", "-0.25"}, "predict fraction = -0.25: must be 0..1"},
      {{"--matches", "1.5"}, "--matches '1.5': not an integer"},
      {{"--level-file", path("levels/none.map")}, "level file " + path("levels/none.map") + ": no such file"},
      {{"--host", ""}, "--host: needs a non-empty value"},
      {{"--bogus"}, "unknown option --bogus"},
      {{"stray"}, "unexpected argument 'stray'"},
      {{"--no-progress=yes"}, "--no-progress takes no value"},
      {{"--matches"}, "--matches needs a value (N)"},
      {{"--config", path("none.toml")}, "server config " + path("none.toml") + ": no such file"},
      {{"--profile", path("none.toml")}, "profile " + path("none.toml") + ": no such file"},
  };
  for (const ErrorCase& c : cases) {
    std::vector<std::string> args = valid;
    args.insert(args.end(), c.args.begin(), c.args.end());
    EXPECT_NE(error_of(args).find(c.message), std::string::npos)
        << "args ending " << c.args.front() << ": got '" << error_of(args) << "', want '" << c.message << "'";
  }
  EXPECT_NE(error_of({"--level-file", path("levels/arena.map")}).find("no admin key"), std::string::npos);
  EXPECT_NE(error_of({"--admin-key", "k"}).find("no file for level 'oa_dm1'"), std::string::npos);
  // Every problem at once, one per line.
  EXPECT_EQ(error_of({"--admin-key", "k", "--level-file", path("levels/arena.map"), "--matches", "0",
                      "--clients", "0"}),
            "matches = 0: must be at least 1\nclients = 0: must be 1..1024 per match");
}

TEST_F(SimOptionsTest, ServerConfigProblemsAreRefusedWithTheirReason) {
  auto error_with = [&](const std::string& config, std::vector<std::string> more = {}) {
    std::vector<std::string> args{"--config", config, "--level", "arena"};
    args.insert(args.end(), more.begin(), more.end());
    return error_of(args);
  };
  ASSERT_EQ(error_with(server_config()), "");
  std::string syntax = write("syntax.toml", "[network]\nrpc_port = = 3\n");
  EXPECT_NE(error_with(syntax).find(syntax + ":2:"), std::string::npos) << error_with(syntax);
  std::string typed = write("typed.toml", "[network]\nrpc_port = \"x\"\n[security]\nadmin_key_file = 3\n");
  EXPECT_NE(error_with(typed).find("[network] rpc_port: expected an integer"), std::string::npos);
  EXPECT_NE(error_with(typed).find("[security] admin_key_file: expected a string"), std::string::npos);
  std::string any_port = write("any.toml",
                               "[network]\nrpc_port = 0\n[security]\nadmin_key_file = \"keys/admin.key\"\n"
                               "[[level]]\nname = \"arena\"\npath = \"levels/arena.map\"\n");
  EXPECT_NE(error_with(any_port).find("rpc port 0: must be 1..65535"), std::string::npos);
  EXPECT_EQ(error_with(any_port, {"--rpc-port", "7"}), "");
  std::string big_port = write("big.toml", "[network]\nhttp_port = 70000\n");
  EXPECT_NE(error_with(big_port).find("[network] http_port = 70000: must be 0..65535"), std::string::npos);
  EXPECT_NE(error_with(server_config("", "keys/missing.key"))
                .find("admin key file: cannot read " + path("keys/missing.key")),
            std::string::npos);
  EXPECT_NE(error_with(server_config("", "keys/empty.key")).find("the first line is empty"),
            std::string::npos);
  const std::string config = server_config();
  EXPECT_NE(
      error_of({"--config", config, "--level", "nowhere"})
          .find("level 'nowhere' is not among the [[level]] entries of " + config + " (arena, fallen, gone)"),
      std::string::npos);
  EXPECT_NE(error_of({"--config", config, "--level", "gone"}).find("[[level]] gone: neither path"),
            std::string::npos);
}

TEST_F(SimOptionsTest, ProfileProblemsAreRefusedWithTheirReason) {
  const std::vector<std::string> valid{"--admin-key", "k", "--level-file", path("levels/arena.map")};
  auto error_with = [&](const std::string& text) {
    std::vector<std::string> args = valid;
    args.push_back("--profile");
    args.push_back(write("p.toml", text));
    return error_of(args);
  };
  ASSERT_EQ(error_with("[budgets]\nrpc_p99_ms = 10\n"), "");
  EXPECT_NE(error_with("[budgets]\nrpc_p99 = 10\n").find("unknown key [budgets] rpc_p99"), std::string::npos);
  EXPECT_NE(error_with("[runs]\nmatches = 1\n").find("unknown table runs"), std::string::npos);
  EXPECT_NE(error_with("matches = 1\n").find("unknown key matches"), std::string::npos);
  EXPECT_NE(error_with("[budgets]\nevents_lost = 0.5\n").find("[budgets] events_lost: must be an integer"),
            std::string::npos);
  EXPECT_NE(error_with("[budgets]\nevents_lost = -1\n").find("[budgets] events_lost: -1 is out of range"),
            std::string::npos);
  EXPECT_NE(error_with("[run]\nlevel = 3\n").find("[run] level: must be a string"), std::string::npos);
  EXPECT_NE(error_with("[behaviour]\nfire_per_second = \"x\"\n").find("must be a finite number"),
            std::string::npos);
  EXPECT_NE(error_with("[budgets]\nrpc_p99_ms = -1\n").find("[budgets] rpc_p99_ms = -1: must be 0 or more"),
            std::string::npos);
  EXPECT_NE(error_with("[budgets]\nsnapshot_rate_min_fraction = 1.5\n").find("must be 0..1"),
            std::string::npos);
  EXPECT_NE(
      error_with("[behaviour]\nrewound_fraction = -0.5\n").find("rewound_fraction = -0.5: must be 0..1"),
      std::string::npos);
  EXPECT_NE(error_with("[behaviour]\njump_per_second = -1\n").find("jump_per_second = -1: must be 0 or more"),
            std::string::npos);
  EXPECT_NE(error_with("[run]\nclients = 2000\n").find("clients = 2000: must be 1..1024"), std::string::npos);
  // The file and line of a key that is wrong.
  EXPECT_NE(error_with("[budgets]\n\nrpc_p99 = 10\n").find("p.toml:3:"), std::string::npos);
}

// Network conditions: --net and the profile's [network] table ([network.up] / [network.down] for one
// direction) reach SimOptions::network as the parser reads the same text; --net replaces the table; a bad
// item or a value that is not a string is refused with the item named.
TEST_F(SimOptionsTest, NetworkConditionsFromTheFlagAndTheProfile) {
  const std::vector<std::string> valid{"--admin-key", "k", "--level-file", path("levels/arena.map")};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = valid;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  EXPECT_FALSE(parse(valid).network.active());  // the default: a clean network, today's path

  const std::string goal = "loss=5%,latency=50ms,jitter=10ms,dup=1%,reorder=2%";
  const SimOptions flag = parse(with({"--net", goal}));
  EXPECT_TRUE(flag.network.up == parse_network_conditions(goal).conditions.up);
  EXPECT_TRUE(flag.network.down == parse_network_conditions(goal).conditions.down);

  const std::string profile = write("net.toml",
                                    "[network]\nloss = \"5%\"\nlatency = \"50ms\"\n"
                                    "[network.up]\nrate = \"512kbit\"\n[network.down]\nlatency = \"80ms\"\n");
  const SimOptions table = parse(with({"--profile", profile}));
  const NetworkConditions expected =
      parse_network_conditions("loss=5%,latency=50ms,up.rate=512kbit,down.latency=80ms").conditions;
  EXPECT_TRUE(table.network.up == expected.up);
  EXPECT_TRUE(table.network.down == expected.down);
  EXPECT_DOUBLE_EQ(table.network.down.latency, 0.08);
  // The flag replaces the table whole (and "none" is a clean network).
  EXPECT_FALSE(parse(with({"--profile", profile, "--net", "none"})).network.active());
  EXPECT_DOUBLE_EQ(parse(with({"--net=jitter=5ms", "--profile", profile})).network.up.latency, 0);

  EXPECT_NE(error_of(with({"--net", "loss=100%"})).find("--net item 'loss=100%': loss must be"),
            std::string::npos);
  EXPECT_NE(error_of(with({"--net", "latency=5ms,lost=1%"})).find("'lost=1%': unknown key"),
            std::string::npos);
  auto table_error = [&](const std::string& text) {
    return error_of(with({"--profile", write("bad.toml", text)}));
  };
  EXPECT_NE(table_error("[network]\nloss = 5\n").find("[network] loss: must be a string"), std::string::npos);
  EXPECT_NE(table_error("[network]\nloss = \"5\"\n").find("[network] item 'loss=5': loss needs a percentage"),
            std::string::npos);
  EXPECT_NE(table_error("[network.sideways]\nloss = \"5%\"\n").find("[network] sideways: must be a string"),
            std::string::npos);
  EXPECT_NE(sim_usage().find("--net ITEMS"), std::string::npos);
}

TEST(EffectiveSnapshotRate, IsTheTickRateOverTheServersRoundedInterval) {
  EXPECT_DOUBLE_EQ(effective_snapshot_rate(64, 32), 32);  // every 2 ticks
  EXPECT_DOUBLE_EQ(effective_snapshot_rate(64, 40), 32);  // 1.6 rounds to 2
  EXPECT_DOUBLE_EQ(effective_snapshot_rate(64, 48), 64);  // 1.33 rounds to 1
  EXPECT_DOUBLE_EQ(effective_snapshot_rate(60, 25), 30);  // 2.4 rounds to 2
  EXPECT_DOUBLE_EQ(effective_snapshot_rate(20, 1), 1);
  EXPECT_DOUBLE_EQ(effective_snapshot_rate(128, 128), 128);
}

}  // namespace
}  // namespace shiftcast
