#!/usr/bin/env bash
# Issue #7's GPU convolution benchmark: FreeDNN against NVIDIA's cuDNN in one process, on the
# layers of bench/layers_gpu.txt, NHWC, all three directions, for fp16, bf16, tf32 (FLOAT with
# TENSOR_OP math) and fp32 (FMA math), with loop timing, CUDA-graph timing and --verify, plus
# the cuBLAS GEMM rate. Run from the repository root after a CUDA build in build-gpu
# (tools/gpu_check.sh does it); writes JSON and logs to $OUT, then tools/perf_gpu.py makes the
# docs/performance.md section:  python3 tools/perf_gpu.py $OUT --write docs/performance.md
#   tools/perf_gpu.sh [types...]   (default: fp16 bf16 tf32 fp32)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-logs}
bin=${BUILD:-build-gpu}
mkdir -p "$out"
nv_root=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__) if nvidia.cudnn.__file__ else list(nvidia.cudnn.__path__)[0])' 2>/dev/null || true)
nv_lib=$(ls "$nv_root"/lib/libcudnn.so.9* 2>/dev/null | head -1)
[ -n "$nv_lib" ] || { echo "perf_gpu: NVIDIA cuDNN not found"; exit 1; }
export LD_LIBRARY_PATH="$nv_root/lib:${LD_LIBRARY_PATH:-}"
# gpu.txt once per output directory (the script may run once per type into the same one)
[ -f "$out/gpu.txt" ] || { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; echo "NVIDIA cuDNN: $nv_lib"; } > "$out/gpu.txt"
[ -x "$bin/bench/gemm_peak" ] && "$bin/bench/gemm_peak" | tee "$out/gemm_peak.txt"
for ty in ${*:-fp16 bf16 tf32 fp32}; do
  FREEDNN_BACKEND=cuda timeout ${PERF_TIMEOUT:-280} "$bin/bin/freednn" bench --backend cuda --type $ty --layout nhwc --dir all \
    -n ${PERF_ITERS:-20} --warmup 3 --graph --verify --layers bench/layers_gpu.txt --vs-lib "$nv_lib" --json \
    > "$out/perf-$ty.json" 2> "$out/perf-$ty.log"
  echo "perf $ty: exit $?"
done
python3 tools/perf_gpu.py "$out" > "$out/perf_gpu.md" && tail -8 "$out/perf_gpu.md"
