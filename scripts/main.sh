#!/usr/bin/env bash
# The main job: install the dependencies, build, start shiftcast-server on a real OpenArena map (oa_dm1,
# from the Debian package openarena-081-maps; the shipped configs/levels/arena.map when the package
# cannot be fetched), run a 32-player simulated match for 30 seconds with shiftcast-sim, print its
# report, and shut the server down gracefully.
#
# Usage (as root on Debian bookworm): scripts/main.sh [shiftcast-sim flags, e.g. --duration 60 --matches 4]
# Exit status: shiftcast-sim's (0 when every budget of configs/load/default.toml held).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
if ! scripts/fetch-openarena-maps.sh; then
  echo "main: the OpenArena maps could not be fetched; the server falls back to configs/levels/arena.map" >&2
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"

config=configs/server.toml
server_log=build/main-server.log
build/server/shiftcast-server --config "$config" >"$server_log.out" 2>"$server_log" &
server_pid=$!
stop_server() {
  if kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  fi
}
trap stop_server EXIT

# The server prints one "listening" line once every socket is bound and its matches tick.
for _ in $(seq 1 600); do
  if grep -q 'shiftcast-server listening' "$server_log.out" 2>/dev/null; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "main: shiftcast-server exited; its log:" >&2
    cat "$server_log" >&2
    exit 1
  fi
  sleep 0.1
done
grep 'shiftcast-server listening' "$server_log.out"

# The pictures (docs/server.md, "Pictures"): the dashboard, and the load's match live (the config's initial
# match is 1, the load tester's is 2). The development spectator key: loopback only.
http_port=$(sed -n 's/^http_port *= *\([0-9]*\).*/\1/p' "$config" | head -1)
spectator_key=$(head -1 configs/keys/dev-spectator.key)
echo "main: dashboard at http://127.0.0.1:${http_port:-40002}/?key=$spectator_key (the load's match live:" \
  "http://127.0.0.1:${http_port:-40002}/matches/2?key=$spectator_key)"

status=0
build/client-sim/shiftcast-sim --config "$config" --level oa_dm1 --matches 1 --clients 32 --duration 30 \
  --profile configs/load/default.toml --json build/main-report.json --html build/main-report.html "$@" ||
  status=$?
echo "main: report also in build/main-report.json and, with plots, build/main-report.html; server log in $server_log"
stop_server
trap - EXIT
exit "$status"
