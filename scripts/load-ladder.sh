#!/usr/bin/env bash
# Finds the largest load this machine holds: for each match count, a fresh shiftcast-server
# (configs/server.toml) and shiftcast-sim with 32 clients per match at 64 Hz on oa_dm1 for the given
# duration, judged by configs/load/default.toml; then one table row per run from the JSON reports.
# Run after scripts/main.sh (or any Release build in build/).
#
# Usage: scripts/load-ladder.sh [SECONDS] [MATCH COUNTS...]     e.g. scripts/load-ladder.sh 60 16 24 32
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(16 24 32)
out=build/ladder
mkdir -p "$out"

for m in "${counts[@]}"; do
  log="$out/server-$m"
  build/server/shiftcast-server --config configs/server.toml >"$log.out" 2>"$log.err" &
  pid=$!
  for _ in $(seq 1 600); do
    grep -q 'shiftcast-server listening' "$log.out" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || { cat "$log.err" >&2; exit 1; }
    sleep 0.1
  done
  status=0
  build/client-sim/shiftcast-sim --config configs/server.toml --profile configs/load/default.toml \
    --level oa_dm1 --matches "$m" --clients 32 --duration "$seconds" --no-progress \
    --json "$out/report-$m.json" >"$out/table-$m.txt" 2>"$out/sim-$m.err" || status=$?
  kill -TERM "$pid"
  wait "$pid" || true
  echo "$m matches: shiftcast-sim exit $status" >&2
done

/usr/bin/python3 - "$out" "${counts[@]}" <<'EOF'
import json, sys
out, counts = sys.argv[1], sys.argv[2:]
print("| matches × clients | input→ack p50 / p99 (ms) | p99 ticks | events lost | failed | invariant violations | server tick p99 (ms) | server CPU (% of a core) | per player | budgets |")
print("|---|---|---|---|---|---|---|---|---|---|")
for m in counts:
    r = json.load(open(f"{out}/report-{m}.json"))
    a = r["input_ack_ms"]
    print(f"| {m} × 32 = {r['clients']} | {a['p50']:.1f} / {a['p99']:.1f} | {r['input_ack_p99_ticks']:.2f} | "
          f"{r['events_lost']} | {r['clients_failed']} | {r['invariant_violations']} | "
          f"{r['server_tick_ms']['p99']:.3f} | {r['server_cpu_percent']:.0f} | "
          f"{r['server_cpu_percent_per_player']:.3f} | {'met' if r['budgets_met'] else 'MISSED: ' + '; '.join(r['budgets_missed'])} |")
EOF
