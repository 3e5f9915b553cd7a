#!/usr/bin/env bash
# The README's pictures, taken in headless Chromium from a real run: shiftcast-server on oa_dm1
# (configs/server.toml), shiftcast-sim playing one 16-bot match for 20 s while
# tests/browser/read_spectator_pages.py opens the dashboard and the match's live view, then the load
# report page (--html). Writes docs/images/dashboard.png, match_view.png and report.png.
#
# Usage: scripts/screenshots.sh   (after a build in build/, with the OpenArena maps fetched)
set -euo pipefail
cd "$(dirname "$0")/.."
out=docs/images
mkdir -p "$out" build/screenshots
python=/usr/bin/python3  # Debian's: it has selenium and flatbuffers

config=configs/server.toml
build/server/shiftcast-server --config "$config" --udp-port 0 --rpc-port 0 --http-port 0 \
  >build/screenshots/server.out 2>build/screenshots/server.log &
server_pid=$!
trap 'kill -TERM $server_pid 2>/dev/null; wait $server_pid 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  if grep -q 'shiftcast-server listening' build/screenshots/server.out 2>/dev/null; then break; fi
  sleep 0.1
done
line=$(grep 'shiftcast-server listening' build/screenshots/server.out)
rpc_port=$(sed -n 's/.* rpc=\([0-9]*\).*/\1/p' <<<"$line")
http_port=$(sed -n 's/.* http=\([0-9]*\).*/\1/p' <<<"$line")

build/client-sim/shiftcast-sim --config "$config" --rpc-port "$rpc_port" --http-port "$http_port" --level oa_dm1 \
  --matches 1 --clients 16 --duration 20 --profile configs/load/default.toml --no-progress \
  --html build/screenshots/report.html >build/screenshots/sim.out 2>&1 &
sim_pid=$!
"$python" tests/browser/read_spectator_pages.py --http-port "$http_port" --rpc-port "$rpc_port" --match 2 \
  --key "$(head -1 configs/keys/dev-spectator.key)" --service-key-file configs/keys/dev-service.key \
  --generated build/protocol/python --screenshots "$out" --dashboard-polls 10 >build/screenshots/browser.json
wait "$sim_pid" || true
"$python" tests/browser/read_report_page.py build/screenshots/report.html --screenshot "$out/report.png" >/dev/null
echo "screenshots: $out/dashboard.png $out/match_view.png $out/report.png"
