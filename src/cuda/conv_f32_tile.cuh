/* The register-tile step the two FLOAT (FMA math) implicit GEMMs share (conv_fwd_f32.cuh,
 * conv_bwd_filter_f32.cuh). Self-contained: CUDA runtime only, so their labs include it too. */
#pragma once
#include <cuda_runtime.h>

namespace fdnn_f32tile {

/* N values of a shared-memory row read as float4 groups: group g at g*(4*TN) + 4*t, where TN
 * threads share the row and t is this thread's index among them. */
template <int N, int TN>
__device__ __forceinline__ void load_groups(float (&v)[N], const float *row, int t)
{
#pragma unroll
    for (int g = 0; g < N / 4; g++) {
        const float4 f = *(const float4 *)&row[g * (TN * 4) + t * 4];
        v[g * 4 + 0] = f.x;
        v[g * 4 + 1] = f.y;
        v[g * 4 + 2] = f.z;
        v[g * 4 + 3] = f.w;
    }
}

/* One reduction index of a thread's TM x TN tile of sums: the thread's TM values of the A row
 * (groups of 4 at stride 4*TYN from 4*ty) and TN of the B row (groups of 4 at stride 4*TXN from
 * 4*tx), then acc[i][j] += a[i] * b[j]. */
template <int TM, int TN, int TYN, int TXN>
__device__ __forceinline__ void outer_step(float (&acc)[TM][TN], const float *arow, const float *brow, int ty, int tx)
{
    float av[TM], bv[TN];
    load_groups<TM, TYN>(av, arow, ty);
    load_groups<TN, TXN>(bv, brow, tx);
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
}

} /* namespace fdnn_f32tile */
