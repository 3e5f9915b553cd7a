# shiftcast-server as a container image: Debian bookworm (the distribution the project builds and tests
# on), the server, shiftcast-level and shiftcast-token, the shipped levels compiled ahead, a non-root user.
#
#   docker build -t shiftcast .
#   docker run --rm -p 40000:40000/udp -p 40001:40001 -p 40002:40002 \
#     -v /path/to/keys:/etc/shiftcast/keys:ro shiftcast
#
# The image's config is configs/deploy/server.toml (keys from /etc/shiftcast/keys, a Kubernetes Secret in
# configs/deploy/gameserver.yaml; no development key is in the image). docs/deploy.md explains the rest.

# --- build: the same packages as scripts/install-deps.sh, less the browser, the peers and the fuzzers.
FROM debian:bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config ca-certificates unzip \
      libboost-dev libboost-system-dev libflatbuffers-dev flatbuffers-compiler librecast-dev \
      libspdlog-dev libfmt-dev libsodium-dev libtomlplusplus-dev \
      libgtest-dev libgmock-dev python3-flatbuffers
WORKDIR /src
COPY . .
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHIFTCAST_BENCH=OFF \
 && cmake --build build --target shiftcast-server shiftcast-level shiftcast-token
# Levels compiled ahead (BSP, visible set, navmesh), so a pod is Ready in milliseconds, not seconds:
# OpenArena's maps from Debian's openarena-081-maps (GPL-2+), and the .map levels of configs/levels.
RUN scripts/fetch-openarena-maps.sh \
 && mkdir -p /out/levels \
 && for m in oa_dm1 oa_dm4; do build/world/tools/shiftcast-level import data/openarena/maps/$m.bsp -o /out/levels/$m.level; done \
 && for m in arena valve220_room; do build/world/tools/shiftcast-level import configs/levels/$m.map -o /out/levels/$m.level; done

# --- runtime: the shared libraries the three programs link, curl for the health check, nothing else.
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libsodium23 libspdlog1.10 libfmt9 librecast1 libtomlplusplus3 curl ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin shiftcast
COPY --from=build /src/build/server/shiftcast-server /src/build/world/tools/shiftcast-level /opt/shiftcast/bin/
COPY --from=build /src/build/tools/token/shiftcast-token /opt/shiftcast/bin/
COPY --from=build /out/levels/ /opt/shiftcast/levels/
COPY configs/deploy/server.toml /etc/shiftcast/server.toml
USER 10001:10001
# UDP for players, TCP for the RPC (queries, admin), TCP for HTTP (/metrics, /healthz, the dashboard).
EXPOSE 40000/udp 40001/tcp 40002/tcp
HEALTHCHECK --interval=10s --timeout=2s --start-period=10s --retries=3 \
  CMD curl -fsS http://127.0.0.1:40002/healthz >/dev/null || exit 1
ENTRYPOINT ["/opt/shiftcast/bin/shiftcast-server", "--config", "/etc/shiftcast/server.toml"]
