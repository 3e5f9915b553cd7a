#!/usr/bin/env bash
# Finds the largest load this machine holds: for each match count, a fresh shiftcast-server
# (configs/server.toml) and shiftcast-sim with 32 clients per match at 64 Hz on oa_dm1 for the given
# duration, judged by configs/load/default.toml; then one table row per run from the JSON reports.
# Run after scripts/main.sh (or any Release build in build/).
#
# Usage: scripts/load-ladder.sh [SECONDS] [MATCH COUNTS...]     e.g. scripts/load-ladder.sh 60 16 24 32
# A count may repeat (scripts/load-ladder.sh 60 24 24 24: the 768-client row three times); each run is a
# row of its own.
# The simulator predicts on a quarter of its clients (--predict-fraction 0.25: the prediction error is
# judged on them, and the load tester leaves the server more of the machine); SHIFTCAST_SIM_ARGS replaces
# that (SHIFTCAST_SIM_ARGS="--predict-fraction 1" for every client), SHIFTCAST_SERVER_ARGS adds server flags.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/server.sh

seconds="${1:-60}"
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(16 24 32)
out=build/ladder
mkdir -p "$out"

runs=()
for i in "${!counts[@]}"; do
  m="${counts[$i]}"
  run="$m-$((i + 1))"
  runs+=("$run")
  log="$out/server-$run"
  build/server/shiftcast-server --config configs/server.toml ${SHIFTCAST_SERVER_ARGS:-} >"$log.out" 2>"$log.err" &
  pid=$!
  wait_for_server "$pid" "$log" || exit 1
  status=0
  build/client-sim/shiftcast-sim --config configs/server.toml --profile configs/load/default.toml \
    --level oa_dm1 --matches "$m" --clients 32 --duration "$seconds" --no-progress \
    ${SHIFTCAST_SIM_ARGS---predict-fraction 0.25} \
    --json "$out/report-$run.json" >"$out/table-$run.txt" 2>"$out/sim-$run.err" || status=$?
  kill -TERM "$pid"
  wait "$pid" || true
  echo "$m matches: shiftcast-sim exit $status" >&2
done

/usr/bin/python3 - "$out" "${runs[@]}" <<'EOF'
import json, sys
out, runs = sys.argv[1], sys.argv[2:]
print("| matches × clients | input→ack p50 / p99 (ms) | p99 ticks | events lost | failed | invariant violations | prediction error p99 (units), clients predicting | server tick p99 (ms) | server CPU (% of a core) | per player | simulator CPU (% of a core) | budgets |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for run in runs:
    m = run.split("-")[0]
    r = json.load(open(f"{out}/report-{run}.json"))
    a = r["input_ack_ms"]
    print(f"| {m} × 32 = {r['clients']} | {a['p50']:.1f} / {a['p99']:.1f} | {r['input_ack_p99_ticks']:.2f} | "
          f"{r['events_lost']} | {r['clients_failed']} | {r['invariant_violations']} | "
          f"{r['movement_error']['p99']:.2f}, {r['clients_predicting']} | "
          f"{r['server_tick_ms']['p99']:.3f} | {r['server_cpu_percent']:.0f} | "
          f"{r['server_cpu_percent_per_player']:.3f} | {r['sim_cpu_percent']:.0f} | {'met' if r['budgets_met'] else 'MISSED: ' + '; '.join(r['budgets_missed'])} |")
EOF
