/* Tensor-core implicit-GEMM forward convolution for HALF / BFLOAT16 (mma.sync m16n8k16) and
 * FLOAT as TF32 (m16n8k8, operands rounded to TF32 with cvt.rna), float accumulation, on
 * packed NHWC activations and a KRSC filter, sm_80+ (inline PTX mma.sync, ldmatrix,
 * cp.async). A 16-byte copy chunk holds EPC = 8 (16-bit types) or 4 (FLOAT) channels and a
 * 64-byte shared row BKE = 32 or 16 reduction elements; in bytes the two are identical, and so
 * is every ldmatrix address: a 16x16-byte ldmatrix.x4 quarter gives thread t the elements
 * (row t/4, 32-bit word t%4), which is the m16n8k16 b16-pair fragment and the m16n8k8 tf32
 * fragment alike. Self-contained (no FreeDNN headers) so that bench/kernels/igemm_lab.cu can include
 * it; src/cuda/conv_fwd_mma.cu wraps it for the library.
 *
 * GEMM view (groups == 1):  y[M, K] = A[M, Kg] * B[Kg, K]
 *   rows    m  = (n, p, q)     M  = N*P*Q        (output pixels; y is row-major [M][K])
 *   columns k  = output channel
 *   reduction kg = (r, s, c)   Kg = R*S*C, c fastest, so 8 consecutive kg (C % 8 == 0) are
 *                              8 consecutive channels of one filter tap: one 16-byte vector
 *   A[m, kg] = x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c]   (0 outside the image)
 *   B[kg, k] = w[k, r', s', c] with (r', s') = (r, s), or (R-1-r, S-1-s) for CUDNN_CONVOLUTION
 * Tiling: a block of 256 threads (8 warps, WARPS_M x WARPS_N) computes a BM x BN tile of y,
 * stepping through Kg in slices of BK = 32 16-bit elements (BKE = 16 for FLOAT). Each slice of A (BM x 32) and B (BN x 32,
 * stored [k][kg], which is the "col" operand mma wants) is brought into shared memory by
 * cp.async 16-byte copies (zero-filled with src-size 0 for padding and out-of-range rows or
 * channels) in a STAGES-deep ring, so that the copies of later slices overlap the math of the
 * current one. Shared rows are 64 bytes (4 chunks of 16 bytes); chunk c of row r is stored at
 * chunk c ^ ((r >> 1) & 3), which makes the 8 row addresses of every ldmatrix phase hit
 * distinct banks. The epilogue applies alpha/beta in float (beta == 0 never reads y) and writes
 * two channels per 32-bit store. Deterministic: the reduction order is fixed. */
#ifndef FDNN_CUDA_CONV_FWD_MMA_CUH
#define FDNN_CUDA_CONV_FWD_MMA_CUH
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "conv_mma_ptx.cuh"

namespace fdnn_mma {

/* Problem of the kernel; all tensors dense: x [N][H][W][C], w [K][R][S][C], y [N][P][Q][K]. */
struct MmaConvParams {
    const void *x, *w;
    void *y;
    int n, h, w_, c, k, r, s, p, q;
    int sh, sw, ph, pw, dh, dw;
    int flip;           /* 1: CUDNN_CONVOLUTION (filter tap (R-1-r, S-1-s)) */
    float alpha, beta;
    int m;              /* N*P*Q, < 2^31 */
    int kg;             /* R*S*C, < 2^31 */
    int splits;         /* split-K: blockIdx.z takes slices [z*kt_per, (z+1)*kt_per); 1 = none */
    int kt_per;         /* slices per split (with one split: at least all of them) */
    float *ws;          /* splits > 1: float partials [splits][M][K], 16-byte aligned */
    int m_lo;           /* the first output row (of M) this launch computes: its grid covers rows m_lo .. m-1 */
};

constexpr int BK = 32;            /* reduction slice (16-bit elements; 64 bytes) */
constexpr int NTHREADS = 256;     /* 8 warps */
constexpr int ROW_BYTES = BK * 2; /* 64 bytes = 4 chunks of 16 bytes */

/* the element-type operations (mma, TF32 prep, 2-element load/store) and the PTX copies */
template <typename T> using MmaType = fdnn_ptx::MmaOps<T>;
using fdnn_ptx::cp_async16;
using fdnn_ptx::cp_async_commit;
using fdnn_ptx::cp_async_wait;
using fdnn_ptx::ldmatrix_x4;

/* byte offset of 16-byte chunk `chunk` (0..3) of row `row` in a swizzled tile */
__device__ __forceinline__ uint32_t swz(int row, int chunk)
{
    return (uint32_t)(row * ROW_BYTES + ((chunk ^ ((row >> 1) & 3)) << 4));
}

/* GEMM row m = output pixel (n, p, q): its image nn and the input coordinates (h0, w0) of its
 * window's corner (negative inside the padding) */
__device__ __forceinline__ void out_origin(const MmaConvParams &P, int m, int &nn, int &h0, int &w0)
{
    const int pq = P.p * P.q;
    nn = m / pq;
    const int rem = m - nn * pq, pp = rem / P.q, qq = rem - pp * P.q;
    h0 = pp * P.sh - P.ph;
    w0 = qq * P.sw - P.pw;
}

template <int BM, int BN, int STAGES>
struct MmaTile {
    static constexpr int A_BYTES = BM * ROW_BYTES, B_BYTES = BN * ROW_BYTES;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES;
};

template <typename T, int BM, int BN, int WARPS_M, int WARPS_N, int STAGES>
__global__ void __launch_bounds__(NTHREADS)
conv_fwd_mma_kernel(const MmaConvParams P)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    static_assert(WARPS_M * WARPS_N * 32 == NTHREADS, "8 warps");
    constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* warp tile */
    constexpr int MI = WM / 16, NI = WN / 8;             /* mma tiles per warp */
    static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tile must be a multiple of 16x16");
    constexpr int A_ROWS = BM * 4 / NTHREADS;            /* 16-byte chunks of A per thread */
    constexpr int B_ROWS = BN * 4 / NTHREADS;
    static_assert(A_ROWS >= 1 && B_ROWS >= 1, "tile too small for 256 threads");
    constexpr int EPC = 16 / (int)sizeof(T);         /* elements per 16-byte chunk */
    constexpr int BKE = ROW_BYTES / (int)sizeof(T);  /* reduction elements per slice */
    typedef MmaTile<BM, BN, STAGES> Tile;

    extern __shared__ __align__(128) unsigned char smem_raw[];
    const uint32_t smem = (uint32_t)__cvta_generic_to_shared(smem_raw);

    const T *__restrict__ x = (const T *)P.x;
    const T *__restrict__ w = (const T *)P.w;
    T *y = (T *)P.y;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int m0 = P.m_lo + blockIdx.x * BM, n0 = blockIdx.y * BN;

    /* --- per-thread copy assignments, fixed for the whole reduction: chunk column lc (8
     * channels at kg offset lc*8 of each slice) of rows lr + i*64 of A and of B */
    const int lc = tid & 3, lr = tid >> 2;
    long long a_base[A_ROWS]; /* n*H*W*C of the row's image; -1 when the row is past M */
    int a_h0[A_ROWS], a_w0[A_ROWS];
#pragma unroll
    for (int i = 0; i < A_ROWS; i++) {
        const int m = m0 + lr + i * (NTHREADS / 4);
        if (m < P.m) {
            int nn;
            out_origin(P, m, nn, a_h0[i], a_w0[i]);
            a_base[i] = (long long)nn * P.h * P.w_ * P.c;
        } else {
            a_base[i] = -1;
            a_h0[i] = a_w0[i] = 0;
        }
    }
    long long b_base[B_ROWS]; /* k*Kg; -1 when the output channel is past K */
#pragma unroll
    for (int i = 0; i < B_ROWS; i++) {
        const int kk = n0 + lr + i * (NTHREADS / 4);
        b_base[i] = kk < P.k ? (long long)kk * P.kg : -1;
    }

    const int kt_all = (P.kg + BKE - 1) / BKE;
    const int kt0 = P.splits > 1 ? blockIdx.z * P.kt_per : 0; /* this split's slices [kt0, kt0 + ktiles) */
    const int ktiles = P.splits > 1 ? max(0, min(kt_all - kt0, P.kt_per)) : kt_all;

    /* issue the copies of reduction slice kt into ring stage st */
    auto load_stage = [&](int kt, int st) {
        const uint32_t sa = smem + st * Tile::STAGE_BYTES, sb = sa + Tile::A_BYTES;
        const int kg = kt * BKE + lc * EPC;
        const bool kvalid = kg < P.kg; /* Kg % EPC == 0: the whole chunk is in or out */
        int tap = 0, ch = 0, r = 0, s = 0;
        if (kvalid) {
            tap = kg / P.c;
            ch = kg - tap * P.c;
            r = tap / P.s;
            s = tap - r * P.s;
        }
        const int dy = r * P.dh, dx = s * P.dw;
#pragma unroll
        for (int i = 0; i < A_ROWS; i++) {
            const int row = lr + i * (NTHREADS / 4);
            const int hh = a_h0[i] + dy, ww = a_w0[i] + dx;
            const bool ok = kvalid && a_base[i] >= 0 && (unsigned)hh < (unsigned)P.h && (unsigned)ww < (unsigned)P.w_;
            const T *src = ok ? x + a_base[i] + ((long long)hh * P.w_ + ww) * P.c + ch : x;
            cp_async16(sa + swz(row, lc), src, ok ? 16 : 0);
        }
        /* filter offset of this chunk inside one output channel's R*S*C block */
        const int woff = P.flip ? ((P.r - 1 - r) * P.s + (P.s - 1 - s)) * P.c + ch : kg;
#pragma unroll
        for (int i = 0; i < B_ROWS; i++) {
            const int row = lr + i * (NTHREADS / 4);
            const bool ok = kvalid && b_base[i] >= 0;
            const T *src = ok ? w + b_base[i] + woff : w;
            cp_async16(sb + swz(row, lc), src, ok ? 16 : 0);
        }
    };

    float acc[MI][NI][4];
    fdnn_ptx::zero_acc<MI * NI * 4>(&acc[0][0][0]);
    /* prologue: slices 0 .. STAGES-2 in flight */
    fdnn_ptx::ring_prologue<STAGES - 1>(ktiles, [&](int st) { load_stage(kt0 + st, st); });

    for (int kt = 0; kt < ktiles; kt++) {
        cp_async_wait<STAGES - 2>(); /* this thread's copies of slice kt have landed */
        __syncthreads();             /* everyone's have, and everyone is done with slice kt-1 */
        {
            const int nk = kt + STAGES - 1; /* refill the stage that slice kt-1 used */
            if (nk < ktiles) load_stage(kt0 + nk, nk % STAGES);
            cp_async_commit();
        }
        const uint32_t sa = smem + (kt % STAGES) * Tile::STAGE_BYTES, sb = sa + Tile::A_BYTES;
#pragma unroll
        for (int kk = 0; kk < ROW_BYTES / 32; kk++) { /* 32-byte k steps: one mma k16 (16-bit) or k8 (tf32) */
            uint32_t af[MI][4], bf[NI][2];
#pragma unroll
            for (int i = 0; i < MI; i++) {
                /* lanes 0-15: rows 0-15 at k 0-7; lanes 16-31: rows 0-15 at k 8-15 */
                const int row = wm * WM + i * 16 + (lane & 15);
                ldmatrix_x4(af[i], sa + swz(row, kk * 2 + (lane >> 4)));
                MmaType<T>::prep(af[i], 4);
            }
#pragma unroll
            for (int j = 0; j < NI; j += 2) {
                /* matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15) */
                const int row = wn * WN + j * 8 + ((lane >> 4) << 3) + (lane & 7);
                uint32_t t[4];
                ldmatrix_x4(t, sb + swz(row, kk * 2 + ((lane >> 3) & 1)));
                MmaType<T>::prep(t, 4);
                bf[j][0] = t[0];
                bf[j][1] = t[1];
                bf[j + 1][0] = t[2];
                bf[j + 1][1] = t[3];
            }
#pragma unroll
            for (int i = 0; i < MI; i++)
#pragma unroll
                for (int j = 0; j < NI; j++) MmaType<T>::mma(acc[i][j], af[i], bf[j]);
        }
    }
    cp_async_wait<0>(); /* no copy may still target shared memory when the block exits */

    /* epilogue: acc[i][j] holds rows g, g+8 and columns 2*(lane%4), +1 of its 16x8 tile; with
     * several splits the float partials go to the workspace and mma_reduce_kernel finishes */
    const float alpha = P.alpha, beta = P.beta;
    if (P.splits > 1) {
        float *part = P.ws + (long long)blockIdx.z * P.m * P.k;
#pragma unroll
        for (int i = 0; i < MI; i++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int m = m0 + wm * WM + i * 16 + (lane >> 2) + half * 8;
                if (m >= P.m) continue;
#pragma unroll
                for (int j = 0; j < NI; j++) {
                    const int kk = n0 + wn * WN + j * 8 + (lane & 3) * 2;
                    if (kk < P.k) *(float2 *)(part + (long long)m * P.k + kk) = make_float2(acc[i][j][half * 2], acc[i][j][half * 2 + 1]);
                }
            }
        return;
    }
#pragma unroll
    for (int i = 0; i < MI; i++) {
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int m = m0 + wm * WM + i * 16 + (lane >> 2) + half * 8;
            if (m >= P.m) continue;
            T *yrow = y + (long long)m * P.k;
#pragma unroll
            for (int j = 0; j < NI; j++) {
                const int kk = n0 + wn * WN + j * 8 + (lane & 3) * 2;
                if (kk >= P.k) continue; /* K % 8 == 0: kk+1 < K too */
                float v0 = alpha * acc[i][j][half * 2], v1 = alpha * acc[i][j][half * 2 + 1];
                if (beta != 0.f) {
                    const float2 old = MmaType<T>::load2(yrow + kk);
                    v0 += beta * old.x;
                    v1 += beta * old.y;
                }
                MmaType<T>::store2(yrow + kk, v0, v1);
            }
        }
    }
#endif
}

/* y = alpha * sum_s ws[s] + beta * y (beta == 0: y not read), two channels per thread, the
 * splits summed in order 0, 1, ...: deterministic. */
template <typename T>
__global__ void mma_reduce_kernel(const MmaConvParams P)
{
    const long long plane = (long long)P.m * P.k, pairs = plane / 2;
    T *y = (T *)P.y;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < pairs; e += (long long)gridDim.x * blockDim.x) {
        float s0 = 0.f, s1 = 0.f;
        for (int s = 0; s < P.splits; s++) {
            const float2 v = *(const float2 *)(P.ws + s * plane + e * 2);
            s0 += v.x;
            s1 += v.y;
        }
        float o0 = P.alpha * s0, o1 = P.alpha * s1;
        if (P.beta != 0.f) {
            const float2 old = MmaType<T>::load2(y + e * 2);
            o0 += P.beta * old.x;
            o1 += P.beta * old.y;
        }
        MmaType<T>::store2(y + e * 2, o0, o1);
    }
}

/* The tile configurations and their launch. */
enum MmaConfig { MMA_128x128 = 0, MMA_128x64 = 1, MMA_64x64 = 2, MMA_256x64 = 3, MMA_256x128 = 4 };
constexpr int MMA_NCONFIGS = 5;
constexpr int MMA_STAGES = 4;

/* Heuristic: a 64-wide column tile when K <= 64 (no half-empty tiles), with 256 rows when that
 * grid still fills the GPU three times over (igemm_lab --sweep on the H200: 256x64 beat 128x64
 * by 8-11% on the K = 64 layers, 256x128 lost everywhere), a smaller row tile when the 128-row
 * grid would not fill it twice over. */
static inline MmaConfig mma_pick(const MmaConvParams &P, int num_sms)
{
    if (P.k <= 64) {
        const long long cols = (P.k + 63) / 64;
        if (((long long)P.m + 255) / 256 * cols >= 3LL * num_sms) return MMA_256x64;
        const long long blocks = ((long long)P.m + 127) / 128 * cols;
        return blocks < 2LL * num_sms ? MMA_64x64 : MMA_128x64;
    }
    return MMA_128x128;
}

static inline int mma_bm(MmaConfig c) { return c == MMA_256x64 || c == MMA_256x128 ? 256 : c == MMA_64x64 ? 64 : 128; }
static inline int mma_bn(MmaConfig c) { return c == MMA_128x128 || c == MMA_256x128 ? 128 : 64; }

/* Split-K plan, a function of the problem only (the workspace query and the run agree; the
 * tile count is taken for the canonical 128x128 tile, 128x64 when K <= 64, whatever tile
 * mma_pick then launches): when that grid is smaller than MMA_TARGET_BLOCKS / 2 (fewer blocks
 * than SMs on an H100/H200) and the reduction has at least 16 slices, the slices are split so
 * that tiles x splits approaches MMA_TARGET_BLOCKS, each split taking at least 8 slices. */
constexpr int MMA_TARGET_BLOCKS = 264;
struct MmaSplit {
    int splits, kt_per;
};
static inline MmaSplit mma_split(int m, int k, int kg, int elem_bytes)
{
    const MmaConfig cfg = k <= 64 ? MMA_128x64 : MMA_128x128;
    const int bke = 64 / elem_bytes;
    const long long ktiles = ((long long)kg + bke - 1) / bke;
    const long long tiles = (((long long)m + mma_bm(cfg) - 1) / mma_bm(cfg)) * ((k + mma_bn(cfg) - 1) / mma_bn(cfg));
    MmaSplit sp = {1, (int)(ktiles > 0 ? ktiles : 1)};
    if (tiles <= 0 || 2 * tiles >= MMA_TARGET_BLOCKS || ktiles < 16) return sp;
    long long want = (MMA_TARGET_BLOCKS + tiles - 1) / tiles;
    if (want > ktiles / 8) want = ktiles / 8;
    if (want > 64) want = 64;
    if (want < 2) return sp;
    sp.kt_per = (int)((ktiles + want - 1) / want);
    sp.splits = (int)((ktiles + sp.kt_per - 1) / sp.kt_per);
    return sp;
}
/* bytes of float partials a split plan needs (0 with one split) */
static inline size_t mma_split_bytes(const MmaSplit &sp, int m, int k)
{
    return sp.splits > 1 ? (size_t)sp.splits * (size_t)m * (size_t)k * sizeof(float) : 0;
}

/* Launches a tile kernel on the BM x BN tile grid (times the splits), with smem_bytes of dynamic
 * shared memory (more than 48 KiB needs an opt-in, once per kernel and device: *opted is the
 * caller's mask), then with several splits the ordered reduction of the partials into y. */
template <typename T, int BM, int BN, typename Kern>
static cudaError_t tile_launch(Kern kern, int threads, int smem_bytes, unsigned long long *opted, const MmaConvParams &P, cudaStream_t st)
{
    cudaError_t e = fdnn_ptx::opt_in_smem(kern, smem_bytes, opted);
    if (e != cudaSuccess) return e;
    dim3 grid((unsigned)((P.m - P.m_lo + BM - 1) / BM), (unsigned)((P.k + BN - 1) / BN), (unsigned)(P.splits > 1 ? P.splits : 1));
    kern<<<grid, threads, smem_bytes, st>>>(P);
    e = cudaGetLastError();
    if (e != cudaSuccess || P.splits <= 1) return e;
    const long long pairs = (long long)P.m * P.k / 2;
    long long blocks = (pairs + 255) / 256;
    if (blocks > 4096) blocks = 4096;
    mma_reduce_kernel<T><<<(unsigned)blocks, 256, 0, st>>>(P);
    return cudaGetLastError();
}

template <typename T, int BM, int BN, int WARPS_M, int WARPS_N>
static cudaError_t mma_launch_cfg(const MmaConvParams &P, cudaStream_t st)
{
    static unsigned long long opted = 0;
    return tile_launch<T, BM, BN>(conv_fwd_mma_kernel<T, BM, BN, WARPS_M, WARPS_N, MMA_STAGES>, NTHREADS,
                                  MmaTile<BM, BN, MMA_STAGES>::SMEM_BYTES, &opted, P, st);
}

/* T = __half, __nv_bfloat16 or float (TF32). P.splits / P.kt_per from mma_split (or 1 and
 * the slice count), P.ws (16-byte aligned) of mma_split_bytes when splits > 1. The caller has
 * checked the requirements (C % 8, or C % 4 for float, K % 8, 16-byte aligned pointers, M and Kg below 2^31, blocks of K below 65536 * BN). */
template <typename T>
static cudaError_t mma_launch(const MmaConvParams &P, MmaConfig cfg, cudaStream_t st)
{
    if (P.m == 0 || P.k == 0) return cudaSuccess;
    switch (cfg) {
    case MMA_128x128: return mma_launch_cfg<T, 128, 128, 2, 4>(P, st);
    case MMA_128x64: return mma_launch_cfg<T, 128, 64, 4, 2>(P, st);
    case MMA_64x64: return mma_launch_cfg<T, 64, 64, 2, 4>(P, st);
    case MMA_256x64: return mma_launch_cfg<T, 256, 64, 4, 2>(P, st);   /* 64x32 warp tiles */
    case MMA_256x128: return mma_launch_cfg<T, 256, 128, 4, 2>(P, st); /* 64x64 warp tiles */
    }
    return cudaErrorInvalidValue;
}

} /* namespace fdnn_mma */
#endif
