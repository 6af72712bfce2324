#!/usr/bin/env bash
# Build FreeDNN with the CUDA backend and run the GPU test label, compute-sanitizer and the
# comparison with NVIDIA's cuDNN, on a machine with an NVIDIA GPU. Logs go to $OUT (or ./gpu-logs).
#   tools/gpu_check.sh [tests|counts|sanitize|compat|adv|ops|labs|bench|perf]...   (default: tests sanitize compat bench)
# The device tool keeps ignored build outputs (build-gpu) between calls of one warm machine and
# make rebuilds by modification time: never patch sources on the device, since the next call's
# copy of the tree can be older than objects built from the patched file (a stale binary).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-logs}
mkdir -p "$out"
steps=${*:-"tests sanitize compat bench"}
jobs=$(nproc)

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
# NVIDIA's cuDNN: the Python wheel (nvidia-cudnn-cu*) if present, else the toolkit's
nv_root=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__) if nvidia.cudnn.__file__ else list(nvidia.cudnn.__path__)[0])' 2>/dev/null || true)
echo "NVIDIA cuDNN root: ${nv_root:-none}" | tee -a "$out/gpu.txt"

cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DFREEDNN_WERROR=ON -DFREEDNN_CUDA=ON \
      ${FREEDNN_CUDA_ARCHS:+-DFREEDNN_CUDA_ARCHS=$FREEDNN_CUDA_ARCHS} \
      ${nv_root:+-DFREEDNN_NVIDIA_CUDNN_ROOT=$nv_root} > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
/usr/bin/time -f "build %e s" cmake --build build-gpu -j"$jobs" > "$out/build.log" 2>&1 || { grep -E 'error|Error' "$out/build.log" | head -40; exit 1; }
tail -1 "$out/build.log"
export LD_LIBRARY_PATH="${nv_root:+$nv_root/lib:}${LD_LIBRARY_PATH:-}"

for step in $steps; do
  case $step in
  tests)
    ctest --test-dir build-gpu -L gpu -V -j4 --timeout 240 > "$out/ctest-gpu.log" 2>&1
    grep -E 'tests passed|Failed|\*\*\*|Test +#' "$out/ctest-gpu.log" | grep -v ' Passed ' | tail -40
    grep -E '^[0-9]+: .*[0-9]+ passed, [0-9]+ failed' "$out/ctest-gpu.log" | tail -60 ;;
  counts)
    for t in $(sed -n 's/^\(test_[a-z0-9_]*\)$/\1/p' tests/gpu_tests.txt); do
      [ -x build-gpu/tests/$t ] || continue
      printf '%-24s %s\n' "$t" "$(FREEDNN_BACKEND=cuda build-gpu/tests/$t 2>/dev/null | grep -E 'passed, [0-9]+ failed' | tail -1)"
    done | tee "$out/counts.txt" ;;
  sanitize)
    for t in $(sed -n 's/^\(test_[a-z0-9_]*\)$/\1/p' tests/gpu_tests.txt); do
      [ -x build-gpu/tests/$t ] || continue
      FREEDNN_BACKEND=cuda timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/$t > "$out/memcheck-$t.log" 2>&1
      echo "memcheck $t: exit $? $(grep -E 'ERROR SUMMARY' "$out/memcheck-$t.log" | tail -1)"
    done ;;
  compat)
    if [ -x build-gpu/tests/compat/compat_nvidia ]; then
      FREEDNN_BACKEND=cuda python3 tests/compat/compare.py build-gpu/tests/compat/compat_freednn build-gpu/tests/compat/compat_nvidia | tee "$out/compat.log"
    else
      echo "compat: NVIDIA cuDNN not found, comparison not built"
    fi ;;
  adv)
    for lib in freednn nvidia; do
      [ -x build-gpu/bench/adv_bench_$lib ] && FREEDNN_BACKEND=cuda timeout 200 build-gpu/bench/adv_bench_$lib 5 | tee "$out/adv-$lib.log"
    done ;;
  ops)
    build-gpu/bench/ops_bandwidth | tee "$out/ops_bandwidth.log"
    [ -x build-gpu/bench/ops_bandwidth_nvidia ] && build-gpu/bench/ops_bandwidth_nvidia | tee "$out/ops_bandwidth_nvidia.log" ;;
  labs)   # kernel labs and micro-benchmarks under bench/ (each prints its own PASS/FAIL and times)
    for l in gemm_peak conv_overhead graph_busy_lab igemm_lab bwdf_lab dw_lab f32_igemm_lab f32_bwdf_lab; do
      [ -x build-gpu/bench/$l ] || continue
      echo "== $l"; FREEDNN_BACKEND=cuda timeout 200 build-gpu/bench/$l 2>&1 | tee "$out/lab-$l.log" | tail -40
    done ;;
  perf)   # issue #7's benchmark: four math modes, loop and graph timing, --verify, vs NVIDIA
    OUT="$out" BUILD=build-gpu bash tools/perf_gpu.sh ;;
  bench)  # a shorter run of the perf step: fp32 and fp16 only, 10 calls each
    OUT="$out" BUILD=build-gpu PERF_ITERS=10 bash tools/perf_gpu.sh fp32 fp16 ;;
  esac
done
