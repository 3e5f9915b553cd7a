#!/usr/bin/python3
"""Checks the deploy files (Dockerfile, configs/deploy/*) against each other and against the real server.

There is no Docker engine and no Kubernetes cluster where shiftcast is built, so the image is not built
and the manifests are not applied here; what can be checked from outside is checked:
  - the Fleet's template spec is the GameServer's spec (one spec, two files);
  - the ports of the GameServer, the image (EXPOSE, HEALTHCHECK) and the deploy config agree;
  - the player capacity is the config's max_players; Agones' health window outlasts two of the server's
    health periods;
  - the binaries the Dockerfile copies are what the build makes;
  - the real shiftcast-server runs on the deploy config (keys and level paths swapped for local ones,
    listeners on loopback) under the Agones sidecar stand-in (tests/server/agones/sidecar_standin.py): it
    takes its public address from the GameServer's status (public_address = "agones"), publishes its
    instance before Ready, and creates the match the example allocation's annotations ask for;
  - every metric the Prometheus rules name is one that server then exports.

Usage: check_deploy_files.py SOURCE_DIR BUILD_DIR      (ctest: DeployFiles)
"""
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import tomllib
import urllib.request

import yaml

DEPLOY = "configs/deploy"


def load_yaml(src, name):
    with open(os.path.join(src, DEPLOY, name)) as f:
        return yaml.safe_load(f)


def check(failures, ok, what):
    if not ok:
        failures.append(what)


def container(spec):
    return spec["template"]["spec"]["containers"][0]


def dockerfile_facts(src):
    text = open(os.path.join(src, "Dockerfile")).read()
    exposed = set()
    for line in re.findall(r"^EXPOSE (.*)$", text, re.M):
        exposed.update(line.split())
    health_port = re.search(r"HEALTHCHECK[\s\S]*?http://127\.0\.0\.1:(\d+)/healthz", text)
    copied = re.findall(r"COPY --from=build (.*) /opt/shiftcast/bin/", text)
    binaries = [p for line in copied for p in line.split()]
    return exposed, int(health_port.group(1)) if health_port else None, binaries


def start_standin(src, game_port, health):
    """The stand-in with the GameServer's own health settings (a sanitized server takes seconds to load its
    levels, as a real one may: that is what initialDelaySeconds is for)."""
    process = subprocess.Popen(
        ["/usr/bin/python3", os.path.join(src, "tests/server/agones/sidecar_standin.py"), "--game-port",
         str(game_port), "--health-period-s", str(health["periodSeconds"]), "--failure-threshold",
         str(health["failureThreshold"]), "--initial-delay-s", str(health["initialDelaySeconds"])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.match(r"agones-standin sdk=(\d+) control=(\d+)", process.stdout.readline())
    if not m:
        process.kill()
        raise RuntimeError("the sidecar stand-in did not start: " + process.stderr.read())
    return process, int(m.group(1)), int(m.group(2))


def standin_state(control, after=-1):
    """The stand-in's state lines once its event count exceeds `after` (its long poll: at most 5 s)."""
    url = f"http://127.0.0.1:{control}/control/state" + (f"?after={after}" if after >= 0 else "")
    lines = urllib.request.urlopen(url, timeout=10).read().decode().splitlines()
    state = dict(line.split("=", 1) for line in lines if not line.startswith(("annotation ", "label ")))
    state["annotations"] = dict(line[len("annotation "):].split("=", 1) for line in lines
                                if line.startswith("annotation "))
    return state


def wait_standin(control, ready, what, polls=12):
    """Long-polls the stand-in until ready(state) holds: each poll waits for its next event, never a fixed
    time."""
    state = standin_state(control)
    for _ in range(polls):
        if ready(state):
            return state
        state = standin_state(control, int(state["events"]))
    raise RuntimeError("the stand-in never saw " + what + ": " + repr(state))


def start_server(src, build, config, work, sdk_port):
    """Starts the server on the deploy config (local keys and levels, loopback listeners) under the
    stand-in; returns the process and the fields of its listening line."""
    keys = {}
    for name in ("token", "previous_token", "admin", "service", "spectator"):
        path = os.path.join(work, name + ".key")
        with open(path, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
        keys[name] = path
    text = open(os.path.join(src, DEPLOY, "server.toml")).read()
    for name in ("token", "admin", "service", "spectator"):
        text = text.replace(f'"/etc/shiftcast/keys/{name}.key"', '"' + keys[name] + '"')
    text = text.replace('previous_token_key_file = ""', 'previous_token_key_file = "' + keys["previous_token"] + '"')
    for level in config["level"]:
        bsp = os.path.join(src, "data/openarena/maps", level["name"] + ".bsp")
        local = os.path.join(src, "configs/levels", level["name"] + ".map")
        replacement = local if os.path.exists(local) else bsp if os.path.exists(bsp) else os.path.join(
            src, "configs/levels/arena.map")
        text = text.replace('"' + level["path"] + '"', '"' + replacement + '"')
    path = os.path.join(work, "server.toml")
    with open(path, "w") as f:
        f.write(text)
    env = dict(os.environ)
    env["AGONES_SDK_HTTP_PORT"] = str(sdk_port)  # as Agones sets it in the game server's container
    process = subprocess.Popen(
        [os.path.join(build, "server/shiftcast-server"), "--config", path, "--udp-port", "0", "--rpc-port", "0",
         "--http-port", "0", "--udp-bind-address", "127.0.0.1", "--rpc-bind-address", "127.0.0.1",
         "--http-bind-address", "127.0.0.1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    for line in process.stdout:
        m = re.search(r"shiftcast-server listening udp=\d+ rpc=\d+ http=(\d+) address=(\S+) instance=([0-9a-f]+)",
                      line)
        if m:
            return process, {"http": int(m.group(1)), "address": m.group(2), "instance": m.group(3)}
    process.wait()
    raise RuntimeError("the server did not start on the deploy config: " + process.stderr.read())


def exported_metric_names(http_port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=10).read().decode()
    names = set()
    for line in text.splitlines():
        m = re.match(r"# TYPE (\S+) (\S+)", line)
        if m:
            names.add(m.group(1))
            if m.group(2) == "histogram":
                names.update(m.group(1) + s for s in ("_bucket", "_count", "_sum"))
    return names


def rule_metric_names(rules):
    names = set()
    for group in rules["groups"]:
        for rule in group["rules"]:
            names.update(re.findall(r"\b((?:shiftcast|process)_[a-z_]+)\b", rule["expr"]))
    return names


def main():
    src, build = sys.argv[1], sys.argv[2]
    failures = []
    gameserver = load_yaml(src, "gameserver.yaml")
    fleet = load_yaml(src, "fleet.yaml")
    rules = load_yaml(src, "prometheus-rules.yaml")
    allocation = load_yaml(src, "allocation.yaml")
    with open(os.path.join(src, DEPLOY, "server.toml"), "rb") as f:
        config = tomllib.load(f)

    check(failures, gameserver["kind"] == "GameServer" and fleet["kind"] == "Fleet", "kinds")
    check(failures, fleet["spec"]["template"]["spec"] == gameserver["spec"],
          "fleet.yaml's template spec differs from gameserver.yaml's spec")

    network, match = config["network"], config["match"]
    ports = {p["name"]: p for p in gameserver["spec"]["ports"]}
    check(failures, ports.get("game", {}).get("containerPort") == network["udp_port"] and
          ports["game"].get("protocol") == "UDP", "the game port is not the config's UDP port")
    check(failures, ports.get("rpc", {}).get("containerPort") == network["rpc_port"] and
          ports["rpc"].get("protocol") == "TCP", "the rpc port is not the config's RPC port")
    http = [p["containerPort"] for p in container(gameserver["spec"]).get("ports", []) if p["name"] == "http"]
    check(failures, http == [network["http_port"]], "the container's http port is not the config's")
    annotations = gameserver["spec"]["template"]["metadata"]["annotations"]
    check(failures, annotations.get("prometheus.io/port") == str(network["http_port"]), "scrape port")

    exposed, health_port, binaries = dockerfile_facts(src)
    check(failures, exposed == {f"{network['udp_port']}/udp", f"{network['rpc_port']}/tcp",
                                f"{network['http_port']}/tcp"}, f"Dockerfile EXPOSE {sorted(exposed)}")
    check(failures, health_port == network["http_port"], "the HEALTHCHECK's port is not the HTTP port")
    for binary in binaries:
        built = os.path.join(build, binary.removeprefix("/src/build/"))
        check(failures, os.access(built, os.X_OK), f"the Dockerfile copies {binary}, which the build does not make")
    check(failures, len(binaries) == 3, f"the Dockerfile copies {len(binaries)} programs, not 3")

    check(failures, gameserver["spec"]["players"]["initialCapacity"] == match["max_players"],
          "player capacity is not [match] max_players")
    health = gameserver["spec"]["health"]
    beat_ms = config["agones"]["health_period_ms"]
    check(failures, health["periodSeconds"] * 1000 >= 2 * beat_ms,
          "Agones' health period is shorter than two of the server's beats")

    # The deploy config, run: under the stand-in, allocated with the example allocation's annotations.
    host_port = 47123  # what Agones' Dynamic port policy maps to the container's game port
    annotations = allocation["spec"]["metadata"]["annotations"]
    standin, sdk_port, control = start_standin(src, host_port, gameserver["spec"]["health"])
    try:
        with tempfile.TemporaryDirectory() as work:
            process, listening = start_server(src, build, config, work, sdk_port)
            try:
                check(failures, listening["address"] == f"127.0.0.1:{host_port}",
                      f"the public address is {listening['address']}, not the GameServer's 127.0.0.1:{host_port}")
                ready = wait_standin(control, lambda st: st["state"] == "Ready", "Ready")
                published = ready["annotations"]
                check(failures, published.get("agones.dev/sdk-shiftcast-server-instance") ==
                      listening["instance"].rjust(16, "0"), "the instance annotation is not the server's")
                match_id = published.get("agones.dev/sdk-shiftcast-match-id", "")
                check(failures, match_id.isdigit(), "no match id annotation before Ready")
                body = json.dumps({"annotations": annotations}).encode()
                urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{control}/control/allocate",
                                                              data=body, method="POST"), timeout=10).read()
                capacity = annotations["shiftcast.dev/max-players"]
                wait_standin(control, lambda st: st["capacity"] == capacity, "the allocated match's capacity")
                exported = exported_metric_names(listening["http"])
                metrics = urllib.request.urlopen(f"http://127.0.0.1:{listening['http']}/metrics",
                                                 timeout=10).read().decode()
                check(failures, f'shiftcast_players{{match="{match_id}"}}' in metrics,
                      "the allocation's match is not in /metrics")
            finally:
                process.terminate()
                process.wait(timeout=30)
    finally:
        standin.terminate()
        standin.wait(timeout=30)
    for name in sorted(rule_metric_names(rules)):
        check(failures, name in exported, f"prometheus-rules.yaml names {name}, which the server does not export")

    for f in failures:
        print("FAIL:", f)
    print(f"check_deploy_files: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
