#!/usr/bin/env bash
# freednn doctor on broken setups built in temporary directories: a shadowing stub library
# (libcudnn.so.8 whose cudnnGetVersion returns 7605), a library that crashes when loaded, a
# mismatched cudnn_version.h, a sub-library of another version, a program whose RUNPATH only
# offers cuDNN 9; each problem must be named, with exit status 1. --json must be well-formed.
#   usage: test_doctor.sh FREEDNN_EXE LIBCUDNN_SO SOURCE_DIR
set -u
fd=$1; libso=$2; src=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
ok()   { passes=$((passes+1)); }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
libdir=$(dirname "$(readlink -f "$libso")")
unset LD_LIBRARY_PATH CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH
doc() { "$fd" doctor "$@" > "$tmp/out" 2> "$tmp/err"; }
has() { if grep -q -- "$1" "$tmp/out"; then ok; else fail "$2 (looked for: $1)"; sed 's/^/    | /' "$tmp/out" | grep -E 'PROBLEM|fix|note' ; fi; }

# stub libraries
cat > "$tmp/stub.c" <<'C'
#include <stddef.h>
size_t cudnnGetVersion(void) { return STUB_VERSION; }
C
cat > "$tmp/crash.c" <<'C'
#include <signal.h>
#include <stddef.h>
__attribute__((constructor)) static void boom(void) { raise(SIGSEGV); }
size_t cudnnGetVersion(void) { return 8907; }
C
mkdir -p "$tmp/stub" "$tmp/crash" "$tmp/v9" "$tmp/v8link" "$tmp/inc9" "$tmp/inc810" "$tmp/mixed" "$tmp/app/lib8"
cc -shared -fPIC -DSTUB_VERSION=7605 -Wl,-soname,libcudnn.so.8 -o "$tmp/stub/libcudnn.so.8" "$tmp/stub.c" || exit 1
cc -shared -fPIC -Wl,-soname,libcudnn.so.8 -o "$tmp/crash/libcudnn.so.8" "$tmp/crash.c" || exit 1
cc -shared -fPIC -DSTUB_VERSION=90100 -Wl,-soname,libcudnn.so.9 -o "$tmp/v9/libcudnn.so.9" "$tmp/stub.c" || exit 1
cc -shared -fPIC -DSTUB_VERSION=8907 -Wl,-soname,libcudnn.so.8 -o "$tmp/v8link/libcudnn.so.8" "$tmp/stub.c" || exit 1
ln -s libcudnn.so.8 "$tmp/v8link/libcudnn.so"

# 0. usage
doc --bogus; rc=$?
[ $rc -eq 2 ] && grep -q "unknown option" "$tmp/err" && ok || fail "bad option: rc $rc"
doc --help; [ $? -eq 0 ] && grep -q "same major version" "$tmp/out" && ok || fail "--help"

# 1. a sane setup: FreeDNN first on LD_LIBRARY_PATH and on CPATH; --json well-formed
export LD_LIBRARY_PATH=$libdir CPATH=$src/include
doc --json; rc=$?
python3 - "$tmp/out" $rc "$libdir" <<'PY' && ok || fail "sane setup: JSON/rc"
import json, sys
d = json.load(open(sys.argv[1])); rc = int(sys.argv[2]); libdir = sys.argv[3]
assert d["ok"] == (rc == 0), (d["ok"], rc)
assert d["loaded"]["path"] == libdir + "/libcudnn.so.8", d["loaded"]
assert any(l["freednn"] and l["version"] == 8907 for l in d["libraries"]), d["libraries"]
cpu = [b for b in d["backends"] if b["name"] == "cpu"][0]
assert cpu["created"], cpu
# the only acceptable problem on a sane setup: convolution not implemented yet in this build
for p in d["problems"]:
    assert "convolution is not available" in p["what"], p
    assert p["fix"], p
PY
doc; has "libcudnn.so.8 -> $libdir/libcudnn.so.8" "sane setup: winner not shown"
has "== Headers" "no header section"

# 2. shadowing stub
export LD_LIBRARY_PATH=$tmp/stub:$libdir
doc; rc=$?
[ $rc -eq 1 ] && ok || fail "stub: rc $rc"
has "$tmp/stub/libcudnn.so.8 is named for cuDNN 8 but reports version 7.6.5" "stub: version mismatch not named"
has "$tmp/stub/libcudnn.so.8 (LD_LIBRARY_PATH) shadows FreeDNN at $libdir/libcudnn.so.8" "stub: shadowing not named"
has "fix: export LD_LIBRARY_PATH=$libdir" "stub: fix command"

# 3. a library that crashes when loaded: the doctor survives and names it
export LD_LIBRARY_PATH=$tmp/crash:$libdir
doc; rc=$?
[ $rc -eq 1 ] && ok || fail "crash: rc $rc"
has "$tmp/crash/libcudnn.so.8 crashed with signal 11" "crash not named"

# 4. mismatched headers
export LD_LIBRARY_PATH=$libdir
sed -e 's/#define CUDNN_MAJOR 8/#define CUDNN_MAJOR 9/' -e 's/#define CUDNN_MINOR 9/#define CUDNN_MINOR 1/' "$src/include/cudnn_version.h" > "$tmp/inc9/cudnn_version.h"
export CPATH=$tmp/inc9
doc; rc=$?
[ $rc -eq 1 ] && ok || fail "header v9: rc $rc"
has "headers $tmp/inc9/cudnn_version.h are cuDNN 9.1.7 but the library that would be loaded ($libdir/libcudnn.so.8) is 8.9.7: major versions differ" "header major mismatch not named"
sed -e 's/#define CUDNN_MINOR 9/#define CUDNN_MINOR 10/' "$src/include/cudnn_version.h" > "$tmp/inc810/cudnn_version.h"
export CPATH=$tmp/inc810
doc; has "is 8.9.7: the library's minor version is older than the headers'" "header minor mismatch not named"
export CPATH=$tmp/inc810:$src/include
doc; has "fix: compile with -I$src/include" "header fix does not point at matching headers"
doc --include "$src/include"; grep -q "headers .* are cuDNN" "$tmp/out" && fail "--include (like -I) should win over CPATH" || ok
export CPATH=$src/include

# 5. a sub-library of another version in the set
cp "$libdir/libcudnn.so.8.9.7" "$tmp/mixed/"; ln -s libcudnn.so.8.9.7 "$tmp/mixed/libcudnn.so.8"
for s in ops_infer ops_train cnn_infer cnn_train adv_infer adv_train; do
  v=8.9.7; [ $s = ops_infer ] && v=8.4.0
  cp "$libdir/libcudnn_$s.so.8.9.7" "$tmp/mixed/libcudnn_$s.so.$v"; ln -s "libcudnn_$s.so.$v" "$tmp/mixed/libcudnn_$s.so.8"
done
export LD_LIBRARY_PATH=$tmp/mixed
doc; rc=$?
[ $rc -eq 1 ] && ok || fail "mixed: rc $rc"
has "mixed cuDNN set: $tmp/mixed/libcudnn_ops_infer.so.8 is version 8.4.0 but $tmp/mixed/libcudnn.so.8 is 8.9.7" "mixed set not named"
grep -q "libcudnn_cnn_infer.so.8 is version" "$tmp/out" && fail "mixed: a matching sub-library was reported" || ok

# 6. --exe: a cuDNN 8 program whose RUNPATH only offers cuDNN 9
unset LD_LIBRARY_PATH
printf '#include <stddef.h>\nsize_t cudnnGetVersion(void);\nint main(void){return (int)cudnnGetVersion()==0;}\n' > "$tmp/app.c"
cc -o "$tmp/app/prog" "$tmp/app.c" -L"$tmp/v8link" -lcudnn -Wl,--enable-new-dtags,-rpath,"$tmp/v9" || exit 1
doc --exe "$tmp/app/prog"; rc=$?
[ $rc -eq 1 ] && ok || fail "exe v9-only: rc $rc"
has "needs: libcudnn.so.8" "exe: DT_NEEDED not shown"
has "RUNPATH: $tmp/v9" "exe: RUNPATH not shown"
has "PROBLEM: no libcudnn.so.8 is visible to the dynamic loader" "exe: missing v8 library not named"
# the same program with $ORIGIN/lib8 holding FreeDNN resolves to it
cp -P "$tmp/mixed/libcudnn.so.8" "$tmp/mixed/libcudnn.so.8.9.7" "$tmp/app/lib8/"
cc -o "$tmp/app/prog2" "$tmp/app.c" -L"$tmp/v8link" -lcudnn -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib8' || exit 1
doc --exe "$tmp/app/prog2"
has "libcudnn.so.8 -> $tmp/app/lib8/libcudnn.so.8 (RUNPATH of the program, FreeDNN" "exe: \$ORIGIN RUNPATH not resolved"
doc --exe "$tmp/app.c"; [ $? -eq 2 ] && ok || fail "--exe on a non-ELF file should exit 2"

# 7. --json on a broken setup lists the problems with fixes
export LD_LIBRARY_PATH=$tmp/stub:$libdir
doc --json; rc=$?
python3 - "$tmp/out" $rc <<'PY' && ok || fail "broken setup JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is False and int(sys.argv[2]) == 1
assert any("7.6.5" in p["what"] and p["fix"] for p in d["problems"]), d["problems"]
PY

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
