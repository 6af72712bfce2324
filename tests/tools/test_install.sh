#!/usr/bin/env bash
# Install into a temporary prefix, check `freednn verify` (OK, then tampered, deleted and added
# files are each reported), relocate the tree, and build hello.c against it three ways:
# plain -I/-L/-lcudnn, pkg-config, and a CMake project with find_package(FreeDNN)/(CUDNN).
#   usage: test_install.sh BUILD_DIR SOURCE_DIR
set -u
build=$1; src=$2; here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
ok()   { passes=$((passes+1)); }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
check() { if eval "$1"; then ok; else fail "$2"; fi; }

pfx=$tmp/prefix
cmake --install "$build" --prefix "$pfx" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; echo "install failed"; exit 1; }
for f in include/cudnn.h include/freednn.h include/cudnn_version.h lib/libcudnn.so.8.9.7 lib/libcudnn.so.8 lib/libcudnn.so \
         lib/libcudnn_static.a lib/libcudnn_ops_infer.so.8 lib/libcudnn_adv_train.so.8 bin/freednn \
         lib/pkgconfig/cudnn.pc lib/pkgconfig/freednn.pc lib/cmake/FreeDNN/FreeDNNConfig.cmake \
         lib/cmake/FreeDNN/FreeDNNConfigVersion.cmake lib/cmake/CUDNN/CUDNNConfig.cmake share/freednn/SHA256SUMS; do
  check "[ -e '$pfx/$f' ]" "installed tree lacks $f"
done
check "readelf -d '$pfx/lib/libcudnn.so.8.9.7' | grep -q 'RUNPATH.*\\\$ORIGIN'" "libcudnn.so.8.9.7 has no RUNPATH \$ORIGIN"
check "readelf -d '$pfx/bin/freednn' | grep -q '(RPATH).*\\\$ORIGIN/../lib'" "freednn has no RPATH \$ORIGIN/../lib"
nsums=$(wc -l < "$pfx/share/freednn/SHA256SUMS"); nfiles=$(cd "$pfx" && find . -type f -o -type l | grep -v SHA256SUMS | wc -l)
check "[ $nsums -eq $nfiles ]" "SHA256SUMS lists $nsums files, the tree has $nfiles"
check "(cd '$pfx' && sha256sum -c --quiet share/freednn/SHA256SUMS)" "sha256sum -c disagrees with the manifest"

# ---- verify
if "$pfx/bin/freednn" verify "$pfx" > "$tmp/v.out" 2>&1; then
  check "grep -q -- '-> OK' '$tmp/v.out'" "verify OK line missing"
  check "'$pfx/bin/freednn' verify > /dev/null" "verify without DIR (its own prefix) failed"
  echo tampered >> "$pfx/include/cudnn.h"
  rm "$pfx/lib/libcudnn_static.a"
  echo extra > "$pfx/lib/intruder.txt"
  "$pfx/bin/freednn" verify "$pfx" > "$tmp/v2.out" 2>&1; rc=$?
  check "[ $rc -eq 1 ]" "verify of a tampered tree exited $rc, not 1"
  check "grep -q '^MODIFIED include/cudnn.h' '$tmp/v2.out'" "verify did not list the modified file"
  check "grep -q '^MISSING  lib/libcudnn_static.a' '$tmp/v2.out'" "verify did not list the missing file"
  check "grep -q '^EXTRA    lib/intruder.txt' '$tmp/v2.out'" "verify did not list the extra file"
  "$pfx/bin/freednn" verify "$tmp/nowhere" > /dev/null 2>&1; rc=$?
  check "[ $rc -eq 2 ]" "verify of a directory without manifest exited $rc, not 2"
  cat "$tmp/v2.out"
  # restore the tree for the consumers
  rm -rf "$pfx"; cmake --install "$build" --prefix "$pfx" > /dev/null
elif grep -q "without OpenSSL" "$tmp/v.out"; then
  echo "SKIP verify checks: freednn built without OpenSSL"
else
  cat "$tmp/v.out"; fail "verify of a fresh install failed"
fi

# ---- relocation: move the tree, everything still works
mv "$pfx" "$tmp/moved"; pfx=$tmp/moved
check "'$pfx/bin/freednn' version | grep -q 'cuDNN API 8.9.7'" "relocated freednn does not run"

# ---- consumers
hello=$here/hello.c
cf=${FDNN_CONSUMER_CFLAGS:-}
export FREEDNN_BACKEND=cpu
cc $cf -std=c99 -o "$tmp/hello_plain" "$hello" -I"$pfx/include" -L"$pfx/lib" -lcudnn -Wl,-rpath,"$pfx/lib" 2> "$tmp/cc1.log" \
  || { cat "$tmp/cc1.log"; fail "plain -I/-L/-lcudnn build failed"; }
check "'$tmp/hello_plain' | grep -q 'cuDNN v8.9.7 initialized successfully.'" "plain build does not run"
check "ldd '$tmp/hello_plain' | grep -q '$pfx/lib/libcudnn.so.8'" "plain build does not load the installed libcudnn.so.8"
cc $cf -std=c99 -o "$tmp/hello_static" "$hello" -I"$pfx/include" "$pfx/lib/libcudnn_static.a" \
   $(PKG_CONFIG_PATH="$pfx/lib/pkgconfig" pkg-config --static --libs cudnn | sed 's/-lcudnn\( \|$\)/ /') 2> "$tmp/cc3.log" \
  || { cat "$tmp/cc3.log"; fail "static build failed"; }
check "'$tmp/hello_static' | grep -q 'initialized successfully.'" "static build does not run"
if command -v pkg-config > /dev/null; then
  flags=$(PKG_CONFIG_PATH="$pfx/lib/pkgconfig" pkg-config --cflags --libs cudnn)
  check "PKG_CONFIG_PATH='$pfx/lib/pkgconfig' pkg-config --modversion cudnn | grep -qx 8.9.7" "cudnn.pc version is not 8.9.7"
  check "PKG_CONFIG_PATH='$pfx/lib/pkgconfig' pkg-config --exists freednn" "freednn.pc missing"
  cc $cf -std=c99 -o "$tmp/hello_pc" "$hello" $flags 2> "$tmp/cc2.log" || { cat "$tmp/cc2.log"; fail "pkg-config build failed ($flags)"; }
  check "'$tmp/hello_pc' | grep -q 'cuDNN v8.9.7 initialized successfully.'" "pkg-config build does not run"
else
  echo "SKIP pkg-config: not installed"
fi
if cmake -S "$here/consumer" -B "$tmp/cbuild" -DCMAKE_PREFIX_PATH="$pfx" -DHELLO_SRC="$hello" -DCMAKE_C_FLAGS="$cf" > "$tmp/cm.log" 2>&1 \
   && cmake --build "$tmp/cbuild" >> "$tmp/cm.log" 2>&1; then
  check "'$tmp/cbuild/hello_freednn' | grep -q 'cuDNN v8.9.7 initialized successfully.'" "find_package(FreeDNN) build does not run"
  check "'$tmp/cbuild/hello_cudnn' | grep -q 'cuDNN v8.9.7 initialized successfully.'" "find_package(CUDNN) build does not run"
else
  cat "$tmp/cm.log"; fail "CMake consumer project failed"
fi

# ---- the release archive
if FREEDNN_ARCHIVE_NO_BUILD=1 "$src/packaging/make_archive.sh" "$build" "$tmp/dist" > "$tmp/arch.log" 2>&1; then
  tgz=$(ls "$tmp"/dist/freednn-*-linux-*.tar.gz)
  mkdir "$tmp/unpacked" && tar -C "$tmp/unpacked" -xzf "$tgz"
  d=$(ls -d "$tmp"/unpacked/freednn-*)
  check "[ -f '$d/README' ]" "archive has no README"
  if "$d/bin/freednn" verify "$d" > "$tmp/va.out" 2>&1 || grep -q "without OpenSSL" "$tmp/va.out"; then ok; else cat "$tmp/va.out"; fail "verify rejects the unpacked archive"; fi
  check "(cd '$tmp/dist' && sha256sum -c --quiet *.sha256)" "archive checksum file wrong"
else
  cat "$tmp/arch.log"; fail "make_archive.sh failed"
fi
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
