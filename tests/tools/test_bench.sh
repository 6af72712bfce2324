#!/usr/bin/env bash
# freednn bench command line: every flag form, descriptor strings, layer files, --help, bad
# input (clear message, exit 2), and well-formed --csv / --json. Entries the library does not
# support yet are fine (reported with their status); numeric checks run with --verify where
# an entry succeeds and must then pass.
# With FAKE_SO (tests/tools/fake_cudnn.c) the timing and --verify paths run end to end through
# --vs-lib for every direction, type and layout, whatever FreeDNN implements yet.
#   usage: test_bench.sh FREEDNN_EXE SOURCE_DIR [FAKE_SO]
set -u
fd=$1; src=$2; fake=${3:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
ok()   { passes=$((passes+1)); }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
export FREEDNN_BACKEND=cpu
run() { "$fd" bench "$@" > "$tmp/out" 2> "$tmp/err"; }

# --help documents the flags and the FLOP formula
run --help; rc=$?
[ $rc -eq 0 ] && ok || fail "--help exited $rc"
for w in ' -n N' ' -b N' ' -c C' ' -h H, -w W' ' -k K' ' -r R' ' -s S' ' -p P' '--dir' '--type' '--layout' '--dilation' \
         '--groups' '--algo' '--backend' '--warmup' '--verify' '--csv, --json' '--layers' '--vs-lib' \
         'FLOP = 2\*N\*K\*(C/G)\*R\*S\*P\*Q'; do
  grep -q -- "$w" "$tmp/out" && ok || fail "--help does not mention '$w'"
done

# classic flags: the problem shows up with its sizes in the JSON output
run -n 2 -b 2 -c 8 -h 12 -w 10 -k 4 -r 3 -s 2 -p 1 --warmup 1 --json; rc=$?
[ $rc -eq 0 ] && ok || { cat "$tmp/err"; fail "classic flags exited $rc"; }
python3 - "$tmp/out" <<'PY' && ok || fail "classic flags: JSON wrong"
import json, sys
d = json.load(open(sys.argv[1]))
r = d[0]
assert (r["n"], r["c"], r["h"], r["w"], r["k"], r["r"], r["s"], r["stride"], r["pad"]) == (2, 8, 12, 10, 4, 3, 3, [2, 2], [1, 1]), r
assert r["dir"] == "fwd" and r["type"] == "fp32" and r["layout"] == "nchw", r
assert r["status"], r
PY
grep -Eq '^ConvFwdAlgo: -?[0-9]+ ' "$tmp/err" && ok || fail "no ConvFwdAlgo summary line (on stderr with --json)"

# loop timing and --graph (a CPU handle has no stream: no graph time, no error)
run -n 3 -b 1 -c 4 -h 6 -k 4 -r 3 -p 1 --dir all --graph --verify --json; rc=$?
[ $rc -eq 0 ] && ok || { cat "$tmp/err"; fail "--graph exited $rc"; }
python3 - "$tmp/out" <<'PY' && ok || fail "--graph: JSON wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d) == 3
for r in d:
    assert r["status"] == "SUCCESS" and r["loop_ms"] > 0 and r["host_us"] > 0, r
    assert r["verified"] == "ok" and r["verify_points"] == 0, r
    assert "graph_ms" not in r, r
PY

# above the full-reference limit --verify checks sampled output points
run -n 1 --warmup 0 -b 8 -c 256 -h 28 -k 256 -r 3 -p 1 --dir all --verify --json; rc=$?
[ $rc -eq 0 ] && ok || { cat "$tmp/err"; fail "sampled --verify exited $rc"; }
python3 - "$tmp/out" <<'PY' && ok || fail "sampled --verify: JSON wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d) == 3
for r in d:
    assert r["verified"] == "ok" and 32 <= r["verify_points"] <= 2048, r
PY

# long options, all directions, all algorithms, CSV
run -n 1 --warmup 0 -b 1 -c 4 -h 6 -k 4 -r 3 -p 1 --dir all --algo all --type fp64 --layout nhwc --dilation 2 --groups 2 --csv; rc=$?
[ $rc -eq 0 ] && ok || { cat "$tmp/err"; fail "long options exited $rc"; }
python3 - "$tmp/out" <<'PY' && ok || fail "CSV malformed or incomplete"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows, "no rows"
assert {r["dir"] for r in rows} == {"fwd", "bwd-data", "bwd-filter"}, {r["dir"] for r in rows}
for r in rows:
    assert r["type"] == "fp64" and r["layout"] == "nhwc" and r["groups"] == "2" and r["dil_h"] == "2", r
    assert r["status"] != "", r
    if r["status"] == "SUCCESS":
        assert float(r["median_ms"]) > 0 and float(r["min_ms"]) <= float(r["median_ms"]), r
n = len(rows[0]); assert all(len(r) == n for r in rows)
PY
grep -q 'ConvBwdDataAlgo: ' "$tmp/err" && grep -q 'ConvBwdFilterAlgo: ' "$tmp/err" && ok || fail "bwd summary lines missing"

# every type parses
for t in fp32 tf32 fp16 bf16 fp64; do
  run -n 1 --warmup 0 -b 1 -c 4 -h 5 -k 4 -r 3 --type $t --dir all --json && python3 -c "import json,sys; d=json.load(open('$tmp/out')); assert all(r['type']=='$t' for r in d)" \
    && ok || fail "--type $t"
done
run -n 1 --warmup 0 -b 1 -c 4 -h 5 -k 4 -r 3 --type int8 --layout nhwc --json && ok || fail "--type int8"

# benchdnn descriptors: keys, defaults, names
run -n 1 --warmup 0 --json mb3ic8ih10iw9oc6kh3kw1sh2ph1pw0n\"d1\" g2mb1ic4ih7oc4kh3dh1ph2_d2 ic2ih4oc2; rc=$?
[ $rc -eq 0 ] && ok || { cat "$tmp/err"; fail "descriptors exited $rc"; }
python3 - "$tmp/out" <<'PY' && ok || fail "descriptor fields wrong"
import json, sys
d = {r["problem"]: r for r in json.load(open(sys.argv[1]))}
a, b, c = d["d1"], d["d2"], d["ic2ih4oc2"]
assert (a["n"], a["c"], a["h"], a["w"], a["k"], a["r"], a["s"], a["stride"], a["pad"]) == (3, 8, 10, 9, 6, 3, 1, [2, 2], [1, 0]), a
assert (b["n"], b["groups"], b["dilation"], b["pad"], b["w"], b["s"]) == (1, 2, [2, 2], [2, 2], 7, 3), b
assert (c["n"], c["r"], c["stride"], c["pad"]) == (2, 1, [1, 1], [0, 0]), c
PY

# layer files (the shipped lists parse; use a small one for the run)
printf '# comment\nsmall 1 4 6 6 4 3 3 1 1 1  # trailing\n\ngrouped 2 8 5 5 8 1 1 2 0 4\n' > "$tmp/layers.txt"
run -n 1 --warmup 0 --layers "$tmp/layers.txt" --csv; rc=$?
[ $rc -eq 0 ] && python3 -c "import csv; r=list(csv.DictReader(open('$tmp/out'))); assert [x['problem'] for x in r]==['small','grouped'], r; assert r[1]['groups']=='4' and r[1]['stride_h']=='2'" \
  && ok || { cat "$tmp/err"; fail "--layers"; }
for f in "$src"/bench/layers_cpu.txt "$src"/bench/layers_gpu.txt; do
  n=$(grep -Ev '^\s*(#|$)' "$f" | wc -l)
  run --dry-run --layers "$f"; rc=$?
  [ $rc -eq 0 ] && [ "$(wc -l < "$tmp/out")" -eq "$n" ] && [ "$n" -gt 5 ] && ok || fail "$f: rc $rc, $(wc -l < "$tmp/out") of $n layers"
done
run --dry-run mb32ic64ih224oc64kh3ph1
grep -q 'P=224 Q=224 GFLOP=118.38' "$tmp/out" && ok || fail "dry-run FLOP count: $(cat "$tmp/out")"

# table and summary in text mode
run -n 2 --warmup 0 -b 1 -c 4 -h 6 -k 4 -r 3 -p 1
grep -q '^Results' "$tmp/out" && grep -Eq '^ConvFwdAlgo: ' "$tmp/out" && ok || fail "text mode lacks summary or table"
grep -q 'FreeDNN 8907, backend cpu' "$tmp/out" && ok || fail "header line"

# --verify: any entry that runs must match the reference
run -n 1 --warmup 0 -b 2 -c 6 -h 7 -w 5 -k 4 -r 3 -s 1 -p 1 --dir all --algo all --verify --json; rc=$?
python3 - "$tmp/out" $rc <<'PY' && ok || fail "--verify results"
import json, sys
d = json.load(open(sys.argv[1])); rc = int(sys.argv[2])
for r in d:
    if r["status"] == "SUCCESS":
        assert r["verified"] in ("ok", "failed"), r
        assert r["verified"] == "ok", "verification failed: %s" % r
assert rc == 0, rc
PY

# --vs-lib against a second copy of FreeDNN itself (separate instance, RTLD_LOCAL)
lib=$(ldd "$fd" | awk '/libcudnn.so.8/ {print $3}')
if [ -n "$lib" ]; then
  mkdir "$tmp/other"; cp "$lib" "$tmp/other/libcudnn_other.so"
  run -n 1 --warmup 0 -b 1 -c 4 -h 6 -k 4 -r 3 -p 1 --vs-lib "$tmp/other/libcudnn_other.so" --json; rc=$?
  [ $rc -eq 0 ] && python3 -c "import json; d=json.load(open('$tmp/out')); libs={r['lib'] for r in d}; assert len(libs)==2, libs" \
    && ok || { cat "$tmp/err"; fail "--vs-lib"; }
  grep -q 'vs-lib .*: cuDNN version 8907' "$tmp/err" && ok || fail "--vs-lib version line"
fi
run --vs-lib "$tmp/none.so"; rc=$?
[ $rc -eq 2 ] && grep -q 'cannot load' "$tmp/err" && ok || fail "--vs-lib with a bad path: rc $rc"

# --vs-lib through the stand-in library: every direction, type, layout, groups, dilation, stride
if [ -n "$fake" ]; then
  for t in fp32 tf32 fp16 bf16 fp64; do
    for l in nchw nhwc; do
      run -n 2 --warmup 1 -b 2 -c 6 -h 7 -w 5 -k 4 -r 3 -s 2 -p 1 --dilation 2 --groups 2 --dir all --algo all \
          --type $t --layout $l --verify --vs-lib "$fake" --json; rc=$?
      python3 - "$tmp/out" $rc "$fake" <<'PY' && ok || { fail "--vs-lib fake $t $l"; head -c 600 "$tmp/err"; }
import json, sys
d = json.load(open(sys.argv[1])); rc = int(sys.argv[2]); fake = sys.argv[3]
theirs = [r for r in d if r["lib"] == fake]
assert rc == 0, rc
assert len(theirs) == 6, theirs                       # 3 directions x 2 algorithms
for r in theirs:
    assert r["status"] == "SUCCESS", r
    assert r["verified"] == "ok" and r["max_error"] <= r["tolerance"], r
    assert r["median_ms"] > 0 and r["min_ms"] <= r["median_ms"], r
    # TFLOP/s and GB/s are printed with 6 and 4 decimals: a tiny problem descheduled on a loaded machine can show 0
    assert r["median_ms"] > 1 or (r["gbs"] > 0 and r["tflops"] > 0), r
    assert r["deterministic"] == "yes", r
assert {r["workspace_bytes"] for r in theirs} == {0, 64}, theirs
ours = [r for r in d if r["lib"] == "FreeDNN"]
both = {(r["dir"], r["algo"]) for r in theirs if r["status"] == "SUCCESS"}
assert any(r["status"] == "SUCCESS" for r in ours), ours
for r in ours:                                        # where both ran the same algorithm, the ratio is there
    if r["status"] == "SUCCESS":
        assert r["verified"] == "ok", r
        if (r["dir"], r["algo"]) in both:
            assert "ratio" in r and r["ratio"] > 0, r
PY
    done
  done
  run -n 1 --warmup 0 -b 1 -c 8 -h 5 -k 4 -r 3 -p 1 --type int8 --layout nhwc --verify --vs-lib "$fake" --csv; rc=$?
  [ $rc -eq 0 ] && python3 -c "
import csv; r=[x for x in csv.DictReader(open('$tmp/out')) if x['lib']=='$fake']
assert r and all(x['status']=='SUCCESS' and x['verified']=='ok' and float(x['max_error'])==0 for x in r), r" && ok || fail "--vs-lib fake int8"
  # default algorithm (no --algo): our pick is compared with theirs in every direction that ran on both,
  # even where the numbers differ; with --algo N only the same number is paired
  run -n 1 --warmup 0 -b 1 -c 4 -h 6 -k 4 -r 3 -p 1 --dir all --vs-lib "$fake" --json; rc=$?
  python3 - "$tmp/out" $rc "$fake" <<'PY' && ok || { fail "--vs-lib default picks paired"; head -c 600 "$tmp/err"; }
import json, sys
d = json.load(open(sys.argv[1])); rc = int(sys.argv[2]); fake = sys.argv[3]
assert rc == 0, rc
theirs = {r["dir"]: r for r in d if r["lib"] == fake and r["status"] == "SUCCESS"}
ours = [r for r in d if r["lib"] == "FreeDNN" and r["status"] == "SUCCESS"]
assert len(theirs) == 3 and ours, d
for r in ours:
    assert r["dir"] in theirs and "ratio" in r and r["ratio"] > 0, r
    assert r["theirs_algo"] == theirs[r["dir"]]["algo"], r
    assert abs(r["ratio"] - r["median_ms"] / r["theirs_median_ms"]) <= 0.02 * r["ratio"] + 1e-3, r   # printed rounding
PY
  run -n 1 --warmup 0 -b 1 -c 4 -h 6 -k 4 -r 3 -p 1 --algo 1 --vs-lib "$fake" --json; rc=$?
  python3 - "$tmp/out" $rc <<'PY' && ok || { fail "--vs-lib --algo N pairs equal numbers"; head -c 600 "$tmp/err"; }
import json, sys
d = json.load(open(sys.argv[1])); assert int(sys.argv[2]) == 0
for r in d:
    if "ratio" in r: assert r["theirs_algo"] == r["algo"] == 1, r
PY
  run -n 1 --warmup 0 -b 1 -c 4 -h 6 -k 4 -r 3 -p 1 --vs-lib "$fake"
  grep -q "^ConvFwdAlgo: .* lib: FreeDNN .* Theirs: [0-9.]* ms (algo 0) Ratio(ours/theirs): [0-9.]* " "$tmp/out" \
    && ok || fail "--vs-lib text: ratio of the default picks"
  grep -q "vs-lib $fake: cuDNN version 90100" "$tmp/out" && grep -q "^ConvFwdAlgo: 0 (CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) lib: $fake .*MedianTime: .* AvgTime: [0-9.]* ms\$" "$tmp/out" \
    && ok || fail "--vs-lib text summary line"
  # a library computing a wrong value: --verify must catch it and exit 1
  FAKE_CUDNN_WRONG=1 "$fd" bench -n 1 --warmup 0 -b 1 -c 4 -h 6 -k 4 -r 3 -p 1 --dir all --verify --vs-lib "$fake" > "$tmp/out" 2> "$tmp/err"; rc=$?
  [ $rc -eq 1 ] && [ "$(grep -c 'MaxError: 1 (tolerance .*, FAILED)' "$tmp/out")" -eq 3 ] && ok || fail "--verify did not catch a wrong result (rc $rc)"
fi

# bad input: clear message, exit 2, nothing on stdout
bad() {
  local want=$1; shift
  run "$@"; local rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$want" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok
  else fail "bench $* -> rc $rc, stderr: $(cat "$tmp/err")"; fi
}
bad "unknown option" --bogus
bad "needs a value" -b
bad "needs a value" --type
bad "-n (iterations) must be an integer" -n 0
bad "-c (input channels) must be an integer" -c abc
bad "-p (padding) must be an integer" -p -1
bad "--dir must be" --dir sideways
bad "--type must be one of" --type fp8
bad "--layout must be" --layout chwn
bad "--backend must be" --backend tpu
bad "--algo" --algo fast
bad "divisible by groups" -c 6 -k 4 --groups 4
bad "does not fit" -h 2 -w 2 -r 5 -p 0
bad "unknown key" mb2ic4ix8
bad "ic, oc and ih are required" mb2ic4
bad "oh/ow given" ic4ih8oc4kh3oh9
bad "cannot open layers file" --layers "$tmp/absent.txt"
printf 'bad 1 2 3\n' > "$tmp/badlayers.txt"
bad "expected 'name N C H W K R S stride pad groups'" --layers "$tmp/badlayers.txt"
bad "exclude each other" --csv --json
bad "int8 is forward only" --type int8 --dir all

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
