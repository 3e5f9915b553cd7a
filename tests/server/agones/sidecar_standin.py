#!/usr/bin/python3
"""A stand-in for the Agones SDK sidecar's REST API, for shiftcast's end-to-end tests.

Why a stand-in: the real sidecar (agones-sdk, a Go binary run by Agones next to the game server) cannot be
installed on the test machines, and it needs a Kubernetes API server behind it. This program serves the
same call table instead, as published in Agones' sdks/swagger/sdk.swagger.json and alpha.swagger.json and
served by grpc-gateway (pkg/util/runtime NewServerMux: proto field names, unpopulated fields emitted,
int64 as strings, unknown request fields ignored), and keeps the GameServer's state the way
pkg/sdkserver/sdkserver.go does:

  * lifecycle calls are answered 200 {} and queued as state changes; a GameServer that is Unhealthy or
    Shutdown never leaves that state (the change is ignored, as updateState does; the log says
    "ignored"), Ready goes through RequestReady;
  * health: after the sidecar starts, a check every --health-period-s counts a failure when no ping came
    within the period; --failure-threshold failures make the GameServer Unhealthy;
  * GET /watch/gameserver streams {"result": GameServer} + "\n" now and on every change (chunked);
  * SetAnnotation/SetLabel store under the "agones.dev/sdk-" prefix, keys checked as Kubernetes
    qualified names (400 InvalidArgument otherwise);
  * player tracking (alpha): connect refuses beyond capacity (500, gRPC Unknown), answers
    {"bool": false} for a player already connected (or, on disconnect, not connected);
  * routing as grpc-gateway v2's default handler: an unknown path is 404 {"code": 5, "message":
    "Not Found"}; a known path with another method is routed as StatusMethodNotAllowed, which the default
    routing error handler turns into codes.Unimplemented, i.e. HTTP 501 {"code": 12, "message":
    "Method Not Allowed"}; a body that is not JSON is 400 {"code": 3}.
  The beta Counters and Lists calls are not stood in (they answer 404 here).

A second port is the test's control side, never the game server's:
  POST /control/open        start listening on the SDK port (until then connections are refused, as
                            when the sidecar starts after the game server; --closed starts that way)
  POST /control/allocate    {"labels": {...}, "annotations": {...}}: what a GameServerAllocation does
                            to a Ready GameServer (409 in any other state)
  GET  /control/state       the state as text lines: events=, state=, health=, capacity=, players=,
                            ignored=, annotation K=V, label K=V; with ?after=N it answers once events
                            (calls logged plus state changes) exceed N, or after 5 s: a long poll
  GET  /control/log         every SDK call, one line each: METHOD PATH STATUS STATE-AFTER BODY

Usage: sidecar_standin.py [--closed] [--health-period-s 0.5] [--failure-threshold 5]
Prints "agones-standin sdk=PORT control=PORT" once both ports are bound; stops on SIGTERM.
"""

import argparse
import http.server
import json
import re
import signal
import socketserver
import sys
import threading
import time

METADATA_PREFIX = "agones.dev/sdk-"
TERMINAL = ("Unhealthy", "Shutdown")
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def is_qualified_name(key):
    """Kubernetes validation.IsQualifiedName: [prefix/]name, name <= 63 chars, prefix a DNS subdomain."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not DNS_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and QUALIFIED_NAME.match(name) is not None


class GrpcError(Exception):
    """An error as grpc-gateway writes it: the HTTP status of the gRPC code, and a google.rpc.Status body."""

    def __init__(self, http_status, code, message):
        super().__init__(message)
        self.http_status = http_status
        self.code = code
        self.message = message


def int64(value):
    """protojson reads an int64 from a JSON string or number."""
    if isinstance(value, bool):
        raise GrpcError(400, 3, "bad int64")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value):
        return int(value)
    raise GrpcError(400, 3, "bad int64 value %r" % (value,))


class GameServer:
    def __init__(self, health_period_s, failure_threshold, player_tracking):
        self.cond = threading.Condition()
        self.state = "Scheduled"
        self.labels = {}
        self.annotations = {}
        self.version = 1
        self.health_period_s = health_period_s
        self.failure_threshold = failure_threshold
        self.player_tracking = player_tracking
        self.health_count = 0
        self.health_last = time.monotonic()
        self.health_failures = 0
        self.capacity = 0
        self.game_port = 0  # --game-port
        self.initial_delay_s = 0.0  # --initial-delay-s
        self.players = []
        self.ignored = 0
        self.log = []
        self.stopping = False

    # All below with self.cond held.
    def events(self):
        return len(self.log) + self.version

    def changed(self):
        self.version += 1
        self.cond.notify_all()

    def set_state(self, state):
        if self.state in TERMINAL:
            self.ignored += 1
            return False
        if self.state != state:
            self.state = state
            self.changed()
        return True

    def as_json(self):
        return {
            "object_meta": {
                "name": "shiftcast-standin",
                "namespace": "default",
                "uid": "00000000-0000-0000-0000-000000000001",
                "resource_version": str(self.version),
                "generation": "1",
                "creation_timestamp": "1700000000",
                "deletion_timestamp": "0",
                "annotations": dict(self.annotations),
                "labels": dict(self.labels),
            },
            "spec": {
                "health": {
                    "disabled": False,
                    "period_seconds": max(1, int(self.health_period_s)),
                    "failure_threshold": self.failure_threshold,
                    "initial_delay_seconds": int(self.initial_delay_s),
                }
            },
            "status": {
                "state": self.state,
                "address": "127.0.0.1",
                "addresses": [],
                "ports": [{"name": "game", "port": self.game_port}] if self.game_port else [],
                "players": {"count": str(len(self.players)), "capacity": str(self.capacity),
                            "ids": list(self.players)},
                "counters": {},
                "lists": {},
            },
        }

    def check_health(self):
        """pkg/sdkserver checkHealth + healthy: a failure per period without a ping; threshold: Unhealthy."""
        if time.monotonic() - self.health_last > self.health_period_s:
            self.health_failures += 1
        if self.health_failures >= self.failure_threshold and self.state not in TERMINAL:
            self.state = "Unhealthy"
            self.changed()


class SdkRoutes:
    """The call table: path -> {method: handler(body) -> response object}."""

    def __init__(self, gs):
        self.gs = gs
        self.table = {
            "/ready": {"POST": self.ready},
            "/allocate": {"POST": self.allocate},
            "/reserve": {"POST": self.reserve},
            "/shutdown": {"POST": self.shutdown},
            "/health": {"POST": self.health},
            "/gameserver": {"GET": self.get_game_server},
            "/watch/gameserver": {"GET": None},  # streamed by the handler itself
            "/metadata/annotation": {"PUT": self.set_annotation},
            "/metadata/label": {"PUT": self.set_label},
            "/alpha/player/capacity": {"GET": self.get_capacity, "PUT": self.set_capacity},
            "/alpha/player/connect": {"POST": self.player_connect},
            "/alpha/player/disconnect": {"POST": self.player_disconnect},
            "/alpha/player/connected": {"GET": self.connected_players},
            "/alpha/player/count": {"GET": self.player_count},
        }

    def route(self, path):
        if path in self.table:
            return self.table[path], {}
        m = re.fullmatch(r"/alpha/player/connected/([^/]+)", path)
        if m:
            return {"GET": self.is_connected}, {"playerID": m.group(1)}
        return None, None

    def ready(self, body, _):
        if self.gs.set_state("RequestReady"):
            self.gs.set_state("Ready")
        return {}

    def allocate(self, body, _):
        self.gs.set_state("Allocated")
        return {}

    def reserve(self, body, _):
        int64(body.get("seconds", "0"))
        self.gs.set_state("Reserved")
        return {}

    def shutdown(self, body, _):
        self.gs.set_state("Shutdown")
        return {}

    def health(self, body, _):
        self.gs.health_count += 1
        self.gs.health_last = time.monotonic()
        self.gs.health_failures = 0
        return {}

    def get_game_server(self, body, _):
        return self.gs.as_json()

    def metadata(self, body, store, what):
        key = body.get("key", "")
        if not isinstance(key, str) or not is_qualified_name(key):
            raise GrpcError(400, 3, "invalid %s key %r" % (what, key))
        value = body.get("value", "")
        if not isinstance(value, str):
            raise GrpcError(400, 3, "invalid %s value" % what)
        store[METADATA_PREFIX + key] = value
        self.gs.changed()
        return {}

    def set_annotation(self, body, _):
        return self.metadata(body, self.gs.annotations, "annotation")

    def set_label(self, body, _):
        return self.metadata(body, self.gs.labels, "label")

    def tracking(self):
        if not self.gs.player_tracking:
            raise GrpcError(500, 2, "PlayerTracking not enabled")

    def get_capacity(self, body, _):
        self.tracking()
        return {"count": str(self.gs.capacity)}

    def set_capacity(self, body, _):
        self.tracking()
        self.gs.capacity = int64(body.get("count", "0"))
        self.gs.changed()
        return {}

    def player_connect(self, body, _):
        self.tracking()
        pid = body.get("playerID", "")
        if pid in self.gs.players:
            return {"bool": False}
        if len(self.gs.players) >= self.gs.capacity:
            raise GrpcError(500, 2, "players are already at capacity")
        self.gs.players.append(pid)
        self.gs.changed()
        return {"bool": True}

    def player_disconnect(self, body, _):
        self.tracking()
        pid = body.get("playerID", "")
        if pid not in self.gs.players:
            return {"bool": False}
        self.gs.players.remove(pid)
        self.gs.changed()
        return {"bool": True}

    def connected_players(self, body, _):
        self.tracking()
        return {"list": list(self.gs.players)}

    def player_count(self, body, _):
        self.tracking()
        return {"count": str(len(self.gs.players))}

    def is_connected(self, body, params):
        self.tracking()
        return {"bool": params["playerID"] in self.gs.players}


def make_sdk_handler(gs, routes):
    class SdkHandler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, status, obj):
            data = json.dumps(obj, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0]
            methods, params = routes.route(path)
            status, obj = 200, None
            with gs.cond:
                try:
                    if methods is None:
                        raise GrpcError(404, 5, "Not Found")
                    if self.command not in methods:
                        raise GrpcError(501, 12, "Method Not Allowed")
                    if path == "/watch/gameserver":
                        gs.log.append("%s %s 200 %s -" % (self.command, path, gs.state))
                    else:
                        try:
                            body = json.loads(raw) if raw.strip() else {}
                        except ValueError as e:
                            raise GrpcError(400, 3, "invalid JSON: %s" % e)
                        if not isinstance(body, dict):
                            raise GrpcError(400, 3, "the body must be a JSON object")
                        ignored_before = gs.ignored
                        obj = methods[self.command](body, params)
                        note = " ignored" if gs.ignored != ignored_before else ""
                        gs.log.append("%s %s 200 %s%s %s" % (self.command, path, gs.state, note,
                                                             raw.decode(errors="replace") or "-"))
                except GrpcError as e:
                    status, obj = e.http_status, {"code": e.code, "message": e.message, "details": []}
                    gs.log.append("%s %s %d %s %s" % (self.command, path, status, gs.state,
                                                      raw.decode(errors="replace") or "-"))
                gs.cond.notify_all()  # a long poll of /control/state waits for the log to grow
            if path == "/watch/gameserver" and status == 200:
                return self.stream()
            self.reply(status, obj)

        def stream(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            seen = 0
            try:
                while True:
                    with gs.cond:
                        while gs.version == seen and not gs.stopping:
                            gs.cond.wait(0.5)
                        if gs.stopping:
                            break
                        seen = gs.version
                        line = json.dumps({"result": gs.as_json()}, separators=(",", ":")) + "\n"
                    data = line.encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

    return SdkHandler


def make_control_handler(gs, open_sdk):
    class ControlHandler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, status, text):
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            path, _, query = self.path.partition("?")
            with gs.cond:
                if path == "/control/state":
                    # ?after=N: a long poll, answered once events > N (a call logged or a state change),
                    # or after 5 s: the test waits for the next event, never for a fixed time.
                    after = int(query[len("after="):]) if query.startswith("after=") else -1
                    gs.cond.wait_for(lambda: gs.events() > after or gs.stopping, timeout=5)
                    lines = ["events=%d" % gs.events(), "state=%s" % gs.state, "health=%d" % gs.health_count,
                             "capacity=%d" % gs.capacity, "players=%s" % ",".join(gs.players),
                             "ignored=%d" % gs.ignored]
                    lines += ["annotation %s=%s" % kv for kv in sorted(gs.annotations.items())]
                    lines += ["label %s=%s" % kv for kv in sorted(gs.labels.items())]
                    return self.reply(200, "\n".join(lines) + "\n")
                if path == "/control/log":
                    return self.reply(200, "".join(line + "\n" for line in gs.log))
            self.reply(404, "unknown control path\n")

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            if self.path == "/control/open":
                open_sdk()
                return self.reply(200, "open\n")
            if self.path == "/control/allocate":
                body = json.loads(raw or b"{}")
                with gs.cond:
                    if gs.state != "Ready":
                        return self.reply(409, "cannot allocate a GameServer in state %s\n" % gs.state)
                    gs.labels.update(body.get("labels", {}))
                    gs.annotations.update(body.get("annotations", {}))
                    gs.state = "Allocated"
                    gs.changed()
                return self.reply(200, "allocated\n")
            self.reply(404, "unknown control path\n")

    return ControlHandler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--closed", action="store_true", help="refuse SDK connections until /control/open")
    parser.add_argument("--health-period-s", type=float, default=0.5)
    parser.add_argument("--failure-threshold", type=int, default=5)
    parser.add_argument("--no-player-tracking", action="store_true")
    parser.add_argument("--initial-delay-s", type=float, default=0.0,
                        help="health.initialDelaySeconds: no health failure is counted before it has passed")
    parser.add_argument("--game-port", type=int, default=0,
                        help="status.ports gets {name: game, port: N}, as Agones' Dynamic port policy fills it")
    args = parser.parse_args()

    gs = GameServer(args.health_period_s, args.failure_threshold, not args.no_player_tracking)
    gs.game_port = args.game_port
    gs.initial_delay_s = args.initial_delay_s
    routes = SdkRoutes(gs)
    sdk = Server(("127.0.0.1", 0), make_sdk_handler(gs, routes), bind_and_activate=False)
    sdk.server_bind()  # the port is ours, but nothing listens: a connect is refused until it opens
    opened = threading.Event()
    open_lock = threading.Lock()

    def open_sdk():
        with open_lock:
            if opened.is_set():
                return
            sdk.server_activate()
            threading.Thread(target=sdk.serve_forever, daemon=True).start()
            with gs.cond:
                # The health clock starts with the sidecar, after the GameServer's initialDelaySeconds (as
                # sdkserver's initHealthLastUpdated does).
                gs.health_last = time.monotonic() + gs.initial_delay_s
            opened.set()

            def checker():
                while True:
                    time.sleep(args.health_period_s)
                    with gs.cond:
                        if gs.stopping:
                            return
                        gs.check_health()

            threading.Thread(target=checker, daemon=True).start()

    control = Server(("127.0.0.1", 0), make_control_handler(gs, open_sdk))
    threading.Thread(target=control.serve_forever, daemon=True).start()
    if not args.closed:
        open_sdk()

    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    print("agones-standin sdk=%d control=%d" % (sdk.server_address[1], control.server_address[1]), flush=True)
    while not done.wait(0.2):
        pass
    with gs.cond:
        gs.stopping = True
        gs.cond.notify_all()
    control.shutdown()
    if opened.is_set():
        sdk.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
