#!/usr/bin/env bash
# The soak (docs/soak.md): shiftcast-server built with AddressSanitizer + LeakSanitizer runs for M minutes
# under shiftcast-sim's churn mode (configs/load/soak.toml: players join, play, drop without a goodbye and
# come back with fresh tokens; matches created and ended over the admin RPC; passing RPC clients and
# contact subscribers, some never reading). The server's resident memory is sampled every 10 s; at the end
# the server gets SIGTERM and must exit cleanly with no sanitizer report. Verdict, one line per goal:
#   leaks       LeakSanitizer reported nothing at exit and the server exited 0
#   memory      flat after warm-up: warm-up is the first third of the run and at least 60 s; the level is
#               the median of the first half of the samples after it, and the median of the second half
#               must be at most 5% above it. Medians, so a bounded buffer that comes and goes (a never-
#               reading subscriber's backlog, cut at its limit) does not pass for growth, while a leak,
#               which only grows, does not hide.
#   events      0 reliable events lost (shiftcast-sim's report: every session, while connected)
#   invariants  0 invariant violations (the server's /metrics, every match of the run, ended ones too)
#   budgets     every budget of the profile met (shiftcast-sim's exit status and report)
# Exit status 0 only when every goal holds. Samples, verdict and logs go to OUT (default build/soak).
#
# Usage: scripts/soak.sh --minutes M --clients N [--seconds S] [--build DIR] [--sim-build DIR]
#                        [--profile FILE] [--port-base P] [--out DIR]
#   --minutes M      length of the churn (or --seconds S)
#   --clients N      players in play at once, over max(2, N/32) matches
#   --build DIR      the sanitizer build of the server (default build-sanitize, shared with
#                    scripts/test.sh --sanitize); configured with clang and built there when missing
#   --sim-build DIR  where shiftcast-sim is built (default build, Release: the load, not the subject;
#                    built there when missing)
#   --profile FILE   the churn profile (default configs/load/soak.toml; CI: configs/load/soak-short.toml)
#   --out DIR        samples (rss.tsv), the simulator's report, the server's log, verdict.txt
#   --port-base P    udp P, rpc P+1, http P+2 (default: the first free three from 41000, away from a
#                    development server's 40000 and from another soak running beside this one)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/server.sh

seconds=600
clients=512
build=build-sanitize
sim_build=build
profile=configs/load/soak.toml
port_base=
out=build/soak
sample_interval=10
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) seconds=$(($2 * 60)); shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --sim-build) sim_build=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    --port-base) port_base=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done

[ -n "$port_base" ] || port_base=$(free_port_base 41000)

matches=$(( (clients + 31) / 32 ))
[ "$matches" -ge 2 ] || matches=2
per_match=$(( (clients + matches - 1) / matches ))

# The server under the sanitizers, built like scripts/test.sh --sanitize does (clang, so LeakSanitizer
# is on with AddressSanitizer).
if [ ! -x "$build/server/shiftcast-server" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHIFTCAST_SANITIZE=ON \
    -DSHIFTCAST_BENCH=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target shiftcast-server
if [ ! -x "$sim_build/client-sim/shiftcast-sim" ]; then
  [ -f "$sim_build/CMakeCache.txt" ] || cmake -S . -B "$sim_build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$sim_build" -j "$(nproc)" --target shiftcast-sim

rm -rf "$out"
mkdir -p "$out"
# quarantine_size_mb: ASan keeps freed memory out of reuse in a quarantine (256 MiB by default) to catch
# use after free; until it is full every free looks like growth of the resident set. A small one fills
# in seconds, so after warm-up the resident set follows what the server really holds.
# log_path: any sanitizer report lands in a file of its own, which the verdict looks for.
export ASAN_OPTIONS="quarantine_size_mb=16:detect_leaks=1:halt_on_error=1:log_path=$PWD/$out/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$PWD/$out/ubsan"
export LSAN_OPTIONS="log_path=$PWD/$out/lsan"

"$build/server/shiftcast-server" --config configs/server.toml --udp-port "$port_base" \
  --rpc-port $((port_base + 1)) --http-port $((port_base + 2)) --max-players $((2 * per_match)) \
  --max-matches $((matches + 4)) --log-level warn >"$out/server.out" 2>"$out/server.err" &
server=$!
trap 'kill -KILL "$server" 2>/dev/null || true; [ -n "${sim:-}" ] && kill -KILL "$sim" 2>/dev/null || true' EXIT
wait_for_server "$server" "$out/server" || { echo "soak.sh: the server did not start" >&2; exit 1; }

echo "soak: ${seconds} s, ${matches} matches x ${per_match} clients, server $build (ASan+LSan), sim $sim_build" >&2
# The sim goes on ASAN_OPTIONS-free: it is the load (a Release build), and a sanitized one reports apart.
env -u ASAN_OPTIONS -u UBSAN_OPTIONS -u LSAN_OPTIONS \
  "$sim_build/client-sim/shiftcast-sim" --config configs/server.toml --profile "$profile" \
  --rpc-port $((port_base + 1)) --http-port $((port_base + 2)) --matches "$matches" --clients "$per_match" \
  --duration "$seconds" --no-progress --json "$out/report.json" >"$out/sim.txt" 2>"$out/sim.err" &
sim=$!

# Resident memory every sample_interval seconds (on the clock, not after each sample) while the sim runs:
# seconds since the start, KiB.
start=$(date +%s)
printf 'seconds\trss_kib\trpc_memory_kib\n' >"$out/rss.tsv"
next=$start
while kill -0 "$sim" 2>/dev/null; do
  if [ "$(date +%s)" -ge "$next" ]; then
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$server/status" 2>/dev/null || true)
    # What the RPC listener holds for its peers (unfinished frames, unwritten replies and pushes): bounded
    # by its budget and coming and going with the never-reading subscribers; shown beside the RSS.
    rpc=$(curl -s --max-time 5 "http://127.0.0.1:$((port_base + 2))/metrics" |
      awk '$1 == "shiftcast_rpc_memory_bytes" {printf "%d", $2 / 1024}' || true)
    [ -n "$rss" ] && printf '%d\t%d\t%s\n' $(($(date +%s) - start)) "$rss" "${rpc:-0}" >>"$out/rss.tsv"
    next=$((next + sample_interval))
  fi
  sleep 0.2
done
sim_status=0
wait "$sim" || sim_status=$?
sim=
kill -TERM "$server"
server_status=0
wait "$server" || server_status=$?
trap - EXIT

/usr/bin/python3 - "$out" "$seconds" "$sim_status" "$server_status" <<'EOF'
import glob, json, os, statistics, sys
out, seconds, sim_status, server_status = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rows = [l.split('\t') for l in open(f"{out}/rss.tsv").read().split('\n')[1:] if l]
samples = [(float(r[0]), int(r[1])) for r in rows]
rpc_kib = [int(r[2]) if len(r) > 2 and r[2] else 0 for r in rows]
goals = []

reports = sorted(glob.glob(f"{out}/asan*") + glob.glob(f"{out}/ubsan*") + glob.glob(f"{out}/lsan*"))
leak_text = " ".join(open(p, errors="replace").read() for p in reports)
leaks = "LeakSanitizer" in leak_text
goals.append(("leaks", not reports and server_status == 0,
              f"server exit {server_status}, sanitizer reports: {len(reports)}" +
              (" (LeakSanitizer found leaks)" if leaks else "")))

span = max(seconds, samples[-1][0] if samples else 0)
# Warm-up: the first third, and at least a minute (under the short profile's churn the sanitizer
# allocator's footprint took about a minute, four match lifetimes, to reach its plateau). The rest is
# halved: the level is the first half's median, the end the second half's.
warm = max(span / 3, 60.0)
split = warm + (span - warm) / 2
middle = [k for t, k in samples if warm <= t < split]
last = [k for t, k in samples if t >= split]
if middle and last:
    level = statistics.median(middle)
    final = statistics.median(last)
    growth = final / level - 1
    goals.append(("memory", growth <= 0.05,
                  f"level after warm-up {level / 1024:.1f} MiB, at the end {final / 1024:.1f} MiB ({growth * 100:+.1f}%), "
                  f"max after warm-up {max(middle + last) / 1024:.1f} MiB"))
else:
    goals.append(("memory", False, f"too few samples ({len(samples)}) to judge"))

try:
    r = json.load(open(f"{out}/report.json"))
except (OSError, ValueError) as e:
    r = None
    for g in ("events", "invariants", "budgets"):
        goals.append((g, False, f"no report from shiftcast-sim (exit {sim_status}): {e}"))
if r is not None:
    goals.append(("events", r["events_lost"] == 0 and r["event_order_violations"] == 0,
                  f"{r['events_lost']} lost, {r['event_order_violations']} out of order, {r['events_delivered']} delivered"))
    goals.append(("invariants", r["server_metrics_ok"] and r["invariant_violations"] == 0,
                  f"{r['invariant_violations']} violations" + ("" if r["server_metrics_ok"] else
                  " (server metrics unreadable: " + r["server_metrics_error"] + ")")))
    goals.append(("budgets", r["budgets_met"] and sim_status == 0,
                  "met" if r["budgets_met"] else "MISSED: " + "; ".join(r["budgets_missed"])))

lines = ["rss samples (s: MiB, of which rpc buffers): " +
         " ".join(f"{t:.0f}:{k / 1024:.0f}({b / 1024:.1f})" for (t, k), b in zip(samples, rpc_kib))]
if r is not None:
    c = r.get("churn", {})
    lines.append("churn: " + ", ".join(f"{k} {c.get(k, 0)}" for k in (
        "sessions", "reconnects", "silent_drops", "goodbyes", "match_ended", "sessions_failed",
        "matches_created", "matches_ended", "rpc_visits", "rpc_abandoned", "subscribers",
        "subscribers_cut_slow", "subscribers_cut_timeout", "subscribers_cut_other", "subscribers_never_cut")))
    lines.append(f"input->ack p99 {r['input_ack_ms']['p99']:.1f} ms, server tick p99 {r['server_tick_ms']['p99']:.2f} ms")
width = max(len(g) for g, _, _ in goals)
for g, ok, detail in goals:
    lines.append(f"{g:<{width}}  {'pass' if ok else 'FAIL'}  {detail}")
ok = all(ok for _, ok, _ in goals)
lines.append("soak: " + ("PASS" if ok else "FAIL"))
text = "\n".join(lines) + "\n"
open(f"{out}/verdict.txt", "w").write(text)
sys.stdout.write(text)
sys.exit(0 if ok else 1)
EOF
