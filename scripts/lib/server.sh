# Sourced by the scripts that run a shiftcast-server next to a load (load-ladder.sh, net-table.sh,
# soak.sh): waits for the server's one "listening" line, which it prints once every socket is bound and
# its matches tick.
#
#   some/shiftcast-server --config configs/server.toml >"$log.out" 2>"$log.err" &
#   wait_for_server "$!" "$log"      # returns 1 (with the server's log on stderr) if it exited instead

wait_for_server() {
  local pid="$1" log="$2"
  for _ in $(seq 1 600); do
    grep -q 'shiftcast-server listening' "$log.out" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$log.err" >&2; return 1; }
    sleep 0.1
  done
  echo "the server did not print its listening line within 60 s; its log:" >&2
  cat "$log.err" >&2
  return 1
}
