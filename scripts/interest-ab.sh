#!/usr/bin/env bash
# Interest management off and on, back to back (issue 15): the same 32-player match on oa_dm1 (its
# imported potentially visible set) for SECONDS each, alternating `--interest-enabled 0` and `1` ROUNDS
# times so both see the same machine load; then one table row per run: the server's CPU per player, the
# bandwidth per client, what the filter culled. Run after a Release build in build/.
#
# Usage: scripts/interest-ab.sh [SECONDS] [ROUNDS] [PORT BASE]    e.g. scripts/interest-ab.sh 20 2
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/server.sh

seconds="${1:-20}"
rounds="${2:-2}"
base="${3:-41000}"
out=build/interest-ab
mkdir -p "$out"
ports=(--udp-port "$base" --rpc-port "$((base + 1))" --http-port "$((base + 2))")

runs=()
for round in $(seq 1 "$rounds"); do
  for enabled in 0 1; do
    run="$enabled-$round"
    runs+=("$run")
    log="$out/server-$run"
    build/server/shiftcast-server --config configs/server.toml "${ports[@]}" --interest-enabled "$enabled" \
      >"$log.out" 2>"$log.err" &
    pid=$!
    wait_for_server "$pid" "$log" || exit 1
    build/client-sim/shiftcast-sim --config configs/server.toml --rpc-port "$((base + 1))" \
      --http-port "$((base + 2))" --profile configs/load/default.toml --level oa_dm1 --matches 1 --clients 32 \
      --duration "$seconds" --no-progress --json "$out/report-$run.json" >"$out/table-$run.txt" \
      2>"$out/sim-$run.err" &
    sim=$!
    # The match's series leave /metrics when the run ends it: keep the last scrape taken while it ran.
    : >"$out/metrics-$run.txt"
    while kill -0 "$sim" 2>/dev/null; do
      curl -s "http://127.0.0.1:$((base + 2))/metrics" | grep -E '^shiftcast_interest_' >"$out/scrape.txt" || true
      [ -s "$out/scrape.txt" ] && mv "$out/scrape.txt" "$out/metrics-$run.txt"
      sleep 1
    done
    status=0
    wait "$sim" || status=$?
    kill -TERM "$pid"
    wait "$pid" || true
    echo "interest $enabled, round $round: shiftcast-sim exit $status" >&2
  done
done

/usr/bin/python3 - "$out" "${runs[@]}" <<'PY'
import json, sys
out, runs = sys.argv[1], sys.argv[2:]
print("| interest | server CPU per player (% of a core) | down / up (kbit/s per client) | culled per snapshot per client | events routed / suppressed | input→ack p99 (ticks) | events lost | budgets missed |")
print("|---|---|---|---|---|---|---|---|")
for run in runs:
    r = json.load(open(f"{out}/report-{run}.json"))
    m = {}
    for line in open(f"{out}/metrics-{run}.txt"):
        name, value = line.rsplit(" ", 1)
        key = name.split("{")[0] + ("/suppressed" if "suppressed" in name else "/routed" if "routed" in name else "")
        m[key] = m.get(key, 0) + float(value)
    snapshots = r["snapshot_rate_achieved"] * r["load_seconds"] * max(r["clients_connected"], 1)
    culled = m.get("shiftcast_interest_culled_total", 0) / snapshots if snapshots else 0
    missed = [b.split(" ")[0] for b in r["budgets_missed"]]
    print(f"| {'on' if run.startswith('1') else 'off'} | {r['server_cpu_percent_per_player']:.3f} | "
          f"{r['bandwidth_kbps']['down']:.1f} / {r['bandwidth_kbps']['up']:.1f} | {culled:.1f} | "
          f"{m.get('shiftcast_interest_events_total/routed', 0):.0f} / {m.get('shiftcast_interest_events_total/suppressed', 0):.0f} | "
          f"{r['input_ack_p99_ticks']:.2f} | {r['events_lost']} | {', '.join(missed) or 'none'} |")
PY
