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

# free_port_base FROM: prints the first P >= FROM (in steps of 3) with udp P, tcp P+1 and tcp P+2 all free
# on 127.0.0.1, so two runs on one machine (a CI run beside a developer's) do not collide. The ports are
# probed, not held: a process may still take one between the probe and the server's bind, which the
# server reports as "the port is in use".
free_port_base() {
  python3 - "$1" <<'PY'
import socket, sys
def free(kind, port):
    s = socket.socket(socket.AF_INET, kind)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()
base = int(sys.argv[1])
while base + 2 < 65536:
    if free(socket.SOCK_DGRAM, base) and free(socket.SOCK_STREAM, base + 1) and free(socket.SOCK_STREAM, base + 2):
        print(base)
        sys.exit(0)
    base += 3
sys.exit("free_port_base: no three free ports above " + sys.argv[1])
PY
}
