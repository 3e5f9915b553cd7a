#!/usr/bin/env bash
# Fetches real Quake III (IBSP v46) maps for the importer tests and tools: OpenArena 0.8.1's maps from the
# Debian package openarena-081-maps (GPL-2+), whose single pak1-maps.pk3 holds 50 .bsp files.
#
# Maps extracted (all from baseoa/pak1-maps.pk3):
#   oa_dm1      small deathmatch arena
#   oa_dm4      deathmatch, curved patches
#   oa_rpg3dm2  deathmatch, many patches
#   wrackdm17   large deathmatch, many brushes
#   oa_ctf2     capture the flag (team_CTF_* spawns)
#
# Idempotent: the .deb, the extracted package and the maps are kept under data/openarena/ (data/ is
# gitignored) and nothing is downloaded or extracted again once the maps are there.
# Usage: scripts/fetch-openarena-maps.sh        (prints the maps directory on its last line)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="$root/data/openarena"
maps_dir="$cache/maps"
maps=(oa_dm1 oa_dm4 oa_rpg3dm2 wrackdm17 oa_ctf2)
package=openarena-081-maps
pk3_in_package=usr/share/games/openarena/baseoa/pak1-maps.pk3

have_all_maps() {
  for m in "${maps[@]}"; do
    [ -s "$maps_dir/$m.bsp" ] || return 1
  done
}

if have_all_maps; then
  echo "fetch-openarena-maps: ${#maps[@]} maps present"
  echo "$maps_dir"
  exit 0
fi

mkdir -p "$cache" "$maps_dir"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

# unzip is not part of a minimal Debian; install it the ordinary way when missing.
if ! command -v unzip >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends unzip ||
    { "${sudo_cmd[@]}" apt-get update -qq && "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends unzip; }
fi

deb="$(ls "$cache"/${package}_*.deb 2>/dev/null | head -n 1 || true)"
if [ -z "$deb" ]; then
  # apt-get download writes into the current directory. As root it warns that the _apt user cannot write
  # there; the download still succeeds.
  if ! (cd "$cache" && apt-get download "$package"); then
    echo "fetch-openarena-maps: apt-get download failed; updating the package lists and retrying"
    "${sudo_cmd[@]}" apt-get update -qq
    (cd "$cache" && apt-get download "$package")
  fi
  deb="$(ls "$cache"/${package}_*.deb | head -n 1)"
fi

pk3="$cache/extracted/$pk3_in_package"
if [ ! -s "$pk3" ]; then
  rm -rf "$cache/extracted"
  dpkg-deb -x "$deb" "$cache/extracted"
fi

echo "fetch-openarena-maps: .bsp files in $(basename "$pk3"):"
unzip -l "$pk3" 'maps/*.bsp' | awk '/maps\/.*\.bsp$/ {print "  " $4}' | tr '\n' ' '
echo

for m in "${maps[@]}"; do
  if [ ! -s "$maps_dir/$m.bsp" ]; then
    # -j drops the maps/ folder, -o overwrites a partial file left by an interrupted run.
    unzip -j -o -q "$pk3" "maps/$m.bsp" -d "$maps_dir"
  fi
done

have_all_maps || { echo "fetch-openarena-maps: some maps are missing from $maps_dir" >&2; exit 1; }
ls -l "$maps_dir"
echo "fetch-openarena-maps: ${#maps[@]} maps in:"
echo "$maps_dir"
