#!/usr/bin/env bash
# Plays through a bad network: for each of a few network conditions, a fresh shiftcast-server
# (configs/server.toml) and shiftcast-sim with 1 match x 32 clients at 64 Hz on oa_dm1 for the given
# duration, every datagram both ways through the clients' links (--net), judged by
# configs/load/default.toml (the input-to-ack budget grows by the round trip); then one markdown table
# row per condition from the JSON reports. Run after scripts/main.sh (or any Release build in build/).
#
# Usage: scripts/net-table.sh [SECONDS]      e.g. scripts/net-table.sh 30
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/server.sh

seconds="${1:-30}"
out=build/net-table
mkdir -p "$out"

names=(clean latency goal loss10 cap)
nets=(
  "none"
  "latency=50ms"
  "loss=5%,latency=50ms,jitter=10ms,dup=1%,reorder=2%"
  "loss=10%,latency=50ms"
  "latency=50ms,rate=512kbit"
)

for i in "${!names[@]}"; do
  name="${names[$i]}"
  log="$out/server-$name"
  build/server/shiftcast-server --config configs/server.toml >"$log.out" 2>"$log.err" &
  pid=$!
  wait_for_server "$pid" "$log" || exit 1
  status=0
  build/client-sim/shiftcast-sim --config configs/server.toml --profile configs/load/default.toml \
    --level oa_dm1 --matches 1 --clients 32 --duration "$seconds" --no-progress --net "${nets[$i]}" \
    --json "$out/report-$name.json" >"$out/table-$name.txt" 2>"$out/sim-$name.err" || status=$?
  kill -TERM "$pid"
  wait "$pid" || true
  echo "$name (${nets[$i]}): shiftcast-sim exit $status" >&2
done

/usr/bin/python3 - "$out" "${names[@]}" <<'PY'
import json, sys
out, names = sys.argv[1], sys.argv[2:]
print("| conditions (both ways unless up./down.) | input→ack p50 / p99 (ms) | p50 / p99 (ticks) | budget (ticks) | events lost / duplicated or out of order | snapshots/s (of expected) | packet loss down | prediction error p99 (units) | budgets |")
print("|---|---|---|---|---|---|---|---|---|")
for name in names:
    r = json.load(open(f"{out}/report-{name}.json"))
    a = r["input_ack_ms"]
    n = r["network"]
    # event_order_violations counts both duplicated and out-of-order deliveries.
    verdict = "met" if r["budgets_met"] else "MISSED: " + "; ".join(r["budgets_missed"])
    ticks = r["tick_rate"] / 1000
    print(f"| `{n['conditions']}` | {a['p50']:.1f} / {a['p99']:.1f} | {a['p50'] * ticks:.2f} / {a['p99'] * ticks:.2f} | "
          f"{r['input_ack_budget_ticks']:.2f} | {r['events_lost']} / {r['event_order_violations']} | "
          f"{r['snapshot_rate_achieved']:.1f} ({r['snapshot_rate_expected']:g}) | "
          f"{100 * r['packet_loss_down']:.1f} % | {r['movement_error']['p99']:.1f} | {verdict} |")
PY
