#!/usr/bin/python3
"""Opens the server's operator dashboard and a match's spectator view in headless Chromium, as a person
would, and prints what the browser showed as one JSON object:

  dashboard   every match row's data-field cells (text, and data-value where the cell has one), the link
              of its id (only with the spectator key), the rejections listed, uptime, viewers, polls;
  match_view  after frames >= 5 and a player drawn: pause(), the paused tick, markers(), and for each
              player marker the screenshot's RGB at its centre pixel (the page must draw #e8433a there);
  raycasts    for up to 3 players, Raycast RPCs straight down at the paused tick (AsOf Tick, players'
              layer only, no level): through the marker, and QUANTUM inside and outside its radius along
              both axes; each says whether the server found that player there (as_expected);
  no_key      /matches/M without the key: the HTTP status and what the page says;
  console errors (SEVERE) of each page, and every request that left 127.0.0.1:P (none may).

Usage:

    read_spectator_pages.py --http-port P --rpc-port R --match M --key K --service-key-file F
        --generated DIR --screenshots DIR

--generated is where flatc wrote the Python protocol package (tests/contract/raycast_client.py uses it);
the screenshots are saved as DIR/dashboard.png and DIR/match_view.png. Exits 0 unless Selenium itself
fails: every finding is in the JSON, for the test to judge.

Needs Debian's chromium, chromium-driver and python3-selenium (scripts/install-deps.sh installs them);
run with Debian's /usr/bin/python3, which is the interpreter that has selenium and flatbuffers.
"""
import argparse
import json
import pathlib
import struct
import sys
import urllib.parse
import zlib

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "contract"))
import raycast_client  # noqa: E402  (found through the path above)

WAIT_S = 20
MAX_RAYCASTS = 3  # players whose position is pinned by rays (9 rays each)
QUANTUM = 1.0 / 32  # units: how close to the server's position a marker must be
PLAYER_LAYER = 1  # QueryFilter.mask: 1 players, 2 projectiles, 4 props


def wait_for(driver, script, timeout=WAIT_S):
    """Waits (Selenium's WebDriverWait) until a JavaScript expression is truthy; returns (its last value,
    whether it timed out)."""
    last = [None]

    def truthy(d):
        last[0] = d.execute_script("try { return " + script + "; } catch (e) { return null; }")
        return last[0]

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1).until(truthy), False
    except TimeoutException:
        return last[0], True


def decode_png(data, columns=None, rows=None):
    """The pixels of an 8-bit, non-interlaced PNG as (width, height, channels, rows of bytes). Only the
    first `columns` x `rows` pixels are reconstructed: no PNG filter looks right of or below a pixel."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, color, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(color)
    if depth != 8 or interlace != 0 or channels is None:
        raise ValueError("unsupported PNG: depth %d, colour type %d, interlace %d" % (depth, color, interlace))
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    need = min(width, columns if columns is not None else width) * channels
    out = []
    prev = bytearray(need)
    for y in range(min(height, rows if rows is not None else height)):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1:start + 1 + need])
        bpp = channels
        if kind == 1:  # Sub
            for i in range(bpp, need):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:  # Up
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif kind == 3:  # Average
            for i in range(need):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:  # Paeth
            for i in range(need):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif kind != 0:
            raise ValueError("bad PNG filter %d in row %d" % (kind, y))
        out.append(line)
        prev = line
    return width, height, channels, out


def drain_logs(driver, port, foreign, documents):
    """The page's SEVERE console messages since the last call; adds to `foreign` every request that
    left 127.0.0.1:port and to `documents` the HTTP status of every page loaded."""
    console = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
        elif method == "Network.webSocketCreated":
            url = params["url"]
        else:
            if method == "Network.responseReceived" and params.get("type") == "Document":
                documents[params["response"]["url"]] = params["response"]["status"]
            continue
        parts = urllib.parse.urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            continue  # not the network
        if parts.netloc != "127.0.0.1:%d" % port:
            foreign.append(url)
    return console


READ_DASHBOARD = """
if (!document.getElementById('matches')) return {page_missing: true, rows: [], rejections: {}};
const rows = Array.from(document.querySelectorAll('tr[data-match-id]')).map((tr) => {
  const row = {match_id: tr.dataset.matchId, fields: {}, values: {}, link: null, chart_points: null};
  for (const td of tr.querySelectorAll('[data-field]')) {
    row.fields[td.dataset.field] = td.textContent.trim();
    if (td.dataset.value !== undefined) row.values[td.dataset.field] = td.dataset.value;
  }
  const a = tr.querySelector('[data-field="id"] a');
  if (a) row.link = a.getAttribute('href');
  const svg = tr.querySelector('svg');
  if (svg) row.chart_points = Number(svg.getAttribute('data-points'));
  return row;
});
const rejections = {};
for (const li of document.querySelectorAll('#rejections li[data-channel]')) {
  (rejections[li.dataset.channel] = rejections[li.dataset.channel] || {})[li.dataset.reason] = Number(li.dataset.value);
}
const field = (name) => document.querySelector('#summary [data-field="' + name + '"]');
return {polls: Number(document.body.dataset.polls), rows: rows, rejections: rejections,
        uptime: field('uptime_s').textContent, uptime_s: Number(field('uptime_s').dataset.value),
        viewers: Number(field('viewers').dataset.value), status: document.getElementById('status').textContent,
        key_note_shown: !document.getElementById('key-note').hidden};
"""

# One script, so that nothing is drawn between the pause and the markers read.
PAUSE_AND_READ = """
const v = window.shiftcastView;
if (!v) return {hook_missing: true, markers: [], tick: null, errors: []};
v.pause();
const canvas = document.getElementById('view');
const message = document.getElementById('message');
return {tick: v.tick, paused: v.paused, frames: v.frames, markers: v.markers(), errors: v.errors.slice(),
        device_pixel_ratio: window.devicePixelRatio, inner: [window.innerWidth, window.innerHeight],
        canvas_size: [canvas.width, canvas.height], dataset_tick: canvas.dataset.tick,
        dataset_frames: canvas.dataset.frames, plan: canvas.dataset.plan,
        message: message && !message.hidden ? message.textContent : null};
"""


def read_dashboard(driver, base, key, match, polls, shots, port, foreign, documents):
    driver.get(base + "/?key=" + urllib.parse.quote(key))
    # `polls` polls, and the match the test watches listed (a load tester may be creating it right now).
    _, timed_out = wait_for(driver, "Number(document.body.dataset.polls) >= %d && "
                                    "document.querySelector('[data-match-id=\"%d\"]') !== null" % (polls, match),
                            timeout=WAIT_S + polls)
    result = driver.execute_script(READ_DASHBOARD)
    result.setdefault("polls", 0)
    result["timed_out"] = timed_out
    (shots / "dashboard.png").write_bytes(driver.get_screenshot_as_png())
    result["console_errors"] = drain_logs(driver, port, foreign, documents)
    return result


def read_match_view(driver, base, args, foreign, documents):
    driver.get("%s/matches/%d?key=%s" % (base, args.match, urllib.parse.quote(args.key)))
    _, timed_out = wait_for(
        driver, "window.shiftcastView.frames >= 5 && document.getElementById('view').dataset.plan !== 'loading'"
                " && window.shiftcastView.markers().some((m) => m.kind === 'player')")
    view = driver.execute_script(PAUSE_AND_READ)
    view["timed_out"] = timed_out
    players = [m for m in view["markers"] if m["kind"] == "player"]

    # The rays go first: the server keeps a limited history to rewind to. Per player, straight down at
    # the paused tick: through the marker, then QUANTUM inside and QUANTUM outside its radius along both
    # axes. The server's player at that tick holds the marker's point and its circle ends where the
    # marker's does, so the marker is where the server judged the player, within QUANTUM.
    raycasts = []
    service_key = pathlib.Path(args.service_key_file).read_text().splitlines()[0].strip()
    for m in players[:MAX_RAYCASTS]:
        inside = m["radius"] - QUANTUM
        outside = m["radius"] + QUANTUM
        offsets = [(0.0, 0.0, True)] + [(dx * d, dy * d, d == inside) for d in (inside, outside)
                                        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))]
        for ox, oy, expect_self in offsets:
            origin = [m["x"] + ox, m["y"] + oy, m["z"] + 200]
            ray = {"id": m["id"], "origin": origin, "as_of_tick": view["tick"], "expect_self": expect_self}
            try:
                ray["reply"] = raycast_client.raycast(args.rpc_port, args.match, origin, (0.0, 0.0, -1.0), 400.0,
                                                      key=service_key, as_of_tick=view["tick"],
                                                      mask=PLAYER_LAYER, level=False, generated=args.generated)
            except Exception as e:  # a refused connection or a malformed reply is a finding, not a crash
                ray["reply"] = {"error": "%s: %s" % (type(e).__name__, e)}
            ray["hit_self"] = ray["reply"].get("entity") == m["id"] and bool(ray["reply"].get("hit"))
            ray["as_expected"] = ray["hit_self"] == expect_self and ray["reply"].get("clamp") == "None"
            raycasts.append(ray)

    png = driver.get_screenshot_as_png()
    (pathlib.Path(args.screenshots) / "match_view.png").write_bytes(png)
    view["tick_after_screenshot"] = driver.execute_script(
        "return window.shiftcastView ? window.shiftcastView.tick : null;")
    ratio = view.get("device_pixel_ratio") or 1
    want = [(m, round(m["sx"] * ratio), round(m["sy"] * ratio)) for m in players]
    width, height, channels, rows = decode_png(
        png, columns=max([x for _, x, _ in want] + [0]) + 1, rows=max([y for _, _, y in want] + [0]) + 1)
    view["screenshot_size"] = [width, height]
    pixels = []
    for m, x, y in want:
        rgb = None
        if 0 <= x < width and 0 <= y < height:
            at = x * channels
            rgb = list(rows[y][at:at + 3]) if channels >= 3 else [rows[y][at]] * 3
        pixels.append({"id": m["id"], "sx": m["sx"], "sy": m["sy"], "px": x, "py": y, "rgb": rgb,
                       "hex": "#%02x%02x%02x" % tuple(rgb) if rgb else None})
    view["player_pixels"] = pixels
    view["console_errors"] = drain_logs(driver, args.http_port, foreign, documents)
    return view, raycasts


def read_without_key(driver, base, args, foreign, documents):
    url = "%s/matches/%d" % (base, args.match)
    driver.get(url)
    wait_for(driver, "document.readyState === 'complete'", timeout=5)
    # A served page says itself that it needs the key; wait a moment for it to find out.
    message, _ = wait_for(driver, "(() => { const m = document.getElementById('message');"
                                  " return m && !m.hidden ? m.textContent : null; })()", timeout=5)
    body = driver.find_element(By.TAG_NAME, "body").text
    console = drain_logs(driver, args.http_port, foreign, documents)
    return {"url": url, "status": documents.get(url), "message": message, "body_text": body[:400],
            "console_errors": console}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--rpc-port", type=int, required=True)
    parser.add_argument("--match", type=int, required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--service-key-file", required=True)
    parser.add_argument("--generated", required=True)
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--dashboard-polls", type=int, default=2)  # more: a fuller chart in the screenshot
    args = parser.parse_args()
    shots = pathlib.Path(args.screenshots)
    shots.mkdir(parents=True, exist_ok=True)
    base = "http://127.0.0.1:%d" % args.http_port

    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,900", "--force-device-scale-factor=1"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    foreign, documents = [], {}
    try:
        dashboard = read_dashboard(driver, base, args.key, args.match, args.dashboard_polls, shots, args.http_port,
                                   foreign, documents)
        view, raycasts = read_match_view(driver, base, args, foreign, documents)
        no_key = read_without_key(driver, base, args, foreign, documents)
    finally:
        driver.quit()
    print(json.dumps({"dashboard": dashboard, "match_view": view, "raycasts": raycasts, "no_key": no_key,
                      "foreign_requests": foreign,
                      "screenshots": {"dashboard": str(shots / "dashboard.png"),
                                      "match_view": str(shots / "match_view.png")}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
