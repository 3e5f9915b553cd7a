// ServerConfig: the shipped configs/server.toml loads and validates; every setting reaches its field from
// TOML and from its flag; every kind of bad value is refused with a message naming the key, the value and
// the rule (one table of cases); unknown keys and sections are errors with a suggestion; overrides; key
// files; log level names.
#include "server/config/server_config.hpp"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "protocol/crypto.hpp"
#include "server/client_connection.hpp"
#include "server/logging.hpp"

namespace shiftcast {
namespace {

namespace fs = std::filesystem;

const std::string kSourceDir = SHIFTCAST_SOURCE_DIR;
const std::string kArenaMap = kSourceDir + "/configs/levels/arena.map";
constexpr char kTokenHex[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

// A directory with key files and a level for configs that must pass validation, removed afterwards.
class ConfigDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(SHIFTCAST_BINARY_DIR) / "test-tmp" /
           (std::string("server_config_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write("token.key", std::string(kTokenHex) + "\n");
    write("admin.key", "  admin-secret-long-enough \r\nignored second line\n");
    write("bad-token.key", "not hex at all\n");
    write("short-token.key", std::string(kTokenHex).substr(1) + "\n");
    write("empty.key", "\n");
    write("note.txt", "not a level\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }

  // Valid on its own; cases append sections it does not define.
  std::string base() const {
    return "[security]\ntoken_key_file = \"token.key\"\nadmin_key_file = \"admin.key\"\n"
           "[[level]]\nname = \"arena\"\npath = \"" +
           kArenaMap + "\"\n";
  }

  ServerConfig parse(const std::string& text) const {
    return parse_server_config(text, dir_.string(), "test.toml");
  }

  // The message of the ConfigError that parsing or validating `text` throws; "" if it passes.
  std::string error_of(const std::string& text) const {
    try {
      validate(parse(text));
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(ConfigDir, ShippedConfigLoadsAndValidates) {
  const std::string path = kSourceDir + "/configs/server.toml";
  ServerConfig c = load_server_config(path);
  EXPECT_NO_THROW(validate(c));
  EXPECT_EQ(c.config_dir, kSourceDir + "/configs");
  EXPECT_EQ(c.config_file, path);
  EXPECT_EQ(c.bind_address, "127.0.0.1");
  EXPECT_EQ(c.udp_port, 40000);
  EXPECT_EQ(c.rpc.port, 40001);
  EXPECT_EQ(c.http_port, 40002);
  EXPECT_EQ(c.tick_rate, 64);
  EXPECT_EQ(c.snapshot_rate, 32);
  ASSERT_FALSE(c.levels.empty());
  EXPECT_EQ(c.levels[0].name, "oa_dm1");
  EXPECT_EQ(c.levels[0].path, "../data/openarena/maps/oa_dm1.bsp");
  EXPECT_TRUE(fs::is_regular_file(resolve_path(c, c.levels[0].fallback)));
  for (const LevelConfig& level : c.levels) {
    EXPECT_TRUE(fs::is_regular_file(resolve_path(c, level.path)) ||
                fs::is_regular_file(resolve_path(c, level.fallback)))
        << level.name;
  }
  ASSERT_EQ(c.matches.size(), 1u);
  EXPECT_EQ(c.matches[0].level, "oa_dm1");
  // The development keys resolve against configs/ and have the right form.
  EXPECT_EQ(resolve_path(c, c.token_key_file), kSourceDir + "/configs/keys/dev-token.key");
  std::string token_hex = read_key_file_line(c, c.token_key_file);
  EXPECT_EQ(token_hex.size(), 64u);
  EXPECT_TRUE(key_from_hex(token_hex).has_value());
  EXPECT_FALSE(read_key_file_line(c, c.admin_key_file).empty());
}

TEST_F(ConfigDir, EverySettingReachesItsField) {
  ServerConfig c = parse(base() + R"(
[network]
bind_address = "0.0.0.0"
public_address = "203.0.113.7:50000"
udp_port = 1
rpc_port = 2
http_port = 3
threads = 4
rpc_threads = 5
[match]
tick_rate = 100
snapshot_rate = 25
max_matches = 7
max_players = 12
connection_timeout_s = 9
keepalive_interval_s = 0.5
max_pending_events = 99
[rpc]
max_connections = 11
max_connections_per_address = 5
max_frame_bytes = 65536
max_batch = 13
rate = 2.5e4
burst = 300
subscriber_max_pending_bytes = 4096
[log]
level = "debug"
[shutdown]
flush_s = 0.5
[[level]]
name = "room"
path = "missing.bsp"
fallback = ")" + kSourceDir +
                         R"(/configs/levels/valve220_room.map"
[[initial_match]]
level = "room"
count = 2
max_players = 10
props = 3
seed = 4000000000
)");
  EXPECT_NO_THROW(validate(c));
  EXPECT_EQ(c.bind_address, "0.0.0.0");
  EXPECT_EQ(c.public_address, "203.0.113.7:50000");
  EXPECT_EQ(c.udp_port, 1);
  EXPECT_EQ(c.rpc.port, 2);
  EXPECT_EQ(c.http_port, 3);
  EXPECT_EQ(c.threads, 4);
  EXPECT_EQ(c.rpc_threads, 5);
  EXPECT_EQ(c.tick_rate, 100);
  EXPECT_EQ(c.snapshot_rate, 25);
  EXPECT_EQ(c.max_matches, 7);
  EXPECT_EQ(c.max_players, 12);
  EXPECT_EQ(c.connection_timeout_s, 9.0);  // an integer is a number too
  EXPECT_EQ(c.keepalive_interval_s, 0.5);
  EXPECT_EQ(c.max_pending_events, 99);
  EXPECT_EQ(c.rpc.max_connections, 11);
  EXPECT_EQ(c.rpc.max_frame_bytes, 65536u);
  EXPECT_EQ(c.rpc.max_batch, 13);
  EXPECT_EQ(c.rpc.rate, 25000.0);
  EXPECT_EQ(c.rpc.burst, 300.0);
  EXPECT_EQ(c.rpc.subscriber_max_pending_bytes, 4096u);
  EXPECT_EQ(c.token_key_file, "token.key");
  EXPECT_EQ(c.admin_key_file, "admin.key");
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.shutdown_flush_s, 0.5);
  ASSERT_EQ(c.levels.size(), 2u);
  EXPECT_EQ(c.levels[1].name, "room");
  EXPECT_EQ(c.levels[1].path, "missing.bsp");  // missing, but the fallback exists
  ASSERT_EQ(c.matches.size(), 1u);
  EXPECT_EQ(c.matches[0].level, "room");
  EXPECT_EQ(c.matches[0].count, 2);
  EXPECT_EQ(c.matches[0].max_players, 10);
  EXPECT_EQ(c.matches[0].props, 3);
  EXPECT_EQ(c.matches[0].seed, 4000000000u);
}

TEST_F(ConfigDir, DefaultsNeedOnlyKeysAndALevel) {
  ServerConfig c = parse(base());
  EXPECT_NO_THROW(validate(c));
  ServerConfig defaults;
  EXPECT_EQ(c.udp_port, defaults.udp_port);
  EXPECT_EQ(c.tick_rate, defaults.tick_rate);
  EXPECT_EQ(c.rpc.rate, defaults.rpc.rate);
  EXPECT_EQ(c.log_level, defaults.log_level);
  EXPECT_TRUE(c.matches.empty());
}

struct BadCase {
  std::string toml;      // appended to base() unless `whole`
  std::string expected;  // a substring of the error
  bool whole = false;    // the whole file (for [security] and [[level]] cases)
};

TEST_F(ConfigDir, EveryKindOfBadValueIsRefusedWithItsReason) {
  const std::string level = "[[level]]\nname = \"arena\"\npath = \"" + kArenaMap + "\"\n";
  const std::string keys = "[security]\ntoken_key_file = \"token.key\"\nadmin_key_file = \"admin.key\"\n";
  const std::vector<BadCase> cases = {
      // Ranges, with file:line:col and the rule.
      {"[match]\ntick_rate = 500\n", "test.toml:8:13: [match] tick_rate = 500: must be 20..128"},
      {"[match]\ntick_rate = 19\n", "[match] tick_rate = 19: must be 20..128"},
      {"[match]\nsnapshot_rate = 0\n", "[match] snapshot_rate = 0: must be 1..128"},
      {"[match]\ntick_rate = 32\nsnapshot_rate = 64\n",
       "test.toml: [match] snapshot_rate = 64: must be 1..tick_rate (32)"},
      {"[match]\nmax_matches = 0\n", "[match] max_matches = 0: must be 1..2147483647"},
      {"[match]\nmax_players = 0\n", "[match] max_players = 0: must be 1..65535"},
      {"[match]\nmax_players = 70000\n", "[match] max_players = 70000: must be 1..65535"},
      {"[match]\nconnection_timeout_s = 0\n", "[match] connection_timeout_s = 0: must be > 0"},
      {"[match]\nconnection_timeout_s = nan\n",
       "[match] connection_timeout_s = nan: must be a finite number"},
      {"[match]\nkeepalive_interval_s = -0.5\n", "[match] keepalive_interval_s = -0.5: must be > 0"},
      {"[match]\nkeepalive_interval_s = 6\n",
       "keepalive_interval_s = 6: must be less than connection_timeout_s (5)"},
      {"[match]\nmax_pending_events = 0\n", "[match] max_pending_events = 0: must be 1.."},
      {"[network]\nudp_port = 70000\n", "[network] udp_port = 70000: must be 0..65535"},
      {"[network]\nrpc_port = -1\n", "[network] rpc_port = -1: must be 0..65535"},
      {"[network]\nhttp_port = 65536\n", "[network] http_port = 65536: must be 0..65535"},
      {"[network]\nthreads = -2\n", "[network] threads = -2: must be 0..1024"},
      {"[network]\nrpc_threads = 100000\n", "[network] rpc_threads = 100000: must be 0..1024"},
      {"[network]\nbind_address = \"localhost\"\n",
       "[network] bind_address = \"localhost\": not an IP address"},
      {"[network]\npublic_address = \"203.0.113.7\"\n",
       "public_address = \"203.0.113.7\": must be empty, \"agones\" or ip:port"},
      {"[network]\npublic_address = \"203.0.113.7:0\"\n", "must be empty, \"agones\" or ip:port"},
      {"[network]\npublic_address = \"example.com:40000\"\n", "must be empty, \"agones\" or ip:port"},
      {"[rpc]\nmax_connections = 0\n", "[rpc] max_connections = 0: must be 1.."},
      {"[rpc]\nmax_frame_bytes = 100\n", "[rpc] max_frame_bytes = 100: must be 1024..1048576"},
      {"[rpc]\nmax_frame_bytes = 4294967296\n", "[rpc] max_frame_bytes = 4294967296: must be 1024..1048576"},
      {"[rpc]\nmax_batch = 0\n", "[rpc] max_batch = 0: must be 1.."},
      {"[rpc]\nrate = 0\n", "[rpc] rate = 0: must be > 0"},
      {"[rpc]\nrate = inf\n", "[rpc] rate = inf: must be a finite number"},
      {"[rpc]\nburst = 0.5\n", "[rpc] burst = 0.5: must be >= 1"},
      {"[rpc]\nsubscriber_max_pending_bytes = 0\n", "[rpc] subscriber_max_pending_bytes = 0: must be 1.."},
      {"[log]\nlevel = \"loud\"\n", "[log] level = \"loud\": must be one of trace, debug, info, warn, error"},
      {"[shutdown]\nflush_s = -1\n", "[shutdown] flush_s = -1: must be 0..3600"},
      // Types.
      {"[network]\nudp_port = \"40000\"\n",
       "test.toml:8:12: [network] udp_port: expected an integer, got a string"},
      {"[match]\ntick_rate = 64.0\n", "[match] tick_rate: expected an integer, got a float"},
      {"[match]\nconnection_timeout_s = \"5\"\n",
       "[match] connection_timeout_s: expected a number, got a string"},
      {"[log]\nlevel = 3\n", "[log] level: expected a string, got an integer"},
      {"[network]\nthreads = true\n", "[network] threads: expected an integer, got a boolean"},
      {"[network]\nthreads = [1]\n", "[network] threads: expected an integer, got an array"},
      // (Keys before the first table: after it they would belong to that table.)
      {"network = 3\n" + keys + level, "test.toml:1:11: [network] must be a table, got an integer", true},
      {"initial_match = 3\n" + keys + level,
       "test.toml:1:17: initial_match must be an array of tables ([[initial_match]]), got an integer", true},
      // Unknown keys and sections, with a suggestion when one is close.
      {"[match]\ntick_rat = 64\n",
       "test.toml:8:1: unknown key tick_rat in [match] (did you mean tick_rate?)"},
      {"[match]\ncolour = 1\n", "unknown key colour in [match]"},
      {"[netwrk]\nudp_port = 1\n", "test.toml:7:2: unknown section [netwrk] (did you mean [network]?)"},
      {"[[matches]]\nlevel = \"arena\"\n", "unknown section [[matches]]"},
      {"[network.extra]\nx = 1\n", "unknown key extra in [network]"},
      {"top = 1\n" + keys + level, "test.toml:1:1: unknown top-level key top", true},
      {"[[level]]\nname = \"x\"\npath = \"x.map\"\ncolor = 1\n",
       "test.toml:10:1: unknown key color in [[level]] #2"},
      // Syntax, and the [[match]] a reader might expect (TOML cannot have [match] and [[match]]).
      {"[match]\ntick_rate = = 3\n", "test.toml:8:"},
      {"[match]\ntick_rate = 64\n[[match]]\nlevel = \"arena\"\n",
       "test.toml:9:1: Error while parsing table header: cannot redefine existing table 'match' as "
       "array-of-tables (matches created at startup are [[initial_match]])"},
      // Initial matches.
      {"[[initial_match]]\nlevel = \"nowhere\"\n",
       "[[initial_match]] #1 level = \"nowhere\": no [[level]] has this name"},
      {"[[initial_match]]\nlevel = \"arena\"\ncount = 0\n", "[[initial_match]] #1 count = 0: must be 1.."},
      {"[[initial_match]]\nlevel = \"arena\"\n[[initial_match]]\nlevel = \"arena\"\nprops = -1\n",
       "[[initial_match]] #2 props = -1: must be 0.."},
      {"[[initial_match]]\nlevel = \"arena\"\nseed = -1\n",
       "[[initial_match]] #1 seed = -1: must be 0..4294967295"},
      {"[[initial_match]]\nlevel = \"arena\"\nmax_players = 33\n",
       "max_players = 33: must be at most [match] max_players = 32"},
      {"[[initial_match]]\nlevel = \"arena\"\ncount = 65\n",
       "65 matches at startup, more than [match] max_matches = 64"},
      {"[[initial_match]]\nlevell = \"arena\"\n",
       "unknown key levell in [[initial_match]] #1 (did you mean level?)"},
      {"[[initial_match]]\ncount = 1\n", "[[initial_match]] #1 level = \"\": required"},
      // Key files.
      {"[security]\ntoken_key_file = \"nope.key\"\nadmin_key_file = \"admin.key\"\n" + level,
       "[security] token_key_file = \"nope.key\": cannot read " + (dir_ / "nope.key").string(), true},
      {"[security]\ntoken_key_file = \"bad-token.key\"\nadmin_key_file = \"admin.key\"\n" + level,
       "[security] token_key_file = \"bad-token.key\": the first line must be 64 hex digits", true},
      {"[security]\ntoken_key_file = \"short-token.key\"\nadmin_key_file = \"admin.key\"\n" + level,
       "the first line must be 64 hex digits", true},
      {"[security]\ntoken_key_file = \"token.key\"\nadmin_key_file = \"empty.key\"\n" + level,
       "[security] admin_key_file = \"empty.key\": " + (dir_ / "empty.key").string() +
           ": the first line is empty",
       true},
      {"[security]\nadmin_key_file = \"admin.key\"\n" + level, "[security] token_key_file = \"\": required",
       true},
      {"[security]\ntoken_key_file = \"token.key\"\n" + level, "[security] admin_key_file = \"\": required",
       true},
      // Levels.
      {keys, "test.toml: no [[level]]: at least one level is required", true},
      {keys + level + level, "[[level]] #2 name = \"arena\": another [[level]] has this name", true},
      {keys + "[[level]]\nname = \"gone\"\npath = \"gone.bsp\"\nfallback = \"gone.map\"\n",
       "[[level]] #1 (gone): neither path \"" + (dir_ / "gone.bsp").string() + "\" nor fallback", true},
      {keys + "[[level]]\nname = \"empty\"\n", "[[level]] #1 (empty): needs a path or a fallback", true},
      {keys + "[[level]]\nname = \"text\"\npath = \"note.txt\"\n",
       "[[level]] #1 path = \"note.txt\": not a .bsp, .map, .obj or .level file", true},
      {keys + level + "[[level]]\npath = \"" + kArenaMap + "\"\n", "[[level]] #2 name = \"\": required",
       true},
  };
  for (const BadCase& c : cases) {
    std::string text = c.whole ? c.toml : base() + c.toml;
    std::string error = error_of(text);
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << "config:\n"
        << text << "\nerror: " << error << "\nexpected: " << c.expected;
  }
}

TEST_F(ConfigDir, ProblemsInTheFileAreReportedTogetherInFileOrder) {
  // toml++ keeps keys sorted; the report follows the file.
  std::string error =
      error_of(base() + "[match]\ntick_rate = 500\nmax_players = 0\n[rpc]\nburst = 0\nbogus = 1\n");
  EXPECT_EQ(error,
            "test.toml:8:13: [match] tick_rate = 500: must be 20..128\n"
            "test.toml:9:15: [match] max_players = 0: must be 1..65535\n"
            "test.toml:11:9: [rpc] burst = 0: must be >= 1\n"
            "test.toml:12:1: unknown key bogus in [rpc]");
}

TEST_F(ConfigDir, ValidateChecksFieldsSetInCodeAndReportsEveryProblem) {
  ServerConfig c = parse(base());
  c.tick_rate = 500;
  c.max_players = 0;
  c.log_level = "loud";
  std::string error;
  try {
    validate(c);
  } catch (const ConfigError& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("test.toml: [match] tick_rate = 500: must be 20..128"), std::string::npos) << error;
  EXPECT_NE(error.find("\ntest.toml: [match] max_players = 0: must be 1..65535"), std::string::npos) << error;
  EXPECT_NE(error.find("\ntest.toml: [log] level = \"loud\""), std::string::npos) << error;
}

TEST_F(ConfigDir, OverridesUseTheFlagNames) {
  ServerConfig c = parse(base());
  apply_override(c, "udp-port", "0");
  apply_override(c, "rpc_port", "41001");  // underscores alike
  apply_override(c, "--http-port", "41002");
  apply_override(c, "bind-address", "0.0.0.0");
  apply_override(c, "public-address", "[2001:db8::1]:40000");
  apply_override(c, "threads", "3");
  apply_override(c, "rpc-threads", "2");
  apply_override(c, "tick-rate", "128");
  apply_override(c, "snapshot-rate", "128");
  apply_override(c, "log-level", "trace");
  apply_override(c, "max-players", "8");
  apply_override(c, "connection-timeout-s", "2.5");
  apply_override(c, "rpc-rate", "1e3");
  apply_override(c, "token-key-file", "token.key");
  apply_override(c, "admin-key-file", "admin.key");
  EXPECT_NO_THROW(validate(c));
  EXPECT_EQ(c.udp_port, 0);
  EXPECT_EQ(c.rpc.port, 41001);
  EXPECT_EQ(c.http_port, 41002);
  EXPECT_EQ(c.bind_address, "0.0.0.0");
  EXPECT_EQ(c.public_address, "[2001:db8::1]:40000");
  EXPECT_EQ(c.threads, 3);
  EXPECT_EQ(c.rpc_threads, 2);
  EXPECT_EQ(c.tick_rate, 128);
  EXPECT_EQ(c.snapshot_rate, 128);
  EXPECT_EQ(c.log_level, "trace");
  EXPECT_EQ(c.max_players, 8);
  EXPECT_EQ(c.connection_timeout_s, 2.5);
  EXPECT_EQ(c.rpc.rate, 1000.0);

  // Every [section] key of the file has a flag: the flag list and the shipped file's keys agree.
  std::vector<std::string> flags = override_names();
  for (const char* flag : {"udp-port",
                           "rpc-port",
                           "http-port",
                           "bind-address",
                           "udp-bind-address",
                           "rpc-bind-address",
                           "http-bind-address",
                           "udp-preauth-rate",
                           "udp-preauth-burst",
                           "udp-preauth-sources",
                           "udp-preauth-limit-loopback",
                           "public-address",
                           "threads",
                           "rpc-threads",
                           "tick-rate",
                           "snapshot-rate",
                           "max-matches",
                           "max-players",
                           "connection-timeout-s",
                           "keepalive-interval-s",
                           "max-pending-events",
                           "rpc-max-connections",
                           "rpc-max-frame-bytes",
                           "rpc-max-batch",
                           "rpc-rate",
                           "rpc-burst",
                           "subscriber-max-pending-bytes",
                           "token-key-file",
                           "previous-token-key-file",
                           "admin-key-file",
                           "token-valid-seconds",
                           "log-level",
                           "shutdown-flush-s",
                           "rpc-max-connections-per-address",
                           "rpc-global-rate",
                           "rpc-global-burst",
                           "rpc-idle-timeout-s",
                           "rpc-read-timeout-s",
                           "rpc-write-timeout-s",
                           "rpc-memory-budget-bytes",
                           "rpc-connection-memory-bytes",
                           "rpc-auth-failure-burst",
                           "rpc-auth-failure-rate",
                           "rpc-global-auth-failure-burst",
                           "rpc-global-auth-failure-rate",
                           "rpc-accept-retry-s",
                           "service-key-file",
                           "read-access",
                           "http-max-connections",
                           "http-max-connections-per-source",
                           "http-request-timeout-s",
                           "http-idle-timeout-s",
                           "rpc-max-subscriptions-per-connection",
                           "rpc-max-subscriptions-per-match",
                           "recording-directory",
                           "interest-enabled",
                           "interest-radius",
                           "interest-no-set-radius",
                           "interest-persist-events",
                           "interest-line-of-sight",
                           "interest-sight-margin",
                           "interest-sight-hold-s",
                           "event-sends",
                           "input-ack-delay-ticks",
                           "spectator-key-file",
                           "spectator-delay-ms",
                           "spectator-rate",
                           "spectator-byte-budget",
                           "max-viewers",
                           "agones-enabled",
                           "agones-sdk-port",
                           "agones-health-period-ms",
                           "agones-stall-ms",
                           "agones-retry-ms",
                           "agones-call-timeout-ms",
                           "agones-player-tracking"}) {
    EXPECT_NE(std::find(flags.begin(), flags.end(), flag), flags.end()) << flag;
  }
  EXPECT_EQ(flags.size(), 76u);
}

// Issue 15's [interest]: the shipped values are the documented defaults, the file and the flags set them,
// and out-of-range values are refused with the key.
TEST_F(ConfigDir, InterestSectionAndItsFlags) {
  const ServerConfig shipped = load_server_config(kSourceDir + "/configs/server.toml");
  const InterestSettings defaults;
  EXPECT_EQ(shipped.interest.enabled, defaults.enabled);
  EXPECT_EQ(shipped.interest.radius, defaults.radius);
  EXPECT_EQ(shipped.interest.no_set_radius, defaults.no_set_radius);
  ServerConfig c = parse(base() + "[interest]\nenabled = 0\nradius = 300\nno_set_radius = 2000\n");
  EXPECT_EQ(c.interest.enabled, 0);
  EXPECT_EQ(c.interest.radius, 300);
  EXPECT_EQ(c.interest.no_set_radius, 2000);
  apply_override(c, "interest-radius", "640");
  apply_override(c, "interest-enabled", "1");
  EXPECT_EQ(c.interest.radius, 640);
  EXPECT_EQ(c.interest.enabled, 1);
  EXPECT_NE(error_of(base() + "[interest]\nradius = -1\n").find("radius = -1"), std::string::npos);
  EXPECT_NE(error_of(base() + "[interest]\nenabled = 2\n").find("enabled = 2"), std::string::npos);
  EXPECT_EQ(shipped.interest.persist_events, defaults.persist_events);
  EXPECT_EQ(parse(base() + "[interest]\npersist_events = 1\n").interest.persist_events, 1);
  // Line of sight: shipped as the defaults, set by the file and the flags, out of range refused.
  EXPECT_EQ(shipped.interest.line_of_sight, defaults.line_of_sight);
  EXPECT_EQ(shipped.interest.sight_margin, defaults.sight_margin);
  EXPECT_EQ(shipped.interest.sight_hold_s, defaults.sight_hold_s);
  ServerConfig sight =
      parse(base() + "[interest]\nline_of_sight = 0\nsight_margin = 8\nsight_hold_s = 1.5\n");
  EXPECT_EQ(sight.interest.line_of_sight, 0);
  EXPECT_EQ(sight.interest.sight_margin, 8);
  EXPECT_EQ(sight.interest.sight_hold_s, 1.5);
  apply_override(sight, "interest-sight-margin", "64");
  apply_override(sight, "interest-sight-hold-s", "0");
  apply_override(sight, "interest-line-of-sight", "1");
  EXPECT_EQ(sight.interest.sight_margin, 64);
  EXPECT_EQ(sight.interest.sight_hold_s, 0);
  EXPECT_EQ(sight.interest.line_of_sight, 1);
  EXPECT_NE(error_of(base() + "[interest]\nsight_margin = -1\n").find("sight_margin = -1"),
            std::string::npos);
  EXPECT_NE(error_of(base() + "[interest]\nsight_hold_s = 11\n").find("sight_hold_s = 11"),
            std::string::npos);
  EXPECT_NE(error_of(base() + "[interest]\nline_of_sight = 2\n").find("line_of_sight = 2"),
            std::string::npos);
  EXPECT_NE(error_of(base() + "[interest]\npersist_events = 2\n").find("persist_events = 2"),
            std::string::npos);
}

// How a connection's frames carry events and acknowledgements: the shipped values are the connection's
// defaults, and the ranges hold (event_sends 1..kMaxEventSends, input_ack_delay_ticks 0..8).
TEST_F(ConfigDir, EventSendsAndInputAckDelay) {
  const ServerConfig shipped = load_server_config(kSourceDir + "/configs/server.toml");
  const ConnectionSettings defaults;
  EXPECT_EQ(shipped.event_sends, defaults.event_sends);
  EXPECT_EQ(shipped.input_ack_delay_ticks, defaults.input_ack_delay_ticks);
  ServerConfig c = parse(base() + "[match]\nevent_sends = 3\ninput_ack_delay_ticks = 0\n");
  EXPECT_EQ(c.event_sends, 3);
  EXPECT_EQ(c.input_ack_delay_ticks, 0);
  apply_override(c, "event-sends", "4");
  apply_override(c, "input-ack-delay-ticks", "8");
  EXPECT_EQ(c.event_sends, 4);
  EXPECT_EQ(c.input_ack_delay_ticks, 8);
  EXPECT_NE(error_of(base() + "[match]\nevent_sends = 0\n").find("event_sends = 0"), std::string::npos);
  EXPECT_NE(error_of(base() + "[match]\nevent_sends = 5\n").find("event_sends = 5"), std::string::npos);
  EXPECT_NE(error_of(base() + "[match]\ninput_ack_delay_ticks = 9\n").find("input_ack_delay_ticks = 9"),
            std::string::npos);
}

TEST_F(ConfigDir, BadOverridesAreRefusedAtOnce) {
  struct Case {
    const char* key;
    const char* value;
    const char* expected;
  };
  const Case cases[] = {
      {"tick-rate", "500", "--tick-rate 500: must be 20..128"},
      {"tick-rate", "64x", "--tick-rate 64x: expected an integer"},
      {"tick-rate", "", "--tick-rate : expected an integer"},
      {"udp-port", "65536", "--udp-port 65536: must be 0..65535"},
      {"udp-port", "-1", "--udp-port -1: must be 0..65535"},
      {"connection-timeout-s", "soon", "--connection-timeout-s soon: expected a number"},
      {"rpc-rate", "0", "--rpc-rate 0: must be > 0"},
      {"log-level", "loud", "--log-level loud: must be one of trace"},
      {"bind-address", "nowhere", "--bind-address nowhere: not an IP address"},
      {"tik-rate", "64", "unknown option --tik-rate (did you mean --tick-rate?)"},
      {"config-dir", "x", "unknown option --config-dir"},
  };
  for (const Case& c : cases) {
    ServerConfig config = parse(base());
    std::string error;
    try {
      apply_override(config, c.key, c.value);
    } catch (const ConfigError& e) {
      error = e.what();
    }
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.key << " " << c.value << ": " << error;
  }
  // A refused override leaves the setting as it was.
  ServerConfig config = parse(base());
  EXPECT_THROW(apply_override(config, "tick-rate", "500"), ConfigError);
  EXPECT_EQ(config.tick_rate, 64);
}

// Token key rotation: the previous key is read and checked as the token key is, is never the current key
// (in any spelling) nor an API key, and falls under the development-key rule.
TEST_F(ConfigDir, ThePreviousTokenKeyFollowsTheTokenKeyRules) {
  constexpr char kPreviousHex[] = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
  write("previous.key", std::string(kPreviousHex) + "\n");
  std::string upper = kTokenHex;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return char(std::toupper(c)); });
  write("token-again.key", "  " + upper + "\n");
  write("admin-hex.key", std::string(kPreviousHex) + "\n");
  const std::string level = "[[level]]\nname = \"arena\"\npath = \"" + kArenaMap + "\"\n";
  auto config = [&](const std::string& previous, const std::string& more = "") {
    return "[security]\ntoken_key_file = \"token.key\"\nadmin_key_file = \"admin.key\"\n"
           "previous_token_key_file = \"" +
           previous + "\"\n" + more + level;
  };
  ServerConfig c = parse(config("previous.key"));
  EXPECT_NO_THROW(validate(c));
  EXPECT_EQ(c.previous_token_key_file, "previous.key");
  EXPECT_EQ(parse(base()).previous_token_key_file, "");  // optional
  ServerConfig flagged = parse(base());
  apply_override(flagged, "previous-token-key-file", "previous.key");
  EXPECT_EQ(flagged.previous_token_key_file, "previous.key");
  EXPECT_NO_THROW(validate(flagged));

  const std::string key = "[security] previous_token_key_file = ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {config("bad-token.key"), key + "\"bad-token.key\": the first line must be 64 hex digits"},
      {config("short-token.key"), key + "\"short-token.key\": the first line must be 64 hex digits"},
      {config("nope.key"), key + "\"nope.key\": cannot read"},
      {config("token.key"), key + "\"token.key\": the same key as token_key_file"},
      {config("token-again.key"), key + "\"token-again.key\": the same key as token_key_file"},
      {"[security]\ntoken_key_file = \"token.key\"\nadmin_key_file = \"admin-hex.key\"\n"
       "previous_token_key_file = \"previous.key\"\n" +
           level,
       key + "\"previous.key\": the same key as admin_key_file"},
      {config("previous.key", "service_key_file = \"admin-hex.key\"\n"),
       key + "\"previous.key\": the same key as service_key_file"},
      {config("previous.key", "spectator_key_file = \"admin-hex.key\"\n"),
       key + "\"previous.key\": the same key as spectator_key_file"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string error = error_of(text);
    EXPECT_NE(error.find(expected), std::string::npos)
        << text << "\nerror: " << error << "\nexpected: " << expected;
  }

  // The committed development token key as the previous key: fine on loopback, refused elsewhere.
  const std::string dev_token = kSourceDir + "/configs/keys/dev-token.key";
  EXPECT_EQ(error_of(config(dev_token)), "");
  const std::string exposed = error_of("[network]\nbind_address = \"0.0.0.0\"\n" + config(dev_token));
  EXPECT_NE(exposed.find(key + "\"" + dev_token + "\": the committed development key"), std::string::npos)
      << exposed;
  EXPECT_EQ(exposed.find("[security] token_key_file"), std::string::npos) << exposed;  // a private key
}

TEST_F(ConfigDir, KeyFilesAndPaths) {
  ServerConfig c = parse(base());
  EXPECT_EQ(read_key_file_line(c, "admin.key"), "admin-secret-long-enough");
  EXPECT_EQ(read_key_file_line(c, "token.key"), kTokenHex);
  EXPECT_EQ(read_key_file_line(c, (dir_ / "token.key").string()), kTokenHex);  // absolute stays absolute
  EXPECT_THROW(read_key_file_line(c, "missing.key"), ConfigError);
  EXPECT_EQ(resolve_path(c, "a/../b.map"), (dir_ / "b.map").string());
  EXPECT_EQ(resolve_path(c, "/abs/x.bsp"), "/abs/x.bsp");
  EXPECT_THROW(load_server_config((dir_ / "absent.toml").string()), ConfigError);
}

// [agones]: shipped off, with the defaults; every key from TOML (enabled also as a TOML boolean) and from
// its flag; bad values refused naming the key; stall_ms must exceed the health period; "auto" follows
// AGONES_SDK_HTTP_PORT (its value passed in, never read from this process's environment).
TEST_F(ConfigDir, AgonesSectionAndItsFlags) {
  const ServerConfig shipped = load_server_config(kSourceDir + "/configs/server.toml");
  const AgonesSettings defaults;
  EXPECT_EQ(shipped.agones.enabled, "false");
  EXPECT_EQ(shipped.agones.sdk_port, defaults.sdk_port);
  EXPECT_EQ(shipped.agones.health_period_ms, defaults.health_period_ms);
  EXPECT_EQ(shipped.agones.stall_ms, defaults.stall_ms);
  EXPECT_EQ(shipped.agones.retry_ms, defaults.retry_ms);
  EXPECT_EQ(shipped.agones.call_timeout_ms, defaults.call_timeout_ms);
  EXPECT_EQ(shipped.agones.player_tracking, defaults.player_tracking);
  EXPECT_EQ(defaults.health_period_ms, 2000);  // Agones' own SDK examples ping every 2 s

  ServerConfig c = parse(base() +
                         "[agones]\nenabled = true\nsdk_port = 9358\nhealth_period_ms = 150\nstall_ms = 700\n"
                         "retry_ms = 40\ncall_timeout_ms = 900\nplayer_tracking = 0\n");
  EXPECT_NO_THROW(validate(c));
  EXPECT_EQ(c.agones.enabled, "true");
  EXPECT_EQ(c.agones.sdk_port, 9358);
  EXPECT_EQ(c.agones.health_period_ms, 150);
  EXPECT_EQ(c.agones.stall_ms, 700);
  EXPECT_EQ(c.agones.retry_ms, 40);
  EXPECT_EQ(c.agones.call_timeout_ms, 900);
  EXPECT_EQ(c.agones.player_tracking, 0);
  EXPECT_EQ(parse(base() + "[agones]\nenabled = false\n").agones.enabled, "false");
  EXPECT_EQ(parse(base() + "[agones]\nenabled = \"auto\"\n").agones.enabled, "auto");
  apply_override(c, "agones-enabled", "auto");
  apply_override(c, "agones-sdk-port", "0");
  apply_override(c, "agones-health-period-ms", "100");
  apply_override(c, "agones-stall-ms", "300");
  apply_override(c, "agones-retry-ms", "20");
  apply_override(c, "agones-call-timeout-ms", "500");
  apply_override(c, "agones-player-tracking", "1");
  EXPECT_EQ(c.agones.enabled, "auto");
  EXPECT_EQ(c.agones.sdk_port, 0);
  EXPECT_EQ(c.agones.health_period_ms, 100);
  EXPECT_EQ(c.agones.stall_ms, 300);
  EXPECT_EQ(c.agones.retry_ms, 20);
  EXPECT_EQ(c.agones.call_timeout_ms, 500);
  EXPECT_EQ(c.agones.player_tracking, 1);
  EXPECT_THROW(apply_override(c, "agones-enabled", "yes"), ConfigError);

  const std::pair<std::string, std::string> bad[] = {
      {"enabled = \"yes\"", "[agones] enabled = \"yes\": must be true, false or \"auto\""},
      {"enabled = 1", "[agones] enabled: expected a string, got an integer"},
      {"sdk_port = 70000", "[agones] sdk_port = 70000"},
      {"health_period_ms = 5", "[agones] health_period_ms = 5"},
      {"retry_ms = 0", "[agones] retry_ms = 0"},
      {"call_timeout_ms = 60001", "[agones] call_timeout_ms = 60001"},
      {"player_tracking = 2", "[agones] player_tracking = 2"},
      {"player_tracking = true", "[agones] player_tracking: expected an integer, got a boolean"},
      {"health_period_ms = 2000\nstall_ms = 2000",
       "[agones] stall_ms = 2000: must be more than health_period_ms"},
      {"helth_period_ms = 1", "unknown key helth_period_ms in [agones] (did you mean health_period_ms?)"},
  };
  for (const auto& [toml, expected] : bad) {
    const std::string error = error_of(base() + "[agones]\n" + toml + "\n");
    EXPECT_NE(error.find(expected), std::string::npos) << toml << ": " << error;
  }
  // A boolean is text only where the setting says so: elsewhere it is still the wrong type.
  EXPECT_NE(error_of(base() + "[log]\nlevel = true\n").find("[log] level: expected a string, got a boolean"),
            std::string::npos);

  AgonesSettings s;
  s.enabled = "auto";
  EXPECT_FALSE(agones_enabled(s, nullptr));
  EXPECT_FALSE(agones_enabled(s, ""));
  EXPECT_TRUE(agones_enabled(s, "9358"));
  s.enabled = "false";
  EXPECT_FALSE(agones_enabled(s, "9358"));
  s.enabled = "true";
  EXPECT_TRUE(agones_enabled(s, nullptr));
  EXPECT_EQ(agones_sdk_port(s, "9358"), std::optional<std::uint16_t>(9358));
  EXPECT_EQ(agones_sdk_port(s, nullptr), std::nullopt);
  for (const char* bad_port : {"", "0", "65536", "93x", " 9358", "-1"})
    EXPECT_EQ(agones_sdk_port(s, bad_port), std::nullopt) << bad_port;
  s.sdk_port = 4000;  // the config's port wins over the variable's
  EXPECT_EQ(agones_sdk_port(s, "9358"), std::optional<std::uint16_t>(4000));
}

TEST(LogLevels, OneTableOfNames) {
  EXPECT_EQ(parse_log_level("trace"), spdlog::level::trace);
  EXPECT_EQ(parse_log_level("debug"), spdlog::level::debug);
  EXPECT_EQ(parse_log_level("info"), spdlog::level::info);
  EXPECT_EQ(parse_log_level("warn"), spdlog::level::warn);
  EXPECT_EQ(parse_log_level("error"), spdlog::level::err);
  EXPECT_EQ(parse_log_level("critical"), spdlog::level::critical);
  EXPECT_EQ(parse_log_level("off"), spdlog::level::off);
  EXPECT_FALSE(parse_log_level("INFO"));
  EXPECT_FALSE(parse_log_level(""));
  EXPECT_EQ(log_level_names_joined(), "trace, debug, info, warn, error, critical, off");
}

TEST(LogLevels, ConfigureLoggingInstallsTheShiftcastLogger) {
  std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
  configure_logging(spdlog::level::warn);
  EXPECT_EQ(spdlog::default_logger()->name(), kLoggerName);
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::warn);
  std::shared_ptr<spdlog::logger> first = spdlog::default_logger();
  configure_logging(spdlog::level::debug);  // again (a reload): the same logger, the new level
  EXPECT_EQ(spdlog::default_logger(), first);
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::debug);
  spdlog::set_default_logger(previous);
}

}  // namespace
}  // namespace shiftcast
