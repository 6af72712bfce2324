/* The register-tile step the two FLOAT (FMA math) implicit GEMMs share (conv_fwd_f32.cuh,
 * conv_bwd_filter_f32.cuh). Self-contained: CUDA runtime only, so their labs include it too. */
#pragma once
#include <cuda_runtime.h>

namespace fdnn_f32tile {

/* One reduction index of a thread's TM x TN tile of sums: the thread's TM values of the A row
 * (shared memory, groups of 4 at stride 4*TYN from 4*ty) and TN of the B row (groups of 4 at
 * stride 4*TXN from 4*tx), one float4 each, then acc[i][j] += a[i] * b[j]. */
template <int TM, int TN, int TYN, int TXN>
__device__ __forceinline__ void outer_step(float (&acc)[TM][TN], const float *arow, const float *brow, int ty, int tx)
{
    float av[TM], bv[TN];
#pragma unroll
    for (int g = 0; g < TM / 4; g++) {
        const float4 a = *(const float4 *)&arow[g * (TYN * 4) + ty * 4];
        av[g * 4 + 0] = a.x;
        av[g * 4 + 1] = a.y;
        av[g * 4 + 2] = a.z;
        av[g * 4 + 3] = a.w;
    }
#pragma unroll
    for (int g = 0; g < TN / 4; g++) {
        const float4 b = *(const float4 *)&brow[g * (TXN * 4) + tx * 4];
        bv[g * 4 + 0] = b.x;
        bv[g * 4 + 1] = b.y;
        bv[g * 4 + 2] = b.z;
        bv[g * 4 + 3] = b.w;
    }
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
}

} /* namespace fdnn_f32tile */
