// ServerConfig: everything an operator sets, with one default each, read from a TOML file
// (configs/server.toml is the shipped, commented example) and then overridden from the command line.
// Loading is the program's edge: a bad file or value throws ConfigError with the key and the reason,
// and shiftcast-server prints it and exits with status 2.
//
//   ServerConfig c = load_server_config("configs/server.toml");   // throws ConfigError
//   apply_override(c, "udp_port", "0");                            // --udp-port 0; throws ConfigError
//   validate(c);                                                   // ranges, files, levels; throws
//
// Unknown sections and keys are errors (a typo must not silently leave a default in force), and so are
// values of the wrong type. Syntax and type errors name file:line:col; validate() names the file, the
// key and the value ("configs/server.toml: [match] tick_rate = 500: must be 20..128") and reports every
// problem at once, one per line. One table of settings (server_config_keys.cpp) serves both the TOML keys
// and the command-line flags; the flag of [section] key is listed next to it in configs/server.toml.
// Matches created at startup are [[initial_match]] tables: TOML cannot have both [match] and [[match]].
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "server/config/agones_settings.hpp"
#include "server/config/interest_settings.hpp"
#include "server/config/rpc_settings.hpp"
#include "world/match/match_defaults.hpp"

namespace shiftcast {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The listeners' ports: the server binds these, the load tester connects to them unless told otherwise.
inline constexpr std::uint16_t kDefaultUdpPort = 40000;
inline constexpr std::uint16_t kDefaultRpcPort = 40001;
inline constexpr std::uint16_t kDefaultHttpPort = 40002;

// Admin and service keys shorter than this are refused: they could be guessed.
inline constexpr std::size_t kMinKeyChars = 16;

struct LevelConfig {
  std::string name;      // what CreateMatch names
  std::string path;      // .bsp, .map, .obj or compiled .level
  std::string fallback;  // used when `path` does not exist (e.g. a shipped .map)
};

struct InitialMatchConfig {
  std::string level;
  int count = 1;
  int max_players = kDefaultMaxPlayers;
  int props = 0;
  std::uint32_t seed = 1;
};

struct ServerConfig {
  // [network] Each listener binds its own address, so opening the game port to players opens nothing
  // else: RPC (game services) and HTTP (operators) stay on loopback unless set explicitly.
  std::string bind_address =
      "127.0.0.1";               // the UDP listener's, kept for older configs (udp_bind_address wins)
  std::string udp_bind_address;  // players; empty: bind_address
  std::string http_bind_address = "127.0.0.1";  // operators (metrics, health); never follows bind_address
  // Pre-authentication UDP work (handshakes, packets naming no connected client) per source IP address
  // and worker: a token bucket of this rate and burst, before any crypto; beyond it, refused unanswered.
  double udp_preauth_rate = 16;  // datagrams per second
  double udp_preauth_burst = 32;
  int udp_preauth_sources = 1 << 16;   // source buckets kept per worker (a full table shares one bucket)
  int udp_preauth_limit_loopback = 0;  // 1: loopback sources are limited too (else exempt: this machine)
  std::string public_address;          // "ip:port" written into connect tokens; empty: udp address:udp_port;
                                       // "agones": the GameServer's status.address and "game" port
  std::uint16_t udp_port = kDefaultUdpPort;  // 0: any free port (the server logs and prints the ports it got)
  std::uint16_t http_port = kDefaultHttpPort;
  int threads = 0;      // match worker threads (ticks and UDP), 0: one per core
  int rpc_threads = 0;  // RPC and HTTP threads, apart from the match workers so a query never delays a
                        // tick; 0: one per core

  // [match]
  int tick_rate = kDefaultTickRate;          // Hz, 20..128
  int snapshot_rate = kDefaultSnapshotRate;  // Hz, 1..tick_rate: a snapshot every round(tick / snapshot)
  int max_matches = 64;
  int max_players = kDefaultMaxPlayers;  // per match
  double connection_timeout_s = 5;
  double keepalive_interval_s = 0.25;
  int max_pending_events = 4096;  // per connection: beyond it the client is too far behind and dropped
  int event_sends = 1;            // frames a contact event rides back to back, 1..4 (ConnectionSettings)
  int input_ack_delay_ticks = 1;  // ticks an input acknowledgement may wait for a snapshot frame, 0..8

  // [interest]: which entities and contacts each client is sent (server/config/interest_settings.hpp).
  InterestSettings interest;

  // [rpc], with [network] rpc_bind_address and rpc_port and [security] token_valid_seconds: the RPC
  // listener's settings themselves (docs/server.md, "Under abuse: the RPC listener"), with their defaults
  // (server/config/rpc_settings.hpp) except the port. The keys, the public address and the clocks are
  // not config: the server fills them in at startup.
  RpcSettings rpc{.port = kDefaultRpcPort};
  // [http] (operator pages) and contact subscription caps: issue 12, the HTTP listener under abuse.
  int http_max_connections = 64;
  int http_max_connections_per_source = 8;  // at most http_max_connections
  double http_request_timeout_s = 5;        // a whole request, from the accept or its first byte
  double http_idle_timeout_s = 5;           // a kept-alive connection waiting for its next request
  int rpc_max_subscriptions_per_match = 1024;
  // The spectator view (docs/server.md, "Pictures"): frames held back this long (SourceTV's tv_delay),
  // updates per second per viewer, bytes a viewer may leave untaken before it is cut off, viewers in all.
  int spectator_delay_ms = 0;
  int spectator_rate = 20;
  int spectator_byte_budget = 1 << 20;
  int max_viewers = 16;

  // [security]
  std::string token_key_file;  // 64 hex digits; relative paths are relative to the config file
  // The token key before the current one, while a rotation is under way (docs/server.md, "Rotating the
  // token key"): tokens sealed under it are accepted too. 64 hex digits, neither the current token key nor
  // any API key; empty: only the current key.
  std::string previous_token_key_file;
  std::string admin_key_file;  // the admin API key (any text, first line, at least kMinKeyChars)
  // The service key RPC reads need (queries, rewinds, subscriptions, match listings); empty: reads need
  // the admin key. read_access "open": reads need no key, refused unless the RPC binds loopback.
  std::string service_key_file;
  std::string read_access = "key";
  // The spectator key the live match views need (any text, first line, at least kMinKeyChars; not the
  // admin or the service key); empty: the views are off and the dashboard shows aggregate health only.
  std::string spectator_key_file;

  // [log]
  std::string log_level = "info";  // trace, debug, info, warn, error, off

  // [shutdown]
  double shutdown_flush_s = 1;  // how long to wait for clients to acknowledge their last events

  // [recording] (docs/replay.md): every match records its commands and queries into this directory
  // (relative to the config file); empty: off.
  std::string recording_directory;

  // [agones] (docs/server.md, "Running under Agones"): the Agones SDK over REST; off unless enabled.
  AgonesSettings agones;

  std::vector<LevelConfig> levels;          // [[level]]
  std::vector<InitialMatchConfig> matches;  // [[match]]: created at startup

  std::string config_dir;   // directory of the file loaded (relative paths resolve against it)
  std::string config_file;  // the file loaded, as named by the caller: the prefix of error messages
};

ServerConfig load_server_config(const std::string& path);
// `source_name` stands for the file in messages.
ServerConfig parse_server_config(std::string_view toml_text, const std::string& config_dir,
                                 const std::string& source_name = "config");
// `key` is the flag name without the leading dashes, dashes or underscores alike ("udp-port",
// "log_level"). The value is checked against the setting's own range at once; checks that involve
// other settings (snapshot_rate <= tick_rate) wait for validate().
void apply_override(ServerConfig& config, std::string_view key, std::string_view value);
// Every flag apply_override accepts, in table order ("udp-port", ...), for --help.
std::vector<std::string> override_names();
void validate(const ServerConfig& config);
// A key file's first line, surrounding whitespace trimmed (the token key's 64 hex digits go on to
// key_from_hex; the admin key is used as is). `path` resolves against the config dir. Throws ConfigError
// when the file cannot be read or the line is empty.
std::string read_key_file_line(const ServerConfig& config, const std::string& path);
// The UDP listener's address: udp_bind_address, or bind_address when that is empty.
const std::string& effective_udp_bind_address(const ServerConfig& config);
// `path` if absolute (or no config dir is known), else config_dir/path.
std::string resolve_path(const ServerConfig& config, const std::string& path);
// The file a [[level]] is loaded from: its path, or its fallback when the path does not exist (and a
// fallback is given), resolved against the config dir. The server and the load tester both use this.
std::string level_source(const ServerConfig& config, const LevelConfig& level);

}  // namespace shiftcast
