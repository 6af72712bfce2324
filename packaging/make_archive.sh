#!/usr/bin/env bash
# Builds the release archive dist/freednn-<version>-linux-x86_64.tar.gz: the install tree of
# an existing build (cmake --install), a README at the top, and share/freednn/SHA256SUMS
# covering every file (README included), so `freednn verify DIR` accepts the unpacked tree.
#   usage: packaging/make_archive.sh [BUILD_DIR (default build)] [OUT_DIR (default dist)]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
build=${1:-$src/build}
out=${2:-$src/dist}
[ -f "$build/CMakeCache.txt" ] || { echo "make_archive: $build is not a configured build directory (run cmake -S . -B build && cmake --build build first)" >&2; exit 2; }
[ -n "${FREEDNN_ARCHIVE_NO_BUILD:-}" ] || cmake --build "$build" -j2 >/dev/null
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || version=$(grep -Po 'project\(FreeDNN VERSION \K[0-9.]+' "$src/CMakeLists.txt")
arch=$(uname -m)
name=freednn-$version-linux-$arch
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$build" --prefix "$stage/$name" >/dev/null
sed "s/@VERSION@/$version/g" "$here/README.archive" > "$stage/$name/README"
# add the README to the manifest (sha256sum format, sorted like the rest)
sums="$stage/$name/share/freednn/SHA256SUMS"
(cd "$stage/$name" && sha256sum README) >> "$sums"
sort -k2 -o "$sums" "$sums"
mkdir -p "$out"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2024-01-01 00:00Z' \
    -C "$stage" -czf "$out/$name.tar.gz" "$name"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "$out/$name.tar.gz"
