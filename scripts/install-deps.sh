#!/usr/bin/env bash
# Installs every build, test and benchmark dependency of shiftcast from Debian bookworm packages.
# Idempotent: packages already present are skipped, so running it twice costs one dpkg query.
# Usage (as root): scripts/install-deps.sh
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang-format unzip
  ccache  # scripts/test.sh: a later build of the same sources (the next CI run) compiles only what changed
  clang libclang-rt-14-dev  # the sanitizer build and the libFuzzer targets (fuzz/)
  libboost-dev libboost-system-dev
  libflatbuffers-dev flatbuffers-compiler
  librecast-dev
  libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libbullet-dev libembree-dev
  libsodium-dev libtomlplusplus-dev python3-flatbuffers curl
  python3-nacl  # tests/contract/mint_token.py: the reference token minting (XChaCha20-Poly1305)
  chromium chromium-driver python3-selenium  # the report page read in a real browser (tests/browser/)
  python3-yaml  # the deploy files checked (tests/deploy/)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
