#!/usr/bin/env bash
# The whole FreeDNN test suite, as CI runs it: a warnings-as-errors build (with the CUDA
# backend when nvcc is present) and its ctest run, then the same tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer (CPU backend only). GPU tests (label gpu)
# are skipped on machines without an NVIDIA GPU; run them with: ctest --test-dir build -L gpu
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${FREEDNN_JOBS:-$(nproc)}

echo "== build (warnings are errors)"
# CUDA code for sm_80 (the mma.sync kernels; sm_86 / sm_89 compile the same source with one
# softmax launch bound changed), sm_90a (the wgmma kernels) and the compute_90 PTX: the library's
# default list less 86-real and 89-real, which took 4 of the 13 minutes of this build on 2 cores
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFREEDNN_WERROR=ON \
      -DFREEDNN_CUDA_ARCHS="${FREEDNN_CUDA_ARCHS:-80-real;90a-real;90-virtual}"
cmake --build build -j"$jobs"
echo "== tests"
ctest --test-dir build --output-on-failure -j"$jobs" -LE gpu

echo "== build with AddressSanitizer + UndefinedBehaviorSanitizer"
# -O1: the sanitizers' recommended level (at -O0 the suite's test_conv alone ran past 15 minutes
# on a 2-vCPU Zen 3, most of it in the double-precision reference); gcc's maybe-uninitialized
# analysis gives false positives at -O1, and the Release build above checks it at full strength
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1 -Wno-maybe-uninitialized" -DFREEDNN_WERROR=ON -DFREEDNN_CUDA=OFF \
      -DFREEDNN_SANITIZE=address,undefined
cmake --build build-asan -j"$jobs"
echo "== tests under sanitizers"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -L cpu
