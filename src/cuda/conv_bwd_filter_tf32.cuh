/* Tensor-core implicit-GEMM backward-filter convolution for FLOAT through TF32 (mma.sync
 * m16n8k8, operands rounded to TF32 with cvt.rna, float accumulation), sm_80+: the problem, GEMM
 * view, copies, split-K plan, workspace and reduction of conv_bwd_filter_mma.cuh (BwdfParams,
 * BwdfCopy, bwdf_plan, bwdf_reduce), with its own fragment loads and epilogue.
 *
 * Why not the 16-bit kernel's fragment loads: both operands are reduction-major in memory (a
 * shared row is one npq, BM or BN channels/columns), and ldmatrix .trans transposes 16-bit
 * elements only; Hopper's wgmma takes TF32 operands K-major only. A fragment of m16n8k8 tf32 is
 * one 32-bit element per register: A (m x k) a0 = (g, t), a1 = (g+8, t), a2 = (g, t+4),
 * a3 = (g+8, t+4); B (k x n) b0 = (t, g), b1 = (t+4, g); g = lane / 4, t = lane % 4. Read from
 * [k][m] rows, every register is a different row or column, one 4-byte load each. Instead the
 * kernel numbers the rows and columns of its warp tile so that a thread's elements of one k row
 * are contiguous: MMA row g + 8h of m16 tile i is channel g * 2MI + 2i + h of the warp tile, MMA
 * column g of n8 tile j is column g * NI + j, so per k row a thread reads 2MI contiguous A floats
 * and NI contiguous B floats with 8- or 16-byte vector loads (MI = 2, NI = 8: six 16-byte loads
 * for 16 MMAs). The reduction order within a k8 step is the MMA's (k is not renumbered). The
 * swizzle (bw_swz with SPAN = the loads' chunk distance between lanes g and g+1) keeps each
 * phase of 8 lanes (4 rows x 2 chunks) on 8 distinct bank groups.
 * Epilogue: accumulator (i, j, 2h + e) is row g * 2MI + 2i + h, column (2t + e) * NI + j, so
 * each thread holds, per row, 2NI contiguous columns from 2t * NI: float4 stores (C % 4 == 0:
 * four columns are one tap). */
#ifndef FDNN_CUDA_CONV_BWD_FILTER_TF32_CUH
#define FDNN_CUDA_CONV_BWD_FILTER_TF32_CUH
#include "conv_bwd_filter_mma.cuh"

namespace fdnn_bwdf {

constexpr int TF32_STAGES = 3;

template <int BM, int BN>
struct BwdfTf32Tile {
    static constexpr int STAGE_BYTES = BK * (BM + BN) * 4;
    static constexpr int SMEM_BYTES = TF32_STAGES * STAGE_BYTES;
};

/* N floats (N = 2 or a multiple of 4, from float `col`, a multiple of N) of row `row` of a
 * swizzled tile of ROWB-byte rows */
template <int N, int ROWB, int SPAN>
__device__ __forceinline__ void bwdf_lds(float *v, const unsigned char *tile, int row, int col)
{
    if constexpr (N == 2) {
        const float2 a = *(const float2 *)(tile + bw_swz<ROWB, SPAN>(row, col >> 2) + (col & 3) * 4);
        v[0] = a.x;
        v[1] = a.y;
    } else {
#pragma unroll
        for (int u = 0; u < N / 4; u++) {
            const float4 a = *(const float4 *)(tile + bw_swz<ROWB, SPAN>(row, (col >> 2) + u));
            v[4 * u] = a.x;
            v[4 * u + 1] = a.y;
            v[4 * u + 2] = a.z;
            v[4 * u + 3] = a.w;
        }
    }
}

using fdnn_ptx::to_tf32;

template <int BM, int BN, int WARPS_M, int WARPS_N>
__global__ void __launch_bounds__(NTHREADS)
conv_bwd_filter_tf32_kernel(const BwdfParams P)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    static_assert(WARPS_M * WARPS_N * 32 == NTHREADS, "8 warps");
    constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* warp tile */
    constexpr int MI = WM / 16, NI = WN / 8;             /* mma tiles per warp */
    static_assert((MI == 2 || MI == 4) && (NI == 2 || NI == 4 || NI == 8), "warp tile 32 or 64 by 16, 32 or 64");
    constexpr int ASPAN = MI / 2, BSPAN = NI == 8 ? 2 : 1; /* chunks between lanes g and g+1 (half a chunk: 1) */
    typedef BwdfCopy<float, BM, BN, NTHREADS, BK, ASPAN, BSPAN> Copy;
    typedef BwdfTf32Tile<BM, BN> Tile;

    extern __shared__ __align__(128) unsigned char smem_raw[];
    const uint32_t smem = (uint32_t)__cvta_generic_to_shared(smem_raw);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM, split = blockIdx.z;
    const fdnn_bwdf::BwdfRange rows = fdnn_bwdf::bwdf_range(P, split, BK);
    const int row_begin = rows.begin, row_end = rows.end, ktiles = rows.ktiles;

    Copy copy(P, tid, m0, n0, row_begin, row_end);
    auto load_next = [&](int st) {
        const uint32_t sa = smem + st * Tile::STAGE_BYTES;
        copy.load(P, sa, sa + Copy::A_BYTES);
    };

    float acc[MI][NI][4];
    fdnn_ptx::zero_acc<MI * NI * 4>(&acc[0][0][0]);
    fdnn_ptx::ring_prologue<TF32_STAGES - 1>(ktiles, load_next);

    const int acol = wm * WM + g * 2 * MI, bcol = wn * WN + g * NI; /* this thread's first A / B float of a row */
    for (int kt = 0; kt < ktiles; kt++) {
        cp_async_wait<TF32_STAGES - 2>();
        __syncthreads();
        {
            const int nk = kt + TF32_STAGES - 1;
            if (nk < ktiles) load_next(nk % TF32_STAGES);
            cp_async_commit();
        }
        const unsigned char *sa = smem_raw + (kt % TF32_STAGES) * Tile::STAGE_BYTES, *sb = sa + Copy::A_BYTES;
#pragma unroll
        for (int kk = 0; kk < BK / 8; kk++) {
            float av[2][2 * MI], bv[2][NI];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                bwdf_lds<2 * MI, Copy::A_ROWB, ASPAN>(av[h], sa, kk * 8 + t + 4 * h, acol);
                bwdf_lds<NI, Copy::B_ROWB, BSPAN>(bv[h], sb, kk * 8 + t + 4 * h, bcol);
            }
            uint32_t af[MI][4], bf[NI][2];
#pragma unroll
            for (int i = 0; i < MI; i++) {
                af[i][0] = to_tf32(av[0][2 * i]);
                af[i][1] = to_tf32(av[0][2 * i + 1]);
                af[i][2] = to_tf32(av[1][2 * i]);
                af[i][3] = to_tf32(av[1][2 * i + 1]);
            }
#pragma unroll
            for (int j = 0; j < NI; j++) {
                bf[j][0] = to_tf32(bv[0][j]);
                bf[j][1] = to_tf32(bv[1][j]);
            }
#pragma unroll
            for (int i = 0; i < MI; i++)
#pragma unroll
                for (int j = 0; j < NI; j++) FDNN_MMA_SYNC("m16n8k8", "tf32", acc[i][j], af[i], bf[j]);
        }
    }
    cp_async_wait<0>();

    /* epilogue: per row (i, h) the thread holds columns c0 .. c0 + 2NI - 1, value e*NI + j at
     * acc[i][j][2h + e]; stored four at a time */
    const bool partial = P.splits > 1;
    const int c0 = n0 + wn * WN + 2 * t * NI;
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int m = m0 + acol + 2 * i + h;
            if (m >= P.k) continue;
#pragma unroll
            for (int u = 0; u < NI / 2; u++) {
                const int nn = c0 + 4 * u;
                if (nn >= P.rsc) continue; /* RSC % 4 == 0: all four columns are in or out */
                float o[4];
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const int e = (4 * u + q) / NI, j = (4 * u + q) % NI;
                    o[q] = acc[i][j][2 * h + e];
                }
                if (partial) {
                    *(float4 *)(P.ws + ((long long)split * P.k + m) * P.rsc + nn) = make_float4(o[0], o[1], o[2], o[3]);
                    continue;
                }
                long long dcol = nn;
                if (P.flip) {
                    const int tap = nn / P.c, cc = nn - tap * P.c;
                    const int r = tap / P.s, s = tap - r * P.s;
                    dcol = ((long long)(P.r - 1 - r) * P.s + (P.s - 1 - s)) * P.c + cc;
                }
                float4 *dst = (float4 *)((float *)P.out + (long long)m * P.rsc + dcol);
                float4 out = make_float4(P.alpha * o[0], P.alpha * o[1], P.alpha * o[2], P.alpha * o[3]);
                if (P.beta != 0.f) {
                    const float4 old = *dst;
                    out.x += P.beta * old.x;
                    out.y += P.beta * old.y;
                    out.z += P.beta * old.z;
                    out.w += P.beta * old.w;
                }
                *dst = out;
            }
        }
#endif
}

template <int BM, int BN, int WARPS_M, int WARPS_N>
static cudaError_t bwdf_tf32_launch_cfg(const BwdfParams &P, cudaStream_t st)
{
    static unsigned long long opted = 0;
    return bwdf_tile_launch<BM, BN>(conv_bwd_filter_tf32_kernel<BM, BN, WARPS_M, WARPS_N>, NTHREADS, BwdfTf32Tile<BM, BN>::SMEM_BYTES,
                                    &opted, P, st);
}

/* FLOAT (TF32) backward filter with the tile configurations and plan of bwdf_launch. The caller
 * has checked the requirements: C % 4, K % 4, 16-byte aligned x / dy / dw, NPQ and RSC below
 * 2^31, K below 65535 * 64. */
static cudaError_t bwdf_tf32_launch(BwdfParams P, BwdfConfig cfg, cudaStream_t st)
{
    return bwdf_run<float>(P, BK, st, [&](const BwdfParams &Q) {
        cudaError_t e = cudaErrorInvalidValue;
        switch (cfg) {
        case BWDF_128x128: e = bwdf_tf32_launch_cfg<128, 128, 2, 4>(Q, st); break; /* 64x32 warp tiles */
        case BWDF_128x64: e = bwdf_tf32_launch_cfg<128, 64, 4, 2>(Q, st); break;   /* 32x32 */
        case BWDF_64x128: e = bwdf_tf32_launch_cfg<64, 128, 2, 4>(Q, st); break;   /* 32x32 */
        case BWDF_64x64: e = bwdf_tf32_launch_cfg<64, 64, 2, 4>(Q, st); break;     /* 32x16 */
        case BWDF_64x256: e = bwdf_tf32_launch_cfg<64, 256, 2, 4>(Q, st); break;   /* 32x64 */
        case BWDF_128x256: e = bwdf_tf32_launch_cfg<128, 256, 2, 4>(Q, st); break; /* 64x64 */
        }
        return e;
    });
}

} /* namespace fdnn_bwdf */
#endif
