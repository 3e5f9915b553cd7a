#!/usr/bin/env bash
# Installs the dependencies, builds everything and runs the main job. Until the server lands (a later
# issue) the main job is the level demo: it builds a 1,200-brush procedural level into a BSP, prints the
# build statistics and sweeps players, spheres and rays through it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
build/world/shiftcast-demo "$@"
